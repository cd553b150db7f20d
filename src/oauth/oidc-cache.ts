// OIDC discovery documents and JWKS, fetched through the context's fetch and kept for an hour
// (GoTrue's oidc_cache with EXTERNAL_OIDC_PROVIDER_CACHE_TTL's default). One cache per Deps; a
// failed fetch is not cached.
import type { JSONWebKeySet } from 'jose';
import { obj, str } from './claims.ts';
import type { OAuthContext } from './provider.ts';
import { ProviderError } from './provider.ts';

export interface OidcDiscovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
}

export interface OidcCache {
  /** `<issuer>/.well-known/openid-configuration`. */
  discovery(ctx: Pick<OAuthContext, 'fetch' | 'timeoutMs' | 'now'>, issuer: string): Promise<OidcDiscovery>;
  /** `fresh`: skip the cache (a key id nobody knows: the provider may have rotated its keys). */
  jwks(ctx: Pick<OAuthContext, 'fetch' | 'timeoutMs' | 'now'>, jwksUri: string, fresh?: boolean): Promise<JSONWebKeySet>;
}

export const OIDC_CACHE_TTL_MS = 3600 * 1000;

export function createOidcCache(ttlMs = OIDC_CACHE_TTL_MS): OidcCache {
  const entries = new Map<string, { at: number; value: unknown }>();
  async function cached<T>(ctx: Pick<OAuthContext, 'fetch' | 'timeoutMs' | 'now'>, url: string, read: (body: Record<string, unknown>) => T, fresh = false): Promise<T> {
    const now = ctx.now().getTime();
    const hit = entries.get(url);
    if (hit && !fresh && now - hit.at < ttlMs) return hit.value as T;
    try {
      const value = read(await fetchJson(ctx, url));
      entries.set(url, { at: now, value });
      return value;
    } catch (err) {
      // As GoTrue's cache: a stale entry keeps sign-in working through an issuer's outage.
      if (hit) return hit.value as T;
      throw err;
    }
  }
  return {
    discovery(ctx, issuer) {
      const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      return cached(ctx, url, (b) => {
        const d: OidcDiscovery = {
          issuer: str(b.issuer), authorization_endpoint: str(b.authorization_endpoint), token_endpoint: str(b.token_endpoint),
          jwks_uri: str(b.jwks_uri), userinfo_endpoint: str(b.userinfo_endpoint) || undefined,
        };
        if (!d.issuer || !d.jwks_uri) throw new ProviderError(`${url} lacks issuer or jwks_uri`);
        return d;
      });
    },
    jwks(ctx, jwksUri, fresh) {
      return cached(ctx, jwksUri, (b) => {
        if (!Array.isArray(b.keys)) throw new ProviderError(`${jwksUri} has no keys`);
        return b as unknown as JSONWebKeySet;
      }, fresh);
    },
  };
}

async function fetchJson(ctx: Pick<OAuthContext, 'fetch' | 'timeoutMs'>, url: string): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await ctx.fetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(ctx.timeoutMs) });
  } catch (err) {
    throw new ProviderError(`fetching ${url} failed`, { cause: err });
  }
  if (!res.ok) throw new ProviderError(`${url} answered HTTP ${res.status}`);
  try {
    return obj(await res.json());
  } catch {
    throw new ProviderError(`${url} did not answer JSON`);
  }
}
