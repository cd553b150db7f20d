// GET /authorize, GET|POST /callback — GoTrue: api.ExternalProviderRedirect, api.ExternalProviderCallback
// GET /user/identities/authorize, DELETE /user/identities/{id} — GoTrue: api.LinkIdentity, api.DeleteIdentity
// POST /user/identities/{provider}/token — authsvc only: a provider access token from the stored refresh token
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.ts';
import {
  callbackRedirectBase,
  externalAuthorizeUrl,
  finishExternalCallback,
  loadCallbackState,
} from '../flows/external.ts';
import { errorRedirect, oauthErrorParams } from '../flows/external-errors.ts';
import { requireAal2WhenMfa } from '../accounts/aal2-rule.ts';
import { unlinkIdentity } from '../flows/identities.ts';
import { refreshProviderToken } from '../flows/provider-tokens.ts';
import { bindStateToBrowser, browserStarted, unbindState } from '../http/oauth-binding.ts';
import { ApiError, notFound } from '../core/errors.ts';
import { bucketFor, rateLimitKey } from '../http/rate-limit.ts';
import { hasUnstorableChars, readBodyText } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { errorFields } from '../telemetry/logger.ts';
import { type Param, routeGroup } from '../http/route.ts';
import { empty, error, json, redirect, redirectTo, str } from '../openapi/parts.ts';

export const externalRoutes = routeGroup('oauth');

const provider: Param = { name: 'provider', required: true, description: 'The OAuth provider (github, google, …).' };
const authorizeQuery: Param[] = [
  provider,
  redirectTo,
  { name: 'scopes', description: 'Extra scopes, space-separated.' },
  { name: 'code_challenge', description: 'PKCE challenge.' },
  { name: 'code_challenge_method', schema: { enum: ['s256', 'plain', 'S256'] } },
  { name: 'invite_token' },
];
const callbackQuery: Param[] = [{ name: 'state' }, { name: 'code' }, { name: 'error' }, { name: 'error_description' }];
const done = {
  302: redirect('To the redirect target, with a session, a PKCE code or an error.'),
  303: redirect('To SITE_URL with an error: the state was not usable.'),
};

function queryOf(c: Context<AppEnv>): URLSearchParams {
  return new URL(c.req.url).searchParams;
}

/**
 * Every /authorize writes a flow_state row, every provider-token refresh calls the provider. GoTrue
 * has neither limiter (nor the refresh); authsvc gives each its own per-IP bucket at /token's rate
 * (RATE_LIMIT_TOKEN_REFRESH per 5 minutes, burst 30), apart from /token's own.
 */
async function limitOwnBucket(c: Context<AppEnv>, bucket: 'authorize' | 'provider_token'): Promise<void> {
  const key = rateLimitKey(c);
  if (key === undefined) return;
  const deps = c.get('deps');
  if (!(await c.get('limiter').take(`${bucket}:${key}`, bucketFor('token', deps.config.rateLimit), deps.now()))) {
    throw new ApiError(429, 'over_request_rate_limit', 'Request rate limit reached');
  }
}

externalRoutes.route(
  {
    method: 'get',
    path: '/authorize',
    summary: 'Sign in with an OAuth provider: redirect to it',
    gotrue: 'ExternalProviderRedirect',
    query: authorizeQuery,
    replies: { 302: redirect('To the provider.') },
  },
  async (c) => {
    const deps = c.get('deps');
    await limitOwnBucket(c, 'authorize');
    const query = queryOf(c);
    const referrer = redirectTarget(c, deps.config.siteUrl, deps.config.uriAllowList);
    const { url, state } = await externalAuthorizeUrl(deps, { provider: query.get('provider') ?? '', query, referrer });
    bindStateToBrowser(c, state);
    return c.redirect(url, 302);
  },
);

/** The callback's parameters: the query, and for a form POST (Apple's form_post) the form too. */
async function callbackParams(c: Context<AppEnv>): Promise<URLSearchParams> {
  const params = queryOf(c);
  if (c.req.method !== 'POST') return params;
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return params;
  const form = new URLSearchParams(await readBodyText(c));
  for (const [k, v] of form) {
    if (hasUnstorableChars(k) || hasUnstorableChars(v))
      throw new ApiError(400, 'validation_failed', 'Invalid form value');
    params.set(k, v);
  }
  return params;
}

async function callback(c: Context<AppEnv>) {
  const deps = c.get('deps');
  let flow;
  let params: URLSearchParams;
  try {
    params = await callbackParams(c);
    flow = await loadCallbackState(deps, params.get('state'), browserStarted(c, params.get('state')));
    unbindState(c, flow.id);
  } catch (err) {
    // GoTrue's loadFlowState: a state that cannot be used goes back to SITE_URL, query only.
    if (!(err instanceof ApiError) || err.status >= 500)
      c.get('logger').error('OAuth callback failed', errorFields(err));
    return c.redirect(errorRedirect(deps.config.siteUrl, oauthErrorParams(err), false), 303);
  }
  try {
    const done = await finishExternalCallback(deps, flow, params, requestAud(c), requestMeta(c), rateLimitKey(c));
    return c.redirect(done.location, 302);
  } catch (err) {
    const level = !(err instanceof ApiError) || err.status >= 500 ? 'error' : 'info';
    c.get('logger')[level]('OAuth callback failed', {
      provider: flow.providerType,
      ...errorFields(err),
      ...(err instanceof ApiError && err.cause ? { cause: errorFields(err.cause) } : {}),
    });
    return c.redirect(errorRedirect(callbackRedirectBase(deps, flow), oauthErrorParams(err), true), 302);
  }
}

