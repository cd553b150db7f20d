// Email flows through the recording mailer: the code and the link each work once.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const userRow = async (email: string) =>
  (await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email)))[0]!;

function linkParts(link: string) {
  const u = new URL(link);
  return {
    path: u.pathname,
    token: u.searchParams.get('token')!,
    type: u.searchParams.get('type')!,
    redirectTo: u.searchParams.get('redirect_to')!,
  };
}

function clock(start = '2031-01-01T00:00:00Z') {
  let now = new Date(start);
  return {
    now: () => now,
    advance: (s: number) => {
      now = new Date(now.getTime() + s * 1000);
    },
  };
}

async function signUp(t: TestApp, email = uniqueEmail()) {
  const res = await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
  expect(res.status).toBe(200);
  return { email, mail: t.mails.at(-1)! };
}

describe('signup confirmation', () => {
  test('POST /verify with the emailed code signs the user in, once', async () => {
    const t = await buildTestApp(db);
    const { email, mail } = await signUp(t);
    const res = await t.request('POST', '/verify', { type: 'signup', email, token: mail.token });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      token_type: 'bearer',
      type: 'signup',
      user: { email, user_metadata: { email_verified: true } },
    });
    expect(body.user.email_confirmed_at).toBeTruthy();
    const row = await userRow(email);
    expect(row.confirmationToken).toBe('');
    expect(await db.orm.select().from(db.t.oneTimeTokens).where(eq(db.t.oneTimeTokens.userId, row.id))).toHaveLength(0);
    const again = await t.request('POST', '/verify', { type: 'signup', email, token: mail.token });
    expect(again.status).toBe(403);
    expect(await again.json()).toMatchObject({ error_code: 'otp_expired', msg: 'Token has expired or is invalid' });
    expect((await t.request('POST', '/token?grant_type=password', { email, password: 'secret-pw-1' })).status).toBe(
      200,
    );
  });

  test('GET /verify follows the link: 303 to redirect_to with the session in the fragment; a second click gets the error', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail();
    await t.request('POST', '/signup?redirect_to=http://localhost:3000/welcome', { email, password: 'secret-pw-1' });
    const link = linkParts(t.mails.at(-1)!.confirmationUrl);
    expect(link).toMatchObject({ path: '/verify', type: 'signup', redirectTo: 'http://localhost:3000/welcome' });
    const url = `/verify?token=${link.token}&type=${link.type}&redirect_to=${encodeURIComponent(link.redirectTo)}`;
    // A mail scanner's HEAD does not use the link up.
    expect((await t.request('HEAD', url)).status).toBe(200);
    const res = await t.request('GET', url);
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location.startsWith('http://localhost:3000/welcome#')).toBe(true);
    const frag = new URLSearchParams(location.split('#')[1]);
    expect([...frag.keys()]).toEqual([
      'access_token',
      'expires_at',
      'expires_in',
      'refresh_token',
      'sb',
      'token_type',
      'type',
    ]);
    expect(frag.get('token_type')).toBe('bearer');
    expect(frag.get('type')).toBe('signup');
    expect(frag.get('expires_in')).toBe('3600');
    const me = await t.request('GET', '/user', undefined, { authorization: `Bearer ${frag.get('access_token')}` });
    expect(((await me.json()) as Json).email).toBe(email);
    const refreshed = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: frag.get('refresh_token'),
    });
    expect(refreshed.status).toBe(200);

    const again = await t.request('GET', url);
    expect(again.status).toBe(303);
    const err = new URLSearchParams(again.headers.get('location')!.split('#')[1]);
    expect(Object.fromEntries(err)).toEqual({
      error: 'access_denied',
      error_code: 'otp_expired',
      error_description: 'Email link is invalid or has expired',
      sb: '',
    });
  });

  test('POST /verify with token_hash; an expired token fails', async () => {
    const c = clock();
    const t = await buildTestApp(db, { AUTHSVC_MAILER_OTP_EXP: '600' }, { now: c.now });
    const { email, mail } = await signUp(t);
    c.advance(601);
    const late = await t.request('POST', '/verify', { type: 'signup', token_hash: mail.tokenHash });
    expect(late.status).toBe(403);
    expect(await late.json()).toMatchObject({ error_code: 'otp_expired', msg: 'Email link is invalid or has expired' });
    const t2 = await buildTestApp(db, {}, { now: c.now });
    const { email: e2, mail: m2 } = await signUp(t2);
    c.advance(60);
    const ok = await t2.request('POST', '/verify', { type: 'signup', token_hash: m2.tokenHash });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Json).user.email).toBe(e2);
    expect((await userRow(email)).emailConfirmedAt).toBeNull();
  });

  test('POST /resend type=signup sends another confirmation; unknown and confirmed addresses get {} and no mail', async () => {
    const c = clock();
    const t = await buildTestApp(db, {}, { now: c.now });
    const { email } = await signUp(t);
    const early = await t.request('POST', '/resend', { type: 'signup', email });
    expect(early.status).toBe(429);
    c.advance(901);
    const res = await t.request('POST', '/resend', { type: 'signup', email });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(t.mails.filter((m) => m.to === email)).toHaveLength(2);
    // The newest code works; the first one no longer does.
    const [first, second] = t.mails.filter((m) => m.to === email);
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: first!.token })).status).toBe(403);
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: second!.token })).status).toBe(200);
    const before = t.mails.length;
    expect((await t.request('POST', '/resend', { type: 'signup', email })).status).toBe(200);
    expect((await t.request('POST', '/resend', { type: 'signup', email: uniqueEmail() })).status).toBe(200);
    expect(t.mails.length).toBe(before);
    const bad = await t.request('POST', '/resend', { type: 'bogus', email });
    expect(await bad.json()).toMatchObject({
      code: 400,
      msg: 'Missing one of these types: signup, email_change, sms, phone_change',
    });
  });
});

