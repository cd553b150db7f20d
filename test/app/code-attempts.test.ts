// Guessing codes: a code typed in (email OTP, email-change code, reauthentication nonce) stops
// working after five attempts, right or wrong, even when they arrive all at once, and even with
// per-IP limits off (no RATE_LIMIT_HEADER, GoTrue's default).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq, like } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import type { SmsMessage, SmsProvider } from '../../src/sms/provider.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const bearer = (s: Json) => ({ authorization: `Bearer ${s.access_token}` });
/** A six-digit code that is not `code`. */
const wrong = (code: string, i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(code.length, '0');

async function pendingSignup(t: TestApp) {
  const email = uniqueEmail('guess');
  expect((await t.request('POST', '/signup', { email, password: 'secret-pw-1' })).status).toBe(200);
  return { email, code: t.mails.at(-1)!.token };
}

describe('email OTPs (POST /verify with token and email)', () => {
  test('four wrong codes, then the right one works', async () => {
    const t = await buildTestApp(db);
    const { email, code } = await pendingSignup(t);
    for (let i = 0; i < 4; i++)
      expect((await t.request('POST', '/verify', { type: 'signup', email, token: wrong(code, i) })).status).toBe(403);
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: code })).status).toBe(200);
  });

  test('after five wrong codes the right one no longer works; a new code does', async () => {
    let now = new Date('2033-04-01T00:00:00Z');
    const t = await buildTestApp(db, {}, { now: () => now });
    const { email, code } = await pendingSignup(t);
    for (let i = 0; i < 5; i++)
      expect((await t.request('POST', '/verify', { type: 'email', email, token: wrong(code, i) })).status).toBe(403);
    const late = await t.request('POST', '/verify', { type: 'signup', email, token: code });
    expect(late.status).toBe(403);
    expect(await late.json()).toMatchObject({ error_code: 'otp_expired', msg: 'Token has expired or is invalid' });
    // The user asks for a new code (after the frequency window) and it works.
    now = new Date(now.getTime() + 901_000);
    expect((await t.request('POST', '/resend', { type: 'signup', email })).status).toBe(200);
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: t.mails.at(-1)!.token })).status).toBe(
      200,
    );
  });

  test('guesses sent all at once still get five chances in all', async () => {
    const t = await buildTestApp(db);
    const { email, code } = await pendingSignup(t);
    const guesses = Array.from({ length: 12 }, (_, i) =>
      t.request('POST', '/verify', { type: 'signup', email, token: wrong(code, i) }),
    );
    expect((await Promise.all(guesses)).map((r) => r.status)).toEqual(Array(12).fill(403));
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: code })).status).toBe(403);
  });

  test('a magic-link code and a recovery code are counted the same way', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto);
    const t = await buildTestApp(db);
    await t.request('POST', '/recover', { email: u.email });
    const code = t.mails.at(-1)!.token;
    for (let i = 0; i < 5; i++)
      await t.request('POST', '/verify', { type: 'recovery', email: u.email, token: wrong(code, i) });
    expect((await t.request('POST', '/verify', { type: 'recovery', email: u.email, token: code })).status).toBe(403);
  });
});

describe('email-change codes', () => {
  test('five wrong codes for the new address void that code', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto);
    const t = await buildTestApp(db, { AUTHSVC_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false' });
    const next = uniqueEmail('next');
    expect((await t.request('PUT', '/user', { email: next }, bearer(u.session))).status).toBe(200);
    const code = t.mails.at(-1)!.token;
    for (let i = 0; i < 5; i++)
      expect(
        (await t.request('POST', '/verify', { type: 'email_change', email: next, token: wrong(code, i) })).status,
      ).toBe(403);
    expect((await t.request('POST', '/verify', { type: 'email_change', email: next, token: code })).status).toBe(403);
  });

  test('four wrong codes, then the right one confirms the change', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto);
    const t = await buildTestApp(db, { AUTHSVC_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false' });
    const next = uniqueEmail('next');
    await t.request('PUT', '/user', { email: next }, bearer(u.session));
    const code = t.mails.at(-1)!.token;
    for (let i = 0; i < 4; i++)
      await t.request('POST', '/verify', { type: 'email_change', email: next, token: wrong(code, i) });
    const ok = await t.request('POST', '/verify', { type: 'email_change', email: next, token: code });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Json).user.email).toBe(next);
  });
});

