// requireAuthentication: a valid bearer JWT whose user exists, whose session (if named)
// still exists, and who is not banned — with GoTrue's statuses and codes. Beyond GoTrue (security
// review 2026-12-01, H1): a token issued to an OAuth client is not the user's session here, and
// an ID token is never a bearer token.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { verifyJwt } from '../crypto/jwt.ts';
import { isBanned, loadAuthContext } from '../db/users.ts';
import { ApiError, forbidden } from '../core/errors.ts';

const BEARER_RE = /^bearer (\S+)$/i;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The payload claim that marks authsvc's ID tokens (oauth-server/id-token.ts; Keycloak's convention). */
export const ID_TOKEN_TYP = 'ID';

export function bearerToken(c: Context): string {
  const m = BEARER_RE.exec(c.req.header('authorization') ?? '');
  if (!m?.[1]) throw new ApiError(401, 'no_authorization', 'This endpoint requires a valid Bearer token');
  return m[1];
}

/**
 * Why verified claims are not a bearer credential for authsvc's own API, if they are not: an ID
 * token (marked `typ: "ID"`; those signed before the mark carry `client_id` and no session), or an
 * OAuth client's access token (its session names the client; `client_id` without a session).
 */
export function clientIssuedRefusal(
  claims: Record<string, unknown>,
  session: { oauthClientId?: string | null } | undefined,
): ApiError | undefined {
  if (claims.typ === ID_TOKEN_TYP) return idTokenRefused();
  const sid = claims.session_id;
  const sessionless = sid === undefined || sid === null || sid === '';
  if (sessionless && claims.client_id !== undefined && claims.client_id !== null) return idTokenRefused();
  if (session?.oauthClientId) return oauthClientTokenRefused();
  return undefined;
}

const idTokenRefused = () => forbidden('bad_jwt', 'invalid token: an ID token is not an access token');

/** A token an OAuth client holds is for `/oauth/userinfo` and its resource servers, nothing else here. */
export const oauthClientTokenRefused = () =>
  forbidden('oauth_client_token_not_allowed', 'A token issued to an OAuth client cannot be used at this endpoint');

/** Verifies the bearer token and sets `auth`, or throws why it is refused. */
async function authenticate(c: Context<AppEnv>, allowOAuthClient: boolean): Promise<void> {
  const deps = c.get('deps');
  const claims = (await verifyJwt(deps.keys, bearerToken(c), deps.now())) as AppEnv['Variables']['auth']['claims'];
  const sub = claims.sub;
  if (!sub) throw forbidden('bad_jwt', 'invalid claim: missing sub claim');
  if (!UUID_RE.test(sub)) throw new ApiError(400, 'bad_jwt', 'invalid claim: sub claim must be a UUID');
  const sid = claims.session_id;
  const hasSid = sid !== undefined && sid !== null && sid !== '';
  if (hasSid && (typeof sid !== 'string' || !UUID_RE.test(sid)))
    throw forbidden('bad_jwt', 'invalid claim: session_id claim must be a UUID');
  // Refused before any database work: an ID token, or a session-less token naming a client.
  const early = clientIssuedRefusal(claims, undefined);
  if (early) throw early;
  // One statement: the user, its identities and factors, and the named session.
  const found = await loadAuthContext(deps.db, sub.toLowerCase(), hasSid ? (sid as string).toLowerCase() : null);
  // A soft-deleted user (DELETE /admin/users, should_soft_delete) no longer exists for its tokens.
  if (!found || found.user.deletedAt) throw forbidden('user_not_found', 'User from sub claim in JWT does not exist');
  const { user, identities, factors, session } = found;
  if (hasSid && (!session || session.userId !== user.id)) {
    throw forbidden('session_not_found', 'Session from session_id claim in JWT does not exist');
  }
  if (!allowOAuthClient && session?.oauthClientId) throw oauthClientTokenRefused();
  if (isBanned(user, deps.now())) throw forbidden('user_banned', 'User is banned');
  c.set('auth', { claims, user, session, identities, factors });
}

/** Every route that acts for the user: a session of the user's own, never an OAuth client's. */
export const requireAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  await authenticate(c, false);
  await next();
};

/** `/oauth/userinfo` only: the user's own tokens and the tokens OAuth clients hold for the user. */
export const requireAuthOrOAuthClient: MiddlewareHandler<AppEnv> = async (c, next) => {
  await authenticate(c, true);
  await next();
};
