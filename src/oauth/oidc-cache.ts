// OIDC discovery documents and JWKS, fetched through the context's fetch and kept for an hour
// (GoTrue's oidc_cache with EXTERNAL_OIDC_PROVIDER_CACHE_TTL's default). One cache per Deps; a
// failed fetch is not cached. Concurrent requests for one URL share one fetch, and a key id
// nobody knows refetches a JWKS at most once a minute per URL (go-oidc's remote key set merges
// its refreshes the same way), so a stream of forged key ids cannot hammer the issuer.
import type { JSONWebKeySet } from 'jose';
import { obj, str } from './claims.ts';
import { bodyText, type CallContext, send } from './oauth2.ts';
import type { OidcCache, OidcDiscovery, OidcFetchContext } from './provider.ts';
import { ProviderError } from './provider-error.ts';

export const discoveryUrlOf = (issuer: string) => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

export const OIDC_CACHE_TTL_MS = 3600 * 1000;
export const JWKS_REFETCH_INTERVAL_MS = 60 * 1000;

export function createOidcCache(ttlMs = OIDC_CACHE_TTL_MS): OidcCache {
  const entries = new Map<string, { at: number; value: unknown }>();
  const inflight = new Map<string, Promise<unknown>>();
  const forcedAt = new Map<string, number>();

  async function cached<T>(
    ctx: OidcFetchContext,
    url: string,
    read: (body: Record<string, unknown>) => T,
    fresh = false,
  ): Promise<T> {
    const now = ctx.now().getTime();
    const hit = entries.get(url);
    if (hit && !fresh && now - hit.at < ttlMs) return hit.value as T;
    if (hit && fresh) {
      const last = forcedAt.get(url);
      if (last !== undefined && now - last < JWKS_REFETCH_INTERVAL_MS) return hit.value as T;
      forcedAt.set(url, now);
    }
    let pending = inflight.get(url) as Promise<T> | undefined;
    if (!pending) {
      pending = (async () => {
        try {
          const value = read(await fetchJson(ctx, url));
          entries.set(url, { at: now, value });
          return value;
        } finally {
          inflight.delete(url);
        }
      })();
      inflight.set(url, pending);
    }
    try {
      return await pending;
    } catch (err) {
      // As GoTrue's cache: a stale entry keeps sign-in working through an issuer's outage.
      if (hit) return hit.value as T;
      throw err;
    }
  }
  return {
    discovery(ctx, issuer, override) {
      const url = override || discoveryUrlOf(issuer);
      return cached(ctx, url, (b) => {
        const d: OidcDiscovery = {
          issuer: str(b.issuer),
          authorization_endpoint: str(b.authorization_endpoint),
          token_endpoint: str(b.token_endpoint),
          jwks_uri: str(b.jwks_uri),
          userinfo_endpoint: str(b.userinfo_endpoint) || undefined,
        };
        if (!d.issuer || !d.jwks_uri) throw new ProviderError(`${url} lacks issuer or jwks_uri`);
        return d;
      });
    },
    jwks(ctx, jwksUri, fresh) {
      return cached(
        ctx,
        jwksUri,
        (b) => {
          if (!Array.isArray(b.keys)) throw new ProviderError(`${jwksUri} has no keys`);
          return b as unknown as JSONWebKeySet;
        },
        fresh,
      );
    },
    forget(url) {
      entries.delete(url);
      forcedAt.delete(url);
    },
  };
}

async function fetchJson(ctx: CallContext, url: string): Promise<Record<string, unknown>> {
  const res = await send(ctx, url, { headers: { Accept: 'application/json' } }, `fetching ${url}`);
  const text = await bodyText(res, `fetching ${url}`);
  if (!res.ok) throw new ProviderError(`${url} answered HTTP ${res.status}`);
  try {
    return obj(JSON.parse(text));
  } catch {
    throw new ProviderError(`${url} did not answer JSON`);
  }
}
