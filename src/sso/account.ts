// Who a SAML identity signs in as (GoTrue: createAccountFromExternalIdentity with an `sso:<id>`
// provider, whose linking domain is that provider alone): the user holding the identity; else
// the one user with an identity of the same provider and the same email; else a new SSO user
// (is_sso_user, its email confirmed: the IdP vouches for it, and only for its domains: domains.ts).
// SSO users never link to accounts of other providers, and their email need not be unique.
import { insertAudit } from '../db/audit.ts';
import { findIdentitiesByEmails, findIdentityByProviderId, providersOfUser, touchIdentity } from '../db/identities.ts';
import type { SsoProvider } from '../db/sso.ts';
import { findUserById, insertIdentity, insertUser, isBanned, updateUser, type UserRow } from '../db/users.ts';
import type { LinkContext } from '../accounts/external-identity.ts';
import { mergeMetadata } from '../accounts/metadata.ts';
import { ApiError, forbidden, unprocessable } from '../core/errors.ts';
import { beforeUserCreated } from '../hooks/user-created.ts';
import { assertVouched } from './domains.ts';

export interface SsoIdentity {
  /** `sso:<provider uuid>`. */
  provider: string;
  sub: string;
  email: string;
  data: Record<string, unknown>;
}

async function withProviders(c: LinkContext, user: UserRow, data: Record<string, unknown>): Promise<UserRow> {
  const providers = await providersOfUser(c.tx, user.id);
  const app: Record<string, unknown> = { ...(user.rawAppMetaData ?? {}), providers };
  if (providers.length > 0) app.provider = providers[0];
  return updateUser(c.tx, user.id, {
    rawAppMetaData: app,
    rawUserMetaData: mergeMetadata(user.rawUserMetaData ?? {}, data),
    updatedAt: c.deps.now(),
  });
}

/** `idp`: the provider, which must vouch for the account's address too (an account it made before L4's check may carry another domain's). */
export async function signInSso(
  c: LinkContext,
  x: SsoIdentity,
  idp: SsoProvider,
): Promise<{ user: UserRow; created: boolean }> {
  const now = c.deps.now();
  const email = x.email.toLowerCase();
  let user: UserRow | undefined;
  let created = false;
  const existing = await findIdentityByProviderId(c.tx, x.sub, x.provider);
  if (existing) {
    user = await findUserById(c.tx, existing.userId, { forUpdate: true });
    if (!user) throw new ApiError(500, 'unexpected_failure', 'Database error finding user');
    await touchIdentity(c.tx, existing.id, x.data, now);
    user = await withProviders(c, user, x.data);
  } else {
    const same = (await findIdentitiesByEmails(c.tx, [email])).filter((i) => i.provider === x.provider);
    const owners = [...new Set(same.map((i) => i.userId))];
    if (owners.length > 1) {
      throw new ApiError(
        500,
        'unexpected_failure',
        `Multiple accounts with the same email address in the same linking domain detected: ${x.provider}`,
      );
    }
    if (owners.length === 1) {
      user = await findUserById(c.tx, owners[0]!, { forUpdate: true });
      if (!user) throw new ApiError(500, 'unexpected_failure', 'Database error finding user');
    } else {
      if (c.deps.config.disableSignup) throw unprocessable('signup_disabled', 'Signups not allowed for this instance');
      user = await insertUser(c.tx, {
        id: crypto.randomUUID(),
        aud: c.aud,
        role: c.deps.config.jwt.defaultGroupName,
        email,
        emailConfirmedAt: now,
        isSsoUser: true,
        rawAppMetaData: { provider: x.provider, providers: [x.provider] },
        rawUserMetaData: x.data,
        createdAt: now,
        updatedAt: now,
      });
      await beforeUserCreated(c.deps, c.tx, user, c.ip);
      created = true;
    }
    const identity = await insertIdentity(c.tx, {
      providerId: x.sub,
      userId: user.id,
      identityData: x.data,
      provider: x.provider,
      lastSignInAt: now,
      createdAt: now,
      updatedAt: now,
    });
    if (created)
      await insertAudit(c.tx, {
        actor: user,
        action: 'user_signedup',
        traits: { provider: x.provider },
        ip: c.ip,
        now,
      });
    else
      await insertAudit(c.tx, {
        actor: user,
        action: 'identity_linked',
        traits: { identity_id: identity.id, provider: x.provider, provider_id: x.sub },
        ip: c.ip,
        now,
      });
    user = await withProviders(c, user, x.data);
  }
  if (user.email) assertVouched(idp, user.email);
  if (isBanned(user, now)) throw forbidden('user_banned', 'User is banned');
  if (!user.emailConfirmedAt && user.email === email)
    user = await updateUser(c.tx, user.id, { emailConfirmedAt: now, updatedAt: now });
  await insertAudit(c.tx, { actor: user, action: 'login', traits: { provider: x.provider }, ip: c.ip, now });
  return { user, created };
}
