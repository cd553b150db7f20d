// From the configuration to a provider client: settings per EXTERNAL_<P>_*, the per-Deps caches
// (OIDC discovery and JWKS, x/oauth2's client-auth style per token URL) and the request context.
import { type ProviderName, PROVIDERS } from '../config/kinds.ts';
import type { Config } from '../config/types.ts';
import { createOidcCache } from './oidc-cache.ts';
import type {
  AppleSigningKey,
  OAuthContext,
  OAuthProvider,
  OidcCache,
  ProviderSettings,
  SignedSecret,
} from './provider.ts';
import { OAUTH_PROVIDERS } from './registry.ts';

export interface OAuthCache {
  oidc: OidcCache;
  /** Custom providers' documents: filled only through the SSRF guard, so never from a built-in's fetch. */
  custom: OidcCache;
  authStyles: Map<string, 'header' | 'params'>;
  clientSecrets: Map<string, Promise<SignedSecret>>;
}

export function createOAuthCache(): OAuthCache {
  return { oidc: createOidcCache(), custom: createOidcCache(), authStyles: new Map(), clientSecrets: new Map() };
}

interface ContextSource {
  fetch: typeof fetch;
  now: () => Date;
  randomBytes: (n: number) => Uint8Array;
  config: Config;
  version: string;
  oauthCache?: OAuthCache;
}

/** `budget`: the flow's overall time for provider calls (see OAuthContext.signal). */
export function oauthContext(c: ContextSource, budget?: AbortSignal): OAuthContext {
  const cache = c.oauthCache ?? createOAuthCache();
  return {
    fetch: c.fetch,
    now: c.now,
    randomBytes: c.randomBytes,
    signal: budget,
    userAgent: `authsvc/${c.version || 'dev'}`,
    // INTERNAL_HTTP_TIMEOUT is one setting for every outgoing call; it lives with the SMS settings.
    timeoutMs: c.config.sms.httpTimeout * 1000,
    oidc: cache.oidc,
    authStyles: cache.authStyles,
    clientSecrets: cache.clientSecrets,
  };
}

export function isProviderName(name: string): name is ProviderName {
  return (PROVIDERS as readonly string[]).includes(name);
}

/** The provider's settings when it is enabled (start-up has checked its id, secret and redirect URI). */
export function enabledSettings(config: Config, name: string): ProviderSettings | undefined {
  const lower = name.toLowerCase();
  if (!isProviderName(lower)) return undefined;
  const p = config.external.providers[lower];
  if (!p.enabled) return undefined;
  return {
    name: lower,
    clientIds: (p.clientId ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    secret: p.secret ?? '',
    redirectUri: p.redirectUri ?? '',
    url: p.url?.replace(/\/+$/, ''),
    skipNonceCheck: p.skipNonceCheck,
    emailOptional: p.emailOptional,
    signingKey: lower === 'apple' && !p.secret ? appleSigningKey(config) : undefined,
  };
}

/** The key Apple's client secret is signed with; start-up has checked that all three are set when the secret is not. */
function appleSigningKey(config: Config): AppleSigningKey | undefined {
  const { privateKey, keyId, teamId } = config.external.appleKey;
  return privateKey && keyId && teamId ? { privateKey, keyId, teamId } : undefined;
}

export function enabledProvider(
  config: Config,
  name: string,
): { provider: OAuthProvider; settings: ProviderSettings } | undefined {
  const lower = name.toLowerCase();
  const settings = enabledSettings(config, lower);
  if (!settings || !isProviderName(lower)) return undefined;
  return { provider: OAUTH_PROVIDERS[lower](settings), settings };
}
