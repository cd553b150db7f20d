// NUL characters, unpaired surrogates and deep nesting are refused at the edge with GoTrue's
// error shapes, before any flow or statement sees them (issue 11, item 8). Postgres text and
// jsonb cannot store U+0000, and on main each of these was a 500.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import { MAX_JSON_DEPTH } from '../../src/core/limits.ts';
import { buildTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
let t: TestApp;
let admin: Record<string, string>;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true', AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  admin = {
    authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 })}`,
  };
});
afterAll(async () => {
  await db?.close();
});

const BODY_MSG = 'Strings in the request body must not contain NUL characters or unpaired UTF-16 surrogates';
const KEY_MSG = 'Keys in the request body must not contain NUL characters or unpaired UTF-16 surrogates';
const QUERY_MSG = 'Query parameters must not contain NUL characters or unpaired UTF-16 surrogates';
const refused = (msg: string) => ({ code: 400, error_code: 'validation_failed', msg });
const userCount = async () => (await db.orm.select({ id: db.t.users.id }).from(db.t.users)).length;

describe('bodies', () => {
  const cases: Array<[string, string, string, unknown, string, boolean?]> = [
    [
      'signup data with NUL',
      'POST',
      '/signup',
      { email: uniqueEmail(), password: 'a-long-password-1', data: { name: 'a\u0000b' } },
      BODY_MSG,
    ],
    [
      'signup data with an unpaired high surrogate',
      'POST',
      '/signup',
      { email: uniqueEmail(), password: 'a-long-password-1', data: { name: 'x\ud800' } },
      BODY_MSG,
    ],
    [
      'signup data key with NUL',
      'POST',
      '/signup',
      { email: uniqueEmail(), password: 'a-long-password-1', data: { 'k\u0000': 1 } },
      KEY_MSG,
    ],
    [
      'anonymous signup data with an unpaired low surrogate',
      'POST',
      '/signup',
      { data: { deep: [{ v: '\udc00' }] } },
      BODY_MSG,
    ],
    ['verify token_hash', 'POST', '/verify', { type: 'signup', token_hash: 'a\u0000b' }, BODY_MSG],
    ['pkce grant', 'POST', '/token?grant_type=pkce', { auth_code: 'a\u0000', code_verifier: 'v'.repeat(43) }, BODY_MSG],
    ['password grant', 'POST', '/token?grant_type=password', { email: 'a\u0000@example.com', password: 'x' }, BODY_MSG],
    ['otp email', 'POST', '/otp', { email: 'b\u0000@example.com' }, BODY_MSG],
    ['invite data', 'POST', '/invite', { email: uniqueEmail(), data: { n: '\u0000' } }, BODY_MSG, true],
    [
      'admin user_metadata',
      'POST',
      '/admin/users',
      { email: uniqueEmail(), user_metadata: { a: 'nul\u0000' } },
      BODY_MSG,
      true,
    ],
    [
      'admin app_metadata key',
      'POST',
      '/admin/users',
      { email: uniqueEmail(), app_metadata: { '\ud800': 1 } },
      KEY_MSG,
      true,
    ],
  ];
  test.each(cases)('%s → 400 validation_failed, nothing written', async (_name, method, path, body, msg, asAdmin) => {
    const before = await userCount();
    const res = await t.request(method, path, body, asAdmin ? admin : {});
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(refused(msg));
    expect(await userCount()).toBe(before);
  });

  test('the same request under /auth/v1 is refused the same way', async () => {
    const res = await t.request('POST', '/auth/v1/verify', { type: 'signup', token_hash: '\u0000' });
    expect(await res.json()).toEqual(refused(BODY_MSG));
  });

  test('paired surrogates (emoji) and other unicode are stored as sent', async () => {
    const email = uniqueEmail();
    const data = { name: 'Zoë 😀 名前', ключ: ['\u00a0', '\u2028'] };
    const res = await t.request('POST', '/signup', { email, password: 'a-long-password-1', data });
    expect(res.status).toBe(200);
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
    expect(row!.rawUserMetaData).toMatchObject(data);
  });
});

describe('nesting', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const signupWith = (dataJson: string) =>
    t.request(
      'POST',
      '/signup',
      `{"email":"${uniqueEmail()}","password":"a-long-password-1","data":{"n":${dataJson}}}`,
    );

  test('a body nested 200,000 deep is 400 bad_json "exceeded max depth", not a stack overflow', async () => {
    const res = await signupWith(nested(200_000));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 400,
      error_code: 'bad_json',
      msg: 'Could not parse request body as JSON: exceeded max depth',
    });
    // The server still answers.
    expect((await t.request('GET', '/health')).status).toBe(200);
  });

  test(`nesting up to ${MAX_JSON_DEPTH} levels is stored; one more is refused`, async () => {
    // The body object is level 0, data 1, data.n 2: the innermost array sits at MAX_JSON_DEPTH - 1.
    const ok = await signupWith(nested(MAX_JSON_DEPTH - 2));
    expect(ok.status).toBe(200);
    const user = (await ok.json()) as { user: { user_metadata: { n: unknown } } };
    let v: unknown = user.user.user_metadata.n;
    let depth = 0;
    while (Array.isArray(v) && v.length > 0) {
      v = v[0];
      depth++;
    }
    expect(depth).toBe(MAX_JSON_DEPTH - 3);
    const tooDeep = await signupWith(nested(MAX_JSON_DEPTH - 1));
    expect(tooDeep.status).toBe(400);
    expect(((await tooDeep.json()) as { error_code: string }).error_code).toBe('bad_json');
  });
});

describe('query strings', () => {
  test.each([
    ['GET /verify?token=a%00b', 'GET', '/verify?type=signup&token=a%00b&redirect_to=http://localhost:3000'],
    ['admin filter', 'GET', '/admin/users?filter=a%00'],
    ['admin audit query', 'GET', '/admin/audit?query=%00x'],
    ['a NUL in a parameter name', 'GET', '/admin/users?a%00=1'],
    ['grant_type', 'POST', '/token?grant_type=password%00'],
  ])('%s → 400 validation_failed', async (_name, method, path) => {
    const res = await t.request(
      method,
      path,
      method === 'POST' ? { email: 'a@example.com', password: 'x' } : undefined,
      admin,
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(refused(QUERY_MSG));
  });

  test('percent-encoded bytes that are not UTF-8 (an encoded surrogate) are no 500', async () => {
    const res = await t.request('GET', '/admin/users?filter=%ED%A0%80', undefined, admin);
    expect(res.status).toBeLessThan(500);
    const verify = await t.request('GET', '/verify?type=signup&token=%ED%A0%80');
    expect(verify.status).toBeLessThan(500);
  });
});

describe('L1 (security review 2026-12-01): path parameters', () => {
  const PATH_MSG = 'Path parameters must not contain NUL characters or unpaired UTF-16 surrogates';
  test.each([
    ['GET /oauth/authorizations/%00', 'GET', '/oauth/authorizations/%00'],
    ['POST /oauth/authorizations/%00/consent', 'POST', '/oauth/authorizations/%00/consent'],
    ['GET /admin/custom-providers/custom:%00', 'GET', '/admin/custom-providers/custom:%00'],
    ['GET /admin/users/{id} with NUL', 'GET', '/admin/users/a%00b'],
    ['PUT /admin/sso/providers/{id} with NUL', 'PUT', '/admin/sso/providers/%00'],
    ['DELETE /factors/{id} with NUL', 'DELETE', '/factors/x%00'],
    ['PATCH /passkeys/{id} with an encoded surrogate', 'PATCH', '/passkeys/%ED%A0%80'],
    ['under /auth/v1', 'GET', '/auth/v1/admin/users/%00'],
  ])('%s → 400 validation_failed, one check for every route', async (_name, method, path) => {
    const res = await t.request(method, path, method === 'GET' ? undefined : {}, admin);
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 400, body: refused(PATH_MSG) });
  });

  test('other percent-encoded paths route as before', async () => {
    expect(
      (await t.request('GET', `/admin/users/${encodeURIComponent(crypto.randomUUID())}`, undefined, admin)).status,
    ).toBe(404);
    expect((await t.request('GET', '/admin/users/caf%C3%A9', undefined, admin)).status).toBe(404);
    expect((await t.request('GET', '/nope%ZZ')).status).toBe(404);
  });
});
