// requireAdminCredentials: a valid bearer JWT whose `role` is one of JWT_ADMIN_ROLES
// (GoTrue's default service_role,supabase_admin). A token naming a session needs that session.
// Never an ID token or an OAuth client's token, whatever role its user has (http/auth.ts).
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { verifyJwt } from '../crypto/jwt.ts';
import { findSession } from '../db/sessions.ts';
import { bearerToken, clientIssuedRefusal } from './auth.ts';
import { forbidden } from '../core/errors.ts';

export const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps = c.get('deps');
  const claims = await verifyJwt(deps.keys, bearerToken(c), deps.now());
  const role = typeof claims.role === 'string' ? claims.role : '';
  if (!deps.config.jwt.adminRoles.includes(role)) throw forbidden('not_admin', 'User not allowed');
  const early = clientIssuedRefusal(claims, undefined);
  if (early) throw early;
  const sid = claims.session_id;
  if (typeof sid === 'string' && sid) {
    const session = await findSession(deps.db, sid).catch(() => undefined);
    if (!session) throw forbidden('session_expired', 'Session has expired or is no longer valid');
    const refused = clientIssuedRefusal(claims, session);
    if (refused) throw refused;
  }
  await next();
};
