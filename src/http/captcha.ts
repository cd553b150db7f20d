// Captcha (SECURITY_CAPTCHA_*), as GoTrue's verifyCaptcha: on signup (anonymous too), /token for
// every grant type but refresh_token, pkce and id_token (isIgnoreCaptchaRoute), /otp, /magiclink,
// /recover and /resend, the request's captcha token is checked with hCaptcha or Cloudflare
// Turnstile before anything else happens. Admin tokens skip it.
import type { Context } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { verifyJwt } from '../crypto/jwt.ts';
import { ID_TOKEN_TYP } from './auth.ts';
import { ApiError } from '../core/errors.ts';
import { optStr } from './read-json.ts';
import { requestMeta } from './request-meta.ts';

const PROVIDER_URL = {
  hcaptcha: 'https://hcaptcha.com/siteverify',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
} as const;

/** The body fields that carry the token: supabase-js sends `gotrue_meta_security.captcha_token`. */
export const CaptchaFields = {
  captcha_token: optStr,
  gotrue_meta_security: z.object({ captcha_token: optStr }).partial().nullish(),
};
export interface CaptchaBody {
  captcha_token?: string;
  gotrue_meta_security?: { captcha_token?: string } | null;
}

const refused = (why: string) => new ApiError(400, 'captcha_failed', `captcha protection: request disallowed (${why})`);

/** GoTrue skips the check when the bearer token is a valid admin token. */
async function isAdminRequest(c: Context<AppEnv>): Promise<boolean> {
  const m = /^bearer (\S+)$/i.exec(c.req.header('authorization') ?? '');
  if (!m?.[1]) return false;
  const deps = c.get('deps');
  try {
    const claims = await verifyJwt(deps.keys, m[1], deps.now());
    // Never an ID token or an OAuth client's token (http/auth.ts), whatever role its user has.
    if (claims.typ === ID_TOKEN_TYP || claims.client_id !== undefined) return false;
    return typeof claims.role === 'string' && deps.config.jwt.adminRoles.includes(claims.role);
  } catch {
    return false;
  }
}

/** The provider's siteverify answer. Throws when it cannot be had (network, timeout, not JSON). */
async function siteverify(c: Context<AppEnv>, token: string): Promise<{ success: boolean; errorCodes: string[] }> {
  const deps = c.get('deps');
  const cfg = deps.config.security.captcha;
  const form = new URLSearchParams({
    secret: (cfg.secret ?? '').trim(),
    response: token,
    remoteip: requestMeta(c).ip ?? '',
  });
  const res = await deps.fetch(cfg.verifyUrl ?? PROVIDER_URL[cfg.provider], {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    signal: AbortSignal.timeout(cfg.timeout * 1000),
  });
  const body = (await res.json()) as { success?: unknown; 'error-codes'?: unknown };
  const codes = Array.isArray(body['error-codes'])
    ? body['error-codes'].filter((x): x is string => typeof x === 'string')
    : [];
  return { success: body.success === true, errorCodes: codes };
}

/** Checks the request's captcha token when SECURITY_CAPTCHA_ENABLED; throws GoTrue's captcha_failed errors. */
export async function requireCaptcha(c: Context<AppEnv>, body: CaptchaBody): Promise<void> {
  if (!c.get('deps').config.security.captcha.enabled) return;
  if (await isAdminRequest(c)) return;
  const token = (body.gotrue_meta_security?.captcha_token || body.captcha_token || '').trim();
  if (!token) throw refused('no captcha_token found');
  let result: { success: boolean; errorCodes: string[] };
  try {
    result = await siteverify(c, token);
  } catch (err) {
    throw new ApiError(500, 'unexpected_failure', 'captcha verification process failed', undefined, err);
  }
  if (!result.success) throw refused(result.errorCodes.join(', '));
}
