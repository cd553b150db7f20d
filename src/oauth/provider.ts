// What the sign-in flow needs from an external identity provider (GoTrue: provider.Provider and
// provider.OAuthProvider). One small file per provider in this folder holds its endpoints, scopes
// and user-info mapping; every HTTP call goes through OAuthContext.fetch.
import type { JSONWebKeySet } from 'jose';
import type { ProviderName } from '../config/kinds.ts';
import type { Claims } from './claims.ts';

export interface OAuthContext {
  fetch: typeof fetch;
  /** GoTrue's GOTRUE_INTERNAL_HTTP_TIMEOUT, per request. */
  timeoutMs: number;
  /**
   * The budget of the whole /authorize or /callback: once aborted, every provider call stops, so
   * the flow answers with its own error before API_MAX_REQUEST_DURATION's 504.
   */
  signal?: AbortSignal;
  /** Sent as User-Agent on every provider request (authsvc/<version>); GitHub's API refuses requests without one. */
  userAgent: string;
  now: () => Date;
  randomBytes: (n: number) => Uint8Array;
  /** Discovery documents and JWKS, cached (EXTERNAL_OIDC_PROVIDER_CACHE_TTL in GoTrue). */
  oidc: OidcCache;
  /** x/oauth2's AuthStyleCache: which client authentication each token URL accepted. */
  authStyles: Map<string, 'header' | 'params'>;
  /** Client secrets authsvc signed (Apple's), by the settings they were signed from, until shortly before they expire. */
  clientSecrets: Map<string, Promise<SignedSecret>>;
}

/** A client-secret JWT and when it expires (epoch seconds). */
export interface SignedSecret {
  jwt: string;
  exp: number;
}

/** Discovery documents and JWKS of OIDC providers (oidc-cache.ts). */
export interface OidcDiscovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
}

/** What a discovery or JWKS fetch needs of the context. */
export type OidcFetchContext = Pick<OAuthContext, 'fetch' | 'timeoutMs' | 'signal' | 'userAgent' | 'now'>;

export interface OidcCache {
  /** `<issuer>/.well-known/openid-configuration`, or `url` when the provider names another. */
  discovery(ctx: OidcFetchContext, issuer: string, url?: string): Promise<OidcDiscovery>;
  /** `fresh`: a key id nobody knows (the provider may have rotated its keys); at most once a minute per URL. */
  jwks(ctx: OidcFetchContext, jwksUri: string, fresh?: boolean): Promise<JSONWebKeySet>;
  /** Drops what is kept for a URL (a custom provider's discovery document after an admin change). */
  forget(url: string): void;
}

/** A provider added at run time through /admin/custom-providers (its identifier). */
export type CustomProviderName = `custom:${string}`;
export type AnyProviderName = ProviderName | CustomProviderName;

/** One provider's settings (EXTERNAL_<P>_*, or a custom provider's row). */
export interface ProviderSettings {
  name: AnyProviderName;
  /** EXTERNAL_<P>_CLIENT_ID split on commas: the first is the OAuth client, all are id_token audiences. */
  clientIds: string[];
  secret: string;
  redirectUri: string;
  /** EXTERNAL_<P>_URL, trailing slash removed; undefined when unset. */
  url?: string;
  skipNonceCheck: boolean;
  emailOptional: boolean;
  /** Apple only, when EXTERNAL_APPLE_SECRET is empty: the key authsvc signs the client secret with (apple-secret.ts). */
  signingKey?: AppleSigningKey;
}

/** EXTERNAL_APPLE_PRIVATE_KEY (a checked PKCS#8 PEM), EXTERNAL_APPLE_KEY_ID and EXTERNAL_APPLE_TEAM_ID. */
export interface AppleSigningKey {
  privateKey: string;
  keyId: string;
  teamId: string;
}

/** GoTrue's provider.Email. */
export interface ProviderEmail {
  email: string;
  verified: boolean;
  primary: boolean;
}

/** GoTrue's provider.UserProvidedData: the emails and the identity's claims. */
export interface ProviderUser {
  emails: ProviderEmail[];
  claims: Claims;
}

export interface ProviderToken {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** `expires_in` in seconds, when the answer has one. */
  expiresIn?: number;
  /** The whole token response (WorkOS's `profile`, Azure's and Apple's `id_token`, …). */
  raw: Record<string, unknown>;
}

export interface AuthorizeInput {
  /** The flow_state id; goes out as `state` (OAuth 1.0a: inside the callback URL). */
  state: string;
  /** The request's `scopes` query parameter, raw (comma or space separated, as GoTrue splits it). */
  scopes: string;
  /** The other query parameters of /authorize, forwarded as GoTrue does (already filtered). */
  params: [string, string][];
}

export interface CallbackInput {
  /** The authorization code ('' for OAuth 1.0a). */
  code: string;
  /** Provider-side PKCE: the verifier whose challenge went out at /authorize. */
  codeVerifier?: string;
  /** The callback's query (GET) or form (POST, Apple's form_post). */
  params: URLSearchParams;
}

export interface OAuthProvider {
  readonly name: AnyProviderName;
  /**
   * Provider-side PKCE (GoTrue's RequiresPKCE): /authorize sends an S256 challenge, keeps the
   * verifier in oauth_client_states, and the callback hands it to `exchange`.
   */
  readonly pkce?: boolean;
  /** OAuth 1.0a (twitter): no `code` in the callback, `oauth_token` and `oauth_verifier` instead. */
  readonly oauth1?: boolean;
  /** Where /authorize sends the browser. */
  authorizationUrl(ctx: OAuthContext, input: AuthorizeInput): Promise<string>;
  /** The token leg. Throws ProviderError on any failure. */
  exchange(ctx: OAuthContext, input: CallbackInput): Promise<ProviderToken>;
  /**
   * A new access token for a stored refresh token (grant_type=refresh_token, the client
   * authenticated as at the code exchange); every built-in OAuth 2 provider has one. Throws
   * TokenRefusal when the provider answers an OAuth error, ProviderError on any other failure.
   */
  refresh?(ctx: OAuthContext, refreshToken: string): Promise<ProviderToken>;
  /** The user-info leg. Throws ProviderError on any failure. */
  userInfo(ctx: OAuthContext, token: ProviderToken, params: URLSearchParams): Promise<ProviderUser>;
  /**
   * Only apple, google, azure, facebook and keycloak (POST /token?grant_type=id_token): verifies the
   * token's signature against the issuer's JWKS, its issuer, its audience (any of clientIds) and
   * expiry, as GoTrue's provider.ParseIDToken does, and maps its claims. The nonce and at_hash are
   * checked by the caller from the returned payload.
   */
  verifyIdToken?(ctx: OAuthContext, idToken: string): Promise<VerifiedIdToken>;
}

export interface VerifiedIdToken {
  user: ProviderUser;
  /** The verified payload (nonce, at_hash, iss, …). */
  payload: Record<string, unknown>;
}