describe('recovery', () => {
  test('POST /recover → recovery link → session → PUT /user password', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const email = uniqueEmail();
    await t.request('POST', '/signup', { email, password: 'old-password-1' });
    const res = await t.request('POST', '/recover', { email });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const mail = t.mails.at(-1)!;
    expect(mail).toMatchObject({ kind: 'recovery', to: email });
    const link = linkParts(mail.confirmationUrl);
    expect(link.type).toBe('recovery');
    const v = await t.request('GET', `/verify?token=${link.token}&type=recovery`);
    const frag = new URLSearchParams(v.headers.get('location')!.split('#')[1]);
    expect(frag.get('type')).toBe('recovery');
    const put = await t.request(
      'PUT',
      '/user',
      { password: 'new-password-1' },
      { authorization: `Bearer ${frag.get('access_token')}` },
    );
    expect(put.status).toBe(200);
    expect((await t.request('POST', '/token?grant_type=password', { email, password: 'new-password-1' })).status).toBe(
      200,
    );
    expect((await t.request('POST', '/token?grant_type=password', { email, password: 'old-password-1' })).status).toBe(
      400,
    );
  });

  test('an unknown address gets the same {} and no email; a second request within SMTP_MAX_FREQUENCY is 429', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const unknown = await t.request('POST', '/recover', { email: uniqueEmail() });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual({});
    expect(t.mails).toHaveLength(0);
    const email = uniqueEmail();
    await t.request('POST', '/signup', { email, password: 'old-password-1' });
    expect((await t.request('POST', '/recover', { email })).status).toBe(200);
    const again = await t.request('POST', '/recover', { email });
    expect(again.status).toBe(429);
    expect(await again.json()).toMatchObject({ error_code: 'over_email_send_rate_limit' });
    const missing = await t.request('POST', '/recover', {});
    expect(await missing.json()).toMatchObject({
      code: 400,
      error_code: 'validation_failed',
      msg: 'Password recovery requires an email',
    });
  });
});

