import type { Context } from 'hono';
import { decodeJwt } from 'jose';
import type { AppEnv } from '../app-env.ts';

/** GoTrue's requestAud: X-JWT-AUD, else the bearer token's aud (not for admin roles), else JWT_AUD. */
export function requestAud(c: Context<AppEnv>): string {
  const cfg = c.var.deps.config;
  const header = c.req.header('x-jwt-aud');
  if (header) return header;
  const m = /^bearer (\S+)$/i.exec(c.req.header('authorization') ?? '');
  if (m?.[1]) {
    try {
      const claims = decodeJwt(m[1]);
      const role = typeof claims.role === 'string' ? claims.role : '';
      const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
      if (aud && !cfg.jwt.adminRoles.includes(role)) return aud;
    } catch { /* not a JWT (e.g. an anon key of another shape): ignore */ }
  }
  return cfg.jwt.aud;
}
