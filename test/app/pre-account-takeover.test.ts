// Pre-account takeover through a link other than the signup's own confirmation (issue 11): an
// attacker signs the victim's address up with a password of their own; the victim confirms the
// address by recovery, magic link or email code. The attacker's password must not be in force
// afterwards, nor any session opened before.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { createSession } from '../../src/accounts/session.ts';
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

const ATTACKER_PASSWORD = 'attacker-password-1';

/** The attacker's unconfirmed signup of `email`, and a session they hold on it (however obtained). */
async function attackerSignup(email: string): Promise<{ refreshToken: string }> {
  const plain = await buildTestApp(db);
  expect((await plain.request('POST', '/signup', { email, password: ATTACKER_PASSWORD })).status).toBe(200);
  const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
  expect(row!.emailConfirmedAt).toBeNull();
  const planted = await createSession(plain.deps, db, row!, 'password', {});
  return { refreshToken: planted.refreshToken };
}

async function expectTakeoverFails(
  t: TestApp,
  email: string,
  attacker: { refreshToken: string },
  victim: Json,
): Promise<void> {
  const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
  expect(row!.emailConfirmedAt).not.toBeNull();
  const login = await t.request('POST', '/token?grant_type=password', { email, password: ATTACKER_PASSWORD });
  expect(login.status).toBe(400);
  expect(await login.json()).toMatchObject({ error_code: 'invalid_credentials' });
  const refresh = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: attacker.refreshToken });
  expect(refresh.status).toBe(400);
  // The owner sets a password of their own in the session the link opened, and signs in with it.
  const set = await t.request(
    'PUT',
    '/user',
    { password: 'victim-password-1' },
    { authorization: `Bearer ${victim.access_token}` },
  );
  expect(set.status).toBe(200);
  expect((await t.request('POST', '/token?grant_type=password', { email, password: 'victim-password-1' })).status).toBe(
    200,
  );
}

describe('a link other than the signup confirmation confirms an address: the earlier password is cleared', () => {
  test("POST /recover: following the recovery link leaves the attacker's password refused and their session ended", async () => {
    const email = uniqueEmail('victim');
    const attacker = await attackerSignup(email);
    const t = await buildTestApp(db);
    expect((await t.request('POST', '/recover', { email })).status).toBe(200);
    const mail = t.mails.at(-1)!;
    expect(mail).toMatchObject({ kind: 'recovery', to: email });
    const v = await t.request('POST', '/verify', { type: 'recovery', token_hash: mail.tokenHash });
    expect(v.status).toBe(200);
    await expectTakeoverFails(t, email, attacker, (await v.json()) as Json);
  });

  test('MAILER_AUTOCONFIRM: /magiclink (link) and /otp (code typed in) for an unconfirmed user with a password', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    for (const path of ['/magiclink', '/otp']) {
      const email = uniqueEmail('victim');
      const attacker = await attackerSignup(email);
      expect((await t.request('POST', path, { email })).status, path).toBe(200);
      const mail = t.mails.at(-1)!;
      expect(mail).toMatchObject({ kind: 'magic_link', to: email });
      const v =
        path === '/magiclink'
          ? await t.request('POST', '/verify', { type: 'magiclink', token_hash: mail.tokenHash })
          : await t.request('POST', '/verify', { type: 'email', email, token: mail.token });
      expect(v.status, path).toBe(200);
      await expectTakeoverFails(t, email, attacker, (await v.json()) as Json);
    }
  });

  test("a confirmed user's recovery or magic link leaves the password as it is", async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const email = uniqueEmail('owner');
    expect((await t.request('POST', '/signup', { email, password: 'owner-password-1' })).status).toBe(200);
    expect((await t.request('POST', '/magiclink', { email })).status).toBe(200);
    const v = await t.request('POST', '/verify', { type: 'magiclink', token_hash: t.mails.at(-1)!.tokenHash });
    expect(v.status).toBe(200);
    expect(
      (await t.request('POST', '/token?grant_type=password', { email, password: 'owner-password-1' })).status,
    ).toBe(200);
  });
});
