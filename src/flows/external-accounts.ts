// Who an external identity signs in as (GoTrue: models.DetermineAccountLinking,
// createAccountFromExternalIdentity, processInvite and linkIdentityToUser): the user that already
// holds the identity; else the one user holding a verified email of it (automatic linking);
// else a new user. An unverified provider email never links to anyone.
import { type AuditEntry, insertAudit } from '../db/audit.ts';
import type { Executor } from '../db/database.ts';
import {
  deleteOtherIdentities, findIdentitiesByEmails, findIdentityByProviderId, findUsersByEmails, providersOfUser, touchIdentity,
} from '../db/identities.ts';
import {
  findUserByConfirmationToken, findUserByEmail, findUserById, type IdentityRow, insertIdentity, insertUser, isBanned, updateUser, type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, forbidden, notFound, unprocessable } from '../http/errors.ts';
import type { ProviderEmail } from '../oauth/provider.ts';
import { queueEmailToken } from './email-tokens.ts';
import type { Outbox } from './outbox.ts';
import { mergeMetadata } from './update-user.ts';

export interface ExternalIdentity {
  provider: string;
  /** identity_data: the provider's claims with the chosen email (claimsToData). */
  data: Record<string, unknown>;
  emails: ProviderEmail[];
  emailOptional: boolean;
}

export interface AccountContext {
  deps: Deps;
  tx: Executor;
  out: Outbox;
  aud: string;
  ip?: string;
  /** Where a confirmation email's link leads. */
  redirectTo: string;
}

/** Committed, then shown to the user: the confirmation email went out but there is no session. */
export class CommitThenFail extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

const providerId = (x: ExternalIdentity) => String(x.data.sub ?? '');

async function addIdentity(c: AccountContext, user: UserRow, x: ExternalIdentity): Promise<IdentityRow> {
  const now = c.deps.now();
  const sub = providerId(x);
  if (!sub) throw new ApiError(500, 'unexpected_failure', 'Error creating identity');
  return insertIdentity(c.tx, { providerId: sub, userId: user.id, identityData: x.data, provider: x.provider, lastSignInAt: now, createdAt: now, updatedAt: now });
}

/** UpdateAppMetaDataProviders: `providers` from the identities, `provider` the oldest. */
async function refreshProviders(c: AccountContext, user: UserRow, patch: Record<string, unknown> = {}): Promise<UserRow> {
  const providers = await providersOfUser(c.tx, user.id);
  const app: Record<string, unknown> = { ...(user.rawAppMetaData ?? {}), ...patch, providers };
  if (providers.length > 0) app.provider = providers[0];
  return updateUser(c.tx, user.id, { rawAppMetaData: app, updatedAt: c.deps.now() });
}

/** UpdateUserMetaData: keys set, null values removed. */
async function mergeUserMetadata(c: AccountContext, user: UserRow, data: Record<string, unknown>): Promise<UserRow> {
  return updateUser(c.tx, user.id, { rawUserMetaData: mergeMetadata(user.rawUserMetaData ?? {}, data), updatedAt: c.deps.now() });
}

async function confirm(c: AccountContext, user: UserRow): Promise<UserRow> {
  const now = c.deps.now();
  return updateUser(c.tx, user.id, { emailConfirmedAt: user.emailConfirmedAt ?? now, confirmationToken: '', updatedAt: now });
}

/**
 * RemoveUnconfirmedIdentities: an unconfirmed account reached through a provider loses what
 * someone else may have set up before (a password, other identities); its metadata becomes the
 * provider's.
 */
async function removeUnconfirmedIdentities(c: AccountContext, user: UserRow, identity: IdentityRow): Promise<UserRow> {
  let u = user;
  if (identity.provider !== 'email' && identity.provider !== 'phone') u = await updateUser(c.tx, u.id, { encryptedPassword: null });
  u = await updateUser(c.tx, u.id, { rawUserMetaData: identity.identityData as Record<string, unknown>, updatedAt: c.deps.now() });
  await deleteOtherIdentities(c.tx, u.id, identity.id);
  return refreshProviders(c, u);
}

