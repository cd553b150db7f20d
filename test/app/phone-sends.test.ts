// SMS codes through the real Twilio client against a local fake Twilio (helpers/fake-twilio.ts):
// what a failed or timed-out send leaves for an existing user (/otp, /resend, /reauthenticate),
// SMS_MAX_FREQUENCY's seconds, SMS_OTP_EXP, SMS_OTP_LENGTH, and SMS_TEST_OTP with its
// VALID_UNTIL and RATE_LIMIT_SMS_SENT, as GoTrue's sendPhoneConfirmation and verify.go do them.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sha224 } from '@noble/hashes/sha2.js';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { type FakeTwilio, startFakeTwilio, twilioEnv } from '../helpers/fake-twilio.ts';

type Json = Record<string, any>;
let db: Database;
let twilio: FakeTwilio;
beforeAll(async () => {
  db = await openTestDb();
  twilio = await startFakeTwilio();
});
afterAll(async () => {
  await twilio?.close();
  await db?.close();
});

const QUEUED = { status: 201, body: { sid: 'SM-ok', status: 'queued' } };
const TWILIO_500 = {
  status: 500,
  body: {
    code: 20500,
    message: 'Internal Server Error',
    more_info: 'https://www.twilio.com/docs/errors/20500',
    status: 500,
  },
};
const FAILED_500 = 'Internal Server Error More information: https://www.twilio.com/docs/errors/20500';

let n = 0;
const uniquePhone = () => `1444${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++n % 10)}`;
const hashOf = (phone: string, code: string) =>
  [...sha224(new TextEncoder().encode(phone + code))].map((b) => b.toString(16).padStart(2, '0')).join('');
const bearer = (s: Json) => ({ authorization: `Bearer ${s.access_token}` });

/** The app over the real Twilio client, with its own clock: `tick(s)` moves it on. */
async function app(env: Record<string, string> = {}, start = Date.now()) {
  let now = start;
  twilio.answer = QUEUED;
  const t = await buildTestApp(db, { ...twilioEnv(twilio.base), ...env }, { now: () => new Date(now) });
  return Object.assign(t, {
    tick: (seconds: number) => {
      now += seconds * 1000;
    },
    now: () => now,
  });
}
type App = Awaited<ReturnType<typeof app>>;

/** Everything a code request writes: the user's token columns and sent times, and its one_time_tokens rows. */
async function codeState(phone: string) {
  const [u] = await db.orm.select().from(db.t.users).where(eq(db.t.users.phone, phone));
  const ott = await db.orm.select().from(db.t.oneTimeTokens).where(eq(db.t.oneTimeTokens.userId, u!.id));
  return {
    confirmationToken: u!.confirmationToken,
    confirmationSentAt: u!.confirmationSentAt,
    reauthenticationToken: u!.reauthenticationToken,
    reauthenticationSentAt: u!.reauthenticationSentAt,
    phoneChange: u!.phoneChange,
    phoneChangeToken: u!.phoneChangeToken,
    phoneChangeSentAt: u!.phoneChangeSentAt,
    encryptedPassword: u!.encryptedPassword,
    ott: ott
      .map((o) => ({ id: o.id, type: o.tokenType, hash: o.tokenHash, relatesTo: o.relatesTo, createdAt: o.createdAt }))
      .sort((a, b) => a.type.localeCompare(b.type)),
  };
}

/** A confirmed phone user, a session of theirs, and the clock moved past SMS_MAX_FREQUENCY. */
async function phoneUser(t: App): Promise<{ phone: string; session: Json }> {
  const phone = uniquePhone();
  expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
  const v = await t.request('POST', '/verify', { type: 'sms', phone, token: twilio.lastCode() });
  expect(v.status).toBe(200);
  t.tick(61);
  return { phone, session: (await v.json()) as Json };
}

async function expectSendFailed(res: Response, kind: string, why = FAILED_500): Promise<void> {
  expect({ status: res.status, body: await res.json() }).toEqual({
    status: 422,
    body: { code: 422, error_code: 'sms_send_failed', msg: `Error sending ${kind} OTP to provider: ${why}` },
  });
}

