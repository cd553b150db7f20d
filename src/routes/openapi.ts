// GET /openapi.json — the OpenAPI 3.1 document (not a GoTrue route). Built on the first request
// and kept for the life of the app, one per mount prefix: no other request pays for it.
import { type Operation, type RouteGroup, routeGroup } from '../http/route.ts';
import { openApiDocument } from '../openapi/document.ts';
import { json } from '../openapi/parts.ts';

/** `operations`: every other route's, read when the document is first built. */
export function openapiRoutes(operations: () => readonly Operation[]): RouteGroup {
  const built = new Map<string, string>();
  const group = routeGroup('health');
  return group.route(
    { method: 'get', path: '/openapi.json', summary: 'This document', replies: { 200: json('OpenApiDocument') } },
    (c) => {
      // '/auth/v1/openapi.json' → servers '/auth/v1'; '/openapi.json' → '/'.
      const prefix = c.req.path.slice(0, c.req.path.lastIndexOf('/openapi.json')) || '/';
      let text = built.get(prefix);
      if (text === undefined) {
        text = JSON.stringify(openApiDocument(c.get('deps').version, prefix, [...operations(), ...group.operations]));
        built.set(prefix, text);
      }
      c.header('Cache-Control', 'public, max-age=600');
      return c.body(text, 200, { 'Content-Type': 'application/json; charset=UTF-8' });
    },
  );
}
