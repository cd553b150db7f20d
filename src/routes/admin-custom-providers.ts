// /admin/custom-providers — GoTrue: adminCustomOAuthProvidersList, …Create, …Get, …Update, …Delete
import { Hono, type MiddlewareHandler } from 'hono';
import {
  adminCreateCustomProvider, adminDeleteCustomProvider, adminGetCustomProvider, adminListCustomProviders, adminUpdateCustomProvider,
  CustomProviderBody,
} from '../admin/custom-providers.ts';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { notFound } from '../core/errors.ts';
import { readJson } from '../http/read-json.ts';

export const adminCustomProviderRoutes = new Hono<AppEnv>();

// GoTrue: Admin, then the CUSTOM_OAUTH_ENABLED gate.
const enabled: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.customOAuth.enabled) throw notFound('feature_disabled', 'Custom OAuth providers are disabled');
  await next();
};

adminCustomProviderRoutes.get('/admin/custom-providers', requireAdmin, enabled, async (c) => {
  return c.json({ providers: await adminListCustomProviders(c.get('deps'), c.req.query('type')) });
});

adminCustomProviderRoutes.post('/admin/custom-providers', requireAdmin, enabled, async (c) => {
  const body = await readJson(c, CustomProviderBody);
  return c.json(await adminCreateCustomProvider(c.get('deps'), body), 201);
});

adminCustomProviderRoutes.get('/admin/custom-providers/:identifier', requireAdmin, enabled, async (c) => {
  return c.json(await adminGetCustomProvider(c.get('deps'), c.req.param('identifier')));
});

adminCustomProviderRoutes.put('/admin/custom-providers/:identifier', requireAdmin, enabled, async (c) => {
  const identifier = c.req.param('identifier');
  const body = await readJson(c, CustomProviderBody);
  return c.json(await adminUpdateCustomProvider(c.get('deps'), identifier, body));
});

adminCustomProviderRoutes.delete('/admin/custom-providers/:identifier', requireAdmin, enabled, async (c) => {
  await adminDeleteCustomProvider(c.get('deps'), c.req.param('identifier'));
  return c.body(null, 204);
});
