// POST /verify and GET /verify — GoTrue: api.Verify (email types; SMS types come with phone support)
import type { Context } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { type EmailChangeResult, verifyEmailChange } from '../flows/email-change.ts';
import { verifyPhoneToken } from '../flows/phone.ts';
import { validatePhone } from '../accounts/validate.ts';
import { isEmailVerifyType, verifyEmailToken } from '../flows/verify.ts';
import { errorFragment, fragment } from '../http/fragment.ts';
import { ApiError, forbidden, validationFailed } from '../core/errors.ts';
import { enforceRateLimit, rateLimitKey } from '../http/rate-limit.ts';
import { optStr } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { json, oneOf, redirect, redirectTo } from '../openapi/parts.ts';

export const VerifyBody = z.object({
  type: optStr,
  token: optStr,
  token_hash: optStr,
  email: optStr,
  phone: optStr,
  redirect_to: optStr,
});

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

/** Adds query parameters, keeping the redirect's own (GoTrue keeps the existing query). */
function withQuery(target: string, params: Record<string, string>): string {
  const url = new URL(target);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

function sessionFragment(b: Record<string, unknown>, type: string): string {
  return fragment({
    access_token: String(b.access_token),
    expires_at: Number(b.expires_at),
    expires_in: Number(b.expires_in),
    refresh_token: String(b.refresh_token),
    token_type: 'bearer',
    type,
  });
}

/** The first half of a secure email change answers GoTrue's message, with `code` as a string. */
function emailChangeJson(c: Context<AppEnv>, r: EmailChangeResult) {
  if (r.kind === 'half') return c.json({ msg: r.message, code: '200' });
  if (r.kind === 'code') throw new Error('a code is only issued for links');
  return c.json({ ...r.token.body, type: 'email_change' }, 200, r.token.headers);
}

export const verifyRoutes = routeGroup('auth');

verifyRoutes.route(
  {
    method: 'post',
    path: '/verify',
    summary: 'Verify an email/SMS code or a token hash',
    gotrue: 'Verify',
    rateLimit: 'verify',
    body: VerifyBody,
    replies: {
      200: json(
        oneOf('VerifiedSession', 'EmailChangeHalf'),
        'A session (with the verified type, except for SMS codes), or the first half of a secure email change.',
      ),
    },
  },
  async (c, b) => {
    const deps = c.get('deps');
    if (!b.type) throw validationFailed('Verify requires a verification type');
    if (Boolean(b.token) === Boolean(b.token_hash))
      throw validationFailed('Verify requires either a token or a token hash');
    const aud = requestAud(c);
    if (b.token_hash) {
      if (b.email || b.phone || b.redirect_to)
        throw validationFailed('Only the token_hash and type should be provided');
      if (b.type === 'email_change')
        return emailChangeJson(
          c,
          await verifyEmailChange(deps, { aud, tokenHash: b.token_hash, client: rateLimitKey(c) }, requestMeta(c)),
        );
      if (!isEmailVerifyType(b.type)) throw validationFailed('Invalid email verification type');
      const v = await verifyEmailToken(
        deps,
        { type: b.type, aud, tokenHash: b.token_hash, client: rateLimitKey(c) },
        requestMeta(c),
      );
      return c.json({ ...v.token!.body, type: v.type }, 200, v.token!.headers);
    }
    if (Boolean(b.email) === Boolean(b.phone))
      throw validationFailed('Only an email address or phone number should be provided on verify');
    if (b.email && b.type === 'email_change') {
      if (!EMAIL_RE.test(b.email)) throw new ApiError(422, 'validation_failed', 'Invalid email format');
      return emailChangeJson(
        c,
        await verifyEmailChange(deps, { aud, token: b.token!, email: b.email }, requestMeta(c)),
      );
    }
    if (b.phone && (b.type === 'sms' || b.type === 'phone_change')) {
      const t = await verifyPhoneToken(
        deps,
        { type: b.type, phone: validatePhone(b.phone), token: b.token!, aud },
        requestMeta(c),
      );
      return c.json(t.body, 200, t.headers);
    }
    if (b.phone || !isEmailVerifyType(b.type)) {
      // Unknown types, and email types with a phone, fail as an invalid token, as in GoTrue.
      throw forbidden('otp_expired', 'Token has expired or is invalid');
    }
    if (!EMAIL_RE.test(b.email!)) throw new ApiError(422, 'validation_failed', 'Invalid email format');
    const v = await verifyEmailToken(deps, { type: b.type, aud, token: b.token!, email: b.email! }, requestMeta(c));
    return c.json({ ...v.token!.body, type: v.type }, 200, v.token!.headers);
  },
);

verifyRoutes.route(
  {
    method: 'get',
    path: '/verify',
    summary: 'Follow an email link (a HEAD does not consume it)',
    gotrue: 'Verify',
    query: [{ name: 'type', required: true }, { name: 'token', required: true }, redirectTo],
    replies: {
      303: redirect(
        'To the redirect target: a session or message in the fragment, a PKCE code in the query, or an error in both.',
      ),
    },
  },
  async (c) => {
    // The bucket is taken after the query is checked (as GoTrue), so the handler takes it.
    const deps = c.get('deps');
    const type = c.req.query('type');
    const token = c.req.query('token');
    if (!type) throw validationFailed('Verify requires a verification type');
    if (!token) throw validationFailed('Verify requires either a token or a token hash');
    await enforceRateLimit(c, 'verify');
    // Mail scanners probe links with HEAD: answer without consuming the token.
    if (c.req.method === 'HEAD') return c.body(null, 200);
    const target = redirectTarget(c, deps.config.siteUrl, deps.config.uriAllowList).split('#')[0]!;
    try {
      if (type === 'email_change') {
        const r = await verifyEmailChange(
          deps,
          { aud: requestAud(c), tokenHash: token, issueCode: true, client: rateLimitKey(c) },
          requestMeta(c),
        );
        if (r.kind === 'code') return c.redirect(withQuery(target, { code: r.authCode }), 303);
        if (r.kind === 'half') {
          const base = r.pkce ? withQuery(target, { message: r.message }) : target;
          return c.redirect(`${base}#${fragment({ message: r.message })}`, 303);
        }
        return c.redirect(`${target}#${sessionFragment(r.token.body, 'email_change')}`, 303);
      }
      if (!isEmailVerifyType(type)) throw validationFailed('Invalid email verification type');
      const v = await verifyEmailToken(
        deps,
        { type, aud: requestAud(c), tokenHash: token, client: rateLimitKey(c) },
        requestMeta(c),
        { issueCode: true },
      );
      if (v.authCode) return c.redirect(withQuery(target, { code: v.authCode }), 303);
      return c.redirect(`${target}#${sessionFragment(v.token!.body, v.type)}`, 303);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      // A PKCE client reads the error from the query as well as from the fragment.
      const params = Object.fromEntries([...new URLSearchParams(errorFragment(err))].filter(([k]) => k !== 'sb'));
      const base = token.startsWith('pkce_') ? withQuery(target, params) : target;
      return c.redirect(`${base}#${errorFragment(err)}`, 303);
    }
  },
);
