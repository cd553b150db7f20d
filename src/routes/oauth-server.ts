// authsvc as an OAuth 2.1 / OpenID Connect authorization server — GoTrue: api.go's /oauth,
// /admin/oauth and /user/oauth groups (oauthserver/*). The switch (OAUTH_SERVER_ENABLED) is
// checked where GoTrue checks it: first on /oauth/* and the metadata, after the admin or user
// check on /admin/oauth and /user/oauth. Off, routes/feature-gates.ts answers. Client
// management and registration: oauth-clients.ts.
import type { Context, MiddlewareHandler } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { requireAuthOrOAuthClient } from '../http/auth.ts';
import { ApiError, notFound, OAuthApiError, validationFailed } from '../core/errors.ts';
import { optStr, readForm, readJson } from '../http/read-json.ts';
import { requestMeta } from '../http/request-meta.ts';
import { authorize } from '../oauth-server/authorize.ts';
import { authenticateClient } from '../oauth-server/client-auth.ts';
import { authorizationDetails, checkOrigin, decideAuthorization } from '../oauth-server/consent.ts';
import { serverMetadata } from '../oauth-server/discovery.ts';
import { NO_STORE, oauthEndpoint } from '../oauth-server/oauth-errors.ts';
import { introspectToken } from '../oauth-server/introspection.ts';
import { revokeToken } from '../oauth-server/revocation.ts';
import { oauthToken } from '../oauth-server/token.ts';
import { revokeGrant, userGrants, userInfo } from '../oauth-server/user-grants.ts';
import { type Param, routeGroup } from '../http/route.ts';
import { error, json, redirect } from '../openapi/parts.ts';

export const ConsentBody = z.object({ action: optStr });
export const TokenStatusBody = z.object({
  token: optStr,
  token_type_hint: optStr,
  client_id: optStr,
  client_secret: optStr,
});
export const OAuthTokenBody = z.object({
  grant_type: optStr,
  code: optStr,
  refresh_token: optStr,
  redirect_uri: optStr,
  client_id: optStr,
  client_secret: optStr,
  code_verifier: optStr,
  resource: optStr,
  scope: optStr,
});

export const oauthServerDisabled = () => notFound('feature_disabled', 'OAuth server is disabled');

export const requireOAuthServer: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.oauthServer.enabled) throw oauthServerDisabled();
  await next();
};

export const oauthServerRoutes = routeGroup('oauth-server');

export const off = 'While OAUTH_SERVER_ENABLED is off: 404 `feature_disabled`.';
const oauthError = error(
  'RFC 6749 §5.2 error body `{error, error_description}`: invalid_request, invalid_client (401 with a Basic challenge after HTTP Basic), invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope, invalid_target, server_error.',
);
const authorizeQuery: Param[] = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'resource',
  'code_challenge',
  'code_challenge_method',
  'nonce',
].map((name) => ({
  name,
  ...(name === 'client_id' || name === 'redirect_uri' || name.startsWith('code_challenge') ? { required: true } : {}),
}));
const formOf = (schema: z.ZodObject) => ({
  type: 'object',
  properties: Object.fromEntries(Object.keys(schema.shape).map((k) => [k, { type: 'string' }])),
});

const metadata = (c: Context<AppEnv>) => {
  c.header('Cache-Control', 'public, max-age=600');
  return c.json(serverMetadata(c.get('deps').config, c.get('deps').keys.algorithms));
};
oauthServerRoutes.route(
  {
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    summary: 'Authorization server metadata (RFC 8414)',
    gotrue: 'WellKnownOpenID',
    before: [requireOAuthServer],
    replies: { 200: json('OpenIdConfiguration'), 404: error(off) },
  },
  metadata,
);
// RFC 8414 §3.1: an issuer with a path (https://host/auth/v1) has its metadata at
// /.well-known/oauth-authorization-server/auth/v1, where MCP clients look first. The same document
// is answered whatever the path; a client compares `issuer` with the one it asked for (§3.3).
oauthServerRoutes.route(
  {
    method: 'get',
    path: '/.well-known/oauth-authorization-server/{issuer_path}',
    honoPath: '/.well-known/oauth-authorization-server/*',
    summary: 'The same metadata where RFC 8414 puts it for an issuer with a path (e.g. /auth/v1)',
    gotrue: 'WellKnownOpenID',
    before: [requireOAuthServer],
    replies: { 200: json('OpenIdConfiguration'), 404: error(off) },
  },
  metadata,
);

