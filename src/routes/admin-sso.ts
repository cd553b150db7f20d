// /admin/sso/providers — GoTrue: adminSSOProvidersList, …Create, …Get, …Update, …Delete (Admin;
// not behind the SAML_ENABLED gate, as in GoTrue).
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { readJson } from '../http/read-json.ts';
import {
  adminCreateSsoProvider, adminDeleteSsoProvider, adminListSsoProviders, adminUpdateSsoProvider, loadSsoProvider, providerJson, SsoProviderBody,
} from '../sso/providers.ts';

export const adminSsoRoutes = new Hono<AppEnv>();

adminSsoRoutes.get('/admin/sso/providers', requireAdmin, async (c) => {
  return c.json(await adminListSsoProviders(c.get('deps'), { resource_id: c.req.query('resource_id'), resource_id_prefix: c.req.query('resource_id_prefix') }));
});

adminSsoRoutes.post('/admin/sso/providers', requireAdmin, async (c) => {
  const body = await readJson(c, SsoProviderBody);
  return c.json(await adminCreateSsoProvider(c.get('deps'), body), 201);
});

adminSsoRoutes.get('/admin/sso/providers/:idp_id', requireAdmin, async (c) => {
  return c.json(providerJson(await loadSsoProvider(c.get('deps'), c.req.param('idp_id'))));
});

adminSsoRoutes.put('/admin/sso/providers/:idp_id', requireAdmin, async (c) => {
  const deps = c.get('deps');
  const current = await loadSsoProvider(deps, c.req.param('idp_id'));
  const body = await readJson(c, SsoProviderBody);
  return c.json(await adminUpdateSsoProvider(deps, current, body));
});

adminSsoRoutes.delete('/admin/sso/providers/:idp_id', requireAdmin, async (c) => {
  const deps = c.get('deps');
  return c.json(await adminDeleteSsoProvider(deps, await loadSsoProvider(deps, c.req.param('idp_id'))));
});
