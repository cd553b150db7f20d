// Guessing codes: a code typed in (email OTP, email-change code, reauthentication nonce) stops
// working after five attempts, right or wrong, even when they arrive all at once, and even with
// per-IP limits off (no RATE_LIMIT_HEADER, GoTrue's default).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail, type TestApp } from './helpers/app.ts';
import { openTestDb } from './helpers/db.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => { db = await openTestDb(); });
afterAll(async () => { await db?.close(); });

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
    for (let i = 0; i < 4; i++) expect((await t.request('POST', '/verify', { type: 'signup', email, token: wrong(code, i) })).status).toBe(403);
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: code })).status).toBe(200);
  });

  test('after five wrong codes the right one no longer works; a new code does', async () => {
    let now = new Date('2033-04-01T00:00:00Z');
    const t = await buildTestApp(db, {}, { now: () => now });
    const { email, code } = await pendingSignup(t);
    for (let i = 0; i < 5; i++) expect((await t.request('POST', '/verify', { type: 'email', email, token: wrong(code, i) })).status).toBe(403);
    const late = await t.request('POST', '/verify', { type: 'signup', email, token: code });
    expect(late.status).toBe(403);
    expect(await late.json()).toMatchObject({ error_code: 'otp_expired', msg: 'Token has expired or is invalid' });
    // The user asks for a new code (after the frequency window) and it works.
    now = new Date(now.getTime() + 901_000);
    expect((await t.request('POST', '/resend', { type: 'signup', email })).status).toBe(200);
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: t.mails.at(-1)!.token })).status).toBe(200);
  });

  test('guesses sent all at once still get five chances in all', async () => {
    const t = await buildTestApp(db);
    const { email, code } = await pendingSignup(t);
    const guesses = Array.from({ length: 12 }, (_, i) => t.request('POST', '/verify', { type: 'signup', email, token: wrong(code, i) }));
    expect((await Promise.all(guesses)).map((r) => r.status)).toEqual(Array(12).fill(403));
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: code })).status).toBe(403);
  });

  test('a magic-link code and a recovery code are counted the same way', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto);
    const t = await buildTestApp(db);
    await t.request('POST', '/recover', { email: u.email });
    const code = t.mails.at(-1)!.token;
    for (let i = 0; i < 5; i++) await t.request('POST', '/verify', { type: 'recovery', email: u.email, token: wrong(code, i) });
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
    for (let i = 0; i < 5; i++) expect((await t.request('POST', '/verify', { type: 'email_change', email: next, token: wrong(code, i) })).status).toBe(403);
    expect((await t.request('POST', '/verify', { type: 'email_change', email: next, token: code })).status).toBe(403);
  });

  test('four wrong codes, then the right one confirms the change', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto);
    const t = await buildTestApp(db, { AUTHSVC_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false' });
    const next = uniqueEmail('next');
    await t.request('PUT', '/user', { email: next }, bearer(u.session));
    const code = t.mails.at(-1)!.token;
    for (let i = 0; i < 4; i++) await t.request('POST', '/verify', { type: 'email_change', email: next, token: wrong(code, i) });
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
      const res = await t.request('PUT', '/user', { password: 'next-password-1', nonce: wrong(nonce, i) }, bearer(u.session));
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
    const results = await Promise.all(['first-new-password-1', 'second-new-password-2'].map((password) =>
      t.request('PUT', '/user', { password, nonce }, bearer(u.session))));
    expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
    const loser = results.find((r) => r.status === 422)!;
    expect(await loser.json()).toMatchObject({ error_code: 'reauthentication_not_valid' });
  });
});
