// A custom_oauth_providers row as a provider client (GoTrue: external.go loadCustomProvider).
import { openSecret } from '../crypto/encrypted-string.ts';
import type { CustomProviderRow } from '../db/custom-providers.ts';
import { findCustomProvider } from '../db/custom-providers.ts';
import type { Deps } from '../deps.ts';
import { createOAuthCache } from '../oauth/context.ts';
import { type CustomProviderConfig, customProvider, customSettings } from '../oauth/custom.ts';
import type { CustomProviderName, OAuthProvider, ProviderSettings } from '../oauth/provider.ts';
import type { UrlGuard } from '../oauth/url-guard.ts';

export const isCustomName = (name: string): name is CustomProviderName => name.startsWith('custom:');

export function urlGuard(deps: Deps): UrlGuard {
  return { trustedHosts: deps.config.customOAuth.trustedHosts, resolve: deps.resolveHost };
}

/** CUSTOM_OAUTH_EXTERNAL_URL (else API_EXTERNAL_URL) + /callback. */
export function customRedirectUri(deps: Deps): string {
  return `${(deps.config.customOAuth.externalUrl || deps.config.api.externalUrl).replace(/\/+$/, '')}/callback`;
}

/** Why a custom provider cannot be used (GoTrue's texts), or the row. */
export type CustomLookup = { row: CustomProviderRow } | { missing: 'feature' | 'unknown' | 'disabled' };

export async function lookupCustomProvider(deps: Deps, identifier: string): Promise<CustomLookup> {
  if (!deps.config.customOAuth.enabled) return { missing: 'feature' };
  const row = await findCustomProvider(deps.db, identifier);
  if (!row) return { missing: 'unknown' };
  if (!row.enabled) return { missing: 'disabled' };
  return { row };
}

/** The row as a client; the secret is opened here (DecryptionError when no key opens it). */
export async function customClient(
  deps: Deps,
  row: CustomProviderRow,
): Promise<{ provider: OAuthProvider; settings: ProviderSettings }> {
  const secret = (await openSecret(deps.config.security.dbEncryption, row.id, row.clientSecret)).value;
  const c: CustomProviderConfig = {
    identifier: row.identifier as CustomProviderName,
    type: row.providerType,
    clientId: row.clientId,
    secret,
    acceptableClientIds: row.acceptableClientIds,
    scopes: row.scopes,
    pkce: row.pkceEnabled,
    attributeMapping: row.attributeMapping,
    claimsAllowlist: row.customClaimsAllowlist,
    authorizationParams: row.authorizationParams,
    emailOptional: row.emailOptional,
    skipNonceCheck: row.skipNonceCheck,
    issuer: row.issuer ?? undefined,
    discoveryUrl: row.discoveryUrl ?? undefined,
    authorizationUrl: row.authorizationUrl ?? undefined,
    tokenUrl: row.tokenUrl ?? undefined,
    userinfoUrl: row.userinfoUrl ?? undefined,
    redirectUri: customRedirectUri(deps),
  };
  const cache = (deps.oauthCache ?? createOAuthCache()).custom;
  return { provider: customProvider(c, urlGuard(deps), cache), settings: customSettings(c) };
}