describe('a failed send for an existing user puts back what the request wrote, so the user can retry at once', () => {
  test('POST /otp (login code): the earlier code, its sent time and its one_time_tokens row are as before', async () => {
    const t = await app();
    const { phone } = await phoneUser(t);
    expect((await t.request('POST', '/otp', { phone })).status).toBe(200);
    const earlier = twilio.lastCode();
    t.tick(61);
    const before = await codeState(phone);
    expect(before.confirmationToken).toBe(hashOf(phone, earlier));
    expect(before.ott).toHaveLength(1);
    twilio.answer = TWILIO_500;
    await expectSendFailed(await t.request('POST', '/otp', { phone }), 'confirmation');
    expect(await codeState(phone)).toEqual(before);
    // Not refused by SMS_MAX_FREQUENCY: the failed attempt left no sent time behind.
    twilio.answer = QUEUED;
    const retry = await t.request('POST', '/otp', { phone });
    expect({ status: retry.status, body: await retry.json() }).toEqual({ status: 200, body: {} });
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: twilio.lastCode() })).status).toBe(200);
  });

  test('POST /resend sms: the pending signup code, its sent time and its row are as before; a retry goes out at once', async () => {
    const t = await app();
    const phone = uniquePhone();
    expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
    const pending = twilio.lastCode();
    t.tick(61);
    const before = await codeState(phone);
    expect(before.confirmationToken).toBe(hashOf(phone, pending));
    expect(before.ott.map((o) => o.type)).toEqual(['confirmation_token']);
    twilio.answer = TWILIO_500;
    await expectSendFailed(await t.request('POST', '/resend', { type: 'sms', phone }), 'confirmation');
    expect(await codeState(phone)).toEqual(before);
    twilio.answer = QUEUED;
    expect((await t.request('POST', '/resend', { type: 'sms', phone })).status).toBe(200);
    const resent = twilio.lastCode();
    expect((await codeState(phone)).confirmationToken).toBe(hashOf(phone, resent));
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: resent })).status).toBe(200);
  });

  test('GET /reauthenticate by SMS: the earlier nonce and its row are as before; a retry goes out at once', async () => {
    const t = await app();
    const { phone, session } = await phoneUser(t);
    expect((await t.request('GET', '/reauthenticate', undefined, bearer(session))).status).toBe(200);
    const nonce = twilio.lastCode();
    t.tick(61);
    const before = await codeState(phone);
    expect(before.reauthenticationToken).toBe(hashOf(phone, nonce));
    expect(before.ott.map((o) => o.type)).toEqual(['reauthentication_token']);
    twilio.answer = TWILIO_500;
    await expectSendFailed(await t.request('GET', '/reauthenticate', undefined, bearer(session)), 'reauthentication');
    expect(await codeState(phone)).toEqual(before);
    twilio.answer = QUEUED;
    expect((await t.request('GET', '/reauthenticate', undefined, bearer(session))).status).toBe(200);
    expect((await codeState(phone)).reauthenticationToken).toBe(hashOf(phone, twilio.lastCode()));
  });

  test('a provider that never answers: 422 after INTERNAL_HTTP_TIMEOUT, and the new user is gone', async () => {
    const t = await app();
    const phone = uniquePhone();
    twilio.answer = 'hang';
    const started = Date.now();
    await expectSendFailed(
      await t.request('POST', '/signup', { phone, password: 'phone-pass-1' }),
      'confirmation',
      'request to Twilio failed: no answer within 300 ms',
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(twilio.texts.at(-1)!.to).toBe(phone);
    expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.phone, phone))).toEqual([]);
  });
});

describe('SMS_OTP_EXP and SMS_OTP_LENGTH', () => {
  test('a code works up to SMS_OTP_EXP seconds after it was sent, and not a moment later (403 otp_expired)', async () => {
    const t = await app({ AUTHSVC_SMS_OTP_EXP: '120' });
    const [a, b] = [uniquePhone(), uniquePhone()];
    const codes: string[] = [];
    for (const phone of [a, b]) {
      expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
      codes.push(twilio.lastCode());
    }
    t.tick(120);
    expect((await t.request('POST', '/verify', { type: 'sms', phone: a, token: codes[0] })).status).toBe(200);
    t.tick(0.001);
    const late = await t.request('POST', '/verify', { type: 'sms', phone: b, token: codes[1] });
    expect({ status: late.status, body: await late.json() }).toEqual({
      status: 403,
      body: { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' },
    });
  });

  test('SMS_OTP_LENGTH=8 texts eight digits, stored as sha224(phone + code), and they verify', async () => {
    const t = await app({ AUTHSVC_SMS_OTP_LENGTH: '8' });
    const phone = uniquePhone();
    expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
    const text = twilio.texts.at(-1)!.body;
    expect(text).toMatch(/^Your code is \d{8}$/);
    const code = twilio.lastCode();
    expect((await codeState(phone)).confirmationToken).toBe(hashOf(phone, code));
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: code.slice(0, 6) })).status).toBe(403);
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: code })).status).toBe(200);
  });
});

