// Providers' refresh tokens kept for the user (EXTERNAL_<PROVIDER>_STORE_TOKENS, authsvc only): the
// one a built-in OAuth 2 provider returns at sign-in or identity linking is stored per identity,
// always encrypted (GoTrue's encrypted string under SECURITY_DB_ENCRYPTION_*, bound to the row's
// id; start-up refuses the setting without a key). A sign-in without a refresh token keeps the
// stored one (Google sends one only at first consent). Custom providers keep none.
import { encryptString } from '../crypto/encrypted-string.ts';
import type { Executor } from '../db/database.ts';
import { findIdentityByProviderId } from '../db/identities.ts';
import { upsertProviderToken } from '../db/provider-tokens.ts';
import type { Config } from '../config/types.ts';
import type { Deps } from '../deps.ts';
import { isProviderName } from '../oauth/context.ts';
import { type ExternalIdentity, providerId } from '../accounts/external-identity.ts';

/** EXTERNAL_<PROVIDER>_STORE_TOKENS of a built-in OAuth 2 provider (twitter's OAuth 1.0a has no refresh token). */
export function storesTokens(config: Config, provider: string): boolean {
  return isProviderName(provider) && provider !== 'twitter' && config.external.providers[provider].storeTokens;
}

/** Seals and stores `refreshToken` for the identity `x` of `userId`, in the sign-in's transaction. */
export async function saveProviderToken(
  deps: Deps,
  tx: Executor,
  userId: string,
  identity: { provider: string; providerId: string },
  refreshToken: string,
): Promise<void> {
  const row = await findIdentityByProviderId(tx, identity.providerId, identity.provider);
  if (!row || row.userId !== userId) return;
  const enc = deps.config.security.dbEncryption;
  const id = crypto.randomUUID();
  await upsertProviderToken(tx, {
    id,
    identityId: row.id,
    userId,
    provider: identity.provider,
    refreshToken: await encryptString(id, refreshToken, enc.encryptionKeyId, enc.encryptionKey, deps.randomBytes),
    now: deps.now(),
  });
}

/** After a sign-in, invitation or link: keeps the provider's refresh token when the provider is set to. */
export async function keepProviderToken(
  deps: Deps,
  tx: Executor,
  userId: string,
  x: ExternalIdentity,
  refreshToken: string | null | undefined,
): Promise<void> {
  if (!refreshToken || !storesTokens(deps.config, x.provider)) return;
  await saveProviderToken(deps, tx, userId, { provider: x.provider, providerId: providerId(x) }, refreshToken);
}
