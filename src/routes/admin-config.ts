// GET /admin/config — not a GoTrue route: the effective configuration, every setting by name with
// secrets masked (config/effective.ts), and when this app instance started (on Workers: this
// isolate). Admin roles only; read by the console's Settings and Health screens.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { maskedSettings } from '../config/effective.ts';
import { requireAdmin } from '../http/admin-auth.ts';

export function adminConfigRoutes(startedAt: Date): Hono<AppEnv> {
  return new Hono<AppEnv>().get('/admin/config', requireAdmin, (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json({ started_at: startedAt.toISOString(), variables: maskedSettings(c.get('deps').config) });
  });
}