describe('SMS_MAX_FREQUENCY', () => {
  test('the refusal counts the seconds left, truncated as GoTrue does', async () => {
    const t = await app({ AUTHSVC_SMS_MAX_FREQUENCY: '60' });
    const phone = uniquePhone();
    expect((await t.request('POST', '/signup', { phone, password: 'phone-pass-1' })).status).toBe(200);
    for (const [tick, left] of [
      [23.5, 36],
      [36.4, 0],
    ] as const) {
      t.tick(tick);
      const again = await t.request('POST', '/resend', { type: 'sms', phone });
      expect({ status: again.status, body: await again.json() }).toEqual({
        status: 429,
        body: {
          code: 429,
          error_code: 'over_sms_send_rate_limit',
          msg: `For security purposes, you can only request this after ${left} seconds.`,
        },
      });
    }
    t.tick(0.2);
    expect((await t.request('POST', '/resend', { type: 'sms', phone })).status).toBe(200);
  });
});

describe('SMS_TEST_OTP', () => {
  test('before SMS_TEST_OTP_VALID_UNTIL the fixed code, no SMS; from that instant on a real SMS and the fixed code is refused', async () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const until = new Date(start + 200_000).toISOString().replace('.000Z', 'Z');
    const phone = uniquePhone();
    const t = await app({ AUTHSVC_SMS_TEST_OTP: `${phone}:123456`, AUTHSVC_SMS_TEST_OTP_VALID_UNTIL: until }, start);
    const texts = twilio.texts.length;
    const first = await t.request('POST', '/otp', { phone });
    expect({ status: first.status, body: await first.json() }).toEqual({ status: 200, body: {} });
    expect(twilio.texts).toHaveLength(texts);
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: '123456' })).status).toBe(200);
    t.tick(61);
    const second = await t.request('POST', '/otp', { phone });
    expect(await second.json()).toEqual({ message_id: 'test-otp' });
    expect(twilio.texts).toHaveLength(texts);

    // GoTrue's GetTestOTP: valid only while now is before the instant; at it, the number is an ordinary one.
    t.tick(139);
    expect(t.now()).toBe(Date.parse(until));
    const real = await t.request('POST', '/otp', { phone });
    expect({ status: real.status, body: await real.json() }).toEqual({ status: 200, body: {} });
    expect(twilio.texts).toHaveLength(texts + 1);
    expect(twilio.texts.at(-1)!.to).toBe(phone);
    const refused = await t.request('POST', '/verify', { type: 'sms', phone, token: '123456' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).error_code).toBe('otp_expired');
    expect((await t.request('POST', '/verify', { type: 'sms', phone, token: twilio.lastCode() })).status).toBe(200);
  });

  test('test numbers neither count against nor are stopped by RATE_LIMIT_SMS_SENT; SMS_MAX_FREQUENCY still holds for them', async () => {
    const [test1, test2] = [uniquePhone(), uniquePhone()];
    const t = await app({ AUTHSVC_RATE_LIMIT_SMS_SENT: '1', AUTHSVC_SMS_TEST_OTP: `${test1}:111111,${test2}:222222` });
    await db.orm.delete(db.t.rateLimits).where(eq(db.t.rateLimits.key, 'sms_sent'));
    // Test numbers first: the hour's one real SMS is still there afterwards.
    expect((await t.request('POST', '/signup', { phone: test1, password: 'phone-pass-1' })).status).toBe(200);
    expect((await t.request('POST', '/otp', { phone: test2 })).status).toBe(200);
    expect((await t.request('POST', '/signup', { phone: uniquePhone(), password: 'phone-pass-1' })).status).toBe(200);
    const over = await t.request('POST', '/signup', { phone: uniquePhone(), password: 'phone-pass-1' });
    expect({ status: over.status, body: await over.json() }).toEqual({
      status: 429,
      body: { code: 429, error_code: 'over_sms_send_rate_limit', msg: 'SMS rate limit exceeded' },
    });
    // The limit is spent, and a test number still gets its code.
    t.tick(61);
    const again = await t.request('POST', '/resend', { type: 'sms', phone: test1 });
    expect({ status: again.status, body: await again.json() }).toEqual({
      status: 200,
      body: { message_id: 'test-otp' },
    });
    expect((await t.request('POST', '/verify', { type: 'sms', phone: test1, token: '111111' })).status).toBe(200);
    // The per-user frequency applies to test numbers as well (GoTrue checks it first).
    const soon = await t.request('POST', '/otp', { phone: test2 });
    expect(soon.status).toBe(200);
    const tooSoon = await t.request('POST', '/otp', { phone: test2 });
    expect(((await tooSoon.json()) as Json).error_code).toBe('over_sms_send_rate_limit');
  });
});
