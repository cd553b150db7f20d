import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { tokenHash } from '../../src/crypto/otp.ts';
import { bearer, buildTestApp, signInWithPassword, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
});
afterAll(async () => {
  await db?.close();
});

const auth = bearer;
const signIn = signInWithPassword;

describe('GET /user', () => {
  test('returns the user with identities', async () => {
    const { email, session } = await signUpConfirmed(t);
    const res = await t.request('GET', '/user', undefined, auth(session.access_token));
    expect(res.status).toBe(200);
    const user = (await res.json()) as Record<string, any>;
    expect(user).toMatchObject({ id: session.user.id, email, is_anonymous: false });
    expect(user.identities).toHaveLength(1);
    expect(user.identities[0]).toMatchObject({
      provider: 'email',
      id: session.user.id,
      user_id: session.user.id,
      email,
    });
    expect(Object.keys(user)).not.toContain('encrypted_password');
  });

  test('X-JWT-AUD that differs from the token audience is refused', async () => {
    const { session } = await signUpConfirmed(t);
    const res = await t.request('GET', '/user', undefined, { ...auth(session.access_token), 'x-jwt-aud': 'other' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: "Token audience doesn't match request audience",
    });
  });
});

describe('PUT /user', () => {
  test('data merges into user_metadata; a null value deletes the key', async () => {
    const { session } = await signUpConfirmed(t);
    const r1 = await t.request('PUT', '/user', { data: { a: 1, b: 2 } }, auth(session.access_token));
    expect(r1.status).toBe(200);
    const r2 = await t.request('PUT', '/user', { data: { b: null, c: 'x' } }, auth(session.access_token));
    const user = (await r2.json()) as Record<string, any>;
    expect(user.user_metadata).toMatchObject({ a: 1, c: 'x' });
    expect(user.user_metadata).not.toHaveProperty('b');
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, session.user.id));
    expect(row!.rawUserMetaData).toMatchObject({ a: 1, c: 'x' });
    expect(row!.rawUserMetaData).not.toHaveProperty('b');
  });

  test('app_metadata needs the admin group', async () => {
    const { session } = await signUpConfirmed(t);
    const res = await t.request('PUT', '/user', { app_metadata: { plan: 'pro' } }, auth(session.access_token));
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      error_code: 'not_admin',
      msg: 'Updating app_metadata requires admin privileges',
    });
  });

  test('password change: policy, same_password, new password works, other sessions end', async () => {
    const { email, password, session } = await signUpConfirmed(t);
    const other = await signIn(t, email, password);
    const weak = await t.request('PUT', '/user', { password: '123' }, auth(session.access_token));
    expect(weak.status).toBe(422);
    expect(await weak.json()).toMatchObject({ error_code: 'weak_password' });
    const same = await t.request('PUT', '/user', { password }, auth(session.access_token));
    expect(same.status).toBe(422);
    expect(await same.json()).toMatchObject({ error_code: 'same_password' });
    const ok = await t.request('PUT', '/user', { password: 'a-brand-new-password' }, auth(session.access_token));
    expect(ok.status).toBe(200);
    expect((await t.request('POST', '/token?grant_type=password', { email, password })).status).toBe(400);
    await signIn(t, email, 'a-brand-new-password');
    // The session that changed the password lives on; the other one is gone.
    expect((await t.request('GET', '/user', undefined, auth(session.access_token))).status).toBe(200);
    const gone = await t.request('GET', '/user', undefined, auth(other.access_token));
    expect(gone.status).toBe(403);
    expect(await gone.json()).toMatchObject({ error_code: 'session_not_found' });
    const refresh = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: other.refresh_token });
    expect(await refresh.json()).toMatchObject({ error_code: 'refresh_token_not_found' });
  });

  test('SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: a nonce is always needed', async () => {
    const strict = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
    });
    const { email, session } = await signUpConfirmed(strict);
    const missing = await strict.request('PUT', '/user', { password: 'new-password-1' }, auth(session.access_token));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error_code: 'reauthentication_needed' });
    // The nonce is issued by GET /reauthenticate (email flows); here it is planted directly.
    await db.orm
      .update(db.t.users)
      .set({ reauthenticationToken: tokenHash(email, '123456'), reauthenticationSentAt: new Date() })
      .where(eq(db.t.users.id, session.user.id));
    const wrong = await strict.request(
      'PUT',
      '/user',
      { password: 'new-password-1', nonce: '654321' },
      auth(session.access_token),
    );
    expect(wrong.status).toBe(422);
    expect(await wrong.json()).toMatchObject({
      error_code: 'reauthentication_not_valid',
      msg: 'Nonce has expired or is invalid',
    });
    const ok = await strict.request(
      'PUT',
      '/user',
      { password: 'new-password-1', nonce: '123456' },
      auth(session.access_token),
    );
    expect(ok.status).toBe(200);
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, session.user.id));
    expect(row!.reauthenticationToken).toBe('');
  });

  test('an anonymous user cannot set a password without an email or phone', async () => {
    const anon = await buildTestApp(db, { GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    const s = (await (await anon.request('POST', '/signup', {})).json()) as Record<string, any>;
    const res = await anon.request('PUT', '/user', { password: 'some-password' }, auth(s.access_token));
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error_code: 'validation_failed' });
  });
});
