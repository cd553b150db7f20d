// Password checks of the security review: the current password on PUT /user, Have I Been Pwned,
// and sign-in timing that does not tell which accounts exist.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';
import type { Database } from '../../src/db/database.ts';
import type { PasswordHasher } from '../../src/crypto/password.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail } from '../helpers/app.ts';
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

describe('SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD', () => {
  const env = { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD: 'true' };
  const message = 'Current password required when setting new password.';

  test('PUT /user needs current_password: missing 400 current_password_required, wrong 400 current_password_invalid', async () => {
    const t = await buildTestApp(db, env);
    const u = await signUpConfirmed(t);
    const missing = await t.request('PUT', '/user', { password: 'new-password-1' }, bearer(u.session));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ code: 400, error_code: 'current_password_required', msg: message });
    const wrong = await t.request(
      'PUT',
      '/user',
      { password: 'new-password-1', current_password: 'not-it' },
      bearer(u.session),
    );
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({ code: 400, error_code: 'current_password_invalid', msg: message });
    expect(
      (await t.request('POST', '/token?grant_type=password', { email: u.email, password: u.password })).status,
    ).toBe(200);
    const right = await t.request(
      'PUT',
      '/user',
      { password: 'new-password-1', current_password: u.password },
      bearer(u.session),
    );
    expect(right.status).toBe(200);
    expect(
      (await t.request('POST', '/token?grant_type=password', { email: u.email, password: 'new-password-1' })).status,
    ).toBe(200);
  });

  test('a session opened by a recovery link may set a new password without it (the old one is forgotten)', async () => {
    const t = await buildTestApp(db, env);
    const u = await signUpConfirmed(t);
    await t.request('POST', '/recover', { email: u.email });
    const v = await t.request('POST', '/verify', { type: 'recovery', token_hash: t.mails.at(-1)!.tokenHash });
    const recovery = (await v.json()) as Json;
    expect((await t.request('PUT', '/user', { password: 'recovered-password-1' }, bearer(recovery))).status).toBe(200);
  });

  test('off by default', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(t);
    expect((await t.request('PUT', '/user', { password: 'new-password-1' }, bearer(u.session))).status).toBe(200);
  });
});

// A local stand-in for api.pwnedpasswords.com: answers /range/<5 hex> with suffix:count lines.
let hibp: Server;
let hibpUrl: string;
const hibpRequests: { url: string; userAgent?: string; padding?: string }[] = [];
const PWNED = 'correct-horse-battery';
let hibpDown = false;
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex').toUpperCase();

