// authsvc as an OAuth 2.1 / OpenID Connect authorization server — GoTrue: api.go's /oauth,
// /admin/oauth and /user/oauth groups (oauthserver/*). The switch (OAUTH_SERVER_ENABLED) is
// checked where GoTrue checks it: first on /oauth/* and the metadata, after the admin or user
// check on /admin/oauth and /user/oauth. Off, routes/feature-gates.ts answers.
import type { Context, MiddlewareHandler } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { requireAuthOrOAuthClient } from '../http/auth.ts';
import { ApiError, forbidden, notFound, OAuthApiError, validationFailed } from '../core/errors.ts';
import { optStr, readForm, readJson } from '../http/read-json.ts';
import { requestMeta } from '../http/request-meta.ts';
import { authorize } from '../oauth-server/authorize.ts';
import { authenticateClient } from '../oauth-server/client-auth.ts';
import { deleteClient, loadClient, regenerateSecret, registerClient, clientJson, updateClient } from '../oauth-server/clients.ts';
import { listOAuthClients } from '../db/oauth-clients.ts';
import { authorizationDetails, checkOrigin, decideAuthorization } from '../oauth-server/consent.ts';
import { serverMetadata } from '../oauth-server/discovery.ts';
import { NO_STORE, oauthEndpoint } from '../oauth-server/oauth-errors.ts';
import { introspectToken } from '../oauth-server/introspection.ts';
import { revokeToken } from '../oauth-server/revocation.ts';
import { oauthToken } from '../oauth-server/token.ts';
import { revokeGrant, userGrants, userInfo } from '../oauth-server/user-grants.ts';
import { type Param, type Reply, routeGroup } from '../http/route.ts';
import { error, json, redirect } from '../openapi/parts.ts';

const strList = z.array(z.string()).nullish().transform((v) => v ?? undefined);
export const ClientRegisterBody = z.object({
  redirect_uris: strList, client_type: optStr, token_endpoint_auth_method: optStr, grant_types: strList,
  client_name: optStr, client_uri: optStr, logo_uri: optStr, policy_uri: optStr, tos_uri: optStr,
});
export const ClientUpdateBody = z.object({
  redirect_uris: strList, grant_types: strList, client_name: optStr, client_uri: optStr, logo_uri: optStr,
  policy_uri: optStr, tos_uri: optStr, token_endpoint_auth_method: optStr,
});
export const ConsentBody = z.object({ action: optStr });
export const TokenStatusBody = z.object({ token: optStr, token_type_hint: optStr, client_id: optStr, client_secret: optStr });
export const OAuthTokenBody = z.object({
  grant_type: optStr, code: optStr, refresh_token: optStr, redirect_uri: optStr, client_id: optStr,
  client_secret: optStr, code_verifier: optStr, resource: optStr, scope: optStr,
});

export const oauthServerDisabled = () => notFound('feature_disabled', 'OAuth server is disabled');

export const requireOAuthServer: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.oauthServer.enabled) throw oauthServerDisabled();
  await next();
};

/** GoTrue decodes these bodies with json.NewDecoder: any decoding failure is this one message. */
async function readClientJson<S extends z.ZodObject>(c: Context<AppEnv>, schema: S): Promise<z.infer<S>> {
  try {
    return await readJson(c, schema);
  } catch (err) {
    if (err instanceof ApiError && err.errorCode === 'bad_json') throw new ApiError(400, 'bad_json', 'Invalid JSON body');
    throw err;
  }
}

export const oauthServerRoutes = routeGroup('oauth-server');

const off = 'While OAUTH_SERVER_ENABLED is off: 404 `feature_disabled`.';
const client = json({ type: 'object', description: 'GoTrue\'s OAuthServerClientResponse: client_id, client_secret (on creation and regeneration only), client_type, redirect_uris, token_endpoint_auth_method, grant_types, response_types, client_name?, client_uri?, logo_uri?, registration_type, created_at, updated_at.' });
const oauthError = error('RFC 6749 §5.2 error body `{error, error_description}`: invalid_request, invalid_client (401 with a Basic challenge after HTTP Basic), invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope, invalid_target, server_error.');
const clientErrors: Record<string, Reply> = { 404: error(`\`oauth_client_not_found\`. ${off}`) };
const authorizeQuery: Param[] = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'resource', 'code_challenge', 'code_challenge_method', 'nonce']
  .map((name) => ({ name, ...(name === 'client_id' || name === 'redirect_uri' || name.startsWith('code_challenge') ? { required: true } : {}) }));
