// Who an external identity signs in as (GoTrue: models.DetermineAccountLinking,
// createAccountFromExternalIdentity, processInvite and linkIdentityToUser): the user that already
// holds the identity; else the one user holding a verified email of it (automatic linking);
// else a new user. An unverified provider email never links to anyone and never becomes an
// account's address (review 2026-11-25, H2, M2, L1).
import { type AuditEntry, insertAudit } from '../db/audit.ts';
import { CommitThenFail, type Executor } from '../db/database.ts';
import { findSession } from '../db/sessions.ts';
import {
  deleteOtherIdentities, findIdentitiesByEmails, findIdentityByProviderId, findUsersByEmails, providersOfUser, touchIdentity,
} from '../db/identities.ts';
import {
  findUserById, type IdentityRow, insertIdentity, insertUser, isBanned, updateUser, type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, forbidden, notFound, unprocessable } from '../core/errors.ts';
import type { ProviderEmail } from '../oauth/provider.ts';
import { requireAal2WhenMfa } from './aal2-rule.ts';
import { takeCodeAttempt } from './code-attempts.ts';
import { queueEmailToken } from './email-tokens.ts';
import { findLinkedTokens } from './link-tokens.ts';
import type { Notification } from './notify.ts';
import type { Outbox } from './outbox.ts';
import { mergeMetadata } from './metadata.ts';
import { beforeUserCreated } from '../hooks/user-created.ts';

export interface ExternalIdentity {
  provider: string;
  /** identity_data: the provider's claims with the chosen email (claimsToData). */
  data: Record<string, unknown>;
  emails: ProviderEmail[];
  emailOptional: boolean;
}

/** What linking an identity to a known user needs (also at a PKCE code exchange). */
export interface LinkContext {
  deps: Deps;
  tx: Executor;
  aud: string;
  ip?: string;
}

/** Linking also queues the account-change notification, sent once the transaction has committed (notify.ts). */
export interface NoticeContext {
  notices: Notification[];
}

/** A callback's sign-in: it may also queue a confirmation email. */
export interface AccountContext extends LinkContext, NoticeContext {
  out: Outbox;
  /** Where a confirmation email's link leads. */
  redirectTo: string;
  /** Set by signInExternal when it made a new account (the after user created hook's user). */
  createdUserId?: string;
}

const providerId = (x: ExternalIdentity) => String(x.data.sub ?? '');

async function addIdentity(c: LinkContext, user: UserRow, x: ExternalIdentity): Promise<IdentityRow> {
  const now = c.deps.now();
  const sub = providerId(x);
  if (!sub) throw new ApiError(500, 'unexpected_failure', 'Error creating identity');
  return insertIdentity(c.tx, { providerId: sub, userId: user.id, identityData: x.data, provider: x.provider, lastSignInAt: now, createdAt: now, updatedAt: now });
}

/** UpdateAppMetaDataProviders: `providers` from the identities, `provider` the oldest. */
async function refreshProviders(c: LinkContext, user: UserRow, patch: Record<string, unknown> = {}): Promise<UserRow> {
  const providers = await providersOfUser(c.tx, user.id);
  const app: Record<string, unknown> = { ...(user.rawAppMetaData ?? {}), ...patch, providers };
  if (providers.length > 0) app.provider = providers[0];
  return updateUser(c.tx, user.id, { rawAppMetaData: app, updatedAt: c.deps.now() });
}

/** UpdateUserMetaData: keys set, null values removed. */
async function mergeUserMetadata(c: LinkContext, user: UserRow, data: Record<string, unknown>): Promise<UserRow> {
  return updateUser(c.tx, user.id, { rawUserMetaData: mergeMetadata(user.rawUserMetaData ?? {}, data), updatedAt: c.deps.now() });
}

async function confirm(c: LinkContext, user: UserRow): Promise<UserRow> {
  const now = c.deps.now();
  return updateUser(c.tx, user.id, { emailConfirmedAt: user.emailConfirmedAt ?? now, confirmationToken: '', updatedAt: now });
}

/**
 * RemoveUnconfirmedIdentities: an unconfirmed account reached through a provider loses what
 * someone else may have set up before (a password, other identities); its metadata becomes the
 * provider's.
 */
