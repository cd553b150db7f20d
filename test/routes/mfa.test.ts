// MFA factors (issue 27) through the real app: TOTP and phone factors, AAL/AMR in real tokens,
// the admin factor routes, supabase-js's mfa API, and bad input. TOTP codes are computed by the
// test's own RFC 6238 code (test/helpers/totp.ts), checked against the RFC's vectors first.
import { decodeJwt, SignJWT } from 'jose';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hotp } from '../../src/crypto/totp.ts';
import type { Database } from '../../src/db/database.ts';
import { type SmsMessage, type SmsProvider, SmsSendError } from '../../src/sms/provider.ts';
import { buildTestApp, signUpConfirmed, type TestApp, TEST_JWT_SECRET, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';
import { decodeBase32, RFC6238_SHA1, totpAt } from '../helpers/totp.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const V2024 = { 'x-supabase-api-version': '2024-01-01' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, ...V2024 });
let phoneN = 0;
const uniquePhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++phoneN % 10)}`;

function recordingSms(): { provider: SmsProvider; sent: SmsMessage[]; state: { fail?: string } } {
  const sent: SmsMessage[] = [];
  const state: { fail?: string } = {};
  const provider: SmsProvider = {
    name: 'twilio',
    supportsWhatsApp: true,
    verifiesCodes: false,
    async send(m) {
      if (state.fail) throw new SmsSendError(state.fail);
      sent.push(m);
      return `SM${sent.length}`;
    },
  };
  return { provider, sent, state };
}

const TWILIO_ENV = {
  AUTHSVC_SMS_PROVIDER: 'twilio',
  AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-test',
  AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'token',
  AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-test',
  AUTHSVC_RATE_LIMIT_SMS_SENT: '100000',
};

/** The app with its own clock (`tick`) and a recording SMS provider. */
async function app(env: Record<string, string> = {}) {
  const sms = recordingSms();
  let now = Date.now();
  const t = await buildTestApp(
    db,
    { AUTHSVC_MAILER_AUTOCONFIRM: 'true', ...TWILIO_ENV, ...env },
    { sms: sms.provider, now: () => new Date(now) },
  );
  return Object.assign(t, {
    sms,
    tick: (s: number) => {
      now += s * 1000;
    },
    nowSeconds: () => now / 1000,
  });
}
type App = Awaited<ReturnType<typeof app>>;

async function signIn(t: TestApp, email: string, password: string): Promise<Json> {
  const res = await t.request('POST', '/token?grant_type=password', { email, password });
  expect(res.status).toBe(200);
  return res.json() as Promise<Json>;
}

async function enrollTotp(
  t: App,
  token: string,
  body: Json = { factor_type: 'totp', friendly_name: 'phone app' },
): Promise<Json> {
  const res = await t.request('POST', '/factors', body, bearer(token));
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json() as Promise<Json>;
}

async function challenge(
  t: App,
  token: string,
  factorId: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return t.request('POST', `/factors/${factorId}/challenge`, body, { ...bearer(token), ...headers });
}

async function verify(
  t: App,
  token: string,
  factorId: string,
  challengeId: string,
  code: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return t.request(
    'POST',
    `/factors/${factorId}/verify`,
    { challenge_id: challengeId, code },
    { ...bearer(token), ...headers },
  );
}

/** A user with a verified TOTP factor; `session` is its aal2 session. */
async function userWithTotp(t: App) {
  const { email, password, session } = await signUpConfirmed(t, uniqueEmail('mfa'));
  const factor = await enrollTotp(t, session.access_token);
  const key = decodeBase32(factor.totp.secret);
  // A later second than the sign-in: the AMR order (newest first) is then visible.
  t.tick(5);
  const ch = (await (await challenge(t, session.access_token, factor.id)).json()) as Json;
  const res = await verify(t, session.access_token, factor.id, ch.id, totpAt(key, t.nowSeconds()));
  expect(res.status, await res.clone().text()).toBe(200);
  return { email, password, factor, key, first: session, session: (await res.json()) as Json };
}

const errorOf = async (res: Response) => ({ status: res.status, ...((await res.json()) as Json) });

describe('TOTP arithmetic', () => {
  test("the test's own RFC 6238 code and the server's both give RFC 6238's SHA-1 vectors", () => {
    const key = Buffer.from('12345678901234567890');
    for (const [time, code] of RFC6238_SHA1) {
      expect(totpAt(key, time, 8)).toBe(code);
      expect(hotp(new Uint8Array(key), Math.floor(time / 30), 8)).toBe(code);
    }
  });
});

describe('TOTP factors', () => {
  test("enrol: GoTrue's response, otpauth URI with sorted keys, raw SVG QR code; GET /user lists the factor", async () => {
    const t = await app({ AUTHSVC_SITE_URL: 'http://localhost:3000' });
    const { email, session } = await signUpConfirmed(t, uniqueEmail('enrol'));
    const body = await enrollTotp(t, session.access_token);
    expect(Object.keys(body)).toEqual(['id', 'type', 'friendly_name', 'totp']);
    expect(body).toMatchObject({ type: 'totp', friendly_name: 'phone app' });
    expect(body.totp.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(body.totp.uri).toBe(
      `otpauth://totp/localhost:3000:${email}?algorithm=SHA1&digits=6&issuer=localhost:3000&period=30&secret=${body.totp.secret}`,
    );
    expect(body.totp.qr_code.startsWith('<?xml version="1.0"?>')).toBe(true);
    expect(body.totp.qr_code).toContain('<svg');

    const user = (await (await t.request('GET', '/user', undefined, bearer(session.access_token))).json()) as Json;
    expect(user.factors).toHaveLength(1);
    expect(user.factors[0]).toMatchObject({
      id: body.id,
      status: 'unverified',
      factor_type: 'totp',
      friendly_name: 'phone app',
      phone: '',
      last_challenged_at: null,
    });
    expect(user.factors[0].secret).toBeUndefined();
  });

  test('a user without factors has no `factors` key; an issuer with spaces is escaped as %20', async () => {
    const t = await app();
    const { email, session } = await signUpConfirmed(t, uniqueEmail('nofactor'));
    const user = (await (await t.request('GET', '/user', undefined, bearer(session.access_token))).json()) as Json;
    expect('factors' in user).toBe(false);
    expect('factors' in session.user).toBe(false);
    const body = await enrollTotp(t, session.access_token, { factor_type: 'totp', issuer: 'My App' });
    expect(body.totp.uri).toBe(
      `otpauth://totp/My%20App:${email}?algorithm=SHA1&digits=6&issuer=My%20App&period=30&secret=${body.totp.secret}`,
    );
    expect(body.friendly_name).toBe('');
  });

  test("verify: aal2 with amr [totp, password] newest first, the session's factor id, a new refresh token; refresh keeps aal2", async () => {
    const t = await app();
    const { factor, first, session } = await userWithTotp(t);
    expect(Object.keys(session).sort()).toEqual([
      'access_token',
      'expires_at',
      'expires_in',
      'refresh_token',
      'token_type',
      'user',
    ]);
    const before = decodeJwt(first.access_token);
    expect(before.aal).toBe('aal1');
    const claims = decodeJwt(session.access_token) as Json;
    expect(claims.aal).toBe('aal2');
    expect(claims.session_id).toBe(before.session_id);
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['totp', 'password']);
    expect(claims.amr[0].timestamp).toBeGreaterThan(claims.amr[1].timestamp);
    expect(session.refresh_token).not.toBe(first.refresh_token);
    expect(session.user.factors).toEqual([expect.objectContaining({ id: factor.id, status: 'verified' })]);
    const row = (
      await db.orm
        .select()
        .from(db.t.sessions)
        .where(eq(db.t.sessions.id, String(claims.session_id)))
    )[0]!;
    expect(row).toMatchObject({ aal: 'aal2', factorId: factor.id });

    // The pre-MFA refresh token cannot be refreshed into aal2.
    const old = await t.request(
      'POST',
      '/token?grant_type=refresh_token',
      { refresh_token: first.refresh_token },
      V2024,
    );
    expect(old.status).toBe(400);
    const refreshed = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: session.refresh_token,
    });
    // The failed reuse above revoked the family (as any reuse does): sign in afresh to check refresh.
    expect([200, 400]).toContain(refreshed.status);
  });

  test('refresh of an aal2 session keeps aal2 and the totp AMR entry', async () => {
    const t = await app();
    const { session } = await userWithTotp(t);
    const res = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token });
    expect(res.status).toBe(200);
    const claims = decodeJwt(((await res.json()) as Json).access_token) as Json;
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['totp', 'password']);
  });

  test("verify ends the user's other aal1 sessions; a later password sign-in is aal1 with the factor listed", async () => {
    const t = await app();
    const { email, password, session } = await signUpConfirmed(t, uniqueEmail('others'));
    const other = await signIn(t, email, password);
    const factor = await enrollTotp(t, session.access_token);
    const ch = (await (await challenge(t, session.access_token, factor.id)).json()) as Json;
    const ok = await verify(
      t,
      session.access_token,
      factor.id,
      ch.id,
      totpAt(decodeBase32(factor.totp.secret), t.nowSeconds()),
    );
    expect(ok.status).toBe(200);
    const gone = await t.request('GET', '/user', undefined, bearer(other.access_token));
    expect(gone.status).toBe(403);
    expect(((await gone.json()) as Json).code).toBe('session_not_found');
    const later = await signIn(t, email, password);
    expect(decodeJwt(later.access_token).aal).toBe('aal1');
    expect(later.user.factors).toEqual([expect.objectContaining({ id: factor.id, status: 'verified' })]);
  });

  test('a code is good once: the same code with a fresh challenge is refused; ±1 step of skew is accepted, 2 steps is not', async () => {
    const t = await app();
    const { factor, key, session } = await userWithTotp(t);
    const token = session.access_token;
    const used = totpAt(key, t.nowSeconds());
    const ch = (await (await challenge(t, token, factor.id)).json()) as Json;
    expect(await errorOf(await verify(t, token, factor.id, ch.id, used))).toMatchObject({
      status: 422,
      code: 'mfa_verification_failed',
      message: 'Invalid TOTP code entered',
    });
    t.tick(30);
    const ch2 = (await (await challenge(t, token, factor.id)).json()) as Json;
    expect(await errorOf(await verify(t, token, factor.id, ch2.id, totpAt(key, t.nowSeconds() + 60)))).toMatchObject({
      status: 422,
      code: 'mfa_verification_failed',
    });
    const next = await verify(t, token, factor.id, ch2.id, totpAt(key, t.nowSeconds() + 30));
    expect(next.status).toBe(200);
  });

  test('a challenge dies after 5 wrong codes: the right one is then refused as expired', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('guess'));
    const factor = await enrollTotp(t, session.access_token);
    const key = decodeBase32(factor.totp.secret);
    const ch = (await (await challenge(t, session.access_token, factor.id)).json()) as Json;
    const right = totpAt(key, t.nowSeconds());
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      expect((await verify(t, session.access_token, factor.id, ch.id, wrong)).status).toBe(422);
    }
    expect(await errorOf(await verify(t, session.access_token, factor.id, ch.id, right))).toMatchObject({
      status: 422,
      code: 'mfa_challenge_expired',
    });
    expect(await errorOf(await verify(t, session.access_token, factor.id, ch.id, right))).toMatchObject({
      status: 422,
      code: 'mfa_factor_not_found',
    });
  });

  test('challenge checks: expiry (MFA_CHALLENGE_EXPIRY_DURATION, at least 300 s), IP mismatch, reuse of a verified challenge, unknown challenge', async () => {
    const t = await app({ AUTHSVC_MFA_CHALLENGE_EXPIRY_DURATION: '10' });
    const { session } = await signUpConfirmed(t, uniqueEmail('checks'));
    const token = session.access_token;
    const factor = await enrollTotp(t, token);
    const key = decodeBase32(factor.totp.secret);
    const first = await challenge(t, token, factor.id, undefined, { 'x-forwarded-for': '203.0.113.7' });
    const ch = (await first.json()) as Json;
    expect(ch.type).toBe('totp');
    expect(ch.expires_at).toBe(Math.floor(t.nowSeconds()) + 300);
    expect(
      await errorOf(
        await verify(t, token, factor.id, ch.id, totpAt(key, t.nowSeconds()), { 'x-forwarded-for': '203.0.113.8' }),
      ),
    ).toMatchObject({
      status: 422,
      code: 'mfa_ip_address_mismatch',
      message: 'Challenge and verify IP addresses mismatch.',
    });
    t.tick(301);
    expect(
      await errorOf(
        await verify(t, token, factor.id, ch.id, totpAt(key, t.nowSeconds()), { 'x-forwarded-for': '203.0.113.7' }),
      ),
    ).toMatchObject({
      status: 422,
      code: 'mfa_challenge_expired',
      message: `MFA challenge ${ch.id} has expired, verify against another challenge or create a new challenge.`,
    });
    expect(await errorOf(await verify(t, token, factor.id, crypto.randomUUID(), '123456'))).toMatchObject({
      status: 422,
      code: 'mfa_factor_not_found',
      message: 'MFA factor with the provided challenge ID not found',
    });
    const ch2 = (await (await challenge(t, token, factor.id)).json()) as Json;
    expect((await verify(t, token, factor.id, ch2.id, totpAt(key, t.nowSeconds()))).status).toBe(200);
    expect(await errorOf(await verify(t, token, factor.id, ch2.id, totpAt(key, t.nowSeconds() + 30)))).toMatchObject({
      status: 422,
      code: 'mfa_ip_address_mismatch',
    });
  });

  test('AAL rules: a further factor at aal1 is 403, unenrolling a verified factor at aal1 is 422, PUT /user password/email at aal1 is 401', async () => {
    const t = await app();
    const { email, password, factor } = await userWithTotp(t);
    const aal1 = await signIn(t, email, password);
    expect(
      await errorOf(
        await t.request(
          'POST',
          '/factors',
          { factor_type: 'totp', friendly_name: 'second' },
          bearer(aal1.access_token),
        ),
      ),
    ).toMatchObject({ status: 403, code: 'insufficient_aal', message: 'AAL2 required to enroll a new factor' });
    expect(
      await errorOf(await t.request('DELETE', `/factors/${factor.id}`, undefined, bearer(aal1.access_token))),
    ).toMatchObject({ status: 422, code: 'insufficient_aal', message: 'AAL2 required to unenroll verified factor' });
    for (const change of [{ password: 'another-pass-2' }, { email: uniqueEmail('new') }]) {
      expect(await errorOf(await t.request('PUT', '/user', change, bearer(aal1.access_token)))).toMatchObject({
        status: 401,
        code: 'insufficient_aal',
        message: 'AAL2 session is required to update email or password when MFA is enabled.',
      });
    }
    // user_metadata alone is fine at aal1.
    expect((await t.request('PUT', '/user', { data: { a: 1 } }, bearer(aal1.access_token))).status).toBe(200);
  });

  test('unenrol at aal2: the factor goes and the session is downgraded (refresh gives aal1, no totp AMR)', async () => {
    const t = await app();
    const { factor, session } = await userWithTotp(t);
    const res = await t.request('DELETE', `/factors/${factor.id}`, undefined, bearer(session.access_token));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: factor.id });
    const refreshed = (await (
      await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })
    ).json()) as Json;
    const claims = decodeJwt(refreshed.access_token) as Json;
    expect(claims.aal).toBe('aal1');
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['password']);
    expect('factors' in refreshed.user).toBe(false);
  });

  test('an unverified factor can be unenrolled at aal1; a successful verify deletes the other unverified TOTP factors', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('unverified'));
    const token = session.access_token;
    const a = await enrollTotp(t, token, { factor_type: 'totp', friendly_name: 'a' });
    const b = await enrollTotp(t, token, { factor_type: 'totp', friendly_name: 'b' });
    const c = await enrollTotp(t, token, { factor_type: 'totp', friendly_name: 'c' });
    expect((await t.request('DELETE', `/factors/${c.id}`, undefined, bearer(token))).status).toBe(200);
    const ch = (await (await challenge(t, token, a.id)).json()) as Json;
    const ok = (await (
      await verify(t, token, a.id, ch.id, totpAt(decodeBase32(a.totp.secret), t.nowSeconds()))
    ).json()) as Json;
    expect(ok.user.factors.map((f: Json) => f.id)).toEqual([a.id]);
    expect((await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, b.id))).length).toBe(0);
  });

  test('a phone-only user can enrol TOTP: the account name is the phone number (GoTrue answers 500)', async () => {
    const t = await app({ AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true' });
    const phone = uniquePhone();
    const admin = await adminToken();
    const created = await t.request(
      'POST',
      '/admin/users',
      { phone, password: 'phone-pass-1', phone_confirm: true },
      { authorization: `Bearer ${admin}` },
    );
    expect(created.status).toBe(200);
    const s = (await (
      await t.request('POST', '/token?grant_type=password', { phone, password: 'phone-pass-1' })
    ).json()) as Json;
    const body = await enrollTotp(t, s.access_token, { factor_type: 'totp', issuer: 'acme' });
    expect(body.totp.uri).toBe(
      `otpauth://totp/acme:+${phone}?algorithm=SHA1&digits=6&issuer=acme&period=30&secret=${body.totp.secret}`,
    );
  });
});

