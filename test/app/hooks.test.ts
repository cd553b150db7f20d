// Auth hooks (issue 29) through the real app: every kind over HTTP to a local receiver that
// checks the Standard Webhooks signature with the `standardwebhooks` package, the access-token
// and before-user-created hooks as SQL functions (PGlite, or Postgres with TEST_DATABASE_URL),
// and the failures (refusal, 500, bad JSON, wrong content type, oversized answer, wrong secret,
// no answer) with GoTrue's answers and nothing written.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import type { SmsMessage, SmsProvider } from '../../src/sms/provider.ts';
import { BASE_ENV, buildTestApp, signUpConfirmed, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { decodeBase32, totpAt } from '../helpers/totp.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const V2024 = { 'x-supabase-api-version': '2024-01-01' };
const KEY = btoa('a 32-byte key for the hook tests');
const SECRET = `v1,whsec_${KEY}`;
const OTHER_SECRET = `v1,whsec_${btoa('another 32-byte key, not the one')}`;
const HOOK_URL = 'https://hooks.test/hook';

interface Call {
  payload: Json;
  headers: Headers;
}
type Answer = (payload: Json) => Response | Promise<Response>;
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * A fake deps.fetch for HOOK_URL: checks the signature with the receiver's secret (401 when it
 * does not verify, as a Standard Webhooks receiver answers) and records each verified call.
 */
function receiver(answer: Answer, secretKey = KEY) {
  const calls: Call[] = [];
  const verifier = new Webhook(secretKey);
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if (String(input) !== HOOK_URL) throw new Error(`unexpected request to ${String(input)}`);
    const headers = new Headers(init?.headers);
    const body = String(init?.body);
    try {
      verifier.verify(body, Object.fromEntries(headers));
    } catch {
      return new Response('bad signature', { status: 401 });
    }
    const payload = JSON.parse(body) as Json;
    calls.push({ payload, headers });
    return answer(payload);
  }) as typeof globalThis.fetch;
  return { calls, fetch };
}

const hookEnv = (kind: string, uri = HOOK_URL) => ({
  [`AUTHSVC_HOOK_${kind}_ENABLED`]: 'true',
  [`AUTHSVC_HOOK_${kind}_URI`]: uri,
  [`AUTHSVC_HOOK_${kind}_SECRETS`]: SECRET,
});

async function sessionsOf(userId: string) {
  return db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, userId));
}
async function userByEmail(email: string) {
  return (await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email)))[0];
}

/** A confirmed user made with hooks off, then an app with `env` and the receiver's fetch. */
async function withUser(env: Record<string, string>, answer: Answer, secretKey?: string) {
  const plain = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  const { email, password, session } = await signUpConfirmed(plain, uniqueEmail('hook'));
  const hook = receiver(answer, secretKey);
  const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true', ...env }, { fetch: hook.fetch });
  return { t, hook, email, password, userId: session.user.id as string, session };
}

describe('settings', () => {
  test('URIs and secrets are checked at start-up as GoTrue checks them; a secret never appears in the error', () => {
    const bad = (env: Record<string, string>) => {
      const r = parseConfig({ ...BASE_ENV, ...env }, { local: true });
      expect(r.ok).toBe(false);
      return r.ok ? '' : r.errors.join('\n');
    };
    expect(bad({ AUTHSVC_HOOK_SEND_SMS_URI: 'http://hooks.example.com/sms' })).toContain(
      'only localhost, 127.0.0.1, and ::1 are supported with http',
    );
    expect(bad({ GOTRUE_HOOK_SEND_SMS_URI: 'ftp://hooks.example.com/sms' })).toContain(
      'GOTRUE_HOOK_SEND_SMS_URI: only postgres hooks and HTTPS functions',
    );
    expect(bad({ AUTHSVC_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'pg-functions://postgres/public/bad-name' })).toContain(
      'invalid function name',
    );
    expect(bad({ AUTHSVC_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'pg-functions://postgres/public' })).toContain(
      'URI path does not contain enough parts',
    );
    const secretError = bad({ AUTHSVC_HOOK_SEND_EMAIL_SECRETS: `${SECRET}|v1,whsec_tooshort-secret-value` });
    expect(secretError).toContain('invalid secret format');
    expect(secretError).not.toContain('tooshort-secret-value');

    const ok = parseConfig(
      {
        ...BASE_ENV,
        ...hookEnv('SEND_EMAIL', 'http://localhost:4000/x'),
        GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'pg-functions://postgres/public/hook_fn',
      },
      { local: true },
    );
    if (!ok.ok) throw new Error(ok.errors.join('\n'));
    expect(ok.config.hooks.SEND_EMAIL).toEqual({
      enabled: true,
      uri: 'http://localhost:4000/x',
      target: { transport: 'http', url: 'http://localhost:4000/x' },
      secrets: [SECRET],
    });
    expect(ok.config.hooks.CUSTOM_ACCESS_TOKEN.target).toEqual({ transport: 'pg', schema: 'public', fn: 'hook_fn' });
    expect(ok.config.hooks.CUSTOM_ACCESS_TOKEN.enabled).toBe(false);
  });
});