async function removeUnconfirmedIdentities(c: LinkContext, user: UserRow, identity: IdentityRow): Promise<UserRow> {
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

/**
 * The address a new account gets, or an account without one takes: GoTrue's choice (the primary
 * address, else the last one listed), and only when the provider vouches for it (review H2, L1).
 * users.email is a credential: whoever receives mail there can recover the account, so only an
 * address someone proved may be stored there. An unverified address stays in identity_data and
 * user_metadata, where it unlocks nothing; a verified secondary one is no stand-in for it.
 */
function vouchedAddress(x: ExternalIdentity): ProviderEmail {
  const chosen = x.emails.find((e) => e.primary) ?? x.emails.at(-1);
  return chosen?.verified ? { ...chosen, email: chosen.email.toLowerCase() } : { email: '', verified: false, primary: false };
}

/** GoTrue's chosen address when the provider does not vouch for it: a claim, to be confirmed by mail. */
function claimedAddress(x: ExternalIdentity): string {
  const chosen = x.emails.find((e) => e.primary) ?? x.emails.at(-1);
  return chosen && !chosen.verified ? chosen.email.toLowerCase() : '';
}

/** Someone else has the address as users.email (the unique index is on the address alone). */
async function addressHeld(c: LinkContext, email: string, self: string): Promise<boolean> {
  return (await findUsersByEmails(c.tx, [email])).some((u) => u.id !== self);
}

const verifiedIdentity = (i: IdentityRow) => (i.identityData as Record<string, unknown> | null)?.email_verified === true;

/**
 * A user whose address may receive a verified identity: one with that address confirmed, or an
 * account of which nothing is confirmed yet (it is taken over: removeUnconfirmedIdentities drops
 * its password and identities). An unconfirmed address on an account confirmed some other way
 * (its phone) is no key to it (review M2).
 */
const linkableUser = (u: UserRow) => u.emailConfirmedAt != null || u.phoneConfirmedAt == null;

async function decide(c: AccountContext, x: ExternalIdentity): Promise<Decision> {
  // Only what the provider vouches for can reach an existing account. MAILER_AUTOCONFIRM never
  // makes an unverified address a key to anyone's (GoTrue counts it as verified here).
  const verified = x.emails.filter((e) => e.verified).map((e) => e.email.toLowerCase());
  let candidate = vouchedAddress(x);
  const existing = await findIdentityByProviderId(c.tx, providerId(x), x.provider);
  if (existing) {
    const user = await findUserById(c.tx, existing.userId, { forUpdate: true });
    if (!user) throw new ApiError(500, 'unexpected_failure', 'Database error finding user');
    // The account's own address, and whether the provider vouches for it now.
    const own = (user.email ?? '').toLowerCase();
    return { kind: 'exists', user, identity: existing, candidate: { email: own, verified: own !== '' && verified.includes(own), primary: true } };
  }
  if (verified.length === 0) return { kind: 'create', candidate };
  // Only identities whose own address the provider verified are link targets: an identity whose
  // provider later reports someone else's address, unverified, never is (review M2).
  const identities = (await findIdentitiesByEmails(c.tx, verified)).filter((i) => !i.provider.startsWith('sso:') && verifiedIdentity(i));
  const users = (await findUsersByEmails(c.tx, verified)).filter(linkableUser);
  if (identities.length === 0) {
    if (users.length === 1) return { kind: 'link', user: (await findUserById(c.tx, users[0]!.id, { forUpdate: true }))!, candidate };
    if (users.length > 1) throw new ApiError(500, 'unexpected_failure', 'Multiple accounts with the same email address in the same linking domain detected: default');
    // The address may still be held where it is no key (an unconfirmed address on a phone
    // account): the new account goes without it rather than fail on the unique index (L1).
    if (candidate.email && await emailTaken(c, candidate.email)) candidate = { ...candidate, email: '' };
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
 * IsDuplicatedEmail: another account holds the address, by a verified identity of this audience
 * or as its users.email (in any audience: the unique index is on the address alone); `self` (the
 * user being linked to) never counts against itself. An unverified identity claims nothing.
 */
async function emailTaken(c: LinkContext, email: string, self?: string): Promise<boolean> {
  for (const i of (await findIdentitiesByEmails(c.tx, [email])).filter((r) => !r.provider.startsWith('sso:') && r.userId !== self && verifiedIdentity(r))) {
    const owner = await findUserById(c.tx, i.userId);
    if (owner && owner.aud === c.aud) return true;
  }
  return (await findUsersByEmails(c.tx, [email])).some((u) => u.id !== self);
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
    await beforeUserCreated(deps, c.tx, user, c.ip);
    identity = await addIdentity(c, user, x);
    c.createdUserId = user.id;
  } else {
    identity = d.identity;
    await touchIdentity(c.tx, identity.id, x.data, now);
    identity = { ...identity, identityData: x.data };
    user = await mergeUserMetadata(c, d.user, x.data);
    user = await refreshProviders(c, user);
  }
  if (isBanned(user, now)) throw forbidden('user_banned', 'User is banned');

  let candidate = d.candidate;
  if (d.kind === 'exists' && !user.email) {
    // An account without an address takes one the provider vouches for now (not held elsewhere).
    const vouched = vouchedAddress(x);
    if (vouched.email && !(await emailTaken(c, vouched.email, user.id))) {
      const proven = user.emailConfirmedAt != null || user.phoneConfirmedAt != null;
      user = await updateUser(c.tx, user.id, { email: vouched.email, ...(proven ? { emailConfirmedAt: user.emailConfirmedAt ?? now } : {}), updatedAt: now });
      candidate = vouched;
    }
  }
  const hasEmails = !(x.emailOptional && candidate.email === '');
  const confirmed = user.emailConfirmedAt != null || user.phoneConfirmedAt != null;
  if (hasEmails && !confirmed) {
    user = await removeUnconfirmedIdentities(c, user, identity);
    // The provider vouches for the address, or there is none and MAILER_AUTOCONFIRM confirms the
    // account. An address it does not vouch for is never confirmed here (it could be anyone's).
    if (candidate.verified || (deps.config.mailer.autoconfirm && !user.email)) {
      await insertAudit(c.tx, { actor: user, action: 'user_signedup', traits: { provider: x.provider }, ip: c.ip, now });
      return confirm(c, user);
    }
    // GoTrue stores the unverified address and mails it a confirmation. authsvc keeps it off
    // users.email (H2): it waits as a pending address (email_change) that only the confirmation
    // of this mail makes the account's (flows/verify.ts), and only while nobody else holds it.
    const claimed = claimedAddress(x);
    if (claimed && !user.email && !(await addressHeld(c, claimed, user.id))) {
      user = await updateUser(c.tx, user.id, { emailChange: claimed, updatedAt: now });
      await queueEmailToken(deps, c.tx, c.out, user, 'confirmation', { redirectTo: c.redirectTo, address: claimed });
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

/**
 * The invited user an invite link's token names (GoTrue's FindUserByConfirmationToken, narrowed):
 * only a pending invitation (invited, not yet confirmed), by the link's own value, unexpired, and
 * while its code has attempts left. A signup confirmation or a texted code never counts (H1).
 * Outside any transaction (the attempt counts even when the callback fails later).
 */
export async function findPendingInvitation(deps: Deps, token: string, aud: string, client?: string): Promise<PendingInvitation | undefined> {
  for (const row of await findLinkedTokens(deps, token, ['confirmation_token'], client)) {
    const user = await findUserById(deps.db, row.userId);
    if (!user || !isPendingInvitation(deps, user, row.tokenHash, aud) || row.relatesTo !== user.email!.toLowerCase()) continue;
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
  return !!user.invitedAt && !user.emailConfirmedAt && user.aud === aud && !!user.email && user.confirmationToken === stored
    && !!sentAt && deps.now().getTime() <= sentAt.getTime() + deps.config.mailer.otpExp * 1000;
}

/** processInvite: the invited address must be one the provider vouches for. */
export async function acceptInviteExternal(c: LinkContext, x: ExternalIdentity, invitation: PendingInvitation | undefined): Promise<UserRow> {
  const now = c.deps.now();
  const locked = invitation && await findUserById(c.tx, invitation.userId, { forUpdate: true });
  // Re-checked under the lock: the invitation may have been accepted or replaced meanwhile.
  if (!locked || !isPendingInvitation(c.deps, locked, invitation.stored, c.aud)) throw notFound('invite_not_found', 'Invite not found');
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
    if (!session || session.userId !== target.userId) throw forbidden('session_not_found', 'The session that started linking this identity no longer exists');
    aal = session.aal ?? undefined;
  }
  await requireAal2WhenMfa(c.tx, target.userId, aal, 'link an identity');
}

/** linkIdentityToUser: manual linking to the signed-in user who started it. */
export async function linkIdentityExternal(c: LinkContext & NoticeContext, x: ExternalIdentity, link: LinkTarget): Promise<UserRow> {
  const now = c.deps.now();
  const target = await findUserById(c.tx, link.userId, { forUpdate: true });
  if (!target) throw unprocessable('user_not_found', 'Linking target user not found');
  await checkLinkingSession(c, link);
  const existing = await findIdentityByProviderId(c.tx, providerId(x), x.provider);
  if (existing) {
    throw unprocessable('identity_already_exists', existing.userId === target.id ? 'Identity is already linked' : 'Identity is already linked to another user');
  }
  const identity = await addIdentity(c, target, x);
  await insertAudit(c.tx, { actor: target, action: 'identity_linked', traits: { identity_id: identity.id, provider: x.provider, provider_id: identity.providerId }, ip: c.ip, now });
  let user = target;
  if (!user.email) {
    // Only an address the provider vouches for becomes the account's (H2). GoTrue takes an
    // unverified one too and mails it a confirmation; here it stays in identity_data, and the
    // account keeps no address (an anonymous user stays anonymous) until one is proven.
    const email = vouchedAddress(x).email;
    if (email) {
      if (await emailTaken(c, email, target.id)) throw badRequest('email_exists', 'A user with this email address has already been registered');
      user = await updateUser(c.tx, user.id, { email, updatedAt: now });
      user = await confirm(c, user);
      if (user.isAnonymous) user = await updateUser(c.tx, user.id, { isAnonymous: false });
    }
  }
  const linked = await refreshProviders(c, user);
  if (linked.email) c.notices.push({ kind: 'identity_linked', user: linked, provider: x.provider });
  return linked;
}
