// ID tokens as GoTrue checks them (provider/oidc.go ParseIDToken over go-oidc): the signature
// against the issuer's JWKS from its discovery document (fetched again for an unknown key id, at
// most once a minute), the issuer (unless Apple's two issuers make it moot), the audience when a
// client id is given, the expiry, and at_hash when an access token came with it. The claims are
// then mapped as GoTrue's parse<Provider>IDToken functions do.
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from 'jose';
import { base64url, utf8 } from '../crypto/encoding.ts';
import { type Claims, obj, str } from './claims.ts';
import type { OAuthContext, ProviderEmail, ProviderUser } from './provider.ts';
import { ProviderError } from './provider-error.ts';

export interface IdTokenCheck {
  /** Whose discovery document names the keys. */
  issuer: string;
  /** Where that document is, when not at the issuer's well-known path (custom providers' discovery_url). */
  discoveryUrl?: string;
  /** go-oidc's ClientID check: `aud` must contain it. Unset: GoTrue's SkipClientIDCheck. */
  clientId?: string;
  /** Apple: the discovery document's issuer and the token's need not match. */
  skipIssuerCheck?: boolean;
  /** Other spellings of the issuer the token may carry (go-oidc: Google's scheme-less `accounts.google.com`). */
  issuerAliases?: string[];
  /** With an at_hash claim, the access token must hash to it. */
  accessToken?: string;
}

/** The unverified `iss` of a token (GoTrue's Detect…IDTokenIssuer). */
export function unverifiedIssuer(idToken: string): string {
  try {
    return str(decodeJwt(idToken).iss);
  } catch {
    throw new ProviderError('invalid ID token');
  }
}

export async function verifyOidcToken(ctx: OAuthContext, idToken: string, check: IdTokenCheck): Promise<JWTPayload> {
  const discovery = await ctx.oidc.discovery(ctx, check.issuer, check.discoveryUrl);
  if (!check.skipIssuerCheck && discovery.issuer !== check.issuer)
    throw new ProviderError(`discovery document names issuer ${discovery.issuer}, not ${check.issuer}`);
  const options = {
    issuer: check.skipIssuerCheck ? undefined : [discovery.issuer, ...(check.issuerAliases ?? [])],
    audience: check.clientId,
    algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'EdDSA'],
  };
  let payload: JWTPayload;
  try {
    payload = (await jwtVerify(idToken, createLocalJWKSet(await ctx.oidc.jwks(ctx, discovery.jwks_uri)), options))
      .payload;
  } catch (err) {
    if (!(err instanceof errors.JWKSNoMatchingKey))
      throw new ProviderError(`ID token refused: ${err instanceof Error ? err.message : 'invalid'}`, { cause: err });
    try {
      payload = (
        await jwtVerify(idToken, createLocalJWKSet(await ctx.oidc.jwks(ctx, discovery.jwks_uri, true)), options)
      ).payload;
    } catch (again) {
      throw new ProviderError(`ID token refused: ${again instanceof Error ? again.message : 'invalid'}`, {
        cause: again,
      });
    }
  }
  if (check.accessToken && typeof payload.at_hash === 'string') {
    const alg = decodeProtectedHeader(idToken).alg ?? 'RS256';
    const bits = alg.endsWith('512') ? 'SHA-512' : alg.endsWith('384') ? 'SHA-384' : 'SHA-256';
    const digest = new Uint8Array(await crypto.subtle.digest(bits, utf8(check.accessToken)));
    if (base64url(digest.slice(0, digest.length / 2)) !== payload.at_hash)
      throw new ProviderError('ID token at_hash does not match the access token');
  }
  return payload;
}

const one = (email: string, verified: boolean): ProviderEmail[] => (email ? [{ email, verified, primary: true }] : []);

/** parseGoogleIDToken. */
export function googleUser(p: JWTPayload): ProviderUser {
  const email = str(p.email);
  const claims: Claims = {
    iss: str(p.iss),
    sub: str(p.sub),
    name: str(p.name),
    picture: str(p.picture),
    avatar_url: str(p.picture),
    full_name: str(p.name),
    provider_id: str(p.sub),
  };
  if (str(p.hd)) claims.custom_claims = { hd: str(p.hd) };
  return { emails: one(email, p.email_verified === true || p.verified_email === true), claims };
}

/** parseAppleIDToken: the email is always verified; three Apple claims are kept. */
export function appleUser(p: JWTPayload): ProviderUser {
  const custom: Record<string, unknown> = {};
  const priv = p.is_private_email;
  if (typeof priv === 'boolean') custom.is_private_email = priv;
  else if (priv === 'true' || priv === 'false') custom.is_private_email = priv === 'true';
  if (typeof p.auth_time === 'number') custom.auth_time = p.auth_time;
  if (str(p.transfer_sub)) custom.transfer_sub = str(p.transfer_sub);
  const claims: Claims = { iss: str(p.iss), sub: str(p.sub), provider_id: str(p.sub) };
  if (Object.keys(custom).length > 0) claims.custom_claims = custom;
  // GoTrue lists Apple's email even when empty; an empty one is dropped here (it can match nothing).
  return { emails: one(str(p.email), true), claims };
}

const AZURE_NOT_CUSTOM = [
  'aud',
  'iss',
  'iat',
  'nbf',
  'exp',
  'c_hash',
  'at_hash',
  'aio',
  'nonce',
  'rh',
  'uti',
  'jti',
  'ver',
  'sub',
  'name',
  'preferred_username',
];

/** parseAzureIDToken: xms_edov decides whether the email is verified. */
export function azureUser(p: JWTPayload): ProviderUser {
  const email = str(p.email);
  const edov = p.xms_edov;
  const verified =
    email !== '' && (edov === undefined || edov === null || edov === true || edov === '1' || edov === 'true');
  const custom: Record<string, unknown> = { ...p };
  for (const k of AZURE_NOT_CUSTOM) delete custom[k];
  return {
    emails: one(email, verified),
    claims: {
      iss: str(p.iss),
      sub: str(p.sub),
      provider_id: str(p.sub),
      preferred_username: str(p.preferred_username),
      full_name: str(p.name),
      custom_claims: custom,
    },
  };
}

/** parseFacebookIDToken (Limited Login): the email counts as verified. */
export function facebookIdTokenUser(p: JWTPayload): ProviderUser {
  const email = str(p.email);
  return {
    emails: one(email, true),
    claims: {
      iss: str(p.iss),
      sub: str(p.sub),
      name: str(p.name),
      picture: str(p.picture),
      provider_id: str(p.sub),
      email,
      email_verified: email !== '',
    },
  };
}

export const CLAIM_KEYS = [
  'iss',
  'sub',
  'aud',
  'iat',
  'exp',
  'name',
  'family_name',
  'given_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'updated_at',
  'email',
  'email_verified',
  'phone',
  'phone_verified',
  'custom_claims',
  'full_name',
  'avatar_url',
  'slug',
  'provider_id',
  'user_name',
] as const;

/** parseGenericIDToken: the token's claims under GoTrue's names (Keycloak). */
export function genericUser(p: JWTPayload): ProviderUser {
  const claims: Record<string, unknown> = {};
  for (const k of CLAIM_KEYS) if (p[k] !== undefined) claims[k] = k === 'custom_claims' ? obj(p[k]) : p[k];
  if (typeof claims.updated_at === 'number')
    claims.updated_at = new Date(claims.updated_at * 1000).toISOString().replace('.000Z', 'Z');
  return { emails: one(str(p.email), p.email_verified === true), claims: claims as Claims };
}
