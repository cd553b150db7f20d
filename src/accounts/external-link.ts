// An external identity joined to a user already known (GoTrue: processInvite and
// linkIdentityToUser): the invited user an invite link names, and the signed-in user who asked
// to link a provider. Sign-in by an external identity: external-accounts.ts.
import { insertAudit } from '../db/audit.ts';
import { findSession } from '../db/sessions.ts';
import { findIdentityByProviderId } from '../db/identities.ts';
import { findUserById, updateUser, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { badRequest, forbidden, notFound, unprocessable } from '../core/errors.ts';
import { requireAal2WhenMfa } from './aal2-rule.ts';
import { takeCodeAttempt } from './code-attempts.ts';
import { findLinkedTokens } from './link-tokens.ts';
import {
  addIdentity,
  confirm,
  emailTaken,
  type ExternalIdentity,
  type LinkContext,
  mergeUserMetadata,
  type NoticeContext,
  providerId,
  refreshProviders,
  removeUnconfirmedIdentities,
  vouchedAddress,
} from './external-identity.ts';

/**
 * The invited user an invite link's token names (GoTrue's FindUserByConfirmationToken, narrowed):
 * only a pending invitation (invited, not yet confirmed), by the link's own value, unexpired, and
 * while its code has attempts left. A signup confirmation or a texted code never counts (H1).
 * Outside any transaction (the attempt counts even when the callback fails later).
 */
export async function findPendingInvitation(
  deps: Deps,
  token: string,
  aud: string,
  client?: string,
): Promise<PendingInvitation | undefined> {
  for (const row of await findLinkedTokens(deps, token, ['confirmation_token'], client)) {
    const user = await findUserById(deps.db, row.userId);
    if (!user || !isPendingInvitation(deps, user, row.tokenHash, aud) || row.relatesTo !== user.email!.toLowerCase())
      continue;
    if (!(await takeCodeAttempt(deps, user.id, 'confirmation_token', user.confirmationSentAt!))) continue;
    return { userId: user.id, stored: row.tokenHash };
  }
  return undefined;
}

export interface PendingInvitation {
  userId: string;
  /** The confirmation token's stored value when it was found: the invitation is still this one. */
  stored: string;
}

function isPendingInvitation(deps: Deps, user: UserRow, stored: string, aud: string): boolean {
  const sentAt = user.confirmationSentAt;
  return (
    !!user.invitedAt &&
    !user.emailConfirmedAt &&
    user.aud === aud &&
    !!user.email &&
    user.confirmationToken === stored &&
    !!sentAt &&
    deps.now().getTime() <= sentAt.getTime() + deps.config.mailer.otpExp * 1000
  );
}

/** processInvite: the invited address must be one the provider vouches for. */
export async function acceptInviteExternal(
  c: LinkContext,
  x: ExternalIdentity,
  invitation: PendingInvitation | undefined,
): Promise<UserRow> {
  const now = c.deps.now();
  const locked = invitation && (await findUserById(c.tx, invitation.userId, { forUpdate: true }));
  // Re-checked under the lock: the invitation may have been accepted or replaced meanwhile.
  if (!locked || !isPendingInvitation(c.deps, locked, invitation.stored, c.aud))
    throw notFound('invite_not_found', 'Invite not found');
  let user = locked;
  if (!x.emails.some((e) => e.email === (user.email ?? ''))) {
    throw badRequest('validation_failed', 'Invited email does not match emails from external provider');
  }
  const identity = await addIdentity(c, user, x);
  user = await refreshProviders(c, user, { provider: x.provider });
  user = await mergeUserMetadata(c, user, x.data);
  await insertAudit(c.tx, { actor: user, action: 'invite_accepted', traits: { provider: x.provider }, ip: c.ip, now });
  user = await removeUnconfirmedIdentities(c, user, identity);
  return confirm(c, user);
}

/** Who asked for a manual link: the user, and the session (none for a flow begun before migration 0015, or a session-less token). */
export interface LinkTarget {
  userId: string;
  sessionId: string | null;
}

/**
 * Checked where the link is made, whenever that is (review 2026-12-01 M2): the session that
 * asked still exists (a sign-out or a password change since ends the link too), and it is
 * aal2 while the user has a verified factor (it may have been downgraded, or the factor
 * verified, since it started). GoTrue checks neither.
 */
async function checkLinkingSession(c: LinkContext, target: LinkTarget): Promise<void> {
  let aal: string | undefined;
  if (target.sessionId) {
    const session = await findSession(c.tx, target.sessionId);
    if (!session || session.userId !== target.userId)
      throw forbidden('session_not_found', 'The session that started linking this identity no longer exists');
    aal = session.aal ?? undefined;
  }
  await requireAal2WhenMfa(c.tx, target.userId, aal, 'link an identity');
}

/** linkIdentityToUser: manual linking to the signed-in user who started it. */
export async function linkIdentityExternal(
  c: LinkContext & NoticeContext,
  x: ExternalIdentity,
  link: LinkTarget,
): Promise<UserRow> {
  const now = c.deps.now();
  const target = await findUserById(c.tx, link.userId, { forUpdate: true });
  if (!target) throw unprocessable('user_not_found', 'Linking target user not found');
  await checkLinkingSession(c, link);
  const existing = await findIdentityByProviderId(c.tx, providerId(x), x.provider);
  if (existing) {
    throw unprocessable(
      'identity_already_exists',
      existing.userId === target.id ? 'Identity is already linked' : 'Identity is already linked to another user',
    );
  }
  const identity = await addIdentity(c, target, x);
  await insertAudit(c.tx, {
    actor: target,
    action: 'identity_linked',
    traits: { identity_id: identity.id, provider: x.provider, provider_id: identity.providerId },
    ip: c.ip,
    now,
  });
  let user = target;
  if (!user.email) {
    // Only an address the provider vouches for becomes the account's (H2). GoTrue takes an
    // unverified one too and mails it a confirmation; here it stays in identity_data, and the
    // account keeps no address (an anonymous user stays anonymous) until one is proven.
    const email = vouchedAddress(x).email;
    if (email) {
      if (await emailTaken(c, email, target.id))
        throw badRequest('email_exists', 'A user with this email address has already been registered');
      user = await updateUser(c.tx, user.id, { email, updatedAt: now });
      user = await confirm(c, user);
      if (user.isAnonymous) user = await updateUser(c.tx, user.id, { isAnonymous: false });
    }
  }
  const linked = await refreshProviders(c, user);
  if (linked.email) c.notices.push({ kind: 'identity_linked', user: linked, provider: x.provider });
  return linked;
}
