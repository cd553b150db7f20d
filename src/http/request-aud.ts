import type { Context } from 'hono';
import { decodeJwt } from 'jose';
import type { AppEnv } from '../app-env.ts';
import { validationFailed } from '../core/errors.ts';

/** users.aud is varchar(255): a longer audience can match no user and must not reach an INSERT. */
function storable(aud: string): string {
  if (aud.length > 255) throw validationFailed('aud is too long (max 255 characters)');
  return aud;
}

/** GoTrue's requestAud: X-JWT-AUD, else the bearer token's aud (not for admin roles), else JWT_AUD. */
export function requestAud(c: Context<AppEnv>): string {
  const cfg = c.get('deps').config;
  const header = c.req.header('x-jwt-aud');
  if (header) return storable(header);
  const m = /^bearer (\S+)$/i.exec(c.req.header('authorization') ?? '');
  let tokenAud: string | undefined;
  if (m?.[1]) {
    try {
      const claims = decodeJwt(m[1]);
      const role = typeof claims.role === 'string' ? claims.role : '';
      const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
      if (aud && !cfg.jwt.adminRoles.includes(role)) tokenAud = aud;
    } catch {
      /* not a JWT (e.g. an anon key of another shape): ignore */
    }
  }
  return tokenAud ? storable(tokenAud) : cfg.jwt.aud;
}