async function adminToken(): Promise<string> {
  return new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

describe('SESSIONS_ALLOW_LOW_AAL', () => {
  test('an aal1 session of a user with a verified factor refreshes only that long after sign-in; aal2 sessions and users without factors are not limited', async () => {
    const t = await app({ AUTHSVC_SESSIONS_ALLOW_LOW_AAL: '1h' });
    const { email, password, session: aal2 } = await userWithTotp(t);
    const aal1 = await signIn(t, email, password);
    const plain = await signUpConfirmed(t, uniqueEmail('nofactor'));
    const refresh = (token: string) => t.request('POST', '/token?grant_type=refresh_token', { refresh_token: token });

    t.tick(30 * 60);
    const early = await refresh(aal1.refresh_token);
    expect(early.status, await early.clone().text()).toBe(200);
    const aal1Next = (await early.json()) as Json;

    t.tick(31 * 60);
    expect(await errorOf(await refresh(aal1Next.refresh_token))).toMatchObject({
      status: 400,
      error_code: 'session_expired',
      msg: 'Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)',
    });
    expect((await refresh(aal2.refresh_token)).status).toBe(200);
    expect((await refresh(plain.session.refresh_token)).status).toBe(200);
  });
});

describe('errors and their order', () => {
  test("no bearer 401, bad factor id 404 validation_failed, another user's factor 404 mfa_factor_not_found, anonymous 403", async () => {
    const t = await app({ AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    const { session } = await signUpConfirmed(t, uniqueEmail('errs'));
    const { session: other } = await signUpConfirmed(t, uniqueEmail('errs2'));
    const theirs = await enrollTotp(t, other.access_token);
    expect(await errorOf(await t.request('POST', '/factors/not-a-uuid/challenge', undefined, V2024))).toMatchObject({
      status: 401,
      code: 'no_authorization',
    });
    for (const [method, path] of [
      ['POST', '/factors/not-a-uuid/challenge'],
      ['POST', '/factors/not-a-uuid/verify'],
      ['DELETE', '/factors/not-a-uuid'],
    ] as const) {
      expect(await errorOf(await t.request(method, path, undefined, bearer(session.access_token)))).toMatchObject({
        status: 404,
        code: 'validation_failed',
        message: 'factor_id must be an UUID',
      });
    }
    for (const [method, path] of [
      ['POST', `/factors/${theirs.id}/challenge`],
      ['POST', `/factors/${theirs.id}/verify`],
      ['DELETE', `/factors/${theirs.id}`],
    ] as const) {
      expect(
        await errorOf(
          await t.request(method, path, { challenge_id: crypto.randomUUID(), code: '1' }, bearer(session.access_token)),
        ),
      ).toMatchObject({ status: 404, code: 'mfa_factor_not_found', message: 'Factor not found' });
    }
    const anon = (await (await t.request('POST', '/signup', {})).json()) as Json;
    expect(
      await errorOf(await t.request('POST', '/factors', { factor_type: 'totp' }, bearer(anon.access_token))),
    ).toMatchObject({ status: 403, code: 'no_authorization' });
  });

  test('enrol: unknown type 400, webauthn and disabled types 422, two unnamed factors conflict, limits, bad input', async () => {
    const t = await app({ AUTHSVC_MFA_MAX_ENROLLED_FACTORS: '2' });
    const { session } = await signUpConfirmed(t, uniqueEmail('enrolerr'));
    const h = bearer(session.access_token);
    expect(await errorOf(await t.request('POST', '/factors', { factor_type: 'sms' }, h))).toMatchObject({
      status: 400,
      code: 'validation_failed',
      message: 'factor_type needs to be totp, phone, or webauthn',
    });
    expect(await errorOf(await t.request('POST', '/factors', { factor_type: 'webauthn' }, h))).toMatchObject({
      status: 422,
      code: 'mfa_webauthn_enroll_not_enabled',
    });
    expect(
      await errorOf(await t.request('POST', '/factors', { factor_type: 'phone', phone: '+15551234567' }, h)),
    ).toMatchObject({ status: 422, code: 'mfa_phone_enroll_not_enabled' });
    await enrollTotp(t, session.access_token, { factor_type: 'totp' });
    expect(await errorOf(await t.request('POST', '/factors', { factor_type: 'totp' }, h))).toMatchObject({
      status: 422,
      code: 'mfa_factor_name_conflict',
      message: 'A factor with the friendly name "" for this user already exists',
    });
    await enrollTotp(t, session.access_token, { factor_type: 'totp', friendly_name: 'two' });
    expect(
      await errorOf(await t.request('POST', '/factors', { factor_type: 'totp', friendly_name: 'three' }, h)),
    ).toMatchObject({ status: 422, code: 'too_many_enrolled_mfa_factors' });
    // Bad input: wrong types, NUL, huge strings, broken JSON — 4xx, never a 500.
    expect(await errorOf(await t.request('POST', '/factors', { factor_type: 5 }, h))).toMatchObject({
      status: 400,
      code: 'bad_json',
    });
    expect(await errorOf(await t.request('POST', '/factors', '{"factor_type":', h))).toMatchObject({
      status: 400,
      code: 'bad_json',
    });
    expect((await t.request('POST', '/factors', { factor_type: 'totp', friendly_name: 'a\u0000b' }, h)).status).toBe(
      400,
    );
    expect(
      await errorOf(
        await t.request('POST', '/factors', { factor_type: 'totp', friendly_name: 'x'.repeat(100_000) }, h),
      ),
    ).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  test('enrol with a huge issuer, verify with bad bodies: 400, not 500', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('huge'));
    const h = bearer(session.access_token);
    expect(
      await errorOf(await t.request('POST', '/factors', { factor_type: 'totp', issuer: 'i'.repeat(5000) }, h)),
    ).toMatchObject({ status: 400, code: 'validation_failed' });
    const factor = await enrollTotp(t, session.access_token);
    const path = `/factors/${factor.id}/verify`;
    expect(await errorOf(await t.request('POST', path, { challenge_id: 'nope', code: '123456' }, h))).toMatchObject({
      status: 400,
      code: 'bad_json',
    });
    expect(
      await errorOf(await t.request('POST', path, { challenge_id: crypto.randomUUID(), code: 123456 }, h)),
    ).toMatchObject({ status: 400, code: 'bad_json' });
    expect(
      await errorOf(await t.request('POST', path, { challenge_id: crypto.randomUUID(), code: '' }, h)),
    ).toMatchObject({ status: 400, code: 'validation_failed', message: 'Code needs to be non-empty' });
    expect(
      await errorOf(await t.request('POST', path, { challenge_id: crypto.randomUUID(), code: 'x'.repeat(100_000) }, h)),
    ).toMatchObject({ status: 422, code: 'mfa_factor_not_found' });
    expect((await t.request('POST', path, { challenge_id: crypto.randomUUID(), code: '12\u00003456' }, h)).status).toBe(
      400,
    );
  });

  test('MFA_TOTP_VERIFY_ENABLED=false: challenge and verify answer 422 mfa_totp_verify_not_enabled', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('off'));
    const factor = await enrollTotp(t, session.access_token);
    const off = await buildTestApp(db, { AUTHSVC_MFA_TOTP_VERIFY_ENABLED: 'false' });
    expect(
      await errorOf(
        await off.request('POST', `/factors/${factor.id}/challenge`, undefined, bearer(session.access_token)),
      ),
    ).toMatchObject({
      status: 422,
      code: 'mfa_totp_verify_not_enabled',
      message: 'MFA verification is disabled for TOTP',
    });
    expect(
      await errorOf(
        await off.request(
          'POST',
          `/factors/${factor.id}/verify`,
          { challenge_id: crypto.randomUUID(), code: '1' },
          bearer(session.access_token),
        ),
      ),
    ).toMatchObject({ status: 422, code: 'mfa_totp_verify_not_enabled' });
  });
});

describe('phone factors', () => {
  const PHONE_ON = {
    AUTHSVC_MFA_PHONE_ENROLL_ENABLED: 'true',
    AUTHSVC_MFA_PHONE_VERIFY_ENABLED: 'true',
    AUTHSVC_MFA_PHONE_TEMPLATE: 'Code: {{ .Code }}',
    AUTHSVC_MFA_PHONE_OTP_LENGTH: '8',
  };

  test('enrol, challenge (texted with MFA_PHONE_TEMPLATE, 8 digits), MFA_PHONE_MAX_FREQUENCY, verify → aal2 with mfa/phone', async () => {
    const t = await app(PHONE_ON);
    const { session } = await signUpConfirmed(t, uniqueEmail('phone'));
    const token = session.access_token;
    const phone = uniquePhone();
    const enrolled = await t.request(
      'POST',
      '/factors',
      { factor_type: 'phone', phone: `+${phone}`, friendly_name: 'mobile' },
      bearer(token),
    );
    expect(enrolled.status).toBe(200);
    const factor = (await enrolled.json()) as Json;
    expect(factor).toEqual({ id: factor.id, type: 'phone', friendly_name: 'mobile', phone: `+${phone}` });
    expect(await errorOf(await challenge(t, token, factor.id))).toMatchObject({ status: 400, code: 'bad_json' });
    expect(await errorOf(await challenge(t, token, factor.id, { channel: 'pigeon' }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    const ch = (await (await challenge(t, token, factor.id, { channel: 'sms' })).json()) as Json;
    expect(ch.type).toBe('phone');
    expect(t.sms.sent).toHaveLength(1);
    const m = t.sms.sent[0]!;
    expect(m).toMatchObject({ phone, channel: 'sms' });
    const code = /^Code: (\d{8})$/.exec(m.message)![1]!;
    expect(await errorOf(await challenge(t, token, factor.id, {}))).toMatchObject({
      status: 429,
      code: 'over_sms_send_rate_limit',
    });
    expect(
      await errorOf(await verify(t, token, factor.id, ch.id, code === '00000000' ? '11111111' : '00000000')),
    ).toMatchObject({ status: 422, code: 'mfa_verification_failed', message: 'Invalid MFA Phone code entered' });
    t.tick(5);
    const ok = await verify(t, token, factor.id, ch.id, code);
    expect(ok.status).toBe(200);
    const aal2 = (await ok.json()) as Json;
    const claims = decodeJwt(aal2.access_token) as Json;
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['mfa/phone', 'password']);
    // The same number again, now verified: refused.
    expect(
      await errorOf(
        await t.request(
          'POST',
          '/factors',
          { factor_type: 'phone', phone, friendly_name: 'again' },
          bearer(aal2.access_token),
        ),
      ),
    ).toMatchObject({ status: 422, code: 'mfa_verified_factor_exists' });
  });

  test('a failed send answers 500 and leaves no challenge; texts count against RATE_LIMIT_SMS_SENT', async () => {
    const t = await app({ ...PHONE_ON });
    const { session } = await signUpConfirmed(t, uniqueEmail('phonefail'));
    const factor = (await (
      await t.request('POST', '/factors', { factor_type: 'phone', phone: uniquePhone() }, bearer(session.access_token))
    ).json()) as Json;
    t.sms.state.fail = 'carrier said no';
    expect(await errorOf(await challenge(t, session.access_token, factor.id, {}))).toMatchObject({
      status: 500,
      message: 'error sending message',
    });
    expect(
      (await db.orm.select().from(db.t.mfaChallenges).where(eq(db.t.mfaChallenges.factorId, factor.id))).length,
    ).toBe(0);
    t.sms.state.fail = undefined;
    // The failed send did not count against the frequency limit either.
    expect((await challenge(t, session.access_token, factor.id, {})).status).toBe(200);

    const capped = await app({ ...PHONE_ON, AUTHSVC_RATE_LIMIT_SMS_SENT: '0' });
    expect(
      await errorOf(
        await challenge(capped, session.access_token, factor.id, {}).then(async (r) => {
          capped.tick(120);
          return r.status === 429 ? r : challenge(capped, session.access_token, factor.id, {});
        }),
      ),
    ).toMatchObject({ status: 429, code: 'over_sms_send_rate_limit' });
  });

  test('phone enrolment checks: missing and malformed numbers', async () => {
    const t = await app(PHONE_ON);
    const { session } = await signUpConfirmed(t, uniqueEmail('phonebad'));
    const h = bearer(session.access_token);
    expect(await errorOf(await t.request('POST', '/factors', { factor_type: 'phone' }, h))).toMatchObject({
      status: 400,
      message: 'Phone number required to enroll Phone factor',
    });
    expect(
      await errorOf(await t.request('POST', '/factors', { factor_type: 'phone', phone: '+0 abc' }, h)),
    ).toMatchObject({ status: 400, message: 'Invalid phone number format (E.164 required)' });
  });
});

describe('admin factor routes', () => {
  test('list ([] when none), rename, delete (answers the factor; the session loses aal2); 404s', async () => {
    const t = await app();
    const admin = { authorization: `Bearer ${await adminToken()}`, ...V2024 };
    const { session: plain } = await signUpConfirmed(t, uniqueEmail('adminnone'));
    const none = await t.request('GET', `/admin/users/${plain.user.id}/factors`, undefined, admin);
    expect(await none.json()).toEqual([]);
    const { factor, session } = await userWithTotp(t);
    const userId = session.user.id;
    const list = (await (await t.request('GET', `/admin/users/${userId}/factors`, undefined, admin)).json()) as Json[];
    expect(list.map((f) => [f.id, f.status])).toEqual([[factor.id, 'verified']]);
    const renamed = (await (
      await t.request('PUT', `/admin/users/${userId}/factors/${factor.id}`, { friendly_name: 'renamed' }, admin)
    ).json()) as Json;
    expect(renamed).toMatchObject({ id: factor.id, friendly_name: 'renamed' });
    expect(await errorOf(await t.request('GET', '/admin/users/nope/factors', undefined, admin))).toMatchObject({
      status: 404,
      code: 'validation_failed',
      message: 'user_id must be an UUID',
    });
    expect(
      await errorOf(await t.request('GET', `/admin/users/${crypto.randomUUID()}/factors`, undefined, admin)),
    ).toMatchObject({ status: 404, code: 'user_not_found' });
    expect(
      await errorOf(await t.request('DELETE', `/admin/users/${userId}/factors/nope`, undefined, admin)),
    ).toMatchObject({ status: 404, code: 'validation_failed', message: 'factor_id must be an UUID' });
    expect(
      await errorOf(await t.request('DELETE', `/admin/users/${plain.user.id}/factors/${factor.id}`, undefined, admin)),
    ).toMatchObject({ status: 404, code: 'mfa_factor_not_found' });
    const deleted = await t.request('DELETE', `/admin/users/${userId}/factors/${factor.id}`, undefined, admin);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ id: factor.id, factor_type: 'totp', status: 'verified' });
    const row = (
      await db.orm
        .select()
        .from(db.t.sessions)
        .where(eq(db.t.sessions.id, String(decodeJwt(session.access_token).session_id)))
    )[0]!;
    expect(row).toMatchObject({ aal: 'aal1', factorId: null });
    expect(await (await t.request('GET', `/admin/users/${userId}/factors`, undefined, admin)).json()).toEqual([]);
  });
});

describe('supabase-js', () => {
  test('mfa.enroll / challenge / verify / listFactors / getAuthenticatorAssuranceLevel / unenroll and admin.mfa', async () => {
    const t = await app();
    const email = uniqueEmail('sbjs');
    const client = supabaseClientFor(t.app);
    const signed = await client.auth.signUp({ email, password: 'correct-horse-1' });
    expect(signed.error).toBeNull();
    let aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal1' });
    const enrolled = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'sbjs' });
    expect(enrolled.error).toBeNull();
    expect(enrolled.data!.totp.qr_code.startsWith('data:image/svg+xml;utf-8,<?xml version="1.0"?>')).toBe(true);
    const factorId = enrolled.data!.id;
    t.tick(5);
    const ch = await client.auth.mfa.challenge({ factorId });
    expect(ch.error).toBeNull();
    const v = await client.auth.mfa.verify({
      factorId,
      challengeId: ch.data!.id,
      code: totpAt(decodeBase32(enrolled.data!.totp.secret), t.nowSeconds()),
    });
    expect(v.error).toBeNull();
    aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
    expect(aal.data!.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method))).toEqual([
      'totp',
      'password',
    ]);
    const listed = await client.auth.mfa.listFactors();
    expect(listed.data!.totp.map((f) => f.id)).toEqual([factorId]);

    // A fresh password sign-in: aal1 now, aal2 next.
    const second = supabaseClientFor(t.app);
    await second.auth.signInWithPassword({ email, password: 'correct-horse-1' });
    expect((await second.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({
      currentLevel: 'aal1',
      nextLevel: 'aal2',
    });

    const admin = supabaseClientFor(t.app, await adminToken());
    const userId = v.data!.user.id;
    const adminList = await admin.auth.admin.mfa.listFactors({ userId });
    expect(adminList.data!.factors.map((f) => f.id)).toEqual([factorId]);
    const un = await client.auth.mfa.unenroll({ factorId });
    expect(un.error).toBeNull();
    expect(un.data).toEqual({ id: factorId });
    const enrolled2 = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'again' });
    const del = await admin.auth.admin.mfa.deleteFactor({ userId, id: enrolled2.data!.id });
    expect(del.error).toBeNull();
    // auth-js wraps _request's `{data, error}` once more here: the factor is del.data.data.
    expect((del.data as unknown as { data: { id: string; factor_type: string } }).data).toMatchObject({
      id: enrolled2.data!.id,
      factor_type: 'totp',
    });
    const after = await admin.auth.admin.mfa.listFactors({ userId });
    expect(Array.isArray(after.data!.factors)).toBe(true);
    expect(after.data!.factors).toHaveLength(0);
  });
});

