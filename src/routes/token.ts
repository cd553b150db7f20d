// POST /token?grant_type=password|refresh_token|pkce|id_token — GoTrue: api.Token
import * as z from 'zod';
import { passwordGrant } from '../flows/password-grant.ts';
import { idTokenGrant } from '../flows/id-token.ts';
import { pkceGrant } from '../flows/pkce.ts';
import { type Web3Params, web3Enabled, web3Grant } from '../flows/web3.ts';
import { refreshSession } from '../accounts/refresh.ts';
import { CaptchaFields, requireCaptcha } from '../http/captcha.ts';
import { requireAuth } from '../http/auth.ts';
import { badRequest, OAuthApiError, validationFailed } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
import { optBool, optStr, readJson } from '../http/read-json.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { json, oneOf } from '../openapi/parts.ts';

export const PasswordBody = z.object({ email: optStr, phone: optStr, password: optStr, ...CaptchaFields });
export const RefreshBody = z.object({ refresh_token: optStr });
const CaptchaBody = z.object(CaptchaFields);
export const PkceBody = z.object({ auth_code: optStr, code_verifier: optStr });
// Typed after the feature gate (below): the suites send an object as an Ethereum signature.
export const Web3Body = z.object({
  chain: z.unknown().optional(),
  message: z.unknown().optional(),
  signature: z.unknown().optional(),
  ...CaptchaFields,
});

function web3Params(body: z.infer<typeof Web3Body>): Web3Params {
  const out: Web3Params = {};
  for (const k of ['chain', 'message', 'signature'] as const) {
    const v = body[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string')
      throw badRequest(
        'bad_json',
        `Could not parse request body as JSON: json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go struct field Web3GrantParams.${k} of type string`,
      );
    out[k] = v;
  }
  return out;
}
export const IdTokenBody = z.object({
  id_token: optStr,
  access_token: optStr,
  nonce: optStr,
  provider: optStr,
  client_id: optStr,
  issuer: optStr,
  link_identity: optBool,
});

export const tokenRoutes = routeGroup('auth');

// The grant type picks the bucket and the body, so the handler reads them.
tokenRoutes.route(
  {
    method: 'post',
    path: '/token',
    summary: 'Sign in / refresh: password, refresh_token, pkce, id_token or web3 grant',
    gotrue: 'Token',
    auth: 'user-optional',
    query: [
      {
        name: 'grant_type',
        required: true,
        schema: { enum: ['password', 'refresh_token', 'pkce', 'id_token', 'web3'] },
      },
    ],
    bodyReadByHandler: {
      password: PasswordBody,
      refresh_token: RefreshBody,
      pkce: PkceBody,
      id_token: IdTokenBody,
      web3: Web3Body,
    },
    replies: {
      200: json('Session'),
      400: {
        description: "GoTrue's error body; id_token linking without a token answers the OAuth shape.",
        schema: oneOf('ErrorLegacy', 'Error2024', 'OAuthError'),
      },
    },
  },
  async (c) => {
    const deps = c.get('deps');
    const grantType = c.req.query('grant_type');
    // GoTrue: RATE_LIMIT_WEB3 replaces the /token limiter for this grant.
    await enforceRateLimit(c, grantType === 'web3' ? 'web3' : 'token');
    if (grantType === 'password') {
      const body = await readJson(c, PasswordBody);
      await requireCaptcha(c, body);
      const token = await passwordGrant(deps, body, requestAud(c), requestMeta(c));
      return c.json(token.body, 200, token.headers);
    }
    if (grantType === 'refresh_token') {
      const body = await readJson(c, RefreshBody);
      if (!body.refresh_token) throw validationFailed('Refresh token is not valid');
      const token = await refreshSession(deps, body.refresh_token, requestMeta(c));
      return c.json(token.body, 200, token.headers);
    }
    if (grantType === 'pkce') {
      const body = await readJson(c, PkceBody);
      const token = await pkceGrant(
        deps,
        body.auth_code ?? '',
        body.code_verifier ?? '',
        requestAud(c),
        requestMeta(c),
      );
      return c.json(token.body, 200, token.headers);
    }
    if (grantType === 'id_token') {
      const body = await readJson(c, IdTokenBody);
      if (body.link_identity) {
        if (!c.req.header('authorization'))
          throw new OAuthApiError('invalid request', 'Linking requires a valid user access token in Authorization');
        await requireAuth(c, async () => undefined);
      }
      const auth = body.link_identity ? c.get('auth') : undefined;
      const link = auth && { userId: auth.user.id, sessionId: auth.session?.id ?? null };
      const token = await idTokenGrant(deps, body, requestAud(c), requestMeta(c), link);
      return c.json(token.body, 200, token.headers);
    }
    // GoTrue's isIgnoreCaptchaRoute exempts only refresh_token, pkce and id_token: web3 and unknown
    // grant types are asked for a captcha token before their answer.
    if (grantType === 'web3') {
      // Both chains off: GoTrue answers before reading the body, unless the captcha read it first.
      const captcha = deps.config.security.captcha.enabled;
      if (!captcha) web3Enabled(deps);
      const body = await readJson(c, Web3Body);
      if (captcha) {
        await requireCaptcha(c, body);
        web3Enabled(deps);
      }
      const token = await web3Grant(deps, web3Params(body), requestAud(c), requestMeta(c));
      return c.json(token.body, 200, token.headers);
    }
    if (deps.config.security.captcha.enabled) await requireCaptcha(c, await readJson(c, CaptchaBody));
    throw badRequest('invalid_credentials', 'unsupported_grant_type');
  },
);
