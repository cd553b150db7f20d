// OpenID Connect ID tokens (GoTrue: tokens/service.go GenerateIDToken). Signed with the same key
// as access tokens, which must be asymmetric: a client cannot check an HS256 token without the
// project's secret. Claims follow the granted scopes.
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { base64url, utf8 } from '../crypto/encoding.ts';
import { signJwt } from '../crypto/jwt.ts';
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ID_TOKEN_TYP } from '../http/auth.ts';
import { ApiError } from '../core/errors.ts';

const ID_TOKEN_LIFETIME_SECONDS = 3600;

export const idTokenError = () => new ApiError(500, 'unexpected_failure', 'Error generating ID token');

/** Whether this server can sign ID tokens at all (an asymmetric JWT_KEYS signing key). */
export const canSignIdTokens = (deps: Deps): boolean => !deps.keys.sign.alg.startsWith('HS');

const metaString = (meta: Record<string, unknown> | null, key: string): string | undefined => {
  const v = meta?.[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/** OIDC Core §5.1 profile claims read from user_metadata as they are, when they are strings (authsvc). */
const STANDARD_PROFILE = [
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'profile',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
];

/** OIDC profile claims from user_metadata, with GoTrue's fallbacks (shared with /oauth/userinfo). */
export function profileClaims(user: UserRow): Record<string, unknown> {
  const meta = user.rawUserMetaData ?? null;
  const out: Record<string, unknown> = {};
  const name = metaString(meta, 'name') ?? metaString(meta, 'full_name') ?? (user.email || undefined);
  if (name) out.name = name;
  for (const key of STANDARD_PROFILE) {
    const v = metaString(meta, key);
    if (v) out[key] = v;
  }
  const picture = metaString(meta, 'picture') ?? metaString(meta, 'avatar_url');
  if (picture) out.picture = picture;
  const username =
    metaString(meta, 'preferred_username') ?? metaString(meta, 'username') ?? metaString(meta, 'user_name');
  if (username) out.preferred_username = username;
  if (user.updatedAt && user.updatedAt.getTime() > 0) out.updated_at = Math.floor(user.updatedAt.getTime() / 1000);
  return out;
}

/** The left half of the hash the signing algorithm uses, of the access token, base64url. */
function atHash(alg: string, accessToken: string): string {
  const digest = /512$|^EdDSA$/.test(alg) ? sha512(utf8(accessToken)) : sha256(utf8(accessToken));
  return base64url(digest.subarray(0, digest.length / 2));
}

export async function signIdToken(
  deps: Deps,
  p: { user: UserRow; clientId: string; nonce: string | null; scopes: string[]; accessToken: string },
): Promise<string> {
  if (!canSignIdTokens(deps)) throw idTokenError();
  const now = Math.floor(deps.now().getTime() / 1000);
  const { user, scopes } = p;
  const claims: Record<string, unknown> = {};
  if (deps.config.jwt.issuer) claims.iss = deps.config.jwt.issuer;
  claims.sub = user.id;
  claims.aud = p.clientId;
  claims.exp = now + ID_TOKEN_LIFETIME_SECONDS;
  claims.iat = now;
  if (p.nonce) claims.nonce = p.nonce;
  claims.auth_time = Math.floor((user.lastSignInAt ?? deps.now()).getTime() / 1000);
  // authsvc (OIDC Core §3.3.2.11; GoTrue sends none): binds the ID token to the access token issued with it.
  claims.at_hash = atHash(deps.keys.sign.alg, p.accessToken);
  claims.email_verified = false;
  claims.phone_number_verified = false;
  if (scopes.includes('email')) {
    if (user.email) claims.email = user.email;
    claims.email_verified = !!user.emailConfirmedAt;
  }
  if (scopes.includes('phone')) {
    if (user.phone) claims.phone_number = user.phone;
    claims.phone_number_verified = !!user.phoneConfirmedAt;
  }
  if (scopes.includes('profile')) Object.assign(claims, profileClaims(user));
  claims.client_id = p.clientId;
  // authsvc: marks it as an ID token, which http/auth.ts never accepts as a bearer token.
  claims.typ = ID_TOKEN_TYP;
  return signJwt(deps.keys, claims);
}
