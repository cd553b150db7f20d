// The short fuzz run of `npm test` (issue 17): ~500 generated requests with a fixed seed over
// every route of the table, both prefixes, against the real app; `npm run fuzz` is the long one.
// A failure is shrunk by fast-check: keep it in app/fuzz-regressions.test.ts once fixed.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDb } from '../helpers/db.ts';
import { checkInvariants } from './fuzz/invariants.ts';
import { materialize } from './fuzz/requests.ts';
import { checkAnswer, newStats, runFuzz, sendOne } from './fuzz/runner.ts';
import { type FuzzTarget, setupFuzzTarget } from './fuzz/setup.ts';

const SEED = 1717;

let db: Database;
let target: FuzzTarget;
let confirmDb: Database;
beforeAll(async () => {
  db = await openTestDb();
  target = await setupFuzzTarget(db);
  confirmDb = await openTestDb();
});
afterAll(async () => {
  await db?.close();
  await confirmDb?.close();
});

async function fuzzed(on: FuzzTarget, runs: number, seed: number): Promise<void> {
  const stats = await runFuzz(on, { seed, numRuns: runs });
  expect(stats.failures).toEqual([]);
  expect(stats.serverErrors).toBe(0);
  expect(stats.requests).toBe(runs);
  // Both prefixes of most routes, and requests that reach the flows (not only refusals).
  expect(stats.routes.size).toBeGreaterThan(runs / 6);
  expect(stats.validOk).toBeGreaterThan(runs / 50);
  expect(stats.byClass.get('2xx') ?? 0).toBeGreaterThan(runs / 10);
  expect(await checkInvariants(on.db)).toEqual([]);
}

// ~500 requests in all: 300 under MAILER_AUTOCONFIRM, 200 with addresses to confirm.
describe('fuzzing every endpoint', () => {
  test("300 seeded requests, autoconfirm: no 5xx, every error in GoTrue's JSON shape, then the database invariants hold", async () => {
    await fuzzed(target, 300, SEED);
  }, 120_000);

  test('200 seeded requests, addresses to confirm and the reauthentication nonce: the same', async () => {
    await fuzzed(await setupFuzzTarget(confirmDb, 'confirm'), 200, SEED + 1);
  }, 120_000);

  // The checks themselves must be able to fail.
  test('the answer check refuses a 5xx, a non-JSON error and an error in the wrong shape', () => {
    const req = new Request('http://localhost/x');
    const json = new Headers({ 'content-type': 'application/json', 'x-sb-error-code': 'bad_json' });
    expect(checkAnswer(req, 500, json, '{}')).toMatch(/^status 500/);
    expect(checkAnswer(req, 400, new Headers({ 'content-type': 'text/plain' }), 'oops')).toMatch(/JSON content type/);
    expect(checkAnswer(req, 400, json, '{"code":422,"error_code":"bad_json","msg":"x"}')).toMatch(/legacy error shape/);
    expect(checkAnswer(req, 400, json, '{"code":400,"error_code":"bad_json","msg":"x"}')).toBeUndefined();
    const v2024 = new Request('http://localhost/x', { headers: { 'x-supabase-api-version': '2024-01-01' } });
    expect(checkAnswer(v2024, 400, json, '{"code":400,"error_code":"bad_json","msg":"x"}')).toMatch(/2024 error shape/);
    expect(checkAnswer(v2024, 400, json, '{"code":"bad_json","message":"x"}')).toBeUndefined();
  });

  test('an invariant query finds a broken row: a refresh token whose session is gone', async () => {
    const ns = `"${db.namespace}"`;
    await db.withSession((s) =>
      s.exec(
        `insert into ${ns}.refresh_tokens (token, user_id, revoked, session_id) values ('fuzz-orphan', 'x', false, null)`,
      ),
    );
    try {
      expect((await checkInvariants(db)).join('\n')).toMatch(/no refresh token without a session/);
    } finally {
      await db.withSession((s) => s.exec(`delete from ${ns}.refresh_tokens where token = 'fuzz-orphan'`));
    }
  });

  test('pool references resolve to real values, escaped for the path, query and body', async () => {
    const req = materialize(
      {
        route: 'POST /x',
        prefix: '',
        method: 'POST',
        url: '/admin/users/~~uid.0~~?a=~~email.0~~',
        headers: { authorization: 'Bearer ~~admin.0~~' },
        body: '{"e":"~~email.0~~"}',
        valid: true,
      },
      target.pool,
    );
    expect(new URL(req.url).pathname).toBe(`/admin/users/${target.pool.uid[0]}`);
    expect(new URL(req.url).searchParams.get('a')).toBe(target.pool.email[0]);
    expect(req.headers.get('authorization')).toBe(`Bearer ${target.pool.admin[0]}`);
    expect(JSON.parse(await req.text())).toEqual({ e: target.pool.email[0] });
    const stats = newStats();
    await sendOne(
      target,
      { route: 'GET /health', prefix: '/auth/v1', method: 'GET', url: '/auth/v1/health', headers: {}, valid: true },
      stats,
    );
    expect(stats.validOk).toBe(1);
  });
});
