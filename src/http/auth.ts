// requireAuthentication: a valid bearer JWT whose user exists, whose session (if named)
// still exists, and who is not banned — with GoTrue's statuses and codes.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { verifyJwt } from '../crypto/jwt.ts';
import { isBanned, loadAuthContext } from '../db/users.ts';
import { ApiError, forbidden } from './errors.ts';

const BEARER_RE = /^bearer (\S+)$/i;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function bearerToken(c: Context): string {
  const m = BEARER_RE.exec(c.req.header('authorization') ?? '');
  if (!m?.[1]) throw new ApiError(401, 'no_authorization', 'This endpoint requires a valid Bearer token');
  return m[1];
}

export const requireAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps = c.get('deps');
  const claims = (await verifyJwt(deps.keys, bearerToken(c), deps.now())) as AppEnv['Variables']['auth']['claims'];
  const sub = claims.sub;
  if (!sub) throw forbidden('bad_jwt', 'invalid claim: missing sub claim');
  if (!UUID_RE.test(sub)) throw new ApiError(400, 'bad_jwt', 'invalid claim: sub claim must be a UUID');
  const sid = claims.session_id;
  const hasSid = sid !== undefined && sid !== null && sid !== '';
  if (hasSid && (typeof sid !== 'string' || !UUID_RE.test(sid))) throw forbidden('bad_jwt', 'invalid claim: session_id claim must be a UUID');
  // One statement: the user, its identities and factors, and the named session.
  const found = await loadAuthContext(deps.db, sub.toLowerCase(), hasSid ? (sid as string).toLowerCase() : null);
  // A soft-deleted user (DELETE /admin/users, should_soft_delete) no longer exists for its tokens.
  if (!found || found.user.deletedAt) throw forbidden('user_not_found', 'User from sub claim in JWT does not exist');
  const { user, identities, factors, session } = found;
  if (hasSid && (!session || session.userId !== user.id)) {
    throw forbidden('session_not_found', 'Session from session_id claim in JWT does not exist');
  }
  if (isBanned(user, deps.now())) throw forbidden('user_banned', 'User is banned');
  c.set('auth', { claims, user, session, identities, factors });
  await next();
};
