// Phone sign-up, OTP sign-in, verification and resend (issue 14), over a recording SMS provider:
// what was texted, what was stored (GoTrue's sha224(phone + code)), and what a failed send leaves.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sha224 } from '@noble/hashes/sha2.js';
import type { Database } from '../../src/db/database.ts';
import { type SmsMessage, type SmsProvider, SmsSendError } from '../../src/sms/provider.ts';
import { buildTestApp } from '../helpers/app.ts';
import { openTestDb, TEST_DATABASE_URL } from '../helpers/db.ts';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

/** A provider that records every message; `fail` makes the next sends throw what a provider would. */
function recordingSms(name: SmsProvider['name'] = 'twilio') {
  const sent: SmsMessage[] = [];
  const state = { fail: undefined as string | undefined };
  const provider: SmsProvider = {
    name,
    supportsWhatsApp: name === 'twilio',
    verifiesCodes: false,
    async send(m) {
      if (state.fail) throw new SmsSendError(state.fail);
      sent.push(m);
      return `SM${sent.length}`;
    },
  };
  return { provider, sent, state };
}

// The provider named must have its credentials (start-up checks); the recording provider replaces it.
const PHONE_ENV = {
  AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
  AUTHSVC_SMS_PROVIDER: 'twilio',
  AUTHSVC_RATE_LIMIT_SMS_SENT: '100000',
  AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-test',
  AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'token',
  AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-test',
  AUTHSVC_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'AC-test',
  AUTHSVC_SMS_TWILIO_VERIFY_AUTH_TOKEN: 'token',
  AUTHSVC_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA-test',
  AUTHSVC_SMS_MESSAGEBIRD_ACCESS_KEY: 'key',
  AUTHSVC_SMS_MESSAGEBIRD_ORIGINATOR: 'Acme',
};
let n = 0;
const uniquePhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++n % 10)}`;
const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
const userByPhone = async (phone: string) =>
  (await db.orm.select().from(db.t.users).where(eq(db.t.users.phone, phone)))[0];
const SESSION_KEYS = ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type', 'user'];

/** The app with a recording provider and its own clock: `tick(s)` moves it on (past SMS_MAX_FREQUENCY). */
async function app(env: Record<string, string> = {}, name?: SmsProvider['name']) {
  const sms = recordingSms(name);
  let now = Date.now();
  const t = await buildTestApp(db, { ...PHONE_ENV, ...env }, { sms: sms.provider, now: () => new Date(now) });
  return Object.assign(t, {
    sms,
    tick: (seconds: number) => {
      now += seconds * 1000;
    },
  });
}

describe('phone signup and verify', () => {
  test('signup with +phone texts a code, stores sha224(phone + code) and answers the unconfirmed user', async () => {
    const t = await app();
    const phone = uniquePhone();
    const res = await t.request('POST', '/signup', {
      phone: `+${phone}`,
      password: 'phone-pass-1',
      data: { nick: 'p' },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ phone, email: '', app_metadata: { provider: 'phone', providers: ['phone'] } });
    expect(body.confirmation_sent_at).toBeTruthy();
    expect(body.phone_confirmed_at).toBeUndefined();
    expect(t.sms.sent).toHaveLength(1);
    const m = t.sms.sent[0]!;
    expect(m).toMatchObject({ phone, channel: 'sms' });
    expect(m.message).toBe(`Your code is ${m.otp}`);
    expect(m.otp).toMatch(/^\d{6}$/);
    const row = await userByPhone(phone);
    expect(row!.confirmationToken).toBe(hex(sha224(new TextEncoder().encode(phone + m.otp))));
    const ott = await db.orm.select().from(db.t.oneTimeTokens).where(eq(db.t.oneTimeTokens.userId, row!.id));
    expect(ott.map((o) => [o.tokenType, o.relatesTo])).toEqual([['confirmation_token', phone]]);

    // Not confirmed yet: the password grant refuses.
    const early = await t.request('POST', '/token?grant_type=password', { phone, password: 'phone-pass-1' });
    expect(early.status).toBe(400);
    expect(((await early.json()) as Json).error_code).toBe('phone_not_confirmed');

    const wrong = await t.request('POST', '/verify', {
      type: 'sms',
      phone,
      token: m.otp === '000000' ? '111111' : '000000',
    });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual({
      code: 403,
      error_code: 'otp_expired',
      msg: 'Token has expired or is invalid',
    });

    const ok = await t.request('POST', '/verify', { type: 'sms', phone: `+${phone}`, token: m.otp });
    expect(ok.status).toBe(200);
    const session = (await ok.json()) as Json;
    expect(session.user).toMatchObject({ phone, role: 'authenticated' });
    // GoTrue's AccessTokenResponse: an SMS verify answers no `type` (the spec: "session without type").
    expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
    expect(session.user.phone_confirmed_at).toBeTruthy();
    // Single use.
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: m.otp })).status).toBe(403);
    const login = await t.request('POST', '/token?grant_type=password', {
      phone: `+${phone}`,
      password: 'phone-pass-1',
    });
    expect(login.status).toBe(200);
    expect(((await login.json()) as Json).user.phone).toBe(phone);
  });

  test("invalid numbers get GoTrue's message; EXTERNAL_PHONE_ENABLED=false is phone_provider_disabled", async () => {
    const t = await app();
    const bad = await t.request('POST', '/signup', { phone: '+0123', password: 'phone-pass-1' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      code: 400,
      error_code: 'validation_failed',
      msg: 'Invalid phone number format (E.164 required)',
    });
    const off = await app({ AUTHSVC_EXTERNAL_PHONE_ENABLED: 'false' });
    const res = await off.request('POST', '/signup', { phone: uniquePhone(), password: 'phone-pass-1' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 400,
      error_code: 'phone_provider_disabled',
      msg: 'Phone signups are disabled',
    });
    const otp = await off.request('POST', '/otp', { phone: uniquePhone() });
    expect(await otp.json()).toEqual({
      code: 400,
      error_code: 'phone_provider_disabled',
      msg: 'Unsupported phone provider',
    });
    const resend = await off.request('POST', '/resend', { type: 'sms', phone: uniquePhone() });
    expect({ status: resend.status, body: await resend.json() }).toEqual({
      status: 400,
      body: { code: 400, error_code: 'phone_provider_disabled', msg: 'Phone logins are disabled' },
    });
    const login = await off.request('POST', '/token?grant_type=password', {
      phone: uniquePhone(),
      password: 'phone-pass-1',
    });
    expect({ status: login.status, body: await login.json() }).toEqual({
      status: 422,
      body: { code: 422, error_code: 'phone_provider_disabled', msg: 'Phone logins are disabled' },
    });
  });

  test("a failed send answers 422 sms_send_failed with the provider's words and leaves no user, token or count behind", async () => {
    const t = await app({ AUTHSVC_RATE_LIMIT_SMS_SENT: '5' });
    await db.orm.delete(db.t.rateLimits).where(eq(db.t.rateLimits.key, 'sms_sent'));
    t.sms.state.fail = 'Invalid To Phone Number More information: https://www.twilio.com/docs/errors/21211';
    const phone = uniquePhone();
    const res = await t.request('POST', '/signup', { phone, password: 'phone-pass-1' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      code: 422,
      error_code: 'sms_send_failed',
      msg: 'Error sending confirmation OTP to provider: Invalid To Phone Number More information: https://www.twilio.com/docs/errors/21211',
    });
    expect(await userByPhone(phone)).toBeUndefined();
    const [count] = await db.orm.select().from(db.t.rateLimits).where(eq(db.t.rateLimits.key, 'sms_sent'));
    expect(count?.count ?? 0).toBe(0);
  });

  test('SMS_MAX_FREQUENCY: a second code within the window is 429 over_sms_send_rate_limit, naming the seconds left', async () => {
    const t = await app({ AUTHSVC_SMS_MAX_FREQUENCY: '60' });
    const phone = uniquePhone();
    expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
    t.tick(23);
    const again = await t.request('POST', '/resend', { type: 'sms', phone });
    expect(again.status).toBe(429);
    expect(await again.json()).toEqual({
      code: 429,
      error_code: 'over_sms_send_rate_limit',
      msg: 'For security purposes, you can only request this after 37 seconds.',
    });
  });

  test('SMS_AUTOCONFIRM: signup answers a session; a confirmed number signing up again is 400 "User already registered" (spec rule 2)', async () => {
    const t = await app({ AUTHSVC_SMS_AUTOCONFIRM: 'true' });
    const phone = uniquePhone();
    const res = await t.request('POST', '/signup', { phone, password: 'phone-pass-1' });
    expect(res.status).toBe(200);
    const s = (await res.json()) as Json;
    expect(s.access_token).toBeTruthy();
    expect(s.user.phone_confirmed_at).toBeTruthy();
    expect(t.sms.sent).toHaveLength(0);
    const dup = await t.request('POST', '/signup', { phone, password: 'other-pass-1' });
    expect(dup.status).toBe(400);
    expect(await dup.json()).toEqual({ code: 400, error_code: 'user_already_exists', msg: 'User already registered' });
  });

  test('without autoconfirm a confirmed number signing up again gets a fabricated user and no SMS', async () => {
    const t = await app();
    const phone = uniquePhone();
    await t.request('POST', '/signup', { phone, password: 'phone-pass-1' });
    await t.request('POST', '/verify', { type: 'sms', phone, token: t.sms.sent[0]!.otp });
    const again = await t.request('POST', '/signup', { phone, password: 'phone-pass-2' });
    expect(again.status).toBe(200);
    const fake = (await again.json()) as Json;
    expect(fake.id).not.toBe((await userByPhone(phone))!.id);
    expect(fake).toMatchObject({ phone, identities: [] });
    expect(t.sms.sent).toHaveLength(1);
  });

  test("channel whatsapp only with Twilio; anything else is refused with GoTrue's message", async () => {
    const t = await app({ AUTHSVC_SMS_PROVIDER: 'messagebird' }, 'messagebird');
    const res = await t.request('POST', '/signup', {
      phone: uniquePhone(),
      password: 'phone-pass-1',
      channel: 'whatsapp',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).msg).toMatch(/^Invalid channel, supported values are 'sms' or 'whatsapp'/);
    const tw = await app({ AUTHSVC_SMS_PROVIDER: 'twilio' });
    const phone = uniquePhone();
    expect((await tw.request('POST', '/signup', { phone, password: 'phone-pass-1', channel: 'whatsapp' })).status).toBe(
      200,
    );
    expect(tw.sms.sent[0]!.channel).toBe('whatsapp');
  });
});

describe('POST /otp with a phone', () => {
  test("an unknown number is signed up with a code; a confirmed one gets a login code and {} (GoTrue never returns the provider's id)", async () => {
    const t = await app();
    const phone = uniquePhone();
    const first = await t.request('POST', '/otp', { phone, data: { a: 1 } });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({});
    expect(t.sms.sent).toHaveLength(1);
    const v = await t.request('POST', '/verify', { type: 'sms', phone, token: t.sms.sent[0]!.otp });
    expect(v.status).toBe(200);
    t.tick(61);
    const second = await t.request('POST', '/otp', { phone });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({});
    expect(t.sms.sent).toHaveLength(2);
    const login = await t.request('POST', '/verify', { type: 'sms', phone, token: t.sms.sent[1]!.otp });
    expect(login.status).toBe(200);
    expect(((await login.json()) as Json).user.phone).toBe(phone);
  });

  test('create_user false for an unknown number is 422 otp_disabled', async () => {
    const t = await app();
    const res = await t.request('POST', '/otp', { phone: uniquePhone(), create_user: false });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ code: 422, error_code: 'otp_disabled', msg: 'Signups not allowed for otp' });
  });

  test('SMS_TEST_OTP: no SMS is sent, the fixed code verifies, message_id is test-otp', async () => {
    const phone = uniquePhone();
    const t = await app({ AUTHSVC_SMS_TEST_OTP: `${phone}:123456` });
    expect((await t.request('POST', '/otp', { phone })).status).toBe(200);
    expect(t.sms.sent).toHaveLength(0);
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: '123456' })).status).toBe(200);
    t.tick(61);
    const again = await t.request('POST', '/otp', { phone });
    expect(await again.json()).toEqual({ message_id: 'test-otp' });
  });
});

/** A confirmed phone user and a session of theirs. */
async function phoneUser(
  t: Awaited<ReturnType<typeof app>>,
  phone = uniquePhone(),
): Promise<{ phone: string; session: Json }> {
  expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
  const code = t.sms.sent.at(-1)!.otp;
  const v = await t.request('POST', '/verify', { type: 'sms', phone, token: code });
  expect(v.status).toBe(200);
  t.tick(61);
  return { phone, session: (await v.json()) as Json };
}
const bearer = (s: Json) => ({ authorization: `Bearer ${s.access_token}` });

describe('phone change and reauthentication', () => {
  test('PUT /user {phone} texts the new number; verify phone_change moves the number and its identity', async () => {
    const t = await app();
    const { phone, session } = await phoneUser(t);
    const next = uniquePhone();
    const put = await t.request('PUT', '/user', { phone: `+${next}` }, bearer(session));
    expect(put.status).toBe(200);
    const body = (await put.json()) as Json;
    expect(body).toMatchObject({ phone, new_phone: next });
    expect(body.phone_change_sent_at).toBeTruthy();
    const m = t.sms.sent.at(-1)!;
    expect(m.phone).toBe(next);
    // Resend goes to the pending number (found by the current one).
    t.tick(61);
    const resent = await t.request('POST', '/resend', { type: 'phone_change', phone });
    expect(resent.status).toBe(200);
    expect(await resent.json()).toEqual({ message_id: `SM${t.sms.sent.length}` });
    const code = t.sms.sent.at(-1)!;
    expect(code.phone).toBe(next);
    expect((await t.request('POST', '/verify', { type: 'phone_change', phone: next, token: m.otp })).status).toBe(403);
    const v = await t.request('POST', '/verify', { type: 'phone_change', phone: next, token: code.otp });
    expect(v.status).toBe(200);
    const changed = (await v.json()) as Json;
    expect(Object.keys(changed).sort()).toEqual(SESSION_KEYS);
    const after = changed.user;
    expect(after).toMatchObject({ phone: next });
    expect(after.new_phone).toBeUndefined();
    expect(after.identities.find((i: Json) => i.provider === 'phone').identity_data).toMatchObject({
      phone: next,
      phone_verified: true,
    });
  });

  test('a number another user holds is 422 phone_exists, and nothing is texted', async () => {
    const t = await app();
    const a = await phoneUser(t);
    const b = await phoneUser(t);
    const before = t.sms.sent.length;
    const res = await t.request('PUT', '/user', { phone: a.phone }, bearer(b.session));
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      code: 422,
      error_code: 'phone_exists',
      msg: 'A user with this phone number has already been registered',
    });
    expect(t.sms.sent).toHaveLength(before);
  });

  test('a failed phone-change send leaves the user as it was', async () => {
    const t = await app();
    const { phone, session } = await phoneUser(t);
    t.sms.state.fail = 'provider down';
    const res = await t.request('PUT', '/user', { phone: uniquePhone(), data: { x: 1 } }, bearer(session));
    expect(res.status).toBe(422);
    expect(((await res.json()) as Json).msg).toBe('Error sending phone_change OTP to provider: provider down');
    const row = await userByPhone(phone);
    expect(row).toMatchObject({ phoneChange: '', phoneChangeToken: '', phoneChangeSentAt: null });
    expect(row!.rawUserMetaData).not.toHaveProperty('x');
  });

  test('SMS_AUTOCONFIRM: the change applies at once', async () => {
    const t = await app({ AUTHSVC_SMS_AUTOCONFIRM: 'true' });
    const phone = uniquePhone();
    const s = (await (await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).json()) as Json;
    const next = uniquePhone();
    const res = await t.request('PUT', '/user', { phone: next }, bearer(s));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ phone: next });
    expect(t.sms.sent).toHaveLength(0);
  });

  test('GET /reauthenticate texts a user without an email; the nonce then allows a password change once', async () => {
    const t = await app({ AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true' });
    const { phone, session } = await phoneUser(t);
    const r = await t.request('GET', '/reauthenticate', undefined, bearer(session));
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ message_id: `SM${t.sms.sent.length}` });
    const nonce = t.sms.sent.at(-1)!;
    expect(nonce.phone).toBe(phone);
    const row = await userByPhone(phone);
    expect(row!.reauthenticationToken).toBe(hex(sha224(new TextEncoder().encode(phone + nonce.otp))));
    const noNonce = await t.request('PUT', '/user', { password: 'new-phone-pass-2' }, bearer(session));
    expect(((await noNonce.json()) as Json).error_code).toBe('reauthentication_needed');
    const ok = await t.request('PUT', '/user', { password: 'new-phone-pass-2', nonce: nonce.otp }, bearer(session));
    expect(ok.status).toBe(200);
    const again = await t.request('PUT', '/user', { password: 'new-phone-pass-3', nonce: nonce.otp }, bearer(session));
    expect(again.status).toBe(422);
    expect(((await again.json()) as Json).error_code).toBe('reauthentication_not_valid');
  });
});

describe('through supabase-js', () => {
  test('signUp, verifyOtp sms, signInWithPassword, signInWithOtp, resend, updateUser phone + verifyOtp phone_change, reauthenticate', async () => {
    const t = await app();
    const sb = supabaseClientFor(t.app);
    const phone = uniquePhone();
    const up = await sb.auth.signUp({ phone: `+${phone}`, password: 'phone-pass-1' });
    expect(up.error).toBeNull();
    expect(up.data.user?.phone).toBe(phone);
    expect(up.data.session).toBeNull();
    t.tick(61);
    const resent = await sb.auth.resend({ type: 'sms', phone });
    expect(resent.error).toBeNull();
    const v = await sb.auth.verifyOtp({ type: 'sms', phone, token: t.sms.sent.at(-1)!.otp });
    expect(v.error).toBeNull();
    expect(v.data.session?.user.phone).toBe(phone);

    const pw = await sb.auth.signInWithPassword({ phone, password: 'phone-pass-1' });
    expect(pw.error).toBeNull();
    t.tick(61);
    const otp = await sb.auth.signInWithOtp({ phone });
    expect(otp.error).toBeNull();
    expect(otp.data).toEqual({ user: null, session: null, messageId: undefined });
    const login = await sb.auth.verifyOtp({ type: 'sms', phone, token: t.sms.sent.at(-1)!.otp });
    expect(login.error).toBeNull();

    const next = uniquePhone();
    const upd = await sb.auth.updateUser({ phone: next });
    expect(upd.error).toBeNull();
    expect(upd.data.user?.new_phone).toBe(next);
    const changed = await sb.auth.verifyOtp({ type: 'phone_change', phone: next, token: t.sms.sent.at(-1)!.otp });
    expect(changed.error).toBeNull();
    expect(changed.data.user?.phone).toBe(next);

    t.tick(61);
    const re = await sb.auth.reauthenticate();
    expect(re.error).toBeNull();
    expect(t.sms.sent.at(-1)!.phone).toBe(next);

    const bad = await sb.auth.verifyOtp({ type: 'sms', phone: next, token: '000000' });
    expect(bad.error?.code).toBe('otp_expired');
  });

  test('twilio_verify: the code is checked by the provider, not by hash', async () => {
    const checked: Array<[string, string]> = [];
    const provider: SmsProvider = {
      name: 'twilio_verify',
      supportsWhatsApp: true,
      verifiesCodes: true,
      async send() {
        return 'VE1';
      },
      async verifyCode(p, code) {
        checked.push([p, code]);
        if (code !== '424242') throw new SmsSendError('twilio verification error: Invalid parameter pending');
      },
    };
    const t = await buildTestApp(db, { ...PHONE_ENV, AUTHSVC_SMS_PROVIDER: 'twilio_verify' }, { sms: provider });
    const phone = uniquePhone();
    expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: '111111' })).status).toBe(403);
    const ok = await t.request('POST', '/verify', { type: 'sms', phone, token: '424242' });
    expect(ok.status).toBe(200);
    expect(checked).toEqual([
      [phone, '111111'],
      [phone, '424242'],
    ]);
  });
});

// Needs a Postgres server: CI runs the whole suite a second time with TEST_DATABASE_URL set.
describe.runIf(TEST_DATABASE_URL)('limits across two instances on one Postgres', () => {
  test('RATE_LIMIT_SMS_SENT is one count for both; SMS_MAX_FREQUENCY holds whichever instance is asked', async () => {
    const other = openPostgres({ url: TEST_DATABASE_URL!, namespace: db.namespace, maxPoolSize: 4 });
    try {
      await db.orm.delete(db.t.rateLimits).where(eq(db.t.rateLimits.key, 'sms_sent'));
      const env = { ...PHONE_ENV, AUTHSVC_RATE_LIMIT_SMS_SENT: '3' };
      const smsA = recordingSms();
      const smsB = recordingSms();
      const a = await buildTestApp(db, env, { sms: smsA.provider });
      const b = await buildTestApp(other, env, { sms: smsB.provider });
      const signups = await Promise.all(
        [a, b, a, b].map((t) => t.request('POST', '/signup', { phone: uniquePhone(), password: 'phone-pass-1' })),
      );
      expect(signups.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
      const refused = await Promise.all(signups.filter((r) => r.status === 429).map((r) => r.json()));
      expect(refused).toEqual([{ code: 429, error_code: 'over_sms_send_rate_limit', msg: 'SMS rate limit exceeded' }]);
      expect(smsA.sent.length + smsB.sent.length).toBe(3);

      await db.orm.delete(db.t.rateLimits).where(eq(db.t.rateLimits.key, 'sms_sent'));
      const phone = uniquePhone();
      expect((await a.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
      const again = await b.request('POST', '/resend', { type: 'sms', phone });
      expect(again.status).toBe(429);
      expect(((await again.json()) as Json).error_code).toBe('over_sms_send_rate_limit');
    } finally {
      await other.close();
    }
  });
});