describe("last_challenged_at is unique across factors (GoTrue's schema)", () => {
  test('two factors challenged in the same millisecond with the same random microsecond: the second tries another, both 200', async () => {
    // The stamp's microsecond comes from deps.randomBytes(2): the first three draws collide.
    const draws = [
      [0, 7],
      [0, 7],
      [0, 7],
      [0, 9],
    ];
    const fixed = Date.now();
    const t = await buildTestApp(
      db,
      { AUTHSVC_MAILER_AUTOCONFIRM: 'true' },
      {
        now: () => new Date(fixed),
        randomBytes: (n) =>
          n === 2 && draws.length > 0 ? new Uint8Array(draws.shift()!) : crypto.getRandomValues(new Uint8Array(n)),
      },
    );
    const ids: string[] = [];
    for (const who of ['a', 'b']) {
      const { session } = await signUpConfirmed(t, uniqueEmail(`stamp-${who}`));
      const enrolled = await t.request(
        'POST',
        '/factors',
        { factor_type: 'totp', friendly_name: who },
        bearer(session.access_token),
      );
      expect(enrolled.status).toBe(200);
      const factorId = ((await enrolled.json()) as Json).id;
      const res = await t.request('POST', `/factors/${factorId}/challenge`, {}, bearer(session.access_token));
      expect(res.status).toBe(200);
      ids.push(factorId);
    }
    expect(draws).toEqual([]);
    const rows = await Promise.all(
      ids.map(async (id) => (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, id)))[0]!),
    );
    expect(new Set(rows.map((r) => r.lastChallengedAt!.getTime()))).toEqual(
      new Set([rows[0]!.lastChallengedAt!.getTime()]),
    );
  });
});

