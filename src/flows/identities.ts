// DELETE /user/identities/{id} (GoTrue: api.DeleteIdentity): never the last identity; unlinking
// the identity whose email the user carries moves the user to another identity's email, and
// that email stays confirmed only if its provider verified it (or MAILER_AUTOCONFIRM).
import type { AuthContext } from '../app-env.ts';
import { insertAudit } from '../db/audit.ts';
import { type Executor, transaction } from '../db/database.ts';
import { deleteIdentity, providersOfUser } from '../db/identities.ts';
import { clearOneTimeTokens } from '../db/one-time-tokens.ts';
import {
  findUserByEmail,
  findUserById,
  type IdentityRow,
  listIdentities,
  updateUser,
  type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, forbidden, notFound, unprocessable } from '../core/errors.ts';
import { requireAal2WhenMfa } from '../accounts/aal2-rule.ts';
import { mergeMetadata } from '../accounts/metadata.ts';
import { type Notification, notify } from '../accounts/notify.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const verifiedEmail = (i: IdentityRow) => {
  const d = (i.identityData ?? {}) as Record<string, unknown>;
  return d.email_verified === true || d.email_verified === 'true';
};
const rank = (i: IdentityRow) => (!i.email ? 2 : verifiedEmail(i) ? 0 : 1);

/** UpdateUserEmailFromIdentities. */
async function emailFromIdentities(deps: Deps, tx: Executor, user: UserRow): Promise<UserRow> {
  const identities = await listIdentities(tx, [user.id]);
  const current = (user.email ?? '').toLowerCase();
  if (identities.some((i) => (i.email ?? '') === current)) return user;
  const ordered = [...identities].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.createdAt?.getTime() ?? 0) - (b.createdAt?.getTime() ?? 0) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  let primary: IdentityRow | undefined;
  for (const i of ordered) {
    if (!i.email || !(await findUserByEmail(tx, i.email, user.aud ?? ''))) {
      primary = i;
      break;
    }
  }
  if (!primary)
    throw unprocessable('email_conflict_identity_not_deletable', 'Unable to unlink identity due to email conflict');
  const keepConfirmed = Boolean(primary.email) && (verifiedEmail(primary) || deps.config.mailer.autoconfirm);
  // Tokens issued for the old address cannot be trusted for the new one.
  await clearOneTimeTokens(tx, user.id);
  return updateUser(tx, user.id, {
    email: primary.email || null,
    confirmationToken: '',
    recoveryToken: '',
    emailChangeTokenNew: '',
    emailChangeTokenCurrent: '',
    emailChange: '',
    phoneChangeToken: '',
    phoneChange: '',
    reauthenticationToken: '',
    emailChangeConfirmStatus: 0,
    ...(keepConfirmed
      ? {}
      : {
          emailConfirmedAt: null,
          rawUserMetaData: mergeMetadata(user.rawUserMetaData ?? {}, { email_verified: false }),
        }),
    updatedAt: deps.now(),
  });
}

export async function unlinkIdentity(
  deps: Deps,
  auth: AuthContext,
  identityId: string,
  aud: string,
  meta: RequestMeta,
): Promise<void> {
  if (!UUID_RE.test(identityId)) throw notFound('validation_failed', 'identity_id must be an UUID');
  const tokenAud = Array.isArray(auth.claims.aud) ? auth.claims.aud[0] : auth.claims.aud;
  if (!tokenAud || aud !== tokenAud)
    throw forbidden('unexpected_audience', "Token audience doesn't match request audience");
  // Review 2026-12-01 M2: unlinking may move the account to another identity's address (its recovery channel).
  await requireAal2WhenMfa(deps.db, auth.user.id, auth.session?.aal, 'unlink an identity');
  if (auth.identities.length <= 1)
    throw unprocessable('single_identity_not_deletable', 'User must have at least 1 identity after unlinking');
  const target = auth.identities.find((i) => i.id === identityId.toLowerCase());
  if (!target) throw unprocessable('identity_not_found', "Identity doesn't exist");
  let notice: Notification | undefined;
  await transaction(deps.db, async (tx) => {
    const now = deps.now();
    let user = await findUserById(tx, auth.user.id, { forUpdate: true });
    if (!user) throw new ApiError(500, 'unexpected_failure', 'Database error finding user');
    // To the address the user had before: unlinking may have moved the account to another one (GoTrue).
    const recipient = user.email ?? '';
    await insertAudit(tx, {
      actor: user,
      action: 'identity_unlinked',
      traits: { identity_id: target.id, provider: target.provider, provider_id: target.providerId },
      ip: meta.ip,
      now,
    });
    await deleteIdentity(tx, target.id);
    if (target.provider === 'phone')
      user = await updateUser(tx, user.id, { phone: null, phoneConfirmedAt: null, updatedAt: now });
    else user = await emailFromIdentities(deps, tx, user);
    const providers = await providersOfUser(tx, user.id);
    const app: Record<string, unknown> = { ...(user.rawAppMetaData ?? {}), providers };
    if (providers.length > 0) app.provider = providers[0];
    const updated = await updateUser(tx, user.id, { rawAppMetaData: app });
    if (recipient) notice = { kind: 'identity_unlinked', user: updated, to: recipient, provider: target.provider };
  });
  await notify(deps, notice, meta.ip);
}
