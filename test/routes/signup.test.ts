import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { tokenHash } from '../../src/crypto/otp.ts';
import { sha256Hex } from '../../src/crypto/encoding.ts';
import { verifyJwt } from '../../src/crypto/jwt.ts';
import { buildTestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

describe('POST /signup with email and password', () => {
  test('autoconfirm returns a session whose JWT carries GoTrue claims', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_JWT_AUD: 'authenticated',
      AUTHSVC_JWT_DEFAULT_GROUP_NAME: 'authenticated',
    });
    const email = uniqueEmail();
    const res = await t.request('POST', '/signup', {
      email: email.toUpperCase(),
      password: 'secret-pw-1',
      data: { name: 'Ada' },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.token_type).toBe('bearer');
    expect(body.expires_in).toBe(3600);
    expect(body.refresh_token).toMatch(/^[a-z2-7]{32}$/);
    expect(body.user.email).toBe(email);
    expect(body.user.email_confirmed_at).toBeTruthy();
    expect(body.user.user_metadata).toMatchObject({ name: 'Ada', email, email_verified: true, phone_verified: false });
    expect(body.user.app_metadata).toEqual({ provider: 'email', providers: ['email'] });
    expect(body.user.identities).toHaveLength(1);
    expect(body).not.toHaveProperty('weak_password');
    expect(res.headers.get('sb-auth-user-id')).toBe(body.user.id);
    const claims = await verifyJwt(t.deps.keys, body.access_token);
    expect(claims).toMatchObject({
      sub: body.user.id,
      aud: 'authenticated',
      role: 'authenticated',
      email,
      phone: '',
      aal: 'aal1',
      is_anonymous: false,
    });
    expect(Object.keys(claims)).toEqual([
      'sub',
      'aud',
      'exp',
      'iat',
      'email',
      'phone',
      'app_metadata',
      'user_metadata',
      'role',
      'aal',
      'amr',
      'session_id',
      'is_anonymous',
    ]);
    expect((claims.amr as { method: string }[])[0]!.method).toBe('password');
    expect(t.mails).toHaveLength(0);
    // Stored: a confirmed user whose email identity says verified, and both audit entries.
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, body.user.id));
    expect(row!.emailConfirmedAt!.toISOString()).toBe(body.user.email_confirmed_at);
    expect(row!.lastSignInAt!.toISOString()).toBe(body.user.last_sign_in_at);
    const identities = await db.orm.select().from(db.t.identities).where(eq(db.t.identities.userId, body.user.id));
    expect(identities.map((i) => i.identityData)).toEqual([
      { sub: body.user.id, email, email_verified: true, phone_verified: false, name: 'Ada' },
    ]);
    expect(body.user.identities[0].identity_data).toEqual(identities[0]!.identityData);
    const audit = (await db.orm.select().from(db.t.auditLogEntries)).filter(
      (e) => e.payload!.actor_id === body.user.id,
    );
    expect(audit.map((e) => e.payload!.action).sort()).toEqual(['login', 'user_signedup']);
    expect(audit.every((e) => (e.payload!.traits as Record<string, unknown>).provider === 'email')).toBe(true);
  });

  test('without autoconfirm returns the user and hands a confirmation to the mailer', async () => {
    // The production hasher: the stored hash's cost is asserted.
    const t = await buildTestApp(db, {}, { hasher: createNodeHasher() });
    const email = uniqueEmail();
    const res = await t.request('POST', '/signup?redirect_to=http://localhost:3000/welcome', {
      email,
      password: 'secret-pw-1',
    });
    expect(res.status).toBe(200);
    const user = (await res.json()) as Record<string, any>;
    expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(user.email).toBe(email);
    expect(user.confirmation_sent_at).toBeTruthy();
    expect(user).not.toHaveProperty('access_token');
    expect(user).not.toHaveProperty('email_confirmed_at');
    expect(t.mails).toHaveLength(1);
    const mail = t.mails[0]!;
    expect(mail).toMatchObject({ kind: 'confirmation', to: email, redirectTo: 'http://localhost:3000/welcome' });
    expect(mail.token).toMatch(/^\d{6}$/);
    // The link's token is random; the code's hash, sha224(email + code), is stored as GoTrue stores it.
    expect(mail.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(mail.confirmationUrl).toBe(
      `http://localhost:9999/verify?token=${mail.tokenHash}&type=signup&redirect_to=http://localhost:3000/welcome`,
    );
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, user.id));
    expect(row!.confirmationToken).toBe(tokenHash(email, mail.token));
    expect(row!.encryptedPassword).toMatch(/^\$2a\$10\$/);
    const ott = await db.orm.select().from(db.t.oneTimeTokens).where(eq(db.t.oneTimeTokens.userId, user.id));
    expect(ott).toMatchObject([
      {
        tokenType: 'confirmation_token',
        tokenHash: tokenHash(email, mail.token),
        relatesTo: email,
        linkHash: sha256Hex(mail.tokenHash),
      },
    ]);
    // Not confirmed yet: the password grant refuses.
    const login = await t.request('POST', '/token?grant_type=password', { email, password: 'secret-pw-1' });
    expect(login.status).toBe(400);
    expect(await login.json()).toMatchObject({ error_code: 'email_not_confirmed' });
  });

  test('a redirect_to outside the allowed set falls back to SITE_URL', async () => {
    const t = await buildTestApp(db);
    await t.request('POST', '/signup?redirect_to=https://evil.example/steal', {
      email: uniqueEmail(),
      password: 'secret-pw-1',
    });
    expect(t.mails[0]!.redirectTo).toBe('http://localhost:3000');
  });

  test('a repeated signup of an unconfirmed address: inside the frequency window nothing changes; after it, its own password and link replace the earlier ones', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const t = await buildTestApp(db, {}, { now: () => now });
    const email = uniqueEmail();
    await t.request('POST', '/signup', { email, password: 'first-password' });
    const again = await t.request('POST', '/signup', { email, password: 'other-password' });
    expect(again.status).toBe(429);
    expect(await again.json()).toMatchObject({
      error_code: 'over_email_send_rate_limit',
      msg: 'For security purposes, you can only request this after 900 seconds.',
    });
    const [before] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
    expect(await t.deps.hasher.verify('first-password', before!.encryptedPassword!)).toBe(true);
    now = new Date(now.getTime() + 901_000);
    const third = await t.request('POST', '/signup', { email, password: 'other-password' });
    expect(third.status).toBe(200);
    expect(t.mails).toHaveLength(2);
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
    expect(await t.deps.hasher.verify('other-password', row!.encryptedPassword!)).toBe(true);
  });

  test("pre-account takeover: the password in force after confirmation is the confirmed signup's, and earlier sessions end", async () => {
    let now = new Date('2031-01-01T00:00:00Z');
    const t = await buildTestApp(db, { AUTHSVC_SMTP_MAX_FREQUENCY: '60' }, { now: () => now });
    const email = uniqueEmail('victim');
    // The attacker signs the victim's address up first, with a password of their own.
    expect((await t.request('POST', '/signup', { email, password: 'attacker-password' })).status).toBe(200);
    const [early] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
    // A session held by whoever signed up first (however obtained) must not survive confirmation.
    const { createSession } = await import('../../src/accounts/session.ts');
    const planted = await createSession(t.deps, db, early!, 'password', {});
    now = new Date(now.getTime() + 61_000);
    expect((await t.request('POST', '/signup', { email, password: 'victim-password' })).status).toBe(200);
    const [attackerMail, victimMail] = t.mails;
    // The attacker's link no longer works; the victim's confirms the victim's password.
    const stale = await t.request('POST', '/verify', { type: 'signup', token_hash: attackerMail!.tokenHash });
    expect(stale.status).toBe(403);
    const ok = await t.request('POST', '/verify', { type: 'signup', token_hash: victimMail!.tokenHash });
    expect(ok.status).toBe(200);
    const login = (password: string) => t.request('POST', '/token?grant_type=password', { email, password });
    expect((await login('attacker-password')).status).toBe(400);
    expect((await login('victim-password')).status).toBe(200);
    const sessions = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, early!.id));
    expect(sessions.map((x) => x.id)).not.toContain(planted.session.id);
    expect(
      (await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: planted.refreshToken })).status,
    ).toBe(400);
  });

  test('a confirmed address gets a fabricated user (no leak) or 422 under autoconfirm', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const email = uniqueEmail();
    const first = (await (await auto.request('POST', '/signup', { email, password: 'secret-pw-1' })).json()) as Record<
      string,
      any
    >;
    const dup = await auto.request('POST', '/signup', { email, password: 'secret-pw-2' });
    expect(dup.status).toBe(422);
    expect(await dup.json()).toEqual({ code: 422, error_code: 'user_already_exists', msg: 'User already registered' });

    const plain = await buildTestApp(db);
    const fake = await plain.request('POST', '/signup', { email, password: 'secret-pw-3', data: { a: 1 } });
    expect(fake.status).toBe(200);
    const body = (await fake.json()) as Record<string, any>;
    expect(body.id).not.toBe(first.user.id);
    expect(body).toMatchObject({
      email,
      identities: [],
      user_metadata: { a: 1 },
      app_metadata: { provider: 'email', providers: ['email'] },
    });
    expect(body).not.toHaveProperty('email_confirmed_at');
    expect(plain.mails).toHaveLength(0);
    const users = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
    expect(users).toHaveLength(1);
    const audit = await db.orm.select().from(db.t.auditLogEntries);
    expect(
      audit.some((a) => a.payload?.action === 'user_repeated_signup' && a.payload?.actor_id === first.user.id),
    ).toBe(true);
  });

  test('a failing mailer leaves no user behind', async () => {
    const t = await buildTestApp(
      db,
      {},
      {
        mailer: {
          async send() {
            throw new Error('smtp down');
          },
        },
      },
    );
    const email = uniqueEmail();
    const res = await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({
      error_code: 'unexpected_failure',
      msg: 'Error sending confirmation email',
    });
    expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email))).toHaveLength(0);
  });

  test('input errors carry GoTrue status and codes', async () => {
    const t = await buildTestApp(db);
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ email: uniqueEmail() }, 400, 'validation_failed', 'Signup requires a valid password'],
      [
        { email: 'not-an-email', password: 'secret-pw-1' },
        400,
        'validation_failed',
        'Unable to validate email address: invalid format',
      ],
      [{ email: uniqueEmail(), password: 'abc' }, 422, 'weak_password', 'Password should be at least 6 characters.'],
      [
        { email: uniqueEmail(), password: 'ä'.repeat(37) },
        400,
        'validation_failed',
        'Password cannot be longer than 72 characters',
      ],
      [
        { email: uniqueEmail(), phone: '+15555550100', password: 'secret-pw-1' },
        400,
        'validation_failed',
        'Only an email address or phone number should be provided on signup.',
      ],
    ];
    for (const [body, status, code, msg] of cases) {
      const res = await t.request('POST', '/signup', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(await res.json()).toMatchObject({ code: status, error_code: code, msg });
    }
    const weak = await t.request('POST', '/signup', { email: uniqueEmail(), password: 'abc' });
    expect(await weak.json()).toMatchObject({ weak_password: { reasons: ['length'] } });
  });

  test('password policy: minimum length and required character sets with \\: escapes', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_PASSWORD_MIN_LENGTH: '10',
      AUTHSVC_PASSWORD_REQUIRED_CHARACTERS: 'abcdefghijklmnopqrstuvwxyz:0123456789:\\:',
    });
    const weak = await t.request('POST', '/signup', { email: uniqueEmail(), password: 'short1' });
    expect(weak.status).toBe(422);
    expect(await weak.json()).toMatchObject({
      msg: 'Password should be at least 10 characters. Password should contain at least one character of each: abcdefghijklmnopqrstuvwxyz, 0123456789, :.',
      weak_password: { reasons: ['length', 'characters'] },
    });
    const ok = await t.request('POST', '/signup', { email: uniqueEmail(), password: 'longenough1:' });
    expect(ok.status).toBe(200);
  });

  test('DISABLE_SIGNUP and EXTERNAL_EMAIL_ENABLED=false refuse', async () => {
    const off = await buildTestApp(db, { AUTHSVC_DISABLE_SIGNUP: 'true' });
    const r1 = await off.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' });
    expect(r1.status).toBe(422);
    expect(await r1.json()).toMatchObject({
      error_code: 'signup_disabled',
      msg: 'Signups not allowed for this instance',
    });
    const noEmail = await buildTestApp(db, { GOTRUE_EXTERNAL_EMAIL_ENABLED: 'false' });
    const r2 = await noEmail.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' });
    expect(r2.status).toBe(400);
    expect(await r2.json()).toMatchObject({ error_code: 'email_provider_disabled', msg: 'Email signups are disabled' });
  });
});

describe('anonymous sign-in', () => {
  test('is refused unless EXTERNAL_ANONYMOUS_USERS_ENABLED', async () => {
    const t = await buildTestApp(db);
    const res = await t.request('POST', '/signup', {});
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      error_code: 'anonymous_provider_disabled',
      msg: 'Anonymous sign-ins are disabled',
    });
  });

  test('creates an anonymous user with a session', async () => {
    const t = await buildTestApp(db, { GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    const res = await t.request('POST', '/signup', { data: { theme: 'dark' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.user).toMatchObject({
      is_anonymous: true,
      email: '',
      phone: '',
      app_metadata: {},
      user_metadata: { theme: 'dark' },
      identities: [],
    });
    const claims = await verifyJwt(t.deps.keys, body.access_token);
    expect(claims.is_anonymous).toBe(true);
    expect((claims.amr as { method: string }[])[0]!.method).toBe('anonymous');
    const me = await t.request('GET', '/user', undefined, { authorization: `Bearer ${body.access_token}` });
    expect(me.status).toBe(200);
  });
});
