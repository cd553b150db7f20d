// Custom providers (GoTrue: provider/custom_oauth.go): one generic OAuth 2 / OIDC client built from
// a custom_oauth_providers row. OAuth 2 kinds name their three endpoints; OIDC kinds take them from
// the issuer's discovery document (or discovery_url) and read the user from the ID token of the
// code exchange when there is one, else from the userinfo endpoint. Every request goes through
// the SSRF guard (url-guard.ts), and documents are kept in a cache of their own, filled only
// through that guard.
import { obj, type Claims, str } from './claims.ts';
import { authCodeUrl, exchangeCode, getJson } from './oauth2.ts';
import { CLAIM_KEYS, genericUser, verifyOidcToken } from './oidc.ts';
import type { OidcCache, OidcDiscovery } from './provider.ts';
import type { CustomProviderName, OAuthContext, OAuthProvider, ProviderSettings, ProviderUser } from './provider.ts';
import { ProviderError } from './provider-error.ts';
import { guardedFetch, type UrlGuard } from './url-guard.ts';

export interface CustomProviderConfig {
  identifier: CustomProviderName;
  type: 'oauth2' | 'oidc';
  clientId: string;
  secret: string;
  acceptableClientIds: string[];
  scopes: string[];
  pkce: boolean;
  attributeMapping: Record<string, unknown>;
  claimsAllowlist: string[];
  authorizationParams: Record<string, unknown>;
  emailOptional: boolean;
  skipNonceCheck: boolean;
  issuer?: string;
  discoveryUrl?: string;
  authorizationUrl?: string;
  tokenUrl?: string;
  userinfoUrl?: string;
  /** <CUSTOM_OAUTH_EXTERNAL_URL or API_EXTERNAL_URL>/callback. */
  redirectUri: string;
}

/** Where the row's claims may come from and how they are checked (the admin API refuses other targets). */
type ClaimType = 'string' | 'boolean' | 'number' | 'aud' | 'object';
const CLAIM_TYPE: Record<string, ClaimType> = {
  ...Object.fromEntries(CLAIM_KEYS.map((k) => [k, 'string' as ClaimType])),
  iat: 'number',
  exp: 'number',
  email_verified: 'boolean',
  phone_verified: 'boolean',
  aud: 'aud',
  custom_claims: 'object',
};

function fits(type: ClaimType, v: unknown): boolean {
  if (v === null) return true;
  if (type === 'aud') return typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
  if (type === 'object') return typeof v === 'object' && !Array.isArray(v);
  return typeof v === type;
}

/**
 * GoTrue's applyAttributeMapping: a string value names another claim to copy from (when that
 * claim exists), any other value is set as it is. Only GoTrue's claim names survive, and a value
 * of the wrong type (Go's JSON decoding failing) leaves the claims as they were.
 */
export function applyAttributeMapping(claims: Claims, mapping: Record<string, unknown>): Claims {
  const m: Record<string, unknown> = { ...claims };
  for (const [target, source] of Object.entries(mapping)) {
    if (typeof source === 'string') {
      if (source in m) m[target] = m[source];
    } else m[target] = source;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) {
    const type = CLAIM_TYPE[k];
    if (!type || v === undefined) continue;
    if (!fits(type, v)) return claims;
    if (v !== null) out[k] = v;
  }
  return out as Claims;
}

/** captureAllowedClaims: each listed key present in the raw claims, copied into custom_claims as it is. */
function captureAllowed(raw: Record<string, unknown>, allowlist: string[], claims: Claims): Claims {
  const present = allowlist.filter((k) => Object.hasOwn(raw, k));
  if (present.length === 0) return claims;
  const custom = { ...(claims.custom_claims ?? {}) };
  for (const k of present) custom[k] = raw[k];
  return { ...claims, custom_claims: custom };
}

export function customSettings(c: CustomProviderConfig): ProviderSettings {
  return {
    name: c.identifier,
    clientIds: [c.clientId, ...c.acceptableClientIds],
    secret: c.secret,
    redirectUri: c.redirectUri,
    skipNonceCheck: c.skipNonceCheck,
    emailOptional: c.emailOptional,
  };
}

