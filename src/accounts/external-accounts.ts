// Who an external identity signs in as (GoTrue: models.DetermineAccountLinking and
// createAccountFromExternalIdentity): the user that already holds the identity; else the one user
// holding a verified email of it (automatic linking); else a new user. An unverified provider
// email never links to anyone and never becomes an account's address (review 2026-11-25, H2, M2,
// L1). Invitations and manual linking: external-link.ts.
import { type AuditEntry, insertAudit } from '../db/audit.ts';
import { CommitThenFail } from '../db/database.ts';
import {
  findIdentitiesByEmails,
  findIdentityByProviderId,
  findUsersByEmails,
  touchIdentity,
} from '../db/identities.ts';
import { findUserById, type IdentityRow, insertUser, isBanned, updateUser, type UserRow } from '../db/users.ts';
import { ApiError, forbidden, unprocessable } from '../core/errors.ts';
import type { ProviderEmail } from '../oauth/provider.ts';
import { queueEmailToken } from './email-tokens.ts';
import { beforeUserCreated } from '../hooks/user-created.ts';
import {
  type AccountContext,
  addIdentity,
  confirm,
  emailTaken,
  type ExternalIdentity,
  type LinkContext,
  mergeUserMetadata,
  providerId,
  refreshProviders,
  removeUnconfirmedIdentities,
  verifiedIdentity,
  vouchedAddress,
} from './external-identity.ts';

type Decision =
  | { kind: 'exists'; user: UserRow; identity: IdentityRow; candidate: ProviderEmail }
  | { kind: 'link'; user: UserRow; candidate: ProviderEmail }
  | { kind: 'create'; candidate: ProviderEmail };

/** GoTrue's chosen address when the provider does not vouch for it: a claim, to be confirmed by mail. */
function claimedAddress(x: ExternalIdentity): string {
  const chosen = x.emails.find((e) => e.primary) ?? x.emails.at(-1);
  return chosen && !chosen.verified ? chosen.email.toLowerCase() : '';
}

/** Someone else has the address as users.email (the unique index is on the address alone). */
async function addressHeld(c: LinkContext, email: string, self: string): Promise<boolean> {
  return (await findUsersByEmails(c.tx, [email])).some((u) => u.id !== self);
}

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
    return {
      kind: 'exists',
      user,
      identity: existing,
      candidate: { email: own, verified: own !== '' && verified.includes(own), primary: true },
    };
  }
  if (verified.length === 0) return { kind: 'create', candidate };
  // Only identities whose own address the provider verified are link targets: an identity whose
  // provider later reports someone else's address, unverified, never is (review M2).
  const identities = (await findIdentitiesByEmails(c.tx, verified)).filter(
    (i) => !i.provider.startsWith('sso:') && verifiedIdentity(i),
  );
  const users = (await findUsersByEmails(c.tx, verified)).filter(linkableUser);
  if (identities.length === 0) {
    if (users.length === 1)
      return { kind: 'link', user: (await findUserById(c.tx, users[0]!.id, { forUpdate: true }))!, candidate };
    if (users.length > 1)
      throw new ApiError(
        500,
        'unexpected_failure',
        'Multiple accounts with the same email address in the same linking domain detected: default',
      );
    // The address may still be held where it is no key (an unconfirmed address on a phone
    // account): the new account goes without it rather than fail on the unique index (L1).
    if (candidate.email && (await emailTaken(c, candidate.email))) candidate = { ...candidate, email: '' };
    return { kind: 'create', candidate };
  }
  const owner = identities[0]!.userId;
  if (identities.some((i) => i.userId !== owner)) {
    throw new ApiError(
      500,
      'unexpected_failure',
      'Multiple accounts with the same email address in the same linking domain detected: default',
    );
  }
  const user = await findUserById(c.tx, owner, { forUpdate: true });
  if (!user) throw new ApiError(500, 'unexpected_failure', 'Database error finding user');
  return { kind: 'link', user, candidate };
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
    await insertAudit(c.tx, {
      actor: user,
      action: 'identity_linked',
      traits: { identity_id: identity.id, provider: x.provider, provider_id: identity.providerId },
      ip: c.ip,
      now,
    });
  } else if (d.kind === 'create') {
    if (deps.config.disableSignup) throw unprocessable('signup_disabled', 'Signups not allowed for this instance');
    user = await insertUser(c.tx, {
      id: crypto.randomUUID(),
      aud: c.aud,
      role: deps.config.jwt.defaultGroupName,
      email: d.candidate.email || null,
      rawAppMetaData: { provider: x.provider, providers: [x.provider] },
      rawUserMetaData: x.data,
      createdAt: now,
      updatedAt: now,
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
      user = await updateUser(c.tx, user.id, {
        email: vouched.email,
        ...(proven ? { emailConfirmedAt: user.emailConfirmedAt ?? now } : {}),
        updatedAt: now,
      });
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
      await insertAudit(c.tx, {
        actor: user,
        action: 'user_signedup',
        traits: { provider: x.provider },
        ip: c.ip,
        now,
      });
      return confirm(c, user);
    }
    // GoTrue stores the unverified address and mails it a confirmation. authsvc keeps it off
    // users.email (H2): it waits as a pending address (email_change) that only the confirmation
    // of this mail makes the account's (flows/verify.ts), and only while nobody else holds it.
    const claimed = claimedAddress(x);
    if (claimed && !user.email && !(await addressHeld(c, claimed, user.id))) {
      user = await updateUser(c.tx, user.id, { emailChange: claimed, updatedAt: now });
      await queueEmailToken(deps, c.tx, c.out, user, 'confirmation', { redirectTo: c.redirectTo, address: claimed });
      throw new CommitThenFail(
        unprocessable(
          'provider_email_needs_verification',
          `Unverified email with ${x.provider}. A confirmation email has been sent to your ${x.provider} email`,
        ),
      );
    }
    throw new CommitThenFail(
      unprocessable(
        'provider_email_needs_verification',
        `Unverified email with ${x.provider}. Verify the email with ${x.provider} in order to sign in`,
      ),
    );
  }
  const audits: AuditEntry = { actor: user, action: 'login', traits: { provider: x.provider }, ip: c.ip, now };
  await insertAudit(c.tx, audits);
  return user;
}