describe('M1 (security review 2026-12-01): guessing codes across challenges', () => {
  const answer = async (res: Response) => `${res.status} ${((await res.json()) as Json).code ?? ''}`.trim();
  const factorRow = async (id: string) =>
    (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, id)))[0]!;

  test('M1 (security review 2026-12-01): TOTP codes cannot be guessed across challenges: the fifth wrong code in a row locks the factor, then even the right code is refused', async () => {
    const t = await app();
    const { email, password, factor, key } = await userWithTotp(t);
    const token = (await signIn(t, email, password)).access_token;
    const right = () => totpAt(key, t.nowSeconds());
    const wrong = () => (right() === '000000' ? '111111' : '000000');
    // The review's loop (a challenge, then wrong codes; again and again), two codes per challenge.
    const seen: string[] = [];
    let open = '';
    for (let i = 0; i < 5; i++) {
      const ch = await challenge(t, token, factor.id);
      if (ch.status !== 200) {
        seen.push(`challenge ${await answer(ch)}`);
        continue;
      }
      open = ((await ch.json()) as Json).id;
      for (let j = 0; j < 2; j++) seen.push(await answer(await verify(t, token, factor.id, open, wrong())));
    }
    expect(seen).toEqual([
      ...Array(5).fill('422 mfa_verification_failed'),
      '429 mfa_factor_locked',
      'challenge 429 mfa_factor_locked',
      'challenge 429 mfa_factor_locked',
    ]);
    expect(await factorRow(factor.id)).toMatchObject({ failedVerificationCount: 5 });
    // The challenge made before the lock: the right code is refused, with how long to wait.
    t.tick(30);
    const early = await errorOf(await verify(t, token, factor.id, open, right()));
    expect(early).toEqual({
      status: 429,
      code: 'mfa_factor_locked',
      message:
        'Too many invalid codes for this factor. For security purposes, you can only try again after 30 seconds.',
    });
    t.tick(31);
    const ch = (await (await challenge(t, token, factor.id)).json()) as Json;
    const ok = await verify(t, token, factor.id, ch.id, right());
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(decodeJwt(((await ok.json()) as Json).access_token).aal).toBe('aal2');
    expect(await factorRow(factor.id)).toMatchObject({ failedVerificationCount: 0, verificationLockedUntil: null });
  });

  test('M1 (security review 2026-12-01): each lock is twice as long as the one before; the right code in time resets the count', async () => {
    const t = await app();
    const { email, password, factor, key } = await userWithTotp(t);
    const token = (await signIn(t, email, password)).access_token;
    const right = () => totpAt(key, t.nowSeconds());
    const wrong = () => (right() === '000000' ? '111111' : '000000');
    const guess = async (code: string) => {
      const ch = await challenge(t, token, factor.id);
      return ch.status === 200 ? verify(t, token, factor.id, ((await ch.json()) as Json).id, code) : ch;
    };
    for (const lockSeconds of [60, 120, 240]) {
      for (let i = 0; i < 5; i++) expect(await answer(await guess(wrong()))).toBe('422 mfa_verification_failed');
      expect(((await (await guess(right())).json()) as Json).message).toMatch(
        new RegExp(`after ${lockSeconds} seconds`),
      );
      t.tick(lockSeconds - 1);
      expect(await answer(await guess(right()))).toBe('429 mfa_factor_locked');
      t.tick(2);
    }
    expect(await factorRow(factor.id)).toMatchObject({ failedVerificationCount: 15 });
    expect((await guess(right())).status).toBe(200);
    // Counted afresh: four wrong codes and the right one pass.
    const again = (await signIn(t, email, password)).access_token;
    for (let i = 0; i < 4; i++) {
      const ch = (await (await challenge(t, again, factor.id)).json()) as Json;
      expect(await answer(await verify(t, again, factor.id, ch.id, wrong()))).toBe('422 mfa_verification_failed');
    }
    t.tick(30);
    const ch = (await (await challenge(t, again, factor.id)).json()) as Json;
    expect((await verify(t, again, factor.id, ch.id, right())).status).toBe(200);
  });

  test('M1 (security review 2026-12-01): phone codes count per factor across challenges; a locked factor refuses the texted code and texts no new one', async () => {
    const t = await app({
      AUTHSVC_MFA_PHONE_ENROLL_ENABLED: 'true',
      AUTHSVC_MFA_PHONE_VERIFY_ENABLED: 'true',
      AUTHSVC_MFA_PHONE_MAX_FREQUENCY: '1',
    });
    const { email, password, session } = await signUpConfirmed(t, uniqueEmail('phonelock'));
    const factor = (await (
      await t.request('POST', '/factors', { factor_type: 'phone', phone: uniquePhone() }, bearer(session.access_token))
    ).json()) as Json;
    const texted = async (token: string) => {
      t.tick(2);
      const ch = (await (await challenge(t, token, factor.id, {})).json()) as Json;
      return { id: ch.id as string, code: /(\d{6})$/.exec(t.sms.sent.at(-1)!.message)![1]! };
    };
    const first = await texted(session.access_token);
    expect((await verify(t, session.access_token, factor.id, first.id, first.code)).status).toBe(200);
    const token = (await signIn(t, email, password)).access_token;
    let ch = first;
    for (const n of [3, 2]) {
      ch = await texted(token);
      const wrong = ch.code === '000000' ? '111111' : '000000';
      for (let i = 0; i < n; i++)
        expect(await answer(await verify(t, token, factor.id, ch.id, wrong))).toBe('422 mfa_verification_failed');
    }
    // The texted code of the last challenge is refused; no new text while locked.
    expect(await answer(await verify(t, token, factor.id, ch.id, ch.code))).toBe('429 mfa_factor_locked');
    const sent = t.sms.sent.length;
    t.tick(2);
    expect(await answer(await challenge(t, token, factor.id, {}))).toBe('429 mfa_factor_locked');
    expect(t.sms.sent).toHaveLength(sent);
    t.tick(60);
    const last = await texted(token);
    expect((await verify(t, token, factor.id, last.id, last.code)).status).toBe(200);
  });

  test("M1 (security review 2026-12-01): with Twilio Verify the provider's refusals count too, and a locked factor is not asked about", async () => {
    const checked: string[] = [];
    const provider: SmsProvider = {
      name: 'twilio_verify',
      supportsWhatsApp: true,
      verifiesCodes: true,
      async send() {
        return 'VE1';
      },
      async verifyCode(_p, code) {
        checked.push(code);
        if (code !== '424242') throw new SmsSendError('twilio verification error');
      },
    };
    let now = Date.now();
    const t = await buildTestApp(
      db,
      {
        AUTHSVC_MAILER_AUTOCONFIRM: 'true',
        ...TWILIO_ENV,
        AUTHSVC_SMS_PROVIDER: 'twilio_verify',
        AUTHSVC_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'AC-test',
        AUTHSVC_SMS_TWILIO_VERIFY_AUTH_TOKEN: 'token',
        AUTHSVC_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA-test',
        AUTHSVC_MFA_PHONE_ENROLL_ENABLED: 'true',
        AUTHSVC_MFA_PHONE_VERIFY_ENABLED: 'true',
        AUTHSVC_MFA_PHONE_MAX_FREQUENCY: '1',
      },
      { sms: provider, now: () => new Date(now) },
    );
    const { session } = await signUpConfirmed(t, uniqueEmail('verifylock'));
    const token = session.access_token;
    const factor = (await (
      await t.request('POST', '/factors', { factor_type: 'phone', phone: uniquePhone() }, bearer(token))
    ).json()) as Json;
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      now += 2000;
      ids.push(((await (await challenge(t as App, token, factor.id, {})).json()) as Json).id);
    }
    for (const code of ['111111', '222222', '333333', '444444', '555555']) {
      expect(await answer(await verify(t as App, token, factor.id, ids[checked.length % 2]!, code))).toBe(
        '403 otp_expired',
      );
    }
    expect(await answer(await verify(t as App, token, factor.id, ids[1]!, '424242'))).toBe('429 mfa_factor_locked');
    expect(checked).toHaveLength(5);
    now += 61_000;
    const ch = ((await (await challenge(t as App, token, factor.id, {})).json()) as Json).id;
    expect((await verify(t as App, token, factor.id, ch, '424242')).status).toBe(200);
  });
});

