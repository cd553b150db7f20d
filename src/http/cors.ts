// CORS as GoTrue's rs/cors answers it (any origin, with credentials). Requests without an
// Origin header — servers, mobile apps, most traffic — pass through untouched, which keeps
// Hono's fast response path (hono/cors rewrites every response).
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';

const METHODS = 'GET, POST, PUT, PATCH, DELETE';
const EXPOSED = 'X-Total-Count, Link, X-Supabase-Api-Version';

export function corsMiddleware(allowedHeaders: string[]): MiddlewareHandler<AppEnv> {
  const allowed = allowedHeaders.join(', ');
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (!origin) return next();
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
      return c.body(null, 204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Methods': METHODS,
        'Access-Control-Allow-Headers': allowed,
        'Access-Control-Max-Age': '300',
        Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      });
    }
    await next();
    c.res.headers.set('Access-Control-Allow-Origin', origin);
    c.res.headers.set('Access-Control-Allow-Credentials', 'true');
    c.res.headers.set('Access-Control-Expose-Headers', EXPOSED);
    c.res.headers.append('Vary', 'Origin');
  };
}