describe('custom access token hook over HTTP', () => {
  test('sign-in and refresh sign the claims the hook returns; the receiver verifies every signature', async () => {
    const { t, hook, email, password, userId } = await withUser(hookEnv('CUSTOM_ACCESS_TOKEN'), (p) =>
      json({ claims: { ...p.claims, tenant: 'acme', role: 'tenant_user' } }),
    );
    const res = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Json;
    const claims = decodeJwt(body.access_token);
    expect(claims).toMatchObject({ tenant: 'acme', role: 'tenant_user', sub: userId });
    // expires_at/expires_in are the server's own.
    expect(body.expires_at).toBe(claims.exp);
    const first = hook.calls[0]!;
    expect(first.payload).toMatchObject({
      user_id: userId,
      authentication_method: 'password',
      metadata: { name: 'customize-access-token' },
    });
    expect(first.payload.claims).toMatchObject({
      sub: userId,
      email,
      role: 'authenticated',
      aal: 'aal1',
      is_anonymous: false,
    });
    expect(first.headers.get('webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(first.headers.get('content-type')).toBe('application/json');

    const refreshed = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: body.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(((await refreshed.json()) as Json).access_token).tenant).toBe('acme');
    expect(hook.calls[1]!.payload.authentication_method).toBe('token_refresh');
  });

  test('with several secrets the request carries one signature per secret (rotation)', async () => {
    const { t, hook, email, password } = await withUser(
      { ...hookEnv('CUSTOM_ACCESS_TOKEN'), AUTHSVC_HOOK_CUSTOM_ACCESS_TOKEN_SECRETS: `${OTHER_SECRET}|${SECRET}` },
      (p) => json({ claims: p.claims }),
    );
    expect((await t.request('POST', '/token?grant_type=password', { email, password })).status).toBe(200);
    expect(hook.calls[0]!.headers.get('webhook-signature')!.split(', ')).toHaveLength(2);
  });

  test('a refusal (error object) is the answer, with no error code, and no session is left', async () => {
    const { t, email, password, userId } = await withUser(hookEnv('CUSTOM_ACCESS_TOKEN'), () =>
      json({ error: { http_code: 403, message: 'tenant suspended' } }),
    );
    const before = (await sessionsOf(userId)).length;
    const res = await t.request('POST', '/token?grant_type=password', { email, password }, V2024);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ code: 'unknown', message: 'tenant suspended' });
    expect(res.headers.get('x-sb-error-code')).toBeNull();
    expect((await sessionsOf(userId)).length).toBe(before);
  });

  test('a refused refresh keeps the old refresh token usable (the rotation is taken back)', async () => {
    let refuse = false;
    const { t, email, password } = await withUser(hookEnv('CUSTOM_ACCESS_TOKEN'), (p) =>
      refuse ? json({ error: { message: 'no' } }) : json({ claims: p.claims }),
    );
    const signedIn = (await (
      await t.request('POST', '/token?grant_type=password', { email, password })
    ).json()) as Json;
    refuse = true;
    const refused = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: signedIn.refresh_token,
    });
    expect(refused.status).toBe(500);
    expect(((await refused.json()) as Json).msg).toBe('no');
    refuse = false;
    expect(
      (await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: signedIn.refresh_token })).status,
    ).toBe(200);
  });

  test("claims missing a required claim or of the wrong type are refused with GoTrue's message", async () => {
    const { t, email, password, userId } = await withUser(hookEnv('CUSTOM_ACCESS_TOKEN'), (p) => {
      const { role: _r, ...rest } = p.claims;
      return json({ claims: { ...rest, exp: 'soon' } });
    });
    const res = await t.request('POST', '/token?grant_type=password', { email, password }, V2024);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      code: 'unexpected_failure',
      message:
        'output claims do not conform to the expected schema: \n- (root): role is required\n- exp: Invalid type. Expected: integer, given: string\n',
    });
    expect(await sessionsOf(userId)).toHaveLength(1);
  });

  test('an answer without claims is refused', async () => {
    const { t, email, password } = await withUser(hookEnv('CUSTOM_ACCESS_TOKEN'), () => json({ other: 1 }));
    const res = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(res.status).toBe(500);
    expect(((await res.json()) as Json).msg).toBe('output claims field is missing');
  });
});

