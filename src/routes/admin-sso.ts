// /admin/sso/providers — GoTrue: adminSSOProvidersList, …Create, …Get, …Update, …Delete (Admin;
// not behind the SAML_ENABLED gate, as in GoTrue).
import { readJson } from '../http/read-json.ts';
import { type Reply, routeGroup } from '../http/route.ts';
import { json } from '../openapi/parts.ts';
import {
  adminCreateSsoProvider,
  adminDeleteSsoProvider,
  adminListSsoProviders,
  adminUpdateSsoProvider,
  loadSsoProvider,
  providerJson,
  SsoProviderBody,
} from '../sso/providers.ts';

export const adminSsoRoutes = routeGroup('sso');

const provider = {
  type: 'object',
  description:
    "GoTrue's SSOProvider: id, resource_id?, disabled (null or a boolean), allow_any_email_domain (authsvc's: may assert addresses outside its domains), saml {entity_id, metadata_xml? (not in lists), metadata_url?, attribute_mapping {keys?}, name_id_format?}, domains [{domain}], created_at, updated_at.",
};
const adminErrors: Record<string, Reply> = {
  400: {
    description:
      '`validation_failed`, `saml_metadata_fetch_failed`, `sso_domain_already_exists`, `saml_entity_id_mismatch`.',
    error: true,
  },
  404: { description: '`sso_provider_not_found`.', error: true },
  422: { description: '`saml_idp_already_exists`, `conflict`.', error: true },
  501: { description: '`saml_not_supported_on_runtime` (Workers without node:crypto).', error: true },
};
const idp = 'GoTrue: loadSSOProvider; `{idp_id}` is the uuid or `resource_<resource_id>`.';

adminSsoRoutes.route(
  {
    method: 'get',
    path: '/admin/sso/providers',
    summary: 'List SSO providers',
    gotrue: 'adminSSOProvidersList',
    auth: 'admin',
    query: [{ name: 'resource_id' }, { name: 'resource_id_prefix' }],
    replies: { 200: json({ type: 'object', properties: { items: { type: 'array', items: provider } } }) },
  },
  async (c) => {
    return c.json(
      await adminListSsoProviders(c.get('deps'), {
        resource_id: c.req.query('resource_id'),
        resource_id_prefix: c.req.query('resource_id_prefix'),
      }),
    );
  },
);

adminSsoRoutes.route(
  {
    method: 'post',
    path: '/admin/sso/providers',
    summary: 'Add a SAML IdP from metadata XML or URL',
    gotrue: 'adminSSOProvidersCreate',
    auth: 'admin',
    body: SsoProviderBody,
    replies: { 201: json(provider, 'Created'), ...adminErrors },
  },
  async (c, body) => {
    return c.json(await adminCreateSsoProvider(c.get('deps'), body), 201);
  },
);

adminSsoRoutes.route(
  {
    method: 'get',
    path: '/admin/sso/providers/{idp_id}',
    summary: `Get an SSO provider. ${idp}`,
    gotrue: 'adminSSOProvidersGet',
    auth: 'admin',
    replies: { 200: json(provider), ...adminErrors },
  },
  async (c) => {
    return c.json(providerJson(await loadSsoProvider(c.get('deps'), c.req.param('idp_id'))));
  },
);

// The provider is looked up before the body is read (404 before 400), so the handler reads it.
adminSsoRoutes.route(
  {
    method: 'put',
    path: '/admin/sso/providers/{idp_id}',
    summary: 'Update an SSO provider (domains replace the set; name_id_format left out clears it)',
    gotrue: 'adminSSOProvidersUpdate',
    auth: 'admin',
    bodyReadByHandler: SsoProviderBody,
    replies: { 200: json(provider), ...adminErrors },
  },
  async (c) => {
    const deps = c.get('deps');
    const current = await loadSsoProvider(deps, c.req.param('idp_id'));
    const body = await readJson(c, SsoProviderBody);
    return c.json(await adminUpdateSsoProvider(deps, current, body));
  },
);

adminSsoRoutes.route(
  {
    method: 'delete',
    path: '/admin/sso/providers/{idp_id}',
    summary: 'Delete an SSO provider',
    gotrue: 'adminSSOProvidersDelete',
    auth: 'admin',
    replies: { 200: json(provider, 'The deleted provider.'), ...adminErrors },
  },
  async (c) => {
    const deps = c.get('deps');
    return c.json(await adminDeleteSsoProvider(deps, await loadSsoProvider(deps, c.req.param('idp_id'))));
  },
);