type Decision =
  | { kind: 'exists'; user: UserRow; identity: IdentityRow; candidate: ProviderEmail }
  | { kind: 'link'; user: UserRow; candidate: ProviderEmail }
  | { kind: 'create'; candidate: ProviderEmail };

async function decide(c: AccountContext, x: ExternalIdentity): Promise<Decision> {
  // Only what the provider vouches for can reach an existing account. MAILER_AUTOCONFIRM
  // confirms new accounts (below) but never makes an unverified address a key to someone else's
  // (GoTrue counts it as verified here).
  const verified: string[] = [];
  let candidate: ProviderEmail = { email: '', verified: false, primary: false };
  for (const e of x.emails) {
    if (e.verified) verified.push(e.email.toLowerCase());
    if (e.primary) candidate = { ...e, email: e.email.toLowerCase() };
  }
  const existing = await findIdentityByProviderId(c.tx, providerId(x), x.provider);
  if (existing) {
    const user = await findUserById(c.tx, existing.userId, { forUpdate: true });
    if (!user) throw new ApiError(500, 'unexpected_failure', 'Database error finding user');
    return { kind: 'exists', user, identity: existing, candidate: { ...candidate, email: user.email ?? '' } };
  }
  if (verified.length === 0) {
    // Never linked; and the address stays off the new account when someone already holds it.
    if (candidate.email && await emailTaken(c, candidate.email)) candidate = { ...candidate, email: '' };
    return { kind: 'create', candidate };
  }
  const identities = (await findIdentitiesByEmails(c.tx, verified)).filter((i) => !i.provider.startsWith('sso:'));
  const users = await findUsersByEmails(c.tx, verified);
  if (identities.length === 0) {
    if (users.length === 1) return { kind: 'link', user: (await findUserById(c.tx, users[0]!.id, { forUpdate: true }))!, candidate };
    if (users.length > 1) throw new ApiError(500, 'unexpected_failure', 'Multiple accounts with the same email address in the same linking domain detected: default');
    return { kind: 'create', candidate };
  }
  const owner = identities[0]!.userId;
  if (identities.some((i) => i.userId !== owner)) {
    throw new ApiError(500, 'unexpected_failure', 'Multiple accounts with the same email address in the same linking domain detected: default');
  }
  const user = await findUserById(c.tx, owner, { forUpdate: true });
  if (!user) throw new ApiError(500, 'unexpected_failure', 'Database error finding user');
  return { kind: 'link', user, candidate };
}

/**
 * IsDuplicatedEmail: another account (by identity or by users.email) of this audience holds it;
 * `self` (the user being linked to) never counts against itself.
 */
async function emailTaken(c: AccountContext, email: string, self?: string): Promise<boolean> {
  for (const i of (await findIdentitiesByEmails(c.tx, [email])).filter((r) => !r.provider.startsWith('sso:') && r.userId !== self)) {
    const owner = await findUserById(c.tx, i.userId);
    if (owner && owner.aud === c.aud) return true;
  }
  const holder = await findUserByEmail(c.tx, email, c.aud);
  return holder !== undefined && holder.id !== self;
}