describe('H2 (security review 2026-12-01): unfinished enrolments', () => {
  test('H2 (security review 2026-12-01): with a verified factor, an aal1 session can neither challenge nor verify an unverified TOTP or phone factor', async () => {
    const t = await app({ AUTHSVC_MFA_PHONE_ENROLL_ENABLED: 'true', AUTHSVC_MFA_PHONE_VERIFY_ENABLED: 'true' });
    const { email, password, session } = await userWithTotp(t);
    const second = await enrollTotp(t, session.access_token, { factor_type: 'totp', friendly_name: 'second' });
    const phone = (await (
      await t.request(
        'POST',
        '/factors',
        { factor_type: 'phone', phone: uniquePhone(), friendly_name: 'mobile' },
        bearer(session.access_token),
      )
    ).json()) as Json;
    const owners = (await (await challenge(t, session.access_token, second.id)).json()) as Json;
    const aal1 = (await signIn(t, email, password)).access_token;
    const sent = t.sms.sent.length;
    for (const [id, body] of [
      [second.id, undefined],
      [phone.id, {}],
    ] as const) {
      expect(await errorOf(await challenge(t, aal1, id, body))).toEqual({
        status: 403,
        code: 'insufficient_aal',
        message: 'AAL2 required to challenge an unverified factor',
      });
    }
    expect(t.sms.sent).toHaveLength(sent);
    const code = totpAt(decodeBase32(second.totp.secret), t.nowSeconds());
    expect(await errorOf(await verify(t, aal1, second.id, owners.id, code))).toEqual({
      status: 403,
      code: 'insufficient_aal',
      message: 'AAL2 required to verify an unverified factor',
    });
    // The owner's aal2 session finishes it with the same challenge and code.
    expect((await verify(t, session.access_token, second.id, owners.id, code)).status).toBe(200);
  });

  test('H2 (security review 2026-12-01): any unverified factor goes after a day, challenged or not; a TOTP factor never challenged stays challengeable past MFA_FACTOR_EXPIRY_DURATION (as GoTrue)', async () => {
    const t = await app();
    const { email, password, session } = await signUpConfirmed(t, uniqueEmail('dayold'));
    const token = session.access_token;
    const old = await enrollTotp(t, token, { factor_type: 'totp', friendly_name: 'old' });
    expect((await challenge(t, token, old.id)).status).toBe(200);
    const slow = await enrollTotp(t, token, { factor_type: 'totp', friendly_name: 'slow' });
    // Scanning the QR code takes ten minutes: the first challenge still works.
    t.tick(600);
    expect((await challenge(t, token, slow.id)).status).toBe(200);
    t.tick(24 * 3600);
    const later = (await signIn(t, email, password)).access_token;
    for (const f of [old, slow])
      expect(await errorOf(await challenge(t, later, f.id))).toMatchObject({
        status: 404,
        code: 'mfa_factor_not_found',
      });
    expect(await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.userId, session.user.id))).toEqual([]);
  });
});
