// A Postgres that refuses connections (nothing listens on the port): requests that need it and
// GET /health/ready answer 503 database_unavailable in GoTrue's error shapes, not 500
// unexpected_failure. No Postgres server needed; test/system/faults/ has the outage under load.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import type { Database } from '../../src/db/database.ts';
import { type TestApp, buildTestApp } from '../helpers/app.ts';
import { freePort } from '../helpers/free-port.ts';

let db: Database;
let t: TestApp;
beforeAll(async () => {
  db = openPostgres({
    url: `postgres://postgres@127.0.0.1:${await freePort()}/none`,
    namespace: 'auth',
    maxPoolSize: 2,
    connectTimeoutMs: 1_000,
    queryTimeoutMs: 1_000,
  });
  t = await buildTestApp(db);
});
afterAll(async () => {
  await db.close();
});

const MSG = 'Database error: the database cannot be reached, please retry after a moment.';

test('GET /health and /health/live: 200 without asking the database (a liveness probe must not restart the server)', async () => {
  for (const path of ['/health', '/health/live', '/auth/v1/health/live']) {
    const res = await t.request('GET', path);
    expect(res.status, path).toBe(200);
  }
  expect(await (await t.request('GET', '/health')).json()).toMatchObject({ name: 'GoTrue' });
  expect(await (await t.request('GET', '/health/live')).json()).toEqual({ status: 'live' });
});

test('GET /health/ready: 503 database_unavailable', async () => {
  const res = await t.request('GET', '/health/ready');
  expect(res.status).toBe(503);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-sb-error-code')).toBe('database_unavailable');
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toEqual({ code: 503, error_code: 'database_unavailable', msg: MSG, error_id: expect.any(String) });
});

test('sign-in, signup and /otp: 503 database_unavailable in the legacy and the 2024 shape', async () => {
  const signIn = await t.request('POST', '/token?grant_type=password', {
    email: 'a@example.com',
    password: 'correct-horse-1',
  });
  expect(signIn.status).toBe(503);
  expect(await signIn.json()).toMatchObject({ code: 503, error_code: 'database_unavailable', msg: MSG });

  const signup = await t.request(
    'POST',
    '/signup',
    { email: 'b@example.com', password: 'correct-horse-1' },
    { 'X-Supabase-Api-Version': '2024-01-01' },
  );
  expect(signup.status).toBe(503);
  expect(await signup.json()).toEqual({ code: 'database_unavailable', message: MSG });

  const otp = await t.request('POST', '/otp', { email: 'c@example.com' });
  expect({ status: otp.status, code: otp.headers.get('x-sb-error-code') }).toEqual({
    status: 503,
    code: 'database_unavailable',
  });
  // Logged as a warning, not as an unexpected error.
  expect(t.logs.some((l) => l.includes('"unexpected error"'))).toBe(false);
});
