// SECURITY_CAPTCHA_*: every endpoint GoTrue guards checks the token with the provider (a local
// stand-in here, reached through SECURITY_CAPTCHA_VERIFY_URL) before doing anything.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

let db: Database;
let verifier: Server;
let verifyUrl: string;
/** What the stand-in received: the form fields of each siteverify call. */
const calls: Record<string, string>[] = [];
let mode: 'answer' | 'hang' | 'html' = 'answer';

beforeAll(async () => {
  db = await openTestDb();
  verifier = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => {
      raw += d.toString();
    });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(raw));
      calls.push({ ...form, contentType: req.headers['content-type'] ?? '', path: req.url ?? '' });
      if (mode === 'hang') return;
      if (mode === 'html') {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
        return;
      }
      const ok = form.secret === 'captcha-secret' && form.response === 'good-token';
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            ok
              ? { success: true }
              : { success: false, 'error-codes': ['invalid-input-response', 'timeout-or-duplicate'] },
          ),
        );
    });
  });
  await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', r));
  verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
});
afterAll(async () => {
  verifier.closeAllConnections();
  await new Promise((r) => verifier.close(r));
  await db?.close();
});

const captchaEnv = () => ({
  AUTHSVC_SECURITY_CAPTCHA_ENABLED: 'true',
  AUTHSVC_SECURITY_CAPTCHA_PROVIDER: 'turnstile',
  AUTHSVC_SECURITY_CAPTCHA_SECRET: ' captcha-secret ',
  AUTHSVC_SECURITY_CAPTCHA_VERIFY_URL: verifyUrl,
  AUTHSVC_SECURITY_CAPTCHA_TIMEOUT: '1',
  GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
});
const meta = (token: string) => ({ gotrue_meta_security: { captcha_token: token } });

async function expectCaptchaFailed(res: Response, msg: string): Promise<void> {
  expect({ status: res.status, body: await res.json() }).toEqual({
    status: 400,
    body: { code: 400, error_code: 'captcha_failed', msg },
  });
}