/** createAccountFromExternalIdentity. */
export async function signInExternal(c: AccountContext, x: ExternalIdentity): Promise<UserRow> {
  const { deps } = c;
  const now = deps.now();
  const d = await decide(c, x);
  let user: UserRow;
  let identity: IdentityRow;
  if (d.kind === 'link') {
    identity = await addIdentity(c, d.user, x);
    user = await mergeUserMetadata(c, d.user, x.data);
    user = await refreshProviders(c, user);
    await insertAudit(c.tx, { actor: user, action: 'identity_linked', traits: { identity_id: identity.id, provider: x.provider, provider_id: identity.providerId }, ip: c.ip, now });
  } else if (d.kind === 'create') {
    if (deps.config.disableSignup) throw unprocessable('signup_disabled', 'Signups not allowed for this instance');
    user = await insertUser(c.tx, {
      id: crypto.randomUUID(), aud: c.aud, role: deps.config.jwt.defaultGroupName, email: d.candidate.email || null,
      rawAppMetaData: { provider: x.provider, providers: [x.provider] }, rawUserMetaData: x.data, createdAt: now, updatedAt: now,
    });
    identity = await addIdentity(c, user, x);
  } else {
    identity = d.identity;
    await touchIdentity(c.tx, identity.id, x.data, now);
    identity = { ...identity, identityData: x.data };
    user = await mergeUserMetadata(c, d.user, x.data);
    user = await refreshProviders(c, user);
  }
  if (isBanned(user, now)) throw forbidden('user_banned', 'User is banned');

  const hasEmails = !(x.emailOptional && d.candidate.email === '');
  const confirmed = user.emailConfirmedAt != null || user.phoneConfirmedAt != null;
  if (hasEmails && !confirmed) {
    user = await removeUnconfirmedIdentities(c, user, identity);
    if (d.candidate.verified || deps.config.mailer.autoconfirm) {
      await insertAudit(c.tx, { actor: user, action: 'user_signedup', traits: { provider: x.provider }, ip: c.ip, now });
      return confirm(c, user);
    }
    if (d.candidate.email) {
      await queueEmailToken(deps, c.tx, c.out, user, 'confirmation', { redirectTo: c.redirectTo });
      throw new CommitThenFail(unprocessable('provider_email_needs_verification',
        `Unverified email with ${x.provider}. A confirmation email has been sent to your ${x.provider} email`));
    }
    throw new CommitThenFail(unprocessable('provider_email_needs_verification',
      `Unverified email with ${x.provider}. Verify the email with ${x.provider} in order to sign in`));
  }
  const audits: AuditEntry = { actor: user, action: 'login', traits: { provider: x.provider }, ip: c.ip, now };
  await insertAudit(c.tx, audits);
  return user;
}

/** processInvite: the invited address must be one the provider vouches for. */
export async function acceptInviteExternal(c: AccountContext, x: ExternalIdentity, inviteToken: string): Promise<UserRow> {
  const now = c.deps.now();
  const invited = await findUserByConfirmationToken(c.tx, inviteToken);
  if (!invited) throw notFound('invite_not_found', 'Invite not found');
  let user = (await findUserById(c.tx, invited.id, { forUpdate: true }))!;
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

/** linkIdentityToUser: manual linking to the signed-in user who started it. */
export async function linkIdentityExternal(c: AccountContext, x: ExternalIdentity, targetId: string): Promise<UserRow> {
  const now = c.deps.now();
  const target = await findUserById(c.tx, targetId, { forUpdate: true });
  if (!target) throw unprocessable('user_not_found', 'Linking target user not found');
  const existing = await findIdentityByProviderId(c.tx, providerId(x), x.provider);
  if (existing) {
    throw unprocessable('identity_already_exists', existing.userId === target.id ? 'Identity is already linked' : 'Identity is already linked to another user');
  }
  const identity = await addIdentity(c, target, x);
  await insertAudit(c.tx, { actor: target, action: 'identity_linked', traits: { identity_id: identity.id, provider: x.provider, provider_id: identity.providerId }, ip: c.ip, now });
  let user = target;
  if (!user.email) {
    const email = typeof x.data.email === 'string' ? x.data.email.toLowerCase() : '';
    if (email) {
      if (await emailTaken(c, email, target.id)) throw badRequest('email_exists', 'A user with this email address has already been registered');
      user = await updateUser(c.tx, user.id, { email, updatedAt: now });
    }
    if (x.data.email_verified !== true) {
      if (user.email) await queueEmailToken(c.deps, c.tx, c.out, user, 'confirmation', { redirectTo: c.redirectTo });
      // The identity is committed with the error: app_metadata lists it too (GoTrue returns
      // before UpdateAppMetaDataProviders here, leaving the providers without it).
      await refreshProviders(c, user);
      throw new CommitThenFail(unprocessable('email_not_confirmed', `Unverified email with ${x.provider}. A confirmation email has been sent to your ${x.provider} email`));
    }
    user = await confirm(c, user);
    if (user.isAnonymous) user = await updateUser(c.tx, user.id, { isAnonymous: false });
  }
  return refreshProviders(c, user);
}