// --- the OAuth endpoints ---------------------------------------------------------------------

oauthServerRoutes.route(
  {
    method: 'get',
    path: '/oauth/authorize',
    summary: 'Start an authorization (PKCE S256 required): redirect to the consent page',
    gotrue: 'OAuthServerAuthorize',
    before: [requireOAuthServer],
    query: authorizeQuery,
    replies: {
      302: redirect(
        'To SITE_URL + OAUTH_SERVER_AUTHORIZATION_PATH?authorization_id=…, or back to the client with ?error=….',
      ),
    },
  },
  async (c) => {
    return c.redirect(await authorize(c.get('deps'), c.req.query()), 302);
  },
);

oauthServerRoutes.route(
  {
    method: 'get',
    path: '/oauth/authorizations/{authorization_id}',
    summary: 'The request the consent page shows (or {redirect_url} when already granted)',
    gotrue: 'OAuthServerGetAuthorization',
    before: [requireOAuthServer],
    auth: 'user',
    replies: {
      200: json({
        type: 'object',
        description: '{authorization_id, redirect_uri, client, user, scope, resource?} or {redirect_url}.',
      }),
      404: error('`oauth_authorization_not_found`.'),
    },
  },
  async (c) => {
    checkOrigin(c.get('deps'), c.req.header('origin'));
    return c.json(await authorizationDetails(c.get('deps'), c.get('auth').user, c.req.param('authorization_id')));
  },
);

// The origin is checked before the body is read.
oauthServerRoutes.route(
  {
    method: 'post',
    path: '/oauth/authorizations/{authorization_id}/consent',
    summary: 'Approve or deny the request',
    gotrue: 'OAuthServerConsent',
    before: [requireOAuthServer],
    auth: 'user',
    bodyReadByHandler: ConsentBody,
    replies: {
      200: json({
        type: 'object',
        description: "{redirect_url}: the client's redirect URI with ?code=&state= or ?error=access_denied.",
      }),
      404: error('`oauth_authorization_not_found`.'),
    },
  },
  async (c) => {
    checkOrigin(c.get('deps'), c.req.header('origin'));
    let body: z.infer<typeof ConsentBody>;
    try {
      body = await readJson(c, ConsentBody);
    } catch (err) {
      if (err instanceof ApiError && err.errorCode === 'bad_json')
        throw new ApiError(400, 'bad_json', 'invalid JSON body');
      throw err;
    }
    if (body.action !== 'approve' && body.action !== 'deny')
      throw validationFailed("action must be 'approve' or 'deny'");
    return c.json(
      await decideAuthorization(c.get('deps'), c.get('auth').user, c.req.param('authorization_id'), body.action),
    );
  },
);

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
oauthServerRoutes.route(
  {
    method: 'post',
    path: '/oauth/token',
    summary: 'Exchange a code or refresh token (client_secret_basic, client_secret_post or none)',
    gotrue: 'OAuthToken',
    before: [requireOAuthServer],
    form: formOf(OAuthTokenBody),
    replies: {
      200: json({ type: 'object', description: '{access_token, expires_in, id_token?, refresh_token, token_type}.' }),
      400: oauthError,
    },
  },
  oauthEndpoint(async (c) => {
    const deps = c.get('deps');
    const params = await oauthParams(c, OAuthTokenBody);
    const client = await authenticateClient(deps, c.req.header('authorization'), params);
    const body = await oauthToken(deps, client, params, requestMeta(c));
    return c.json(body, 200, NO_STORE);
  }),
);