describe('reauthentication nonces', () => {
  const env = { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true' };

  test('five wrong nonces void the nonce', async () => {
    const t = await buildTestApp(db, env);
    const u = await signUpConfirmed(t);
    expect((await t.request('GET', '/reauthenticate', undefined, bearer(u.session))).status).toBe(200);
    const nonce = t.mails.at(-1)!.token;
    for (let i = 0; i < 5; i++) {
      const res = await t.request(
        'PUT',
        '/user',
        { password: 'next-password-1', nonce: wrong(nonce, i) },
        bearer(u.session),
      );
      expect(res.status).toBe(422);
    }
    const late = await t.request('PUT', '/user', { password: 'next-password-1', nonce }, bearer(u.session));
    expect(late.status).toBe(422);
    expect(await late.json()).toMatchObject({ error_code: 'reauthentication_not_valid' });
  });

  test('two PUT /user with the same nonce at once: exactly one changes the password', async () => {
    const t = await buildTestApp(db, env);
    const u = await signUpConfirmed(t);
    await t.request('GET', '/reauthenticate', undefined, bearer(u.session));
    const nonce = t.mails.at(-1)!.token;
    const results = await Promise.all(
      ['first-new-password-1', 'second-new-password-2'].map((password) =>
        t.request('PUT', '/user', { password, nonce }, bearer(u.session)),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
    const loser = results.find((r) => r.status === 422)!;
    expect(await loser.json()).toMatchObject({ error_code: 'reauthentication_not_valid' });
  });
});

describe('SMS codes', () => {
  // The provider named must have its credentials (start-up checks); a recording one replaces it.
  const env = {
    AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
    AUTHSVC_SMS_PROVIDER: 'twilio',
    AUTHSVC_RATE_LIMIT_SMS_SENT: '100000',
    AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-test',
    AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'token',
    AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-test',
  };
  const texted: SmsMessage[] = [];
  const sms: SmsProvider = {
    name: 'twilio',
    supportsWhatsApp: true,
    verifiesCodes: false,
    async send(m) {
      texted.push(m);
      return `SM${texted.length}`;
    },
  };
  const phone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${Math.floor(Math.random() * 10)}`;

  test('five wrong SMS codes void the code; four leave it working', async () => {
    const t = await buildTestApp(db, env, { sms });
    for (const wrongCodes of [5, 4]) {
      const number = phone();
      expect((await t.request('POST', '/otp', { phone: number })).status).toBe(200);
      const code = texted.at(-1)!.otp;
      expect(texted.at(-1)!.phone).toBe(number);
      for (let i = 0; i < wrongCodes; i++) {
        expect((await t.request('POST', '/verify', { type: 'sms', phone: number, token: wrong(code, i) })).status).toBe(
          403,
        );
      }
      const right = await t.request('POST', '/verify', { type: 'sms', phone: number, token: code });
      if (wrongCodes === 5) {
        expect(right.status).toBe(403);
        expect(await right.json()).toMatchObject({ error_code: 'otp_expired', msg: 'Token has expired or is invalid' });
      } else {
        expect(right.status).toBe(200);
      }
    }
  });
});

describe('idle code-attempt counters (issue 11)', () => {
  test('with the default memory rate-limit store, a later attempt deletes counters idle for a day, at most every ten minutes', async () => {
    const t0 = new Date('2035-01-01T00:00:00Z').getTime();
    let now = new Date(t0);
    const t = await buildTestApp(db, {}, { now: () => now });
    expect(t.deps.config.rateLimit.store).toBe('memory');
    const rl = db.t.rateLimits;
    const counters = async (userId: string) =>
      db.orm
        .select()
        .from(rl)
        .where(like(rl.key, `otp:${userId}:%`));
    /** A new user with a pending code and one wrong attempt at it, at `at`; returns the user id. */
    const guessAt = async (at: number) => {
      now = new Date(at);
      const { email, code } = await pendingSignup(t);
      expect((await t.request('POST', '/verify', { type: 'signup', email, token: wrong(code, 0) })).status).toBe(403);
      const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
      return row!.id;
    };
    const hour = 3600_000;
    const a = await guessAt(t0);
    expect(await counters(a)).toHaveLength(1);
    // 23 hours idle: kept.
    const b = await guessAt(t0 + 23 * hour);
    expect(await counters(a)).toHaveLength(1);
    // A day and a minute idle: the first attempt of a new ten-minute window deletes it.
    await guessAt(t0 + 24 * hour + 60_000);
    expect(await counters(a)).toHaveLength(0);
    expect(await counters(b)).toHaveLength(1);
    // Within that window no second sweep: a stale counter stays until the next window.
    const stale = new Date(t0 - 48 * hour);
    await db.orm.insert(rl).values({
      key: 'otp:00000000-0000-4000-8000-000000000000:confirmation_token',
      windowStart: stale,
      count: 3,
      updatedAt: stale,
    });
    await guessAt(t0 + 24 * hour + 5 * 60_000);
    expect(await counters('00000000-0000-4000-8000-000000000000')).toHaveLength(1);
    await guessAt(t0 + 24 * hour + 10 * 60_000);
    expect(await counters('00000000-0000-4000-8000-000000000000')).toHaveLength(0);
    // The sweep never touches shared counters (the hourly email count).
    expect(await db.orm.select().from(rl).where(eq(rl.key, 'email_sent'))).toHaveLength(1);
  });
});
