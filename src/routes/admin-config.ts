// GET /admin/config — not a GoTrue route: the effective configuration, every setting by name with
// secrets masked (config/effective.ts), and when this app instance started (on Workers: this
// isolate). Admin roles only; read by the console's Settings and Health screens.
import { maskedSettings } from '../config/effective.ts';
import { type RouteGroup, routeGroup } from '../http/route.ts';
import { json } from '../openapi/parts.ts';

export function adminConfigRoutes(startedAt: Date): RouteGroup {
  return routeGroup('admin').route(
    {
      method: 'get',
      path: '/admin/config',
      summary: "The effective configuration, secrets masked, and the instance's start time (not a GoTrue route)",
      auth: 'admin',
      replies: {
        200: json({
          type: 'object',
          required: ['started_at', 'variables'],
          properties: {
            started_at: { type: 'string', format: 'date-time' },
            variables: { type: 'array', items: { type: 'object', required: ['name', 'value', 'secret', 'set'] } },
          },
        }),
      },
    },
    (c) => {
      c.header('Cache-Control', 'no-store');
      return c.json({ started_at: startedAt.toISOString(), variables: maskedSettings(c.get('deps').config) });
    },
  );
}