describe('HTTP transport failures', () => {
  const cases: [string, Answer, number, string, string?][] = [
    [
      'a 500',
      () => new Response('boom', { status: 500 }),
      500,
      'Unexpected status code returned from hook: 500',
      'unexpected_failure',
    ],
    ['a 400', () => new Response('', { status: 400 }), 500, 'Invalid payload sent to hook', 'unexpected_failure'],
    [
      'a 503 without retry-after',
      () => new Response('', { status: 503 }),
      500,
      'Service currently unavailable due to hook',
      'unexpected_failure',
    ],
    [
      'no content type',
      () => new Response(new TextEncoder().encode('{}'), { status: 200 }),
      400,
      'Invalid Content-Type: Missing Content-Type header',
      'hook_payload_invalid_content_type',
    ],
    [
      'a text answer',
      () => new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } }),
      400,
      'Invalid JSON response. Received content-type: text/plain',
      'hook_payload_invalid_content_type',
    ],
    [
      'bad JSON',
      () =>
        new Response('{"claims": ', { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } }),
      500,
      'Error unmarshaling JSON output.',
      'unexpected_failure',
    ],
    [
      'an oversized answer',
      () => json({ claims: {}, pad: 'x'.repeat(210 * 1024) }),
      422,
      'Payload size exceeded size limit of 204800 bytes',
      'hook_payload_over_size_limit',
    ],
  ];
  for (const [what, answer, status, message, code] of cases) {
    test(`${what} → ${status} "${message}", no session`, async () => {
      const { t, email, password, userId } = await withUser(hookEnv('CUSTOM_ACCESS_TOKEN'), answer);
      const res = await t.request('POST', '/token?grant_type=password', { email, password });
      expect(res.status).toBe(status);
      expect(await res.json()).toMatchObject({ error_code: code, msg: message });
      expect(await sessionsOf(userId)).toHaveLength(1);
    });
  }

  test('a 429 with retry-after is retried at once', async () => {
    let n = 0;
    const { t, hook, email, password } = await withUser(hookEnv('CUSTOM_ACCESS_TOKEN'), (p) =>
      ++n === 1 ? new Response('', { status: 429, headers: { 'retry-after': '1' } }) : json({ claims: p.claims }),
    );
    expect((await t.request('POST', '/token?grant_type=password', { email, password })).status).toBe(200);
    expect(hook.calls).toHaveLength(2);
    // A new webhook-id per attempt.
    expect(hook.calls[0]!.headers.get('webhook-id')).not.toBe(hook.calls[1]!.headers.get('webhook-id'));
  });

  test('a receiver holding another secret refuses the signature: 500 "Hook requires authorization token"', async () => {
    const { t, hook, email, password, userId } = await withUser(
      hookEnv('CUSTOM_ACCESS_TOKEN'),
      (p) => json({ claims: p.claims }),
      btoa('another 32-byte key, not the one'),
    );
    const res = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(res.status).toBe(500);
    expect(((await res.json()) as Json).msg).toBe('Hook requires authorization token');
    expect(hook.calls).toHaveLength(0);
    expect(await sessionsOf(userId)).toHaveLength(1);
  });

  test("a hook that never answers → 422 hook_timeout after GoTrue's 5 s deadline; no session", async () => {
    const { t, email, password, userId } = await withUser(
      hookEnv('CUSTOM_ACCESS_TOKEN'),
      () => new Promise<Response>(() => undefined),
    );
    // The fake never answers; the hook's deadline aborts the request through its signal.
    const res = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      error_code: 'hook_timeout',
      msg: 'Failed to reach hook within maximum time of 5.000000 seconds',
    });
    expect(await sessionsOf(userId)).toHaveLength(1);
  }, 15_000);

  test('a hook that cannot be reached → 422 hook_timeout_after_retry after three attempts', async () => {
    let attempts = 0;
    const plain = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email, password } = await signUpConfirmed(plain, uniqueEmail('hook'));
    const refusing = (async () => {
      attempts++;
      throw new TypeError('fetch failed');
    }) as typeof globalThis.fetch;
    const t = await buildTestApp(
      db,
      { AUTHSVC_MAILER_AUTOCONFIRM: 'true', ...hookEnv('CUSTOM_ACCESS_TOKEN') },
      { fetch: refusing },
    );
    const res = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      error_code: 'hook_timeout_after_retry',
      msg: 'Failed to reach hook after maximum retries',
    });
    expect(attempts).toBe(3);
  }, 15_000);

  test('a real local receiver on a port gets the signed request (http on loopback)', async () => {
    const verifier = new Webhook(KEY);
    const seen: Json[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        try {
          verifier.verify(body, req.headers as Record<string, string>);
        } catch {
          res.writeHead(401).end();
          return;
        }
        const p = JSON.parse(body) as Json;
        seen.push(p);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ claims: { ...p.claims, via: 'port' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const plain = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
      const { email, password } = await signUpConfirmed(plain, uniqueEmail('hook'));
      const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true', ...hookEnv('CUSTOM_ACCESS_TOKEN', url) });
      const res = await t.request('POST', '/token?grant_type=password', { email, password });
      expect(res.status).toBe(200);
      expect(decodeJwt(((await res.json()) as Json).access_token).via).toBe('port');
      expect(seen).toHaveLength(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('send email hook', () => {
  test("replaces the mailer: the hook gets GoTrue's email_data, and its token_hash confirms the address", async () => {
    const hook = receiver(() => new Response(null, { status: 204 }));
    const t = await buildTestApp(db, hookEnv('SEND_EMAIL'), { fetch: hook.fetch });
    const email = uniqueEmail('mailhook');
    const res = await t.request(
      'POST',
      '/signup',
      { email, password: 'correct-horse-1' },
      { referer: 'http://localhost:3000/welcome' },
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(t.mails).toHaveLength(0);
    expect(hook.calls).toHaveLength(1);
    const p = hook.calls[0]!.payload;
    expect(p.metadata.name).toBe('send-email');
    expect(p.user).toMatchObject({ email, id: ((await res.json()) as Json).id });
    expect(Object.keys(p.email_data).sort()).toEqual([
      'email_action_type',
      'factor_type',
      'old_email',
      'old_phone',
      'provider',
      'redirect_to',
      'site_url',
      'token',
      'token_hash',
      'token_hash_new',
      'token_new',
    ]);
    expect(p.email_data).toMatchObject({
      email_action_type: 'signup',
      site_url: 'http://localhost:9999',
      token_new: '',
    });
    expect(p.email_data.token).toMatch(/^\d{6}$/);
    const verified = await t.request('POST', '/verify', { type: 'signup', token_hash: p.email_data.token_hash });
    expect(verified.status, await verified.clone().text()).toBe(200);
    expect((await userByEmail(email))!.emailConfirmedAt).not.toBeNull();
  });

  test("a refusal is the request's answer and the new user is taken back", async () => {
    const hook = receiver(() => json({ error: { http_code: 422, message: 'mail domain not allowed' } }));
    const t = await buildTestApp(db, hookEnv('SEND_EMAIL'), { fetch: hook.fetch });
    const email = uniqueEmail('mailhook');
    const res = await t.request('POST', '/signup', { email, password: 'correct-horse-1' }, V2024);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ code: 'unknown', message: 'mail domain not allowed' });
    expect(await userByEmail(email)).toBeUndefined();
  });

  test('recovery and magic link name their action types', async () => {
    const hook = receiver(() => new Response(null, { status: 204 }));
    const plain = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email } = await signUpConfirmed(plain, uniqueEmail('mailhook'));
    const t = await buildTestApp(db, hookEnv('SEND_EMAIL'), { fetch: hook.fetch });
    expect((await t.request('POST', '/recover', { email })).status).toBe(200);
    expect(hook.calls.map((c) => c.payload.email_data.email_action_type)).toEqual(['recovery']);
  });
});

const uniquePhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${Math.floor(Math.random() * 10)}`;

function recordingSms(): { provider: SmsProvider; sent: SmsMessage[] } {
  const sent: SmsMessage[] = [];
  return {
    sent,
    provider: {
      name: 'twilio',
      supportsWhatsApp: true,
      verifiesCodes: false,
      async send(m) {
        sent.push(m);
        return 'SM1';
      },
    },
  };
}

describe('send SMS hook', () => {
  test('replaces the SMS provider for phone sign-in codes; the code it gets signs in', async () => {
    const hook = receiver(() => json({}));
    const sms = recordingSms();
    const t = await buildTestApp(
      db,
      { ...hookEnv('SEND_SMS'), AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true', AUTHSVC_RATE_LIMIT_SMS_SENT: '100000' },
      { fetch: hook.fetch, sms: sms.provider },
    );
    const phone = uniquePhone();
    const res = await t.request('POST', '/otp', { phone: `+${phone}`, channel: 'whatsapp' });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(sms.sent).toHaveLength(0);
    const p = hook.calls[0]!.payload;
    expect(p.metadata.name).toBe('send-sms');
    expect(p.sms).toEqual({ otp: expect.stringMatching(/^\d{6}$/), phone });
    expect(p.user.phone).toBe(phone);
    const verified = await t.request('POST', '/verify', { type: 'sms', phone: `+${phone}`, token: p.sms.otp });
    expect(verified.status).toBe(200);
  });

  test('a refusal answers as the hook says and leaves no user', async () => {
    const hook = receiver(() => json({ error: { http_code: 400, message: 'number blocked' } }));
    const t = await buildTestApp(
      db,
      { ...hookEnv('SEND_SMS'), AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true', AUTHSVC_RATE_LIMIT_SMS_SENT: '100000' },
      { fetch: hook.fetch },
    );
    const phone = uniquePhone();
    const res = await t.request('POST', '/otp', { phone: `+${phone}` });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).msg).toBe('number blocked');
    expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.phone, phone))).toHaveLength(0);
  });

  test('an MFA phone challenge is texted through the hook with sms_type "mfa"', async () => {
    const env = {
      ...hookEnv('SEND_SMS'),
      AUTHSVC_MFA_PHONE_ENROLL_ENABLED: 'true',
      AUTHSVC_MFA_PHONE_VERIFY_ENABLED: 'true',
      AUTHSVC_RATE_LIMIT_SMS_SENT: '100000',
    };
    const { t, hook, session } = await withUser(env, () => new Response(null, { status: 204 }));
    const auth = { authorization: `Bearer ${session.access_token}` };
    const phone = uniquePhone();
    const enrolled = (await (
      await t.request('POST', '/factors', { factor_type: 'phone', phone: `+${phone}` }, auth)
    ).json()) as Json;
    const ch = await t.request('POST', `/factors/${enrolled.id}/challenge`, {}, auth);
    expect(ch.status, await ch.clone().text()).toBe(200);
    expect(hook.calls[0]!.payload.sms).toEqual({ otp: expect.stringMatching(/^\d{6}$/), sms_type: 'mfa', phone });
  });
});

describe('before user created hook over HTTP', () => {
  test('sees the new user; a refusal answers with its status and message and writes no user', async () => {
    let refuse = false;
    const hook = receiver(() =>
      refuse
        ? json({ error: { http_code: 403, message: 'sign-ups are closed for this domain' } })
        : new Response(null, { status: 204 }),
    );
    const t = await buildTestApp(
      db,
      { ...hookEnv('BEFORE_USER_CREATED'), AUTHSVC_MAILER_AUTOCONFIRM: 'true' },
      { fetch: hook.fetch },
    );
    const ok = uniqueEmail('before');
    expect((await t.request('POST', '/signup', { email: ok, password: 'correct-horse-1' })).status).toBe(200);
    expect(hook.calls[0]!.payload).toMatchObject({
      metadata: { name: 'before-user-created' },
      user: { email: ok, aud: 'authenticated' },
    });
    refuse = true;
    const email = uniqueEmail('before');
    const res = await t.request('POST', '/signup', { email, password: 'correct-horse-1' }, V2024);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ code: 'unknown', message: 'sign-ups are closed for this domain' });
    expect(await userByEmail(email)).toBeUndefined();
  });

  test('anonymous sign-in is asked too', async () => {
    const hook = receiver(() => json({ error: { http_code: 400, message: 'no anonymous users' } }));
    const t = await buildTestApp(
      db,
      { ...hookEnv('BEFORE_USER_CREATED'), AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' },
      { fetch: hook.fetch },
    );
    const res = await t.request('POST', '/signup', {});
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).msg).toBe('no anonymous users');
    expect(hook.calls[0]!.payload.user.is_anonymous).toBe(true);
  });
});

describe('password verification attempt hook', () => {
  test('is told whether the password was right; a rejection answers 400 invalid_credentials with its message and may sign the user out', async () => {
    let answer: Json = {};
    const { t, hook, email, password, userId } = await withUser(hookEnv('PASSWORD_VERIFICATION_ATTEMPT'), () =>
      json(answer),
    );
    expect(
      (await t.request('POST', '/token?grant_type=password', { email, password: 'wrong-password-1' })).status,
    ).toBe(400);
    expect(hook.calls[0]!.payload).toMatchObject({
      user_id: userId,
      valid: false,
      metadata: { name: 'password-verification' },
    });
    expect((await t.request('POST', '/token?grant_type=password', { email, password })).status).toBe(200);
    expect(hook.calls[1]!.payload.valid).toBe(true);
    expect((await sessionsOf(userId)).length).toBeGreaterThan(0);

    answer = { decision: 'reject', should_logout_user: true };
    const res = await t.request('POST', '/token?grant_type=password', { email, password }, V2024);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_credentials',
      message: 'Further password verification attempts will be rejected.',
    });
    expect(await sessionsOf(userId)).toHaveLength(0);
  });

  test('an unknown user never reaches the hook', async () => {
    const { t, hook } = await withUser(hookEnv('PASSWORD_VERIFICATION_ATTEMPT'), () => json({}));
    expect(
      (await t.request('POST', '/token?grant_type=password', { email: uniqueEmail('nobody'), password: 'whatever-1' }))
        .status,
    ).toBe(400);
    expect(hook.calls).toHaveLength(0);
  });
});

describe('MFA verification attempt hook', () => {
  test('is told about each TOTP attempt; a rejection answers 403 mfa_verification_rejected and signs the user out everywhere', async () => {
    let answer: Json = { decision: 'continue' };
    const { t, hook, session, userId } = await withUser(hookEnv('MFA_VERIFICATION_ATTEMPT'), () => json(answer));
    const auth = { authorization: `Bearer ${session.access_token}`, ...V2024 };
    const factor = (await (await t.request('POST', '/factors', { factor_type: 'totp' }, auth)).json()) as Json;
    const key = decodeBase32(factor.totp.secret);
    const challenge = async () =>
      ((await (await t.request('POST', `/factors/${factor.id}/challenge`, {}, auth)).json()) as Json).id as string;

    const wrong = await t.request(
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: await challenge(), code: '000000' },
      auth,
    );
    expect(wrong.status).toBe(422);
    expect(hook.calls[0]!.payload).toMatchObject({
      user_id: userId,
      factor_id: factor.id,
      factor_type: 'totp',
      valid: false,
      metadata: { name: 'mfa-verification' },
    });

    answer = { decision: 'reject', message: 'too many attempts' };
    const res = await t.request(
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: await challenge(), code: totpAt(key, Date.now() / 1000) },
      auth,
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ code: 'mfa_verification_rejected', message: 'too many attempts' });
    expect(hook.calls[1]!.payload.valid).toBe(true);
    expect(await sessionsOf(userId)).toHaveLength(0);
  });
});

describe('SQL function hooks', () => {
  const ns = () => db.namespace;
  const pgEnv = (kind: string, fn: string) => ({
    [`AUTHSVC_HOOK_${kind}_ENABLED`]: 'true',
    [`AUTHSVC_HOOK_${kind}_URI`]: `pg-functions://postgres/${ns()}/${fn}`,
  });

  beforeAll(async () => {
    await db.withSession((s) =>
      s.exec(`
      create or replace function "${ns()}".hook_claims(event jsonb) returns jsonb language plpgsql as $$
      begin
        return jsonb_build_object('claims', (event->'claims')
          || jsonb_build_object('tenant', 'sql', 'timeout', current_setting('statement_timeout'), 'method', event->>'authentication_method'));
      end $$;
      create or replace function "${ns()}".hook_refuse_claims(event jsonb) returns jsonb language sql as $$
        select '{"error": {"http_code": 401, "message": "refused by SQL"}}'::jsonb $$;
      create or replace function "${ns()}".hook_broken(event jsonb) returns jsonb language plpgsql as $$
        begin raise exception 'broken hook'; end $$;
      create or replace function "${ns()}".hook_gate(event jsonb) returns jsonb language plpgsql as $$
      begin
        if event->'user'->>'email' like 'blocked-%' then
          return '{"error": {"http_code": 403, "message": "blocked by SQL"}}'::jsonb;
        end if;
        return '{}'::jsonb;
      end $$;`),
    );
  });

  test("custom access token: the function's claims are signed, under GoTrue's 2 s statement timeout", async () => {
    const { t, email, password } = await withUser(pgEnv('CUSTOM_ACCESS_TOKEN', 'hook_claims'), () => json({}));
    const res = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Json;
    expect(decodeJwt(body.access_token)).toMatchObject({ tenant: 'sql', timeout: '2s', method: 'password' });
    const refreshed = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: body.refresh_token });
    expect(decodeJwt(((await refreshed.json()) as Json).access_token)).toMatchObject({
      tenant: 'sql',
      method: 'token_refresh',
    });
  });

  test('custom access token: a refusal or an SQL error answers as GoTrue and leaves no session', async () => {
    const refused = await withUser(pgEnv('CUSTOM_ACCESS_TOKEN', 'hook_refuse_claims'), () => json({}));
    const res = await refused.t.request('POST', '/token?grant_type=password', {
      email: refused.email,
      password: refused.password,
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).msg).toBe('refused by SQL');
    expect(await sessionsOf(refused.userId)).toHaveLength(1);

    const broken = await withUser(pgEnv('CUSTOM_ACCESS_TOKEN', 'hook_broken'), () => json({}));
    const res2 = await broken.t.request('POST', '/token?grant_type=password', {
      email: broken.email,
      password: broken.password,
    });
    expect(res2.status).toBe(500);
    expect(((await res2.json()) as Json).msg).toBe(
      `Error running hook URI: pg-functions://postgres/${ns()}/hook_broken`,
    );
    expect(await sessionsOf(broken.userId)).toHaveLength(1);
  });

  test("before user created: the function runs in the sign-up's transaction; its refusal leaves no user row", async () => {
    const t = await buildTestApp(db, {
      ...pgEnv('BEFORE_USER_CREATED', 'hook_gate'),
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    });
    const allowed = uniqueEmail('allowed');
    expect((await t.request('POST', '/signup', { email: allowed, password: 'correct-horse-1' })).status).toBe(200);
    expect(await userByEmail(allowed)).toBeDefined();
    const blocked = uniqueEmail('blocked');
    const res = await t.request('POST', '/signup', { email: blocked, password: 'correct-horse-1' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).msg).toBe('blocked by SQL');
    expect(await userByEmail(blocked)).toBeUndefined();
  });
});