externalRoutes.route(
  {
    method: 'get',
    path: '/callback',
    summary: "The provider's redirect back",
    gotrue: 'ExternalProviderCallback',
    query: callbackQuery,
    replies: done,
  },
  callback,
);
externalRoutes.route(
  {
    method: 'post',
    path: '/callback',
    summary: "The provider's form POST back (Apple's form_post)",
    gotrue: 'ExternalProviderCallback',
    query: callbackQuery,
    form: { type: 'object', properties: { state: str, code: str, user: str, error: str, error_description: str } },
    replies: done,
  },
  callback,
);

const manualLinkingDisabled = () => notFound('manual_linking_disabled', 'Manual linking is disabled');

externalRoutes.route(
  {
    method: 'get',
    path: '/user/identities/authorize',
    summary: 'Link an OAuth identity to the signed-in user',
    tag: 'user',
    gotrue: 'LinkIdentity',
    auth: 'user',
    query: [
      ...authorizeQuery,
      {
        name: 'skip_http_redirect',
        description: '`true`: answer the URL as JSON.',
        schema: { enum: ['true', 'false'] },
      },
    ],
    replies: {
      200: json('UrlResponse', 'With skip_http_redirect=true.'),
      302: redirect('To the provider.'),
      401: {
        description:
          '`insufficient_aal`: a verified factor exists and the session is aal1 (checked again when the link completes).',
        error: true,
      },
    },
  },
  async (c) => {
    const deps = c.get('deps');
    if (!deps.config.security.manualLinkingEnabled) throw manualLinkingDisabled();
    const { user, session } = c.get('auth');
    // Review 2026-12-01 M2: PUT /user's rule; checked again when the link completes.
    await requireAal2WhenMfa(deps.db, user.id, session?.aal, 'link an identity');
    const query = queryOf(c);
    const referrer = redirectTarget(c, deps.config.siteUrl, deps.config.uriAllowList);
    const { url, state } = await externalAuthorizeUrl(deps, {
      provider: query.get('provider') ?? '',
      query,
      referrer,
      linkingTargetId: user.id,
      linkingSessionId: session?.id,
    });
    // Kept by a browser only when the app calls from the same origin: a cross-origin app links
    // with PKCE (flowType 'pkce'), completed at its code exchange; see http/oauth-binding.ts.
    bindStateToBrowser(c, state);
    if (query.get('skip_http_redirect') === 'true') return c.json({ url });
    return c.redirect(url, 302);
  },
);

externalRoutes.route(
  {
    method: 'delete',
    path: '/user/identities/{identity_id}',
    summary: 'Unlink an identity (aal2 when MFA is on)',
    tag: 'user',
    gotrue: 'DeleteIdentity',
    auth: 'user',
    replies: {
      200: empty,
      401: { description: '`insufficient_aal`: a verified factor exists and the session is aal1.', error: true },
    },
  },
  async (c) => {
    const deps = c.get('deps');
    if (!deps.config.security.manualLinkingEnabled) throw manualLinkingDisabled();
    await unlinkIdentity(deps, c.get('auth'), c.req.param('identity_id'), requestAud(c), requestMeta(c));
    return c.json({});
  },
);

externalRoutes.route(
  {
    method: 'post',
    path: '/user/identities/{provider}/token',
    summary: "A fresh access token from the provider for the user's stored refresh token (authsvc only)",
    tag: 'user',
    auth: 'user',
    replies: {
      200: json('ProviderToken'),
      400: error(
        '`provider_token_refresh_failed`: the provider refused (its `error` and `error_description` in `msg`); after `invalid_grant` the stored token is deleted.',
      ),
      401: error('`insufficient_aal`: a verified factor exists and the session is aal1.'),
      404: error(
        '`no_provider_token`: no refresh token is stored for the user and provider (EXTERNAL_<PROVIDER>_STORE_TOKENS off, no such identity, or deleted after `invalid_grant`).',
      ),
      429: error('`over_request_rate_limit`: its own per-IP bucket at RATE_LIMIT_TOKEN_REFRESH.'),
    },
  },
  async (c) => {
    await limitOwnBucket(c, 'provider_token');
    const fresh = await refreshProviderToken(c.get('deps'), c.get('auth'), c.req.param('provider'));
    c.header('Cache-Control', 'no-store');
    return c.json(fresh);
  },
);
