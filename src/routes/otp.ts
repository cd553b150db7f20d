// POST /recover, /magiclink, /otp, /resend — GoTrue: api.Recover, api.MagicLink, api.Otp, api.Resend
import type { Context } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { resendEmailChange } from '../flows/email-change.ts';
import { type EmailRequest, requestMagicLink, requestRecovery, resendConfirmation } from '../flows/passwordless.ts';
import { parseChannel } from '../accounts/phone-tokens.ts';
import { requestSmsOtp, resendPhoneCode } from '../flows/phone.ts';
import { type Pkce, parsePkce } from '../accounts/pkce-params.ts';
import { validateEmail, validatePhone } from '../accounts/validate.ts';
import { CaptchaFields } from '../http/captcha.ts';
import { ApiError, validationFailed } from '../core/errors.ts';
import { optBool, optRecord, optStr } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { empty, json, redirectTo } from '../openapi/parts.ts';

const PkceFields = { code_challenge: optStr, code_challenge_method: optStr, ...CaptchaFields };
export const RecoverBody = z.object({ email: optStr, ...PkceFields });
export const MagicLinkBody = z.object({ email: optStr, data: optRecord, ...PkceFields });
export const OtpBody = z.object({
  email: optStr,
  phone: optStr,
  channel: optStr,
  create_user: optBool,
  data: optRecord,
  ...PkceFields,
});
export const ResendBody = z.object({ type: optStr, email: optStr, phone: optStr, ...PkceFields });

function emailRequest(c: Context<AppEnv>, email: string, pkce: Pkce | undefined): EmailRequest {
  const cfg = c.get('deps').config;
  return {
    email,
    aud: requestAud(c),
    redirectTo: redirectTarget(c, cfg.siteUrl, cfg.uriAllowList),
    meta: requestMeta(c),
    pkce,
  };
}

export const otpRoutes = routeGroup('passwordless');

otpRoutes.route(
  {
    method: 'post',
    path: '/recover',
    summary: 'Send a password-recovery email',
    gotrue: 'Recover',
    rateLimit: 'recover',
    body: RecoverBody,
    captcha: true,
    query: [redirectTo],
    replies: { 200: empty },
  },
  async (c, b) => {
    if (!b.email) throw validationFailed('Password recovery requires an email');
    const pkce = parsePkce(b);
    const email = validateEmail(b.email);
    await requestRecovery(c.get('deps'), emailRequest(c, email, pkce));
    return c.json({});
  },
);

otpRoutes.route(
  {
    method: 'post',
    path: '/magiclink',
    summary: 'Send a magic link',
    gotrue: 'MagicLink',
    rateLimit: 'magiclink',
    body: MagicLinkBody,
    captcha: true,
    query: [redirectTo],
    replies: { 200: empty },
  },
  async (c, b) => {
    if (!b.email) throw new ApiError(422, 'validation_failed', 'Password recovery requires an email');
    const pkce = parsePkce(b);
    const email = validateEmail(b.email);
    await requestMagicLink(c.get('deps'), { ...emailRequest(c, email, pkce), data: b.data ?? {}, createUser: true });
    return c.json({});
  },
);

otpRoutes.route(
  {
    method: 'post',
    path: '/otp',
    summary: 'Send a one-time code by email or SMS',
    gotrue: 'Otp',
    rateLimit: 'otp',
    body: OtpBody,
    captcha: true,
    query: [redirectTo],
    replies: { 200: json('MessageId', 'Empty for email; the SMS message id for phone.') },
  },
  async (c, b) => {
    if (b.email && b.phone) throw validationFailed('Only an email address or phone number should be provided');
    if (b.email && b.channel) throw validationFailed('Channel should only be specified with Phone OTP');
    if (!b.email && !b.phone) throw validationFailed('One of email or phone must be set');
    const pkce = parsePkce(b);
    if (b.phone) {
      const deps = c.get('deps');
      if (!deps.config.external.phone.enabled)
        throw new ApiError(400, 'phone_provider_disabled', 'Unsupported phone provider');
      const phone = validatePhone(b.phone);
      const channel = parseChannel(deps, b.channel);
      return c.json(
        await requestSmsOtp(deps, {
          phone,
          channel,
          aud: requestAud(c),
          createUser: b.create_user ?? true,
          data: b.data ?? {},
          meta: requestMeta(c),
        }),
      );
    }
    const email = validateEmail(b.email);
    await requestMagicLink(c.get('deps'), {
      ...emailRequest(c, email, pkce),
      data: b.data ?? {},
      createUser: b.create_user ?? true,
    });
    return c.json({});
  },
);

otpRoutes.route(
  {
    method: 'post',
    path: '/resend',
    summary: 'Resend a signup, email-change, SMS or phone-change code',
    gotrue: 'Resend',
    rateLimit: 'resend',
    body: ResendBody,
    captcha: true,
    query: [redirectTo],
    replies: { 200: json('MessageId') },
  },
  async (c, b) => {
    const types = ['signup', 'email_change', 'sms', 'phone_change'];
    if (!b.type || !types.includes(b.type))
      throw validationFailed('Missing one of these types: signup, email_change, sms, phone_change');
    const pkce = parsePkce(b);
    if (b.type === 'signup') {
      if (!b.email) throw validationFailed('An email address is required');
      await resendConfirmation(c.get('deps'), emailRequest(c, validateEmail(b.email), pkce));
    }
    if (b.type === 'email_change') {
      if (!b.email) throw validationFailed('An email address is required');
      const r = emailRequest(c, validateEmail(b.email), pkce);
      await resendEmailChange(c.get('deps'), r.email, r.aud, r.redirectTo, pkce);
    }
    if (b.type === 'sms' || b.type === 'phone_change') {
      const deps = c.get('deps');
      if (b.email && b.phone) throw validationFailed('Only an email address or phone number should be provided.');
      if (!b.phone)
        throw validationFailed(
          b.type === 'sms' ? 'Type provided requires a phone number' : 'Missing email address or phone number',
        );
      if (!deps.config.external.phone.enabled)
        throw new ApiError(400, 'phone_provider_disabled', 'Phone logins are disabled');
      return c.json(await resendPhoneCode(deps, b.type, validatePhone(b.phone), requestAud(c), requestMeta(c)));
    }
    return c.json({});
  },
);
