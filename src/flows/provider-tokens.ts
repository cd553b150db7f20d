// Providers' refresh tokens kept for the user (EXTERNAL_<PROVIDER>_STORE_TOKENS, authsvc only): the
// one a built-in OAuth 2 provider returns at sign-in or identity linking is stored per identity,
// always encrypted (GoTrue's encrypted string under SECURITY_DB_ENCRYPTION_*, bound to the row's
// id; start-up refuses the setting without a key). A sign-in without a refresh token keeps the
// stored one (Google sends one only at first consent). Custom providers keep none.
// POST /user/identities/{provider}/token trades the stored token at the provider for an access token.
import type { AuthContext } from '../app-env.ts';
import { DecryptionError, decryptString, encryptString, parseEncryptedString } from '../crypto/encrypted-string.ts';
import type { Executor } from '../db/database.ts';
import { findIdentityByProviderId } from '../db/identities.ts';
import {
  deleteProviderToken,
  findProviderToken,
  type ProviderTokenRow,
  upsertProviderToken,
} from '../db/provider-tokens.ts';
import type { Config } from '../config/types.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, notFound, validationFailed } from '../core/errors.ts';
import { enabledProvider, isProviderName, oauthContext } from '../oauth/context.ts';
import type { ProviderToken } from '../oauth/provider.ts';
import { ProviderError, TokenRefusal } from '../oauth/provider-error.ts';
import { requireAal2WhenMfa } from '../accounts/aal2-rule.ts';
import { type ExternalIdentity, providerId } from '../accounts/external-identity.ts';
import { sendTimeoutMs } from '../accounts/outbox.ts';

/** EXTERNAL_<PROVIDER>_STORE_TOKENS of a built-in OAuth 2 provider (twitter's OAuth 1.0a has no refresh token). */
export function storesTokens(config: Config, provider: string): boolean {
  return isProviderName(provider) && provider !== 'twitter' && config.external.providers[provider].storeTokens;
}

interface TokenOwner {
  identityId: string;
  userId: string;
  provider: string;
}

/** Seals `refreshToken` for a new row id and stores it as the identity's token. */
async function storeToken(deps: Deps, ex: Executor, owner: TokenOwner, refreshToken: string): Promise<void> {
  const enc = deps.config.security.dbEncryption;
  const id = crypto.randomUUID();
  const sealed = await encryptString(id, refreshToken, enc.encryptionKeyId, enc.encryptionKey, deps.randomBytes);
  await upsertProviderToken(ex, { id, ...owner, refreshToken: sealed, now: deps.now() });
}

/** After a sign-in, invitation or link, in its transaction: keeps the provider's refresh token when the provider is set to. */
export async function keepProviderToken(
  deps: Deps,
  tx: Executor,
  userId: string,
  x: ExternalIdentity,
  refreshToken: string | null | undefined,
): Promise<void> {
  if (!refreshToken || !storesTokens(deps.config, x.provider)) return;
  const identity = await findIdentityByProviderId(tx, providerId(x), x.provider);
  if (!identity || identity.userId !== userId) return;
  await storeToken(deps, tx, { identityId: identity.id, userId, provider: x.provider }, refreshToken);
}

/** The stored token in clear, and whether it is under another key than the current one. */
async function openToken(deps: Deps, row: ProviderTokenRow): Promise<{ token: string; reEncrypt: boolean }> {
  const enc = deps.config.security.dbEncryption;
  const es = parseEncryptedString(row.refreshToken);
  // Names the key id at most, never a token.
  const failed = (why: string, err?: unknown) =>
    new ApiError(500, 'unexpected_failure', `Stored provider token cannot be read: ${why}`, undefined, err);
  if (!es) throw failed('it is not an encrypted string');
  try {
    return { token: await decryptString(es, row.id, enc.decryptionKeys), reEncrypt: es.keyId !== enc.encryptionKeyId };
  } catch (err) {
    if (err instanceof DecryptionError) throw failed(err.message, err);
    throw err;
  }
}

export interface FreshProviderToken {
  provider_token: string;
  /** Seconds, as the provider said; null when it did not. */
  provider_expires_in: number | null;
}

/** What a refusal says: the provider's error code and description only (never its whole answer). */
function refusedMessage(provider: string, err: TokenRefusal): string {
  return `${provider} refused to refresh the token: ${err.error}${err.description ? ` (${err.description})` : ''}`;
}

/**
 * A fresh access token from the provider for the caller's stored refresh token of `name`. A
 * refresh token the provider rotates is stored in place of the old one; one it calls invalid_grant
 * (revoked, expired) is deleted. While the user has a verified factor, only an aal2 session may.
 */
export async function refreshProviderToken(deps: Deps, auth: AuthContext, name: string): Promise<FreshProviderToken> {
  await requireAal2WhenMfa(deps.db, auth.user.id, auth.session?.aal, 'use a provider token');
  const provider = name.toLowerCase();
  const none = () => notFound('no_provider_token', `No ${provider} refresh token is stored for this user`);
  if (!storesTokens(deps.config, provider)) throw none();
  const row = await findProviderToken(deps.db, auth.user.id, provider);
  if (!row || !auth.identities.some((i) => i.id === row.identityId)) throw none();
  const client = enabledProvider(deps.config, provider)?.provider;
  // GoTrue's words for a provider switched off (flows/external.ts).
  if (!client?.refresh) throw validationFailed('Unsupported provider: provider is not enabled');
  const stored = await openToken(deps, row);
  let fresh: ProviderToken;
  try {
    fresh = await client.refresh(oauthContext(deps, AbortSignal.timeout(sendTimeoutMs(deps))), stored.token);
  } catch (err) {
    if (err instanceof TokenRefusal) {
      if (err.error === 'invalid_grant') await deleteProviderToken(deps.db, row.id);
      throw badRequest('provider_token_refresh_failed', refusedMessage(provider, err));
    }
    if (err instanceof ProviderError)
      throw new ApiError(500, 'unexpected_failure', 'Unable to refresh the provider token', undefined, err);
    throw err;
  }
  const owner = { identityId: row.identityId, userId: row.userId, provider };
  if (fresh.refreshToken && fresh.refreshToken !== stored.token)
    await storeToken(deps, deps.db, owner, fresh.refreshToken);
  else if (stored.reEncrypt) await storeToken(deps, deps.db, owner, stored.token);
  return { provider_token: fresh.accessToken, provider_expires_in: fresh.expiresIn ?? null };
}
