// GET /openapi.json — the OpenAPI 3.1 document (not a GoTrue route). Built on the first request
// and kept for the life of the app, one per mount prefix: no other request pays for it.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { openApiDocument } from '../openapi/document.ts';

export function openapiRoutes(): Hono<AppEnv> {
  const built = new Map<string, string>();
  return new Hono<AppEnv>().get('/openapi.json', (c) => {
    // '/auth/v1/openapi.json' → servers '/auth/v1'; '/openapi.json' → '/'.
    const prefix = c.req.path.slice(0, c.req.path.lastIndexOf('/openapi.json')) || '/';
    let text = built.get(prefix);
    if (text === undefined) {
      text = JSON.stringify(openApiDocument(c.get('deps').version, prefix));
      built.set(prefix, text);
    }
    c.header('Cache-Control', 'public, max-age=600');
    return c.body(text, 200, { 'Content-Type': 'application/json; charset=UTF-8' });
  });
}
