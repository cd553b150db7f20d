// POST /logout (routes/logout.ts): the scopes GoTrue knows, and what each ends.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
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

describe('POST /logout', () => {
  async function threeSessions() {
    const { email, password, session } = await signUpConfirmed(t);
    return [session, await signIn(t, email, password), await signIn(t, email, password)];
  }
  const alive = async (s: Record<string, any>) =>
    (await t.request('GET', '/user', undefined, auth(s.access_token))).status === 200;

  test('default (global) ends every session of the user → 204', async () => {
    const [a, b, c] = await threeSessions();
    const res = await t.request('POST', '/logout', undefined, auth(a!.access_token));
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect([await alive(a!), await alive(b!), await alive(c!)]).toEqual([false, false, false]);
    const rows = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, a!.user.id));
    expect(rows).toHaveLength(0);
  });

  test('scope=local ends only this session; scope=others all but this one', async () => {
    const [a, b, c] = await threeSessions();
    expect((await t.request('POST', '/logout?scope=local', undefined, auth(a!.access_token))).status).toBe(204);
    expect([await alive(a!), await alive(b!), await alive(c!)]).toEqual([false, true, true]);
    expect((await t.request('POST', '/logout?scope=others', undefined, auth(b!.access_token))).status).toBe(204);
    expect([await alive(b!), await alive(c!)]).toEqual([true, false]);
  });

  test('an unknown scope → 400; no token → 401', async () => {
    const [a] = await threeSessions();
    const bad = await t.request('POST', '/logout?scope=everything', undefined, auth(a!.access_token));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Unsupported logout scope "everything"',
    });
    const none = await t.request('POST', '/logout');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({
      error_code: 'no_authorization',
      msg: 'This endpoint requires a valid Bearer token',
    });
  });
});
