// POST /otp, /magiclink, /recover and /resend (routes/otp.ts): what each answers, what it sends,
// and what it stores. Following the mailed links and codes: verify.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, unknown>;
let db: Database;
let t: TestApp;
/** Signs users up confirmed (MAILER_AUTOCONFIRM), on the same database. */
let auto: TestApp;
// SMTP_MAX_FREQUENCY (900 s) is per user: a resend right after the signup mail waits it out.
let now = new Date('2031-01-01T00:00:00Z');
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, {}, { now: () => now });
  auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }, { now: () => now });
});
afterAll(async () => {
  await db?.close();
});

const userRows = async (email: string) => db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
const mailsTo = (app: TestApp, email: string) => app.mails.filter((m) => m.to === email);

describe('POST /otp by email', () => {
  test('an unknown address: 200 {}, an unconfirmed user is made and sent a signup confirmation', async () => {
    const email = uniqueEmail();
    const res = await t.request('POST', '/otp', { email, data: { plan: 'pro' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const [row] = await userRows(email);
    expect(row).toMatchObject({ emailConfirmedAt: null, rawUserMetaData: { plan: 'pro' } });
    expect(row!.confirmationToken).not.toBe('');
    const sent = mailsTo(t, email);
    expect(sent.map((m) => m.kind)).toEqual(['confirmation']);
    expect(new URL(sent[0]!.confirmationUrl).searchParams.get('type')).toBe('signup');
  });

  test('a confirmed user is sent a magic link (the recovery token), and nothing else changes', async () => {
    const { email } = await signUpConfirmed(auto);
    const before = (await userRows(email))[0]!;
    const res = await t.request('POST', '/otp', { email });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const after = (await userRows(email))[0]!;
    expect(after.recoveryToken).not.toBe('');
    expect(after.encryptedPassword).toBe(before.encryptedPassword);
    expect(mailsTo(t, email).at(-1)!.kind).toBe('magic_link');
  });

  test('create_user false for an unknown address: 422 otp_disabled, no user, no mail', async () => {
    const email = uniqueEmail();
    const res = await t.request('POST', '/otp', { email, create_user: false });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error_code: 'otp_disabled', msg: 'Signups not allowed for otp' });
    expect(await userRows(email)).toHaveLength(0);
    expect(mailsTo(t, email)).toHaveLength(0);
  });

  test("GoTrue's 400s: neither address, both, and a channel with an email", async () => {
    const cases: [Json, string][] = [
      [{}, 'One of email or phone must be set'],
      [{ email: uniqueEmail(), phone: '+15555550100' }, 'Only an email address or phone number should be provided'],
      [{ email: uniqueEmail(), channel: 'sms' }, 'Channel should only be specified with Phone OTP'],
    ];
    for (const [body, msg] of cases) {
      const res = await t.request('POST', '/otp', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ error_code: 'validation_failed', msg });
    }
  });
});

describe('POST /magiclink', () => {
  test('a confirmed user gets a magic link; a missing email is 422 validation_failed', async () => {
    const { email } = await signUpConfirmed(auto);
    const res = await t.request('POST', '/magiclink', { email });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(mailsTo(t, email).at(-1)!.kind).toBe('magic_link');
    const missing = await t.request('POST', '/magiclink', {});
    expect(missing.status).toBe(422);
    expect(await missing.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Password recovery requires an email',
    });
  });
});

describe('POST /recover', () => {
  test('a known user: 200 {} and a recovery mail; an unknown one: the same 200 {} and nothing sent or made', async () => {
    const { email } = await signUpConfirmed(auto);
    const res = await t.request('POST', '/recover', { email });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(mailsTo(t, email).at(-1)!.kind).toBe('recovery');
    expect((await userRows(email))[0]!.recoverySentAt).not.toBeNull();

    const nobody = uniqueEmail();
    const unknown = await t.request('POST', '/recover', { email: nobody });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual({});
    expect(mailsTo(t, nobody)).toHaveLength(0);
    expect(await userRows(nobody)).toHaveLength(0);
  });

  test('without an email: 400 validation_failed', async () => {
    const res = await t.request('POST', '/recover', {});
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Password recovery requires an email',
    });
  });
});

describe('POST /resend', () => {
  test('type signup for an unconfirmed user sends a new confirmation, replacing the token', async () => {
    const email = uniqueEmail();
    expect((await t.request('POST', '/signup', { email, password: 'secret-pw-1' })).status).toBe(200);
    const first = (await userRows(email))[0]!.confirmationToken;
    now = new Date(now.getTime() + 901_000);
    const res = await t.request('POST', '/resend', { type: 'signup', email });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(mailsTo(t, email).map((m) => m.kind)).toEqual(['confirmation', 'confirmation']);
    expect((await userRows(email))[0]!.confirmationToken).not.toBe(first);
  });

  test('an unknown or already confirmed address: 200 {} and nothing sent', async () => {
    const { email } = await signUpConfirmed(auto);
    const sentBefore = mailsTo(t, email).length;
    for (const address of [email, uniqueEmail()]) {
      const res = await t.request('POST', '/resend', { type: 'signup', email: address });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    }
    expect(mailsTo(t, email)).toHaveLength(sentBefore);
  });

  test("an unknown type: 400 with GoTrue's message", async () => {
    const res = await t.request('POST', '/resend', { type: 'magiclink', email: uniqueEmail() });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Missing one of these types: signup, email_change, sms, phone_change',
    });
  });
});