export function customProvider(c: CustomProviderConfig, guard: UrlGuard, cache: OidcCache): OAuthProvider {
  const settings = customSettings(c);
  const guarded = (ctx: OAuthContext): OAuthContext => ({ ...ctx, fetch: guardedFetch(ctx.fetch, guard), oidc: cache });
  const issuer = c.issuer ?? '';

  async function discovery(ctx: OAuthContext): Promise<OidcDiscovery> {
    const d = await ctx.oidc.discovery(ctx, issuer, c.discoveryUrl);
    if (d.issuer !== issuer) throw new ProviderError(`discovery document names issuer ${d.issuer}, not ${issuer}`);
    return d;
  }

  function shape(claims: Claims, raw: Record<string, unknown>): ProviderUser {
    let out = captureAllowed(raw, c.claimsAllowlist, claims);
    if (Object.keys(c.attributeMapping).length > 0) out = applyAttributeMapping(out, c.attributeMapping);
    const email = str(out.email);
    return { emails: email ? [{ email, verified: out.email_verified === true, primary: true }] : [], claims: out };
  }

  async function verify(ctx: OAuthContext, idToken: string) {
    const payload = await verifyOidcToken(ctx, idToken, { issuer, discoveryUrl: c.discoveryUrl });
    return { payload, claims: genericUser(payload).claims };
  }

  const provider: OAuthProvider = {
    name: c.identifier,
    pkce: c.pkce,
    async authorizationUrl(ctx, a) {
      const g = guarded(ctx);
      const authUrl = c.type === 'oidc' ? (await discovery(g)).authorization_endpoint : (c.authorizationUrl ?? '');
      if (!authUrl) throw new ProviderError('the discovery document names no authorization_endpoint');
      // GoTrue splits a custom provider's `scopes` on white space (RFC 6749), not on commas.
      let scopes = a.scopes.split(/\s+/).filter((s) => s !== '');
      if (scopes.length === 0) scopes = c.scopes;
      if (c.type === 'oidc' && !scopes.includes('openid')) scopes = ['openid', ...scopes];
      const stored = Object.entries(c.authorizationParams).filter(
        (e): e is [string, string] => typeof e[1] === 'string',
      );
      return authCodeUrl({
        authUrl,
        clientId: c.clientId,
        redirectUri: c.redirectUri,
        scopes,
        state: a.state,
        params: [...a.params, ...stored],
      });
    },
    async exchange(ctx, x) {
      const g = guarded(ctx);
      const tokenUrl = c.type === 'oidc' ? (await discovery(g)).token_endpoint : (c.tokenUrl ?? '');
      if (!tokenUrl) throw new ProviderError('the discovery document names no token_endpoint');
      return exchangeCode(g, {
        tokenUrl,
        settings,
        code: x.code,
        form: x.codeVerifier ? { code_verifier: x.codeVerifier } : undefined,
      });
    },
    async userInfo(ctx, token) {
      const g = guarded(ctx);
      if (c.type === 'oidc' && token.idToken) {
        const { payload, claims } = await verify(g, token.idToken);
        const aud = Array.isArray(payload.aud) ? payload.aud : payload.aud === undefined ? [] : [payload.aud];
        if (!aud.some((a) => settings.clientIds.includes(a)))
          throw new ProviderError(`token audience [${aud.join(' ')}] does not match any acceptable client ID`);
        return shape(claims, payload as Record<string, unknown>);
      }
      const url = c.type === 'oidc' ? (await discovery(g)).userinfo_endpoint : c.userinfoUrl;
      if (!url) throw new ProviderError('no ID token or userinfo endpoint available');
      const raw = obj(await getJson(g, url, token.accessToken));
      return shape(genericUser(raw).claims, raw);
    },
  };
  if (c.type === 'oidc') {
    // The id_token grant: the token's claims as GoTrue's generic parser maps them (no attribute
    // mapping there, as in GoTrue); the caller checks audience and nonce.
    provider.verifyIdToken = async (ctx, idToken) => {
      const { payload } = await verify(guarded(ctx), idToken);
      return { user: genericUser(payload), payload };
    };
  }
  return provider;
}
