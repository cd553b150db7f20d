// API_MAX_REQUEST_DURATION (GoTrue's timeoutMiddleware): 504 request_timeout at the limit, and
// what the timed-out request was doing never commits.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';
import type { Database } from '../../src/db/database.ts';
import type { PasswordHasher } from '../../src/crypto/password.ts';
import { buildTestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The real hasher, made slow: the request outlives its limit while hashing, before its transaction. */
function slowHasher(ms: number): PasswordHasher {
  const real = createNodeHasher();
  return {
    verify: (p, h) => real.verify(p, h),
    hash: async (p) => {
      await sleep(ms);
      return real.hash(p);
    },
  };
}

test('a request past the limit gets 504 request_timeout (with CORS headers), and its signup is never committed', async () => {
  const t = await buildTestApp(
    db,
    { AUTHSVC_API_MAX_REQUEST_DURATION: '1', AUTHSVC_MAILER_AUTOCONFIRM: 'true' },
    { hasher: slowHasher(1_500) },
  );
  const email = uniqueEmail('late');
  const res = await t.request('POST', '/signup', { email, password: 'secret-pw-1' }, { origin: 'http://app.example' });
  expect(res.status).toBe(504);
  expect(await res.json()).toEqual({
    code: 504,
    error_code: 'request_timeout',
    msg: 'Processing this request timed out, please retry after a moment.',
    error_id: expect.any(String),
  });
  expect(res.headers.get('x-sb-error-code')).toBe('request_timeout');
  expect(res.headers.get('access-control-allow-origin')).toBe('http://app.example');
  // The handler finishes its hashing after the answer; its transaction must roll back.
  await sleep(1_500);
  expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email))).toEqual([]);
});

test('requests inside the limit are unaffected; 0 turns the limit off', async () => {
  const t = await buildTestApp(
    db,
    { AUTHSVC_API_MAX_REQUEST_DURATION: '2', AUTHSVC_MAILER_AUTOCONFIRM: 'true' },
    { hasher: slowHasher(200) },
  );
  expect((await t.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })).status).toBe(200);
  const off = await buildTestApp(
    db,
    { AUTHSVC_API_MAX_REQUEST_DURATION: '0', AUTHSVC_MAILER_AUTOCONFIRM: 'true' },
    { hasher: slowHasher(1_200) },
  );
  expect((await off.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })).status).toBe(200);
});

test('a body that stalls mid-upload is cancelled at the limit: the request stream is closed, not left pending (issue 11)', async () => {
  const t = await buildTestApp(db, { AUTHSVC_API_MAX_REQUEST_DURATION: '1' });
  const started = Date.now();
  let cancelledAfter: number | undefined;
  // A chunked body (no Content-Length) that starts and then never goes on.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"ema'));
    },
    cancel() {
      cancelledAfter = Date.now() - started;
    },
  });
  const init = { method: 'POST', body, duplex: 'half', headers: { 'content-type': 'application/json' } };
  const res = await t.app.request('/signup', init as RequestInit);
  expect(res.status).toBe(504);
  expect(await res.json()).toMatchObject({ error_code: 'request_timeout' });
  // The server itself ends its read of the stream at the deadline (the client never will).
  for (let i = 0; i < 20 && cancelledAfter === undefined; i++) await sleep(50);
  expect(cancelledAfter).toBeDefined();
  expect(cancelledAfter!).toBeGreaterThanOrEqual(900);
  expect(cancelledAfter!).toBeLessThan(2_000);
});