const formOf = (schema: z.ZodObject) => ({ type: 'object', properties: Object.fromEntries(Object.keys(schema.shape).map((k) => [k, { type: 'string' }])) });

const metadata = (c: Context<AppEnv>) => {
  c.header('Cache-Control', 'public, max-age=600');
  return c.json(serverMetadata(c.get('deps').config, c.get('deps').keys.algorithms));
};
oauthServerRoutes.route({
  method: 'get', path: '/.well-known/oauth-authorization-server', summary: 'Authorization server metadata (RFC 8414)', gotrue: 'WellKnownOpenID', before: [requireOAuthServer],
  replies: { 200: json('OpenIdConfiguration'), 404: error(off) },
}, metadata);
// RFC 8414 §3.1: an issuer with a path (https://host/auth/v1) has its metadata at
// /.well-known/oauth-authorization-server/auth/v1, where MCP clients look first. The same document
// is answered whatever the path; a client compares `issuer` with the one it asked for (§3.3).
oauthServerRoutes.route({
  method: 'get', path: '/.well-known/oauth-authorization-server/{issuer_path}', honoPath: '/.well-known/oauth-authorization-server/*',
  summary: 'The same metadata where RFC 8414 puts it for an issuer with a path (e.g. /auth/v1)', gotrue: 'WellKnownOpenID', before: [requireOAuthServer],
  replies: { 200: json('OpenIdConfiguration'), 404: error(off) },
}, metadata);

// --- admin: client management -------------------------------------------------------------

oauthServerRoutes.route({
  method: 'post', path: '/admin/oauth/clients', summary: 'Register a client', gotrue: 'AdminOAuthServerClientRegister', auth: 'admin', guards: [requireOAuthServer],
  bodyReadByHandler: ClientRegisterBody, replies: { 201: client },
}, async (c) => {
  const body = await readClientJson(c, ClientRegisterBody);
  return c.json(await registerClient(c.get('deps'), body, 'manual'), 201);
});

// GoTrue ignores page/per_page here and sends no pagination headers; an empty list is `{}`.
oauthServerRoutes.route({
  method: 'get', path: '/admin/oauth/clients', summary: 'List clients (newest first; {} when none)', gotrue: 'OAuthServerClientList', auth: 'admin', guards: [requireOAuthServer],
  replies: { 200: json({ type: 'object', description: '{clients: [...]}' }) },
}, async (c) => {
  const clients = await listOAuthClients(c.get('deps').db);
  return c.json(clients.length > 0 ? { clients: clients.map((k) => clientJson(k)) } : {});
});

// GoTrue: Admin → gate → LoadOAuthServerClient (the handlers' first step here).
const pathClient = (c: Context<AppEnv>) => loadClient(c.get('deps'), c.req.param('client_id') ?? '');
oauthServerRoutes.route({
  method: 'get', path: '/admin/oauth/clients/{client_id}', summary: 'Get a client', gotrue: 'OAuthServerClientGet', auth: 'admin', guards: [requireOAuthServer], replies: { 200: client, ...clientErrors },
}, async (c) => c.json(clientJson(await pathClient(c))));
// The client is loaded (404) before the body is read.
oauthServerRoutes.route({
  method: 'put', path: '/admin/oauth/clients/{client_id}', summary: 'Update a client', gotrue: 'OAuthServerClientUpdate', auth: 'admin', guards: [requireOAuthServer],
  bodyReadByHandler: ClientUpdateBody, replies: { 200: client, ...clientErrors },
}, async (c) => {
  const client = await pathClient(c);
  const body = await readClientJson(c, ClientUpdateBody);
  return c.json(await updateClient(c.get('deps'), client, body));
});
oauthServerRoutes.route({
  method: 'delete', path: '/admin/oauth/clients/{client_id}', summary: 'Delete a client (soft; its sessions end)', gotrue: 'OAuthServerClientDelete', auth: 'admin', guards: [requireOAuthServer],
  replies: { 204: { description: 'Deleted.' }, ...clientErrors },
}, async (c) => {
  await deleteClient(c.get('deps'), await pathClient(c));
  return c.body(null, 204);
});
oauthServerRoutes.route({
  method: 'post', path: '/admin/oauth/clients/{client_id}/regenerate_secret', summary: 'Regenerate a confidential client\'s secret', gotrue: 'OAuthServerClientRegenerateSecret', auth: 'admin', guards: [requireOAuthServer],
  replies: { 200: client, ...clientErrors },
}, async (c) => {
  return c.json(await regenerateSecret(c.get('deps'), await pathClient(c)));
});