beforeAll(async () => {
  hibp = createServer((req: IncomingMessage, res) => {
    hibpRequests.push({
      url: req.url ?? '',
      userAgent: req.headers['user-agent'],
      padding: req.headers['add-padding'] as string | undefined,
    });
    if (hibpDown) {
      res.writeHead(503).end();
      return;
    }
    const prefix = (req.url ?? '').split('/').at(-1)!;
    const lines = ['0018A45C4D1DEF81644B54AB7F969B88D65:1', '00D4F6E8FA6EECAD2A3AA415EEC418D38EC:0'];
    const pwned = sha1(PWNED);
    if (pwned.startsWith(prefix)) lines.push(`${pwned.slice(5)}:42`);
    // A padding line (count 0) for the other password of these tests must not count.
    const padded = sha1('padded-only-password');
    if (padded.startsWith(prefix)) lines.push(`${padded.slice(5)}:0`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
  });
  await new Promise<void>((r) => hibp.listen(0, '127.0.0.1', r));
  hibpUrl = `http://127.0.0.1:${(hibp.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => hibp.close(r));
});

describe('PASSWORD_HIBP_ENABLED', () => {
  const env = () => ({ AUTHSVC_PASSWORD_HIBP_ENABLED: 'true', AUTHSVC_PASSWORD_HIBP_API_URL: hibpUrl });

  test('a breached password is refused at signup with reason pwned; only the first 5 hex digits of its SHA-1 leave the server', async () => {
    hibpRequests.length = 0;
    const t = await buildTestApp(db, env());
    const email = uniqueEmail('pwned');
    const res = await t.request('POST', '/signup', { email, password: PWNED });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      code: 422,
      error_code: 'weak_password',
      msg: 'Password is known to be weak and easy to guess, please choose a different one.',
      weak_password: { reasons: ['pwned'] },
    });
    expect(hibpRequests).toEqual([
      { url: `/range/${sha1(PWNED).slice(0, 5)}`, userAgent: 'https://github.com/supabase/gotrue', padding: 'true' },
    ]);
    expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email))).toEqual([]);
    // Padding lines (count 0) are not breaches.
    expect((await t.request('POST', '/signup', { email, password: 'padded-only-password' })).status).toBe(200);
  });

  test('the policy reasons come first, as GoTrue lists them', async () => {
    const t = await buildTestApp(db, { ...env(), AUTHSVC_PASSWORD_MIN_LENGTH: '30' });
    const res = await t.request('POST', '/signup', { email: uniqueEmail(), password: PWNED });
    expect(await res.json()).toMatchObject({
      msg: 'Password should be at least 30 characters. Password is known to be weak and easy to guess, please choose a different one.',
      weak_password: { reasons: ['length', 'pwned'] },
    });
  });

  test('PUT /user refuses it; the password grant signs in and reports it in weak_password', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto, uniqueEmail(), PWNED);
    const t = await buildTestApp(db, { ...env(), AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const put = await t.request('PUT', '/user', { password: `${PWNED}` }, bearer(u.session));
    expect(put.status).toBe(422);
    expect(await put.json()).toMatchObject({ error_code: 'weak_password', weak_password: { reasons: ['pwned'] } });
    const login = await t.request('POST', '/token?grant_type=password', { email: u.email, password: PWNED });
    expect(login.status).toBe(200);
    expect(((await login.json()) as Json).weak_password).toEqual({
      message: 'Password is known to be weak and easy to guess, please choose a different one.',
      reasons: ['pwned'],
    });
  });

  test('when the service cannot answer: allowed with a warning, or 500 under PASSWORD_HIBP_FAIL_CLOSED', async () => {
    hibpDown = true;
    try {
      const open = await buildTestApp(db, { ...env(), AUTHSVC_LOG_LEVEL: 'warn' });
      expect((await open.request('POST', '/signup', { email: uniqueEmail(), password: PWNED })).status).toBe(200);
      expect(open.logs.some((l) => l.includes('pwned passwords are being allowed'))).toBe(true);
      expect(open.logs.join('\n')).not.toContain(PWNED);
      const closed = await buildTestApp(db, { ...env(), AUTHSVC_PASSWORD_HIBP_FAIL_CLOSED: 'true' });
      const email = uniqueEmail();
      const res = await closed.request('POST', '/signup', { email, password: 'any-other-password-1' });
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({
        error_code: 'unexpected_failure',
        msg: 'Unable to perform password strength check with HaveIBeenPwned.org.',
      });
      expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email))).toEqual([]);
    } finally {
      hibpDown = false;
    }
  });
});

describe('the password grant does the same work whether or not the account exists', () => {
  // Counts verifications around the real hasher: the timing that matters is one bcrypt per attempt.
  function countingHasher(): PasswordHasher & { verified: string[] } {
    const real = createNodeHasher();
    const verified: string[] = [];
    return {
      verified,
      hash: (p) => real.hash(p),
      verify: (p, h) => {
        verified.push(h);
        return real.verify(p, h);
      },
    };
  }

  test('unknown user, empty password, invited user without a password, wrong password, banned user: one bcrypt verification each', async () => {
    const hasher = countingHasher();
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }, { hasher });
    const u = await signUpConfirmed(t);
    const { signJwt } = await import('../../src/crypto/jwt.ts');
    const admin = await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 });
    const invited = uniqueEmail('invited');
    expect((await t.request('POST', '/invite', { email: invited }, { authorization: `Bearer ${admin}` })).status).toBe(
      200,
    );
    const cases = [
      { email: uniqueEmail('nobody'), password: 'some-password' },
      { email: u.email, password: '' },
      { email: u.email },
      { email: invited, password: 'some-password' },
      { email: u.email, password: 'wrong-password' },
    ];
    for (const body of cases) {
      hasher.verified.length = 0;
      const res = await t.request('POST', '/token?grant_type=password', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ error_code: 'invalid_credentials' });
      expect(hasher.verified, JSON.stringify(body)).toHaveLength(1);
      expect(hasher.verified[0]).toMatch(/^\$2[aby]\$10\$/);
    }
    // A banned user is refused before the password counts (GoTrue), with the same one verification.
    const banned = await signUpConfirmed(t);
    await db.orm
      .update(db.t.users)
      .set({ bannedUntil: new Date(Date.now() + 3_600_000) })
      .where(eq(db.t.users.email, banned.email));
    for (const password of [banned.password, 'wrong-password']) {
      hasher.verified.length = 0;
      const res = await t.request('POST', '/token?grant_type=password', { email: banned.email, password });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error_code: 'user_banned' });
      expect(hasher.verified, password).toHaveLength(1);
      expect(hasher.verified[0]).toMatch(/^\$2[aby]\$10\$/);
    }
  });
});
