// The OAuth 2.1 server's clients — GoTrue: api.go's /admin/oauth/clients group and
// /oauth/clients/register (oauthserver/handlers_client.go). The switch (OAUTH_SERVER_ENABLED) is
// checked after the admin check on /admin/oauth, first on the dynamic registration. The other
// OAuth server routes: oauth-server.ts.
import type { Context } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { ApiError, forbidden, OAuthApiError } from '../core/errors.ts';
import { optStr, readJson } from '../http/read-json.ts';
import {
  deleteClient,
  loadClient,
  regenerateSecret,
  registerClient,
  clientJson,
  updateClient,
} from '../oauth-server/clients.ts';
import { listOAuthClients } from '../db/oauth-clients.ts';
import { NO_STORE } from '../oauth-server/oauth-errors.ts';
import { type Reply, routeGroup } from '../http/route.ts';
import { error, json } from '../openapi/parts.ts';
import { off, requireOAuthServer } from './oauth-server.ts';

const strList = z
  .array(z.string())
  .nullish()
  .transform((v) => v ?? undefined);
export const ClientRegisterBody = z.object({
  redirect_uris: strList,
  client_type: optStr,
  token_endpoint_auth_method: optStr,
  grant_types: strList,
  client_name: optStr,
  client_uri: optStr,
  logo_uri: optStr,
  policy_uri: optStr,
  tos_uri: optStr,
});
export const ClientUpdateBody = z.object({
  redirect_uris: strList,
  grant_types: strList,
  client_name: optStr,
  client_uri: optStr,
  logo_uri: optStr,
  policy_uri: optStr,
  tos_uri: optStr,
  token_endpoint_auth_method: optStr,
});

/** GoTrue decodes these bodies with json.NewDecoder: any decoding failure is this one message. */
async function readClientJson<S extends z.ZodObject>(c: Context<AppEnv>, schema: S): Promise<z.infer<S>> {
  try {
    return await readJson(c, schema);
  } catch (err) {
    if (err instanceof ApiError && err.errorCode === 'bad_json')
      throw new ApiError(400, 'bad_json', 'Invalid JSON body');
    throw err;
  }
}

export const oauthClientRoutes = routeGroup('oauth-server');

const client = json({
  type: 'object',
  description:
    "GoTrue's OAuthServerClientResponse: client_id, client_secret (on creation and regeneration only), client_type, redirect_uris, token_endpoint_auth_method, grant_types, response_types, client_name?, client_uri?, logo_uri?, registration_type, created_at, updated_at.",
});
const clientErrors: Record<string, Reply> = { 404: error(`\`oauth_client_not_found\`. ${off}`) };

oauthClientRoutes.route(
  {
    method: 'post',
    path: '/admin/oauth/clients',
    summary: 'Register a client',
    gotrue: 'AdminOAuthServerClientRegister',
    auth: 'admin',
    guards: [requireOAuthServer],
    bodyReadByHandler: ClientRegisterBody,
    replies: { 201: client },
  },
  async (c) => {
    const body = await readClientJson(c, ClientRegisterBody);
    return c.json(await registerClient(c.get('deps'), body, 'manual'), 201);
  },
);

// GoTrue ignores page/per_page here and sends no pagination headers; an empty list is `{}`.
oauthClientRoutes.route(
  {
    method: 'get',
    path: '/admin/oauth/clients',
    summary: 'List clients (newest first; {} when none)',
    gotrue: 'OAuthServerClientList',
    auth: 'admin',
    guards: [requireOAuthServer],
    replies: { 200: json({ type: 'object', description: '{clients: [...]}' }) },
  },
  async (c) => {
    const clients = await listOAuthClients(c.get('deps').db);
    return c.json(clients.length > 0 ? { clients: clients.map((k) => clientJson(k)) } : {});
  },
);

// GoTrue: Admin → gate → LoadOAuthServerClient (the handlers' first step here).
const pathClient = (c: Context<AppEnv>) => loadClient(c.get('deps'), c.req.param('client_id') ?? '');
oauthClientRoutes.route(
  {
    method: 'get',
    path: '/admin/oauth/clients/{client_id}',
    summary: 'Get a client',
    gotrue: 'OAuthServerClientGet',
    auth: 'admin',
    guards: [requireOAuthServer],
    replies: { 200: client, ...clientErrors },
  },
  async (c) => c.json(clientJson(await pathClient(c))),
);
// The client is loaded (404) before the body is read.
oauthClientRoutes.route(
  {
    method: 'put',
    path: '/admin/oauth/clients/{client_id}',
    summary: 'Update a client',
    gotrue: 'OAuthServerClientUpdate',
    auth: 'admin',
    guards: [requireOAuthServer],
    bodyReadByHandler: ClientUpdateBody,
    replies: { 200: client, ...clientErrors },
  },
  async (c) => {
    const client = await pathClient(c);
    const body = await readClientJson(c, ClientUpdateBody);
    return c.json(await updateClient(c.get('deps'), client, body));
  },
);
oauthClientRoutes.route(
  {
    method: 'delete',
    path: '/admin/oauth/clients/{client_id}',
    summary: 'Delete a client (soft; its sessions end)',
    gotrue: 'OAuthServerClientDelete',
    auth: 'admin',
    guards: [requireOAuthServer],
    replies: { 204: { description: 'Deleted.' }, ...clientErrors },
  },
  async (c) => {
    await deleteClient(c.get('deps'), await pathClient(c));
    return c.body(null, 204);
  },
);
oauthClientRoutes.route(
  {
    method: 'post',
    path: '/admin/oauth/clients/{client_id}/regenerate_secret',
    summary: "Regenerate a confidential client's secret",
    gotrue: 'OAuthServerClientRegenerateSecret',
    auth: 'admin',
    guards: [requireOAuthServer],
    replies: { 200: client, ...clientErrors },
  },
  async (c) => {
    return c.json(await regenerateSecret(c.get('deps'), await pathClient(c)));
  },
);

// The switch is checked before the body is read, and a bad body is RFC 7591's error: the handler reads it.
oauthClientRoutes.route(
  {
    method: 'post',
    path: '/oauth/clients/register',
    summary: 'Dynamic client registration (RFC 7591; OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION)',
    gotrue: 'OAuthServerClientDynamicRegister',
    before: [requireOAuthServer],
    rateLimit: 'oauth_client_register',
    bodyReadByHandler: ClientRegisterBody,
    replies: { 201: client, 403: error('`oauth_dynamic_client_registration_disabled`.') },
  },
  async (c) => {
    if (!c.get('deps').config.oauthServer.allowDynamicRegistration) {
      throw forbidden('oauth_dynamic_client_registration_disabled', 'Dynamic client registration is not enabled');
    }
    let body: z.infer<typeof ClientRegisterBody>;
    try {
      body = await readJson(c, ClientRegisterBody);
    } catch (err) {
      // RFC 7591 §3.2.2: a body that is not the metadata object is invalid_client_metadata.
      if (err instanceof ApiError && err.status === 400)
        throw new OAuthApiError('invalid_client_metadata', err.message);
      throw err;
    }
    return c.json(await registerClient(c.get('deps'), body, 'dynamic'), 201, NO_STORE);
  },
);