// RFC 7009: the client authenticates as at the token endpoint; 200 whatever the token was.
oauthServerRoutes.route(
  {
    method: 'post',
    path: '/oauth/revoke',
    summary:
      'Revoke a token the client holds (RFC 7009): its OAuth session ends; 200 for any token (not a GoTrue route)',
    before: [requireOAuthServer],
    form: formOf(TokenStatusBody),
    replies: { 200: { description: 'Revoked, or not a token of this client.' }, 400: oauthError, 401: oauthError },
  },
  oauthEndpoint(async (c) => {
    const deps = c.get('deps');
    const params = await oauthParams(c, TokenStatusBody);
    const client = await authenticateClient(deps, c.req.header('authorization'), params);
    await revokeToken(deps, client, params, requestMeta(c));
    return c.body(null, 200, NO_STORE);
  }),
);

// RFC 7662: for confidential clients (resource servers register as one).
oauthServerRoutes.route(
  {
    method: 'post',
    path: '/oauth/introspect',
    summary: 'Whether a token is live, for a confidential client (RFC 7662; not a GoTrue route)',
    before: [requireOAuthServer],
    form: formOf(TokenStatusBody),
    replies: {
      200: json({
        type: 'object',
        description:
          '{active, scope?, client_id?, sub?, aud?, exp?, iat?, iss?, token_type?}; only {active: false} for a token that is not live.',
      }),
      400: oauthError,
      401: oauthError,
    },
  },
  oauthEndpoint(async (c) => {
    const deps = c.get('deps');
    const params = await oauthParams(c, TokenStatusBody);
    const client = await authenticateClient(deps, c.req.header('authorization'), params);
    return c.json(await introspectToken(deps, client, params), 200, NO_STORE);
  }),
);

/**
 * RFC 6750 §3.1: a token that is missing, malformed, expired, revoked, of an ended session or an
 * ID token is 401 invalid_token with a Bearer challenge (authsvc; GoTrue answers its 403 body).
 */
const requireAuthForUserInfo: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.req.header('authorization')) {
    throw new OAuthApiError('invalid_token', 'a bearer token is required', undefined, {
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  try {
    await requireAuthOrOAuthClient(c, next);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const description = err.message.replace(/["\\]/g, '');
    throw new OAuthApiError('invalid_token', err.message, undefined, {
      status: 401,
      headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"` },
    });
  }
};

oauthServerRoutes.route(
  {
    method: 'get',
    path: '/oauth/userinfo',
    summary: "OIDC UserInfo: claims the session's scopes grant",
    gotrue: 'OAuthUserInfo',
    before: [requireOAuthServer],
    auth: 'user',
    authenticate: requireAuthForUserInfo,
    replies: {
      200: json({
        type: 'object',
        description:
          "{sub} and the OIDC §5.4 claims of the scopes (email, email_verified, profile claims, phone_number, phone_number_verified), plus GoTrue's user_metadata, phone, phone_verified.",
      }),
      401: error(
        'RFC 6750 `invalid_token` with a Bearer challenge: missing, expired, revoked or ended-session token, or an ID token.',
      ),
      403: error("RFC 6750 `insufficient_scope`: a client's token without `openid`."),
    },
  },
  (c) => c.json(userInfo(c.get('auth').user, c.get('auth').session)),
);

// --- the user's grants -----------------------------------------------------------------------

oauthServerRoutes.route(
  {
    method: 'get',
    path: '/user/oauth/grants',
    summary: 'The clients the user has granted access',
    gotrue: 'UserListOAuthGrants',
    auth: 'user',
    guards: [requireOAuthServer],
    replies: { 200: json({ type: 'array', items: { type: 'object' } }) },
  },
  async (c) => c.json(await userGrants(c.get('deps'), c.get('auth').user)),
);

oauthServerRoutes.route(
  {
    method: 'delete',
    path: '/user/oauth/grants',
    summary: "Revoke a grant: its consent and the client's sessions",
    gotrue: 'UserRevokeOAuthGrant',
    auth: 'user',
    guards: [requireOAuthServer],
    query: [{ name: 'client_id', required: true }],
    replies: { 204: { description: 'Revoked.' }, 404: error('`oauth_consent_not_found`.') },
  },
  async (c) => {
    await revokeGrant(c.get('deps'), c.get('auth').user, c.req.query('client_id'), requestMeta(c));
    return c.body(null, 204);
  },
);