describe('captcha on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(db, captchaEnv());
  });

  test('each guarded endpoint refuses a request without a token, before doing anything', async () => {
    const email = uniqueEmail('nocaptcha');
    const requests: [string, unknown][] = [
      ['/signup', { email, password: 'secret-pw-1' }],
      ['/signup', {}],
      ['/token?grant_type=password', { email, password: 'x' }],
      ['/otp', { email }],
      ['/magiclink', { email }],
      ['/recover', { email }],
      ['/resend', { type: 'signup', email }],
    ];
    calls.length = 0;
    for (const [path, body] of requests) {
      await expectCaptchaFailed(
        await t.request('POST', path, body),
        'captcha protection: request disallowed (no captcha_token found)',
      );
    }
    expect(calls).toEqual([]);
    expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email))).toEqual([]);
    expect(t.mails).toEqual([]);
  });

  test('the token goes to the provider with the secret (trimmed) and the client IP; its error codes come back', async () => {
    calls.length = 0;
    const res = await t.request(
      'POST',
      '/signup',
      { email: uniqueEmail(), password: 'secret-pw-1', ...meta('bad-token') },
      { 'x-forwarded-for': '203.0.113.5' },
    );
    await expectCaptchaFailed(
      res,
      'captcha protection: request disallowed (invalid-input-response, timeout-or-duplicate)',
    );
    expect(calls).toEqual([
      {
        secret: 'captcha-secret',
        response: 'bad-token',
        remoteip: '203.0.113.5',
        contentType: 'application/x-www-form-urlencoded',
        path: '/siteverify',
      },
    ]);
  });

  test('a valid token lets each endpoint through; a top-level captcha_token is read too', async () => {
    const email = uniqueEmail('human');
    expect((await t.request('POST', '/signup', { email, password: 'secret-pw-1', ...meta('good-token') })).status).toBe(
      200,
    );
    expect((await t.request('POST', '/signup', { captcha_token: 'good-token' })).status).toBe(200);
    expect((await t.request('POST', '/recover', { email, ...meta('good-token') })).status).toBe(200);
    const login = await t.request('POST', '/token?grant_type=password', {
      email,
      password: 'secret-pw-1',
      ...meta('good-token'),
    });
    expect(await login.json()).toMatchObject({ error_code: 'email_not_confirmed' });
    const sent = t.mails.length;
    const magic = await t.request('POST', '/magiclink', { email: uniqueEmail('magic'), ...meta('good-token') });
    expect({ status: magic.status, body: await magic.json() }).toEqual({ status: 200, body: {} });
    // (An address with no pending signup: `email` above is inside its SMTP_MAX_FREQUENCY window.)
    calls.length = 0;
    const resend = await t.request('POST', '/resend', {
      type: 'signup',
      email: uniqueEmail('nobody'),
      ...meta('good-token'),
    });
    expect({ status: resend.status, body: await resend.json() }).toEqual({ status: 200, body: {} });
    expect(calls.map((c) => c.response)).toEqual(['good-token']);
    expect(t.mails.length).toBe(sent + 1);
  });

  test('a top-level captcha_token is checked on email signup and /otp: a bad one is refused, a good one passes', async () => {
    for (const [path, body] of [
      ['/signup', { email: uniqueEmail('top'), password: 'secret-pw-1' }],
      ['/otp', { email: uniqueEmail('top-otp') }],
    ] as const) {
      calls.length = 0;
      await expectCaptchaFailed(
        await t.request('POST', path, { ...body, captcha_token: 'bad-token' }),
        'captcha protection: request disallowed (invalid-input-response, timeout-or-duplicate)',
      );
      const ok = await t.request('POST', path, { ...body, captcha_token: 'good-token' });
      expect(ok.status).toBe(200);
      expect(calls.map((c) => c.response)).toEqual(['bad-token', 'good-token']);
      expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, body.email))).toHaveLength(1);
    }
  });

  test('grant_type web3 and unknown grant types are asked for a token too (GoTrue exempts only refresh_token, pkce, id_token)', async () => {
    for (const [grant, answer] of [
      ['web3', { code: 422, error_code: 'web3_provider_disabled', msg: 'Web3 provider is disabled' }],
      ['magic', { code: 400, error_code: 'invalid_credentials', msg: 'unsupported_grant_type' }],
    ] as const) {
      calls.length = 0;
      await expectCaptchaFailed(
        await t.request('POST', `/token?grant_type=${grant}`, {}),
        'captcha protection: request disallowed (no captcha_token found)',
      );
      await expectCaptchaFailed(
        await t.request('POST', `/token?grant_type=${grant}`, meta('bad-token')),
        'captcha protection: request disallowed (invalid-input-response, timeout-or-duplicate)',
      );
      const passed = await t.request('POST', `/token?grant_type=${grant}`, meta('good-token'));
      expect({ status: passed.status, body: await passed.json() }).toEqual({ status: answer.code, body: answer });
      expect(calls.map((c) => c.response)).toEqual(['bad-token', 'good-token']);
    }
    // id_token is exempt: its own error, not captcha_failed, and the provider is not asked.
    calls.length = 0;
    const idToken = await t.request('POST', '/token?grant_type=id_token', { provider: 'google', id_token: 'x' });
    expect(((await idToken.json()) as Record<string, unknown>).error_code).not.toBe('captcha_failed');
    expect(calls).toEqual([]);
  });

  test('refresh and pkce grants and admin tokens are not asked for one', async () => {
    const auto = await buildTestApp(db, { ...captchaEnv(), AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { session } = await (async () => {
      const res = await auto.request('POST', '/signup', {
        email: uniqueEmail(),
        password: 'secret-pw-1',
        ...meta('good-token'),
      });
      return { session: (await res.json()) as Record<string, any> };
    })();
    expect(
      (await auto.request('POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })).status,
    ).toBe(200);
    const pkce = await auto.request('POST', '/token?grant_type=pkce', { auth_code: 'x', code_verifier: 'y' });
    expect(await pkce.json()).toMatchObject({ error_code: 'flow_state_not_found' });
    const adminToken = await signJwt(auto.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 });
    expect(
      (
        await auto.request(
          'POST',
          '/signup',
          { email: uniqueEmail(), password: 'secret-pw-1' },
          { authorization: `Bearer ${adminToken}` },
        )
      ).status,
    ).toBe(200);
  });

  test('a provider that cannot answer (down, not JSON, past SECURITY_CAPTCHA_TIMEOUT) is 500, and nothing happens', async () => {
    for (const m of ['html', 'hang'] as const) {
      mode = m;
      try {
        const email = uniqueEmail(m);
        const res = await t.request('POST', '/signup', { email, password: 'secret-pw-1', ...meta('good-token') });
        expect(res.status).toBe(500);
        expect(await res.json()).toMatchObject({
          error_code: 'unexpected_failure',
          msg: 'captcha verification process failed',
        });
        expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email))).toEqual([]);
      } finally {
        mode = 'answer';
      }
    }
  });

  test('supabase-js: options.captchaToken on signUp, signInWithPassword and signInWithOtp', async () => {
    const auto = await buildTestApp(db, { ...captchaEnv(), AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const sb = supabaseClientFor(auto.app);
    const email = uniqueEmail('js');
    const without = await sb.auth.signUp({ email, password: 'secret-pw-1' });
    expect(without.error).toMatchObject({ status: 400, code: 'captcha_failed' });
    const up = await sb.auth.signUp({ email, password: 'secret-pw-1', options: { captchaToken: 'good-token' } });
    expect(up.error).toBeNull();
    const wrong = await sb.auth.signInWithPassword({
      email,
      password: 'secret-pw-1',
      options: { captchaToken: 'bad-token' },
    });
    expect(wrong.error).toMatchObject({ status: 400, code: 'captcha_failed' });
    const inn = await sb.auth.signInWithPassword({
      email,
      password: 'secret-pw-1',
      options: { captchaToken: 'good-token' },
    });
    expect(inn.error).toBeNull();
    const otp = await sb.auth.signInWithOtp({ email, options: { captchaToken: 'good-token' } });
    expect(otp.error).toBeNull();
  });
});

test('captcha off (the default): no token needed, the provider is never called', async () => {
  const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  calls.length = 0;
  await signUpConfirmed(t);
  expect(calls).toEqual([]);
});

test("without SECURITY_CAPTCHA_VERIFY_URL the request goes to the provider's siteverify URL", async () => {
  for (const [provider, url] of [
    ['hcaptcha', 'https://hcaptcha.com/siteverify'],
    ['turnstile', 'https://challenges.cloudflare.com/turnstile/v0/siteverify'],
  ]) {
    const seen: string[] = [];
    // deps.fetch is the machine's edge: no request leaves the test.
    const fetchFake = (async (input: RequestInfo | URL) => {
      seen.push(String(input));
      return new Response(JSON.stringify({ success: true }), { headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    const t = await buildTestApp(
      db,
      {
        AUTHSVC_SECURITY_CAPTCHA_ENABLED: 'true',
        AUTHSVC_SECURITY_CAPTCHA_PROVIDER: provider!,
        AUTHSVC_SECURITY_CAPTCHA_SECRET: 's',
      },
      { fetch: fetchFake },
    );
    expect((await t.request('POST', '/recover', { email: uniqueEmail(), ...meta('any') })).status).toBe(200);
    expect(seen).toEqual([url]);
  }
});
