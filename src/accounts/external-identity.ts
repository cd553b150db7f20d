// What the external sign-in paths share (accounts/external-accounts.ts for a callback's sign-in,
// accounts/external-link.ts for an invitation and a manual link; sso/account.ts): the identity a
// provider reports, the contexts the writes run in, and GoTrue's identity primitives
// (models.NewIdentity, UpdateAppMetaDataProviders, UpdateUserMetaData, Confirm,
// RemoveUnconfirmedIdentities, IsDuplicatedEmail).
import type { Executor } from '../db/database.ts';
import { deleteOtherIdentities, findIdentitiesByEmails, findUsersByEmails, providersOfUser } from '../db/identities.ts';
import { findUserById, type IdentityRow, insertIdentity, updateUser, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import type { ProviderEmail } from '../oauth/provider.ts';
import type { Notification } from './notify.ts';
import type { Outbox } from './outbox.ts';
import { mergeMetadata } from './metadata.ts';

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

export const providerId = (x: ExternalIdentity) => String(x.data.sub ?? '');

export async function addIdentity(c: LinkContext, user: UserRow, x: ExternalIdentity): Promise<IdentityRow> {
  const now = c.deps.now();
  const sub = providerId(x);
  if (!sub) throw new ApiError(500, 'unexpected_failure', 'Error creating identity');
  return insertIdentity(c.tx, {
    providerId: sub,
    userId: user.id,
    identityData: x.data,
    provider: x.provider,
    lastSignInAt: now,
    createdAt: now,
    updatedAt: now,
  });
}

/** UpdateAppMetaDataProviders: `providers` from the identities, `provider` the oldest. */
export async function refreshProviders(
  c: LinkContext,
  user: UserRow,
  patch: Record<string, unknown> = {},
): Promise<UserRow> {
  const providers = await providersOfUser(c.tx, user.id);
  const app: Record<string, unknown> = { ...(user.rawAppMetaData ?? {}), ...patch, providers };
  if (providers.length > 0) app.provider = providers[0];
  return updateUser(c.tx, user.id, { rawAppMetaData: app, updatedAt: c.deps.now() });
}

/** UpdateUserMetaData: keys set, null values removed. */
export async function mergeUserMetadata(
  c: LinkContext,
  user: UserRow,
  data: Record<string, unknown>,
): Promise<UserRow> {
  return updateUser(c.tx, user.id, {
    rawUserMetaData: mergeMetadata(user.rawUserMetaData ?? {}, data),
    updatedAt: c.deps.now(),
  });
}

export async function confirm(c: LinkContext, user: UserRow): Promise<UserRow> {
  const now = c.deps.now();
  return updateUser(c.tx, user.id, {
    emailConfirmedAt: user.emailConfirmedAt ?? now,
    confirmationToken: '',
    updatedAt: now,
  });
}

/**
 * RemoveUnconfirmedIdentities: an unconfirmed account reached through a provider loses what
 * someone else may have set up before (a password, other identities); its metadata becomes the
 * provider's.
 */
export async function removeUnconfirmedIdentities(
  c: LinkContext,
  user: UserRow,
  identity: IdentityRow,
): Promise<UserRow> {
  let u = user;
  if (identity.provider !== 'email' && identity.provider !== 'phone')
    u = await updateUser(c.tx, u.id, { encryptedPassword: null });
  u = await updateUser(c.tx, u.id, {
    rawUserMetaData: identity.identityData as Record<string, unknown>,
    updatedAt: c.deps.now(),
  });
  await deleteOtherIdentities(c.tx, u.id, identity.id);
  return refreshProviders(c, u);
}

/**
 * The address a new account gets, or an account without one takes: GoTrue's choice (the primary
 * address, else the last one listed), and only when the provider vouches for it (review H2, L1).
 * users.email is a credential: whoever receives mail there can recover the account, so only an
 * address someone proved may be stored there. An unverified address stays in identity_data and
 * user_metadata, where it unlocks nothing; a verified secondary one is no stand-in for it.
 */
export function vouchedAddress(x: ExternalIdentity): ProviderEmail {
  const chosen = x.emails.find((e) => e.primary) ?? x.emails.at(-1);
  return chosen?.verified
    ? { ...chosen, email: chosen.email.toLowerCase() }
    : { email: '', verified: false, primary: false };
}

export const verifiedIdentity = (i: IdentityRow) =>
  (i.identityData as Record<string, unknown> | null)?.email_verified === true;

/**
 * IsDuplicatedEmail: another account holds the address, by a verified identity of this audience
 * or as its users.email (in any audience: the unique index is on the address alone); `self` (the
 * user being linked to) never counts against itself. An unverified identity claims nothing.
 */
export async function emailTaken(c: LinkContext, email: string, self?: string): Promise<boolean> {
  for (const i of (await findIdentitiesByEmails(c.tx, [email])).filter(
    (r) => !r.provider.startsWith('sso:') && r.userId !== self && verifiedIdentity(r),
  )) {
    const owner = await findUserById(c.tx, i.userId);
    if (owner && owner.aud === c.aud) return true;
  }
  return (await findUsersByEmails(c.tx, [email])).some((u) => u.id !== self);
}
