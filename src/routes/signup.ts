// POST /signup — GoTrue: api.Signup / api.SignupAnonymously
import * as z from 'zod';
import { assertNewPassword } from '../accounts/password-check.ts';
import { parseChannel } from '../accounts/phone-tokens.ts';
import { signupWithPhone } from '../flows/phone.ts';
import { parsePkce } from '../accounts/pkce-params.ts';
import { signupAnonymously, signupWithEmail } from '../flows/signup.ts';
import { validateEmail, validatePhone } from '../accounts/validate.ts';
import { CaptchaFields } from '../http/captcha.ts';
import { ApiError, validationFailed } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
import { optRecord, optStr } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { json, redirectTo } from '../openapi/parts.ts';

export const SignupBody = z.object({
  email: optStr,
  phone: optStr,
  password: optStr,
  data: optRecord,
  channel: optStr,
  code_challenge: optStr,
  code_challenge_method: optStr,
  ...CaptchaFields,
});

export const signupRoutes = routeGroup('auth');

signupRoutes.route(
  {
    method: 'post',
    path: '/signup',
    summary: 'Sign up with email or phone and a password; anonymously with neither',
    gotrue: 'Signup',
    // The bucket depends on the body (anonymous or not), so the handler takes it.
    body: SignupBody,
    captcha: true,
    query: [redirectTo],
    replies: { 200: json('SessionOrUser') },
  },
  async (c, body) => {
    const deps = c.get('deps');
    const cfg = deps.config;
    await enforceRateLimit(c, !body.email && !body.phone ? 'anonymous' : 'signup');
    if (cfg.disableSignup) throw new ApiError(422, 'signup_disabled', 'Signups not allowed for this instance');
    const data = body.data ?? {};
    const aud = requestAud(c);
    if (!body.email && !body.phone) {
      if (!cfg.external.anonymousUsers.enabled)
        throw new ApiError(422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled');
      const token = await signupAnonymously(deps, data, aud, requestMeta(c));
      return c.json(token.body, 200, token.headers);
    }
    if (!body.password) throw validationFailed('Signup requires a valid password');
    await assertNewPassword(deps, body.password);
    if (body.email && body.phone)
      throw validationFailed('Only an email address or phone number should be provided on signup.');
    if (body.phone && body.code_challenge) throw validationFailed('PKCE not supported for phone signups');
    const pkce = parsePkce(body);
    if (body.phone) {
      const channel = parseChannel(deps, body.channel);
      if (!cfg.external.phone.enabled) throw new ApiError(400, 'phone_provider_disabled', 'Phone signups are disabled');
      const phone = validatePhone(body.phone);
      const result = await signupWithPhone(deps, {
        phone,
        password: body.password,
        data,
        aud,
        channel,
        meta: requestMeta(c),
      });
      if (result.kind === 'session') return c.json(result.token.body, 200, result.token.headers);
      if (result.kind === 'user') return c.json(result.body);
      throw new Error('phone signup asked for a session but got none');
    }
    if (!cfg.external.email.enabled) throw new ApiError(400, 'email_provider_disabled', 'Email signups are disabled');
    const email = validateEmail(body.email);
    const result = await signupWithEmail(deps, {
      email,
      password: body.password,
      data,
      aud,
      meta: requestMeta(c),
      pkce,
      redirectTo: redirectTarget(c, cfg.siteUrl, cfg.uriAllowList),
    });
    if (result.kind === 'session') return c.json(result.token.body, 200, result.token.headers);
    if (result.kind === 'user') return c.json(result.body);
    throw new Error('signup asked for a session but got none');
  },
);
