// Failures `npm run fuzz` found (issue 17), each shrunk to the request that shows it.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { checkInvariants } from '../system/fuzz/invariants.ts';

let db: Database;
let t: TestApp;
let admin: Record<string, string>;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
  admin = {
    authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 })}`,
  };
});
afterAll(async () => {
  // Whatever these tests did, the fuzzer's invariants hold afterwards.
  if (db) expect(await checkInvariants(db)).toEqual([]);
  await db?.close();
});

const userByEmail = async (email: string) =>
  (await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email)))[0];
const emailIdentity = async (userId: string) =>
  (await db.orm.select().from(db.t.identities).where(eq(db.t.identities.userId, userId))).find(
    (i) => i.provider === 'email',
  );

describe('an audience longer than users.aud (varchar 255)', () => {
  const tooLong = { code: 400, error_code: 'validation_failed', msg: 'aud is too long (max 255 characters)' };

  test.each([
    ['email signup', { password: 'a-long-password-1' }],
    ['anonymous signup', undefined],
  ])(
    'X-JWT-AUD of 256 characters on %s → 400 validation_failed, no user (was 500, SQLSTATE 22001)',
    async (_name, extra) => {
      const email = uniqueEmail('aud');
      const body = extra ? { email, ...extra } : {};
      const res = await t.request('POST', '/signup', body, { 'x-jwt-aud': 'a'.repeat(256) });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(tooLong);
      expect(await userByEmail(email)).toBeUndefined();
    },
  );

  test("the same audience in the bearer token's aud claim is refused the same way", async () => {
    const token = await signJwt(t.deps.keys, {
      role: 'anon',
      aud: 'b'.repeat(300),
      exp: Math.floor(Date.now() / 1000) + 600,
    });
    const res = await t.request(
      'POST',
      '/otp',
      { email: uniqueEmail('aud-claim') },
      { authorization: `Bearer ${token}` },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(tooLong);
  });

  test('255 characters are stored as sent', async () => {
    const email = uniqueEmail('aud-255');
    const aud = 'c'.repeat(255);
    const res = await t.request('POST', '/signup', { email, password: 'a-long-password-1' }, { 'x-jwt-aud': aud });
    expect(res.status).toBe(200);
    expect((await userByEmail(email))!.aud).toBe(aud);
  });
});

describe("confirming an address keeps the email identity's data (GoTrue's User.Confirm)", () => {
  // The identity_data was replaced by user_metadata + email_verified: an admin-made user's
  // identity lost sub and email (identities.email, the linking look-up column, became NULL).
  test('a recovery link confirming an admin-created user', async () => {
    const email = uniqueEmail('confirm-keep');
    const created = await t.request('POST', '/admin/users', { email, user_metadata: { plan: 'pro' } }, admin);
    expect(created.status).toBe(200);
    const link = await t.request('POST', '/admin/generate_link', { type: 'recovery', email }, admin);
    const { hashed_token } = (await link.json()) as { hashed_token: string };
    const res = await t.request('POST', '/verify', { type: 'recovery', token_hash: hashed_token });
    expect(res.status).toBe(200);
    const user = (await userByEmail(email))!;
    expect(user.emailConfirmedAt).not.toBeNull();
    const identity = (await emailIdentity(user.id))!;
    expect(identity.identityData).toEqual({ sub: user.id, email, email_verified: true, phone_verified: false });
    expect(identity.email).toBe(email);
    expect(user.rawUserMetaData).toEqual({ plan: 'pro', email_verified: true });
  });

  test("a repeated signup with the account's password under autoconfirm", async () => {
    const email = uniqueEmail('confirm-signup');
    const password = 'a-long-password-1';
    expect((await t.request('POST', '/admin/users', { email, password, user_metadata: {} }, admin)).status).toBe(200);
    const res = await t.request('POST', '/signup', { email, password });
    expect(res.status).toBe(200);
    const user = (await userByEmail(email))!;
    const identity = (await emailIdentity(user.id))!;
    expect(identity.identityData).toMatchObject({ sub: user.id, email, email_verified: true });
    expect(identity.email).toBe(email);
  });
});

describe('a soft-deleted user', () => {
  // A token without session_id (signed with the project's secret) still passed requireAuth, and
  // GET /reauthenticate wrote a one-time token for the deleted user.
  test('is not found for a token without session_id: 403 user_not_found, no one-time token written', async () => {
    const { session } = await signUpConfirmed(t);
    const id = session.user.id as string;
    const del = await t.request('DELETE', `/admin/users/${id}`, { should_soft_delete: true }, admin);
    expect(del.status).toBe(200);
    const token = await signJwt(t.deps.keys, {
      sub: id,
      role: 'authenticated',
      aud: 'authenticated',
      exp: Math.floor(Date.now() / 1000) + 600,
    });
    for (const [method, path] of [
      ['GET', '/reauthenticate'],
      ['GET', '/user'],
      ['PUT', '/user'],
    ] as const) {
      const res = await t.request(method, path, method === 'PUT' ? { data: { a: 1 } } : undefined, {
        authorization: `Bearer ${token}`,
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({
        code: 403,
        error_code: 'user_not_found',
        msg: 'User from sub claim in JWT does not exist',
      });
    }
    const tokens = await db.orm.select().from(db.t.oneTimeTokens).where(eq(db.t.oneTimeTokens.userId, id));
    expect(tokens).toEqual([]);
  });
});

describe('an anonymous user taking an address held in another audience', () => {
  // users.email is unique across audiences, the look-up before the change is per audience: the
  // change applied at once (anonymous user, MAILER_AUTOCONFIRM) hit the index, a 500.
  test('PUT /user {email} → 422 email_exists, the user stays anonymous', async () => {
    const email = uniqueEmail('other-aud');
    const other = await t.request(
      'POST',
      '/signup',
      { email, password: 'a-long-password-1' },
      { 'x-jwt-aud': 'other-audience' },
    );
    expect(other.status).toBe(200);
    const anon = (await (await t.request('POST', '/signup', {})).json()) as {
      access_token: string;
      user: { id: string };
    };
    const res = await t.request('PUT', '/user', { email }, { authorization: `Bearer ${anon.access_token}` });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      code: 422,
      error_code: 'email_exists',
      msg: 'A user with this email address has already been registered',
    });
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, anon.user.id));
    expect(row).toMatchObject({ isAnonymous: true, email: null });
  });
});

describe('POST /factors with a factor_type named after an Object.prototype member', () => {
  // ENROLL_DISABLED["__proto__"] is Object.prototype: spreading it threw, a 500.
  test.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'factor_type %s → 400 validation_failed',
    async (factorType) => {
      const { session } = await signUpConfirmed(t);
      const res = await t.request(
        'POST',
        '/factors',
        { factor_type: factorType },
        { authorization: `Bearer ${session.access_token}` },
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        code: 400,
        error_code: 'validation_failed',
        msg: 'factor_type needs to be totp, phone, or webauthn',
      });
    },
  );
});

describe('a soft-deleted user updated by an admin', () => {
  // PUT /admin/users gave the deleted row a new email and password, and the password grant then
  // opened a session for it (the fuzzer's "no session of a deleted user").
  test('PUT /admin/users/{id} → 404 user_not_found; the old row cannot sign in', async () => {
    const email = uniqueEmail('soft-put');
    const made = (await (
      await t.request('POST', '/admin/users', { email, password: 'a-long-password-1', email_confirm: true }, admin)
    ).json()) as { id: string };
    expect((await t.request('DELETE', `/admin/users/${made.id}`, { should_soft_delete: true }, admin)).status).toBe(
      200,
    );
    const fresh = uniqueEmail('soft-put-new');
    const res = await t.request(
      'PUT',
      `/admin/users/${made.id}`,
      { email: fresh, password: 'a-long-password-1', email_confirm: true },
      admin,
    );
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 404, error_code: 'user_not_found', msg: 'User not found' });
    const signIn = await t.request('POST', '/token?grant_type=password', {
      email: fresh,
      password: 'a-long-password-1',
    });
    expect(signIn.status).toBe(400);
    expect(await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, made.id))).toEqual([]);
  });
});