// --- the OAuth endpoints ---------------------------------------------------------------------

// The switch is checked before the body is read, and a bad body is RFC 7591's error: the handler reads it.
oauthServerRoutes.route({
  method: 'post', path: '/oauth/clients/register', summary: 'Dynamic client registration (RFC 7591; OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION)', gotrue: 'OAuthServerClientDynamicRegister', before: [requireOAuthServer],
  rateLimit: 'oauth_client_register', bodyReadByHandler: ClientRegisterBody, replies: { 201: client, 403: error('`oauth_dynamic_client_registration_disabled`.') },
}, async (c) => {
  if (!c.get('deps').config.oauthServer.allowDynamicRegistration) {
    throw forbidden('oauth_dynamic_client_registration_disabled', 'Dynamic client registration is not enabled');
  }
  let body: z.infer<typeof ClientRegisterBody>;
  try {
    body = await readJson(c, ClientRegisterBody);
  } catch (err) {
    // RFC 7591 §3.2.2: a body that is not the metadata object is invalid_client_metadata.
    if (err instanceof ApiError && err.status === 400) throw new OAuthApiError('invalid_client_metadata', err.message);
    throw err;
  }
  return c.json(await registerClient(c.get('deps'), body, 'dynamic'), 201, NO_STORE);
});

oauthServerRoutes.route({
  method: 'get', path: '/oauth/authorize', summary: 'Start an authorization (PKCE S256 required): redirect to the consent page', gotrue: 'OAuthServerAuthorize', before: [requireOAuthServer],
  query: authorizeQuery, replies: { 302: redirect('To SITE_URL + OAUTH_SERVER_AUTHORIZATION_PATH?authorization_id=…, or back to the client with ?error=….') },
}, async (c) => {
  return c.redirect(await authorize(c.get('deps'), c.req.query()), 302);
});

oauthServerRoutes.route({
  method: 'get', path: '/oauth/authorizations/{authorization_id}', summary: 'The request the consent page shows (or {redirect_url} when already granted)', gotrue: 'OAuthServerGetAuthorization', before: [requireOAuthServer], auth: 'user',
  replies: { 200: json({ type: 'object', description: '{authorization_id, redirect_uri, client, user, scope, resource?} or {redirect_url}.' }), 404: error('`oauth_authorization_not_found`.') },
}, async (c) => {
  checkOrigin(c.get('deps'), c.req.header('origin'));
  return c.json(await authorizationDetails(c.get('deps'), c.get('auth').user, c.req.param('authorization_id')));
});

// The origin is checked before the body is read.
oauthServerRoutes.route({
  method: 'post', path: '/oauth/authorizations/{authorization_id}/consent', summary: 'Approve or deny the request', gotrue: 'OAuthServerConsent', before: [requireOAuthServer], auth: 'user',
  bodyReadByHandler: ConsentBody, replies: { 200: json({ type: 'object', description: '{redirect_url}: the client\'s redirect URI with ?code=&state= or ?error=access_denied.' }), 404: error('`oauth_authorization_not_found`.') },
}, async (c) => {
  checkOrigin(c.get('deps'), c.req.header('origin'));
  let body: z.infer<typeof ConsentBody>;
  try {
    body = await readJson(c, ConsentBody);
  } catch (err) {
    if (err instanceof ApiError && err.errorCode === 'bad_json') throw new ApiError(400, 'bad_json', 'invalid JSON body');
    throw err;
  }
  if (body.action !== 'approve' && body.action !== 'deny') throw validationFailed("action must be 'approve' or 'deny'");
  return c.json(await decideAuthorization(c.get('deps'), c.get('auth').user, c.req.param('authorization_id'), body.action));
});

/** An OAuth endpoint's parameters: a JSON body when Content-Type says so, else a form (RFC 6749's). */
async function oauthParams<S extends z.ZodObject>(c: Context<AppEnv>, schema: S): Promise<z.infer<S>> {
  if ((c.req.header('content-type') ?? '').includes('application/json')) return readJson(c, schema);
  const form = await readForm(c);
  const out: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = form.get(key);
    if (v !== null) out[key] = v;
  }
  return schema.parse(out);
}

