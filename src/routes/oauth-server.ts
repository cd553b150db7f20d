// authsvc as an OAuth 2.1 / OpenID Connect authorization server — GoTrue: api.go's /oauth,
// /admin/oauth and /user/oauth groups (oauthserver/*). The switch (OAUTH_SERVER_ENABLED) is
// checked where GoTrue checks it: first on /oauth/* and the metadata, after the admin or user
// check on /admin/oauth and /user/oauth. Off, routes/feature-gates.ts answers.
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { requireAuth, requireAuthOrOAuthClient } from '../http/auth.ts';
import { ApiError, forbidden, notFound, OAuthApiError, validationFailed } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
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

export const oauthServerRoutes = new Hono<AppEnv>();

const metadata = (c: Context<AppEnv>) => {
  c.header('Cache-Control', 'public, max-age=600');
  return c.json(serverMetadata(c.get('deps').config, c.get('deps').keys.algorithms));
};
oauthServerRoutes.get('/.well-known/oauth-authorization-server', requireOAuthServer, metadata);
// RFC 8414 §3.1: an issuer with a path (https://host/auth/v1) has its metadata at
// /.well-known/oauth-authorization-server/auth/v1, where MCP clients look first. The same document
// is answered whatever the path; a client compares `issuer` with the one it asked for (§3.3).
oauthServerRoutes.get('/.well-known/oauth-authorization-server/*', requireOAuthServer, metadata);

// --- admin: client management -------------------------------------------------------------

oauthServerRoutes.post('/admin/oauth/clients', requireAdmin, requireOAuthServer, async (c) => {
  const body = await readClientJson(c, ClientRegisterBody);
  return c.json(await registerClient(c.get('deps'), body, 'manual'), 201);
});

// GoTrue ignores page/per_page here and sends no pagination headers; an empty list is `{}`.
oauthServerRoutes.get('/admin/oauth/clients', requireAdmin, requireOAuthServer, async (c) => {
  const clients = await listOAuthClients(c.get('deps').db);
  return c.json(clients.length > 0 ? { clients: clients.map((k) => clientJson(k)) } : {});
});

// GoTrue: Admin → gate → LoadOAuthServerClient (the handlers' first step here).
const clientPath = '/admin/oauth/clients/:client_id';
const pathClient = (c: Context<AppEnv>) => loadClient(c.get('deps'), c.req.param('client_id') ?? '');
oauthServerRoutes.get(clientPath, requireAdmin, requireOAuthServer, async (c) => c.json(clientJson(await pathClient(c))));
oauthServerRoutes.put(clientPath, requireAdmin, requireOAuthServer, async (c) => {
  const client = await pathClient(c);
  const body = await readClientJson(c, ClientUpdateBody);
  return c.json(await updateClient(c.get('deps'), client, body));
});
oauthServerRoutes.delete(clientPath, requireAdmin, requireOAuthServer, async (c) => {
  await deleteClient(c.get('deps'), await pathClient(c));
  return c.body(null, 204);
});
oauthServerRoutes.post(`${clientPath}/regenerate_secret`, requireAdmin, requireOAuthServer, async (c) => {
  return c.json(await regenerateSecret(c.get('deps'), await pathClient(c)));
});

// --- the OAuth endpoints ---------------------------------------------------------------------

oauthServerRoutes.post('/oauth/clients/register', requireOAuthServer, async (c) => {
  await enforceRateLimit(c, 'oauth_client_register');
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

oauthServerRoutes.get('/oauth/authorize', requireOAuthServer, async (c) => {
  return c.redirect(await authorize(c.get('deps'), c.req.query()), 302);
});

oauthServerRoutes.get('/oauth/authorizations/:authorization_id', requireOAuthServer, requireAuth, async (c) => {
  checkOrigin(c.get('deps'), c.req.header('origin'));
  return c.json(await authorizationDetails(c.get('deps'), c.get('auth').user, c.req.param('authorization_id')));
});

oauthServerRoutes.post('/oauth/authorizations/:authorization_id/consent', requireOAuthServer, requireAuth, async (c) => {
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
oauthServerRoutes.post('/oauth/token', requireOAuthServer, oauthEndpoint(async (c) => {
  const deps = c.get('deps');
  const params = await oauthParams(c, OAuthTokenBody);
  const client = await authenticateClient(deps, c.req.header('authorization'), params);
  const body = await oauthToken(deps, client, params, requestMeta(c));
  return c.json(body, 200, NO_STORE);
}));

// RFC 7009: the client authenticates as at the token endpoint; 200 whatever the token was.
oauthServerRoutes.post('/oauth/revoke', requireOAuthServer, oauthEndpoint(async (c) => {
  const deps = c.get('deps');
  const params = await oauthParams(c, TokenStatusBody);
  const client = await authenticateClient(deps, c.req.header('authorization'), params);
  await revokeToken(deps, client, params, requestMeta(c));
  return c.body(null, 200, NO_STORE);
}));

// RFC 7662: for confidential clients (resource servers register as one).
oauthServerRoutes.post('/oauth/introspect', requireOAuthServer, oauthEndpoint(async (c) => {
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

oauthServerRoutes.get('/oauth/userinfo', requireOAuthServer, requireAuthForUserInfo, (c) => c.json(userInfo(c.get('auth').user, c.get('auth').session)));

// --- the user's grants -----------------------------------------------------------------------

oauthServerRoutes.get('/user/oauth/grants', requireAuth, requireOAuthServer, async (c) => c.json(await userGrants(c.get('deps'), c.get('auth').user)));

oauthServerRoutes.delete('/user/oauth/grants', requireAuth, requireOAuthServer, async (c) => {
  await revokeGrant(c.get('deps'), c.get('auth').user, c.req.query('client_id'), requestMeta(c));
  return c.body(null, 204);
});
