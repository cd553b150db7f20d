// GET /console/ (/console redirects there), /console/app.js, /console/app.css — the admin console (not a GoTrue route): three
// static files bundled into the server at build time (src/console/assets.generated.ts, built from
// console/ by scripts/build-console.ts), so every runtime serves it with no file system. It is a
// browser client of the admin API and holds no privilege of its own. CONSOLE_ENABLED off, these
// paths answer the same 404 as any unknown path. Plain routes, no middleware: no other path runs
// a line of this file.
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { CONSOLE_ASSETS } from '../console/assets.generated.ts';
import { ApiError } from '../core/errors.ts';
import { type Reply, routeGroup } from '../http/route.ts';
import { redirect } from '../openapi/parts.ts';

/** Only the console's own script and style sheet, API calls to this origin, no framing. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function serve(name: string) {
  const asset = CONSOLE_ASSETS[name];
  if (!asset) throw new Error(`no console asset ${name}`);
  return (c: Context<AppEnv>) => {
    if (!c.get('deps').config.console.enabled) throw new ApiError(404, 'not_found', 'Not Found');
    // The page's relative links need the trailing slash: /console → /console/.
    // (Hono's non-strict c.req.path has lost the slash: the raw URL still has it.)
    if (name === 'index.html') {
      const path = new URL(c.req.url).pathname;
      if (!path.endsWith('/')) return c.redirect(`${path}/`, 301);
    }
    const headers = { ...SECURITY_HEADERS, ETag: asset.etag, 'Cache-Control': 'no-cache' };
    const match = c.req.header('if-none-match');
    if (match?.split(',').some((t) => t.trim().replace(/^W\//, '') === asset.etag)) return c.body(null, 304, headers);
    return c.body(asset.body, 200, { ...headers, 'Content-Type': asset.type });
  };
}

const page = (what: string): Record<string, Reply> => ({
  200: { description: `${what}; ETag, Cache-Control: no-cache, a strict Content-Security-Policy.` },
  304: { description: 'If-None-Match names the current ETag.' },
  404: { description: '`not_found`: CONSOLE_ENABLED is false.', error: true },
});

export const consoleRoutes = routeGroup('console')
  .route(
    {
      method: 'get',
      path: '/console',
      summary: 'Admin console: the page (text/html) (not a GoTrue route)',
      replies: { ...page('the page (text/html)'), 301: redirect('From /console to /console/.') },
    },
    serve('index.html'),
  )
  .route(
    {
      method: 'get',
      path: '/console/app.js',
      summary: 'Admin console: its script (not a GoTrue route)',
      replies: page('its script'),
    },
    serve('app.js'),
  )
  .route(
    {
      method: 'get',
      path: '/console/app.css',
      summary: 'Admin console: its style sheet (not a GoTrue route)',
      replies: page('its style sheet'),
    },
    serve('app.css'),
  );