// Every answer, errors included, is RFC 6749's (oauth-server/oauth-errors.ts).
oauthServerRoutes.route({
  method: 'post', path: '/oauth/token', summary: 'Exchange a code or refresh token (client_secret_basic, client_secret_post or none)', gotrue: 'OAuthToken', before: [requireOAuthServer],
  form: formOf(OAuthTokenBody), replies: { 200: json({ type: 'object', description: '{access_token, expires_in, id_token?, refresh_token, token_type}.' }), 400: oauthError },
}, oauthEndpoint(async (c) => {
  const deps = c.get('deps');
  const params = await oauthParams(c, OAuthTokenBody);
  const client = await authenticateClient(deps, c.req.header('authorization'), params);
  const body = await oauthToken(deps, client, params, requestMeta(c));
  return c.json(body, 200, NO_STORE);
}));

// RFC 7009: the client authenticates as at the token endpoint; 200 whatever the token was.
oauthServerRoutes.route({
  method: 'post', path: '/oauth/revoke', summary: 'Revoke a token the client holds (RFC 7009): its OAuth session ends; 200 for any token (not a GoTrue route)', before: [requireOAuthServer],
  form: formOf(TokenStatusBody), replies: { 200: { description: 'Revoked, or not a token of this client.' }, 400: oauthError, 401: oauthError },
}, oauthEndpoint(async (c) => {
  const deps = c.get('deps');
  const params = await oauthParams(c, TokenStatusBody);
  const client = await authenticateClient(deps, c.req.header('authorization'), params);
  await revokeToken(deps, client, params, requestMeta(c));
  return c.body(null, 200, NO_STORE);
}));

// RFC 7662: for confidential clients (resource servers register as one).
oauthServerRoutes.route({
  method: 'post', path: '/oauth/introspect', summary: 'Whether a token is live, for a confidential client (RFC 7662; not a GoTrue route)', before: [requireOAuthServer],
  form: formOf(TokenStatusBody), replies: { 200: json({ type: 'object', description: '{active, scope?, client_id?, sub?, aud?, exp?, iat?, iss?, token_type?}; only {active: false} for a token that is not live.' }), 400: oauthError, 401: oauthError },
}, oauthEndpoint(async (c) => {
  const deps = c.get('deps');
  const params = await oauthParams(c, TokenStatusBody);
  const client = await authenticateClient(deps, c.req.header('authorization'), params);
  return c.json(await introspectToken(deps, client, params), 200, NO_STORE);
}));

/**
 * RFC 6750 §3.1: a token that is missing, malformed, expired, revoked, of an ended session or an
 * ID token is 401 invalid_token with a Bearer challenge (authsvc; GoTrue answers its 403 body).
 */
const requireAuthForUserInfo: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.req.header('authorization')) {
    throw new OAuthApiError('invalid_token', 'a bearer token is required', undefined, { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } });
  }
  try {
    await requireAuthOrOAuthClient(c, next);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const description = err.message.replace(/["\\]/g, '');
    throw new OAuthApiError('invalid_token', err.message, undefined, {
      status: 401, headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"` },
    });
  }
};

oauthServerRoutes.route({
  method: 'get', path: '/oauth/userinfo', summary: 'OIDC UserInfo: claims the session\'s scopes grant', gotrue: 'OAuthUserInfo', before: [requireOAuthServer], auth: 'user', authenticate: requireAuthForUserInfo,
  replies: { 200: json({ type: 'object', description: '{sub} and the OIDC §5.4 claims of the scopes (email, email_verified, profile claims, phone_number, phone_number_verified), plus GoTrue\'s user_metadata, phone, phone_verified.' }), 401: error('RFC 6750 `invalid_token` with a Bearer challenge: missing, expired, revoked or ended-session token, or an ID token.'), 403: error('RFC 6750 `insufficient_scope`: a client\'s token without `openid`.') },
}, (c) => c.json(userInfo(c.get('auth').user, c.get('auth').session)));

// --- the user's grants -----------------------------------------------------------------------

oauthServerRoutes.route({
  method: 'get', path: '/user/oauth/grants', summary: 'The clients the user has granted access', gotrue: 'UserListOAuthGrants', auth: 'user', guards: [requireOAuthServer],
  replies: { 200: json({ type: 'array', items: { type: 'object' } }) },
}, async (c) => c.json(await userGrants(c.get('deps'), c.get('auth').user)));

oauthServerRoutes.route({
  method: 'delete', path: '/user/oauth/grants', summary: 'Revoke a grant: its consent and the client\'s sessions', gotrue: 'UserRevokeOAuthGrant', auth: 'user', guards: [requireOAuthServer],
  query: [{ name: 'client_id', required: true }], replies: { 204: { description: 'Revoked.' }, 404: error('`oauth_consent_not_found`.') },
}, async (c) => {
  await revokeGrant(c.get('deps'), c.get('auth').user, c.req.query('client_id'), requestMeta(c));
  return c.body(null, 204);
});