describe('magic links and email OTP', () => {
  test('POST /otp for a new address signs up and sends a confirmation (type signup)', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail();
    const res = await t.request('POST', '/otp', { email, data: { plan: 'free' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(t.mails.at(-1)).toMatchObject({ kind: 'confirmation', to: email });
    expect(linkParts(t.mails.at(-1)!.confirmationUrl).type).toBe('signup');
    expect((await userRow(email)).rawUserMetaData).toMatchObject({ plan: 'free' });
    // `email` type accepts the code of a confirmation.
    const v = await t.request('POST', '/verify', { type: 'email', email, token: t.mails.at(-1)!.token });
    expect(v.status).toBe(200);
    expect(((await v.json()) as Json).type).toBe('signup');
  });

  test('a confirmed user gets a magic link; the link and the code each sign in once', async () => {
    const c = clock();
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }, { now: c.now });
    const email = uniqueEmail();
    await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
    expect((await t.request('POST', '/magiclink', { email })).status).toBe(200);
    const mail = t.mails.at(-1)!;
    expect(mail.kind).toBe('magic_link');
    const link = linkParts(mail.confirmationUrl);
    expect(link.type).toBe('magiclink');
    const v = await t.request('GET', `/verify?token=${link.token}&type=magiclink`);
    expect(v.status).toBe(303);
    expect(new URLSearchParams(v.headers.get('location')!.split('#')[1]).get('type')).toBe('magiclink');
    // Magic links may be re-requested after 60 s (not SMTP_MAX_FREQUENCY).
    expect((await t.request('POST', '/otp', { email })).status).toBe(429);
    c.advance(61);
    expect((await t.request('POST', '/otp', { email })).status).toBe(200);
    const code = t.mails.at(-1)!.token;
    const byCode = await t.request('POST', '/verify', { type: 'email', email, token: code });
    expect(byCode.status).toBe(200);
    expect(((await byCode.json()) as Json).type).toBe('magiclink');
    expect((await t.request('POST', '/verify', { type: 'magiclink', email, token: code })).status).toBe(403);
  });

  test('create_user false for an unknown address → 422 otp_disabled; input errors', async () => {
    const t = await buildTestApp(db);
    const res = await t.request('POST', '/otp', { email: uniqueEmail(), create_user: false });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error_code: 'otp_disabled', msg: 'Signups not allowed for otp' });
    expect(await (await t.request('POST', '/otp', {})).json()).toMatchObject({
      code: 400,
      msg: 'One of email or phone must be set',
    });
    expect(await (await t.request('POST', '/otp', { email: 'a@b.co', channel: 'sms' })).json()).toMatchObject({
      code: 400,
      msg: 'Channel should only be specified with Phone OTP',
    });
    expect(await (await t.request('POST', '/magiclink', {})).json()).toMatchObject({
      code: 422,
      msg: 'Password recovery requires an email',
    });
    const off = await buildTestApp(db, { GOTRUE_EXTERNAL_EMAIL_MAGIC_LINK_ENABLED: 'false' });
    expect(await (await off.request('POST', '/otp', { email: uniqueEmail() })).json()).toMatchObject({
      code: 422,
      error_code: 'email_provider_disabled',
      msg: 'Login with magic link is disabled',
    });
    expect(t.mails).toHaveLength(0);
  });
});

describe('verify input errors', () => {
  test('carry GoTrue status and messages', async () => {
    const t = await buildTestApp(db);
    const cases: [Json, number, string][] = [
      [{ token: '123456', email: 'a@b.co' }, 400, 'Verify requires a verification type'],
      [{ type: 'signup', email: 'a@b.co' }, 400, 'Verify requires either a token or a token hash'],
      [{ type: 'signup', token: '1', token_hash: 'x' }, 400, 'Verify requires either a token or a token hash'],
      [{ type: 'signup', token_hash: 'x', email: 'a@b.co' }, 400, 'Only the token_hash and type should be provided'],
      [{ type: 'sms', token_hash: 'x' }, 400, 'Invalid email verification type'],
      [{ type: 'signup', token: '123456' }, 400, 'Only an email address or phone number should be provided on verify'],
      [{ type: 'signup', token: '123456', email: 'nope' }, 422, 'Invalid email format'],
      [{ type: 'bogus', token: '123456', email: 'a@b.co' }, 403, 'Token has expired or is invalid'],
    ];
    for (const [body, status, msg] of cases) {
      const res = await t.request('POST', '/verify', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(((await res.json()) as Json).msg).toBe(msg);
    }
    const bad = await t.request('GET', '/verify?token=abc&type=sms');
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toBe(
      'http://localhost:3000#error=invalid_request&error_code=validation_failed&error_description=Invalid+email+verification+type&sb=',
    );
    expect((await t.request('GET', '/verify?token=abc')).status).toBe(400);
  });
});

describe('MAILER_OTP_LENGTH', () => {
  test('codes have the configured number of digits and verify', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_OTP_LENGTH: '8' });
    const { email, mail } = await signUp(t);
    expect(mail.token).toMatch(/^\d{8}$/);
    expect((await t.request('POST', '/verify', { type: 'signup', email, token: mail.token })).status).toBe(200);
  });
});
