// /admin/custom-providers — GoTrue: adminCustomOAuthProvidersList, …Create, …Get, …Update, …Delete
import type { MiddlewareHandler } from 'hono';
import {
  adminCreateCustomProvider,
  adminDeleteCustomProvider,
  adminGetCustomProvider,
  adminListCustomProviders,
  adminUpdateCustomProvider,
  CustomProviderBody,
} from '../admin/custom-providers.ts';
import type { AppEnv } from '../app-env.ts';
import { notFound } from '../core/errors.ts';
import { type Reply, routeGroup } from '../http/route.ts';
import { json } from '../openapi/parts.ts';

export const adminCustomProviderRoutes = routeGroup('admin');

const provider = {
  type: 'object',
  description:
    'A custom provider (GoTrue models.CustomOAuthProvider): id, provider_type, identifier, name, client_id, acceptable_client_ids, scopes, pkce_enabled, attribute_mapping, custom_claims_allowlist, authorization_params, enabled, email_optional, issuer?, discovery_url?, skip_nonce_check, discovery_document?, authorization_url?, token_url?, userinfo_url?, jwks_uri?, created_at, updated_at; never the client secret.',
};
const errors: Record<string, Reply> = {
  400: {
    description:
      '`validation_failed` (a check, or a URL refused by the SSRF guard), `conflict`, `over_custom_provider_quota`.',
    error: true,
  },
  404: {
    description: '`custom_provider_not_found`, or `feature_disabled` when CUSTOM_OAUTH_ENABLED is false.',
    error: true,
  },
};

// GoTrue: Admin, then the CUSTOM_OAUTH_ENABLED gate.
const enabled: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.customOAuth.enabled)
    throw notFound('feature_disabled', 'Custom OAuth providers are disabled');
  await next();
};

adminCustomProviderRoutes.route(
  {
    method: 'get',
    path: '/admin/custom-providers',
    summary: 'List custom OAuth/OIDC providers',
    gotrue: 'adminCustomOAuthProvidersList',
    auth: 'admin',
    guards: [enabled],
    query: [{ name: 'type', schema: { enum: ['oauth2', 'oidc'] } }],
    replies: {
      200: json({ type: 'object', properties: { providers: { type: 'array', items: provider } } }),
      ...errors,
    },
  },
  async (c) => {
    return c.json({ providers: await adminListCustomProviders(c.get('deps'), c.req.query('type')) });
  },
);

adminCustomProviderRoutes.route(
  {
    method: 'post',
    path: '/admin/custom-providers',
    summary: 'Add a custom OAuth/OIDC provider',
    gotrue: 'adminCustomOAuthProviderCreate',
    auth: 'admin',
    guards: [enabled],
    body: CustomProviderBody,
    replies: { 201: json(provider, 'Created'), ...errors },
  },
  async (c, body) => {
    return c.json(await adminCreateCustomProvider(c.get('deps'), body), 201);
  },
);

adminCustomProviderRoutes.route(
  {
    method: 'get',
    path: '/admin/custom-providers/{identifier}',
    summary: 'Get a custom provider',
    gotrue: 'adminCustomOAuthProviderGet',
    auth: 'admin',
    guards: [enabled],
    replies: { 200: json(provider), ...errors },
  },
  async (c) => {
    return c.json(await adminGetCustomProvider(c.get('deps'), c.req.param('identifier')));
  },
);

adminCustomProviderRoutes.route(
  {
    method: 'put',
    path: '/admin/custom-providers/{identifier}',
    summary: 'Update a custom provider (fields given only)',
    gotrue: 'adminCustomOAuthProviderUpdate',
    auth: 'admin',
    guards: [enabled],
    body: CustomProviderBody,
    replies: { 200: json(provider), ...errors },
  },
  async (c, body) => {
    const identifier = c.req.param('identifier');
    return c.json(await adminUpdateCustomProvider(c.get('deps'), identifier, body));
  },
);

adminCustomProviderRoutes.route(
  {
    method: 'delete',
    path: '/admin/custom-providers/{identifier}',
    summary: 'Delete a custom provider',
    gotrue: 'adminCustomOAuthProviderDelete',
    auth: 'admin',
    guards: [enabled],
    replies: { 204: { description: 'Deleted.' }, ...errors },
  },
  async (c) => {
    await adminDeleteCustomProvider(c.get('deps'), c.req.param('identifier'));
    return c.body(null, 204);
  },
);
