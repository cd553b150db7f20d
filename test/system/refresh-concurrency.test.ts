// Concurrent refreshes of one refresh token must never fork the family: one child at most, and
// every success hands out that same child (reuse interval > 0) or only one request wins
// (interval 0, where every retry is reuse).
//
// The PGlite cases always run. The multi-instance cases need a Postgres server and use
// describe.runIf(TEST_DATABASE_URL): they are skipped in the default run, which is acceptable
// because CI runs the whole suite a second time with TEST_DATABASE_URL set.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import type { Database } from '../../src/db/database.ts';
import { type TestApp, buildTestApp, signUpConfirmed } from '../helpers/app.ts';
import { TEST_DATABASE_URL, openTestDb, uniqueNamespace } from '../helpers/db.ts';

type Json = Record<string, any>;

const N = 12;

function env(interval: number): Record<string, string> {
  return { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: String(interval) };
}

interface Outcome {
  status: number;
  body: Json;
}

async function refreshAll(apps: TestApp[], token: string, n: number): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await apps[i % apps.length]!.request('POST', '/token?grant_type=refresh_token', {
        refresh_token: token,
      });
      return { status: res.status, body: (await res.json()) as Json };
    }),
  );
}

async function tokenRows(db: Database, sessionId: string) {
  const r = db.t.refreshTokens;
  return db.orm.select().from(r).where(eq(r.sessionId, sessionId));
}

async function liveRows(db: Database, sessionId: string) {
  const r = db.t.refreshTokens;
  return db.orm
    .select()
    .from(r)
    .where(and(eq(r.sessionId, sessionId), eq(r.revoked, false)));
}

/** The checks shared by every scenario; returns the successful outcomes. */
async function assertNoFork(
  db: Database,
  sessionId: string,
  outcomes: Outcome[],
  interval: number,
): Promise<Outcome[]> {
  const ok = outcomes.filter((o) => o.status === 200);
  const failed = outcomes.filter((o) => o.status !== 200);
  for (const f of failed) {
    // The only acceptable failure is reuse detection; never a 500 or a lock error.
    expect({ status: f.status, code: f.body.error_code }).toEqual({ status: 400, code: 'refresh_token_already_used' });
  }
  const live = await liveRows(db, sessionId);
  expect(live.length).toBeLessThanOrEqual(1);
  // The original token plus exactly one child: nobody minted a second child.
  expect(await tokenRows(db, sessionId)).toHaveLength(2);
  if (interval > 0) {
    expect(ok).toHaveLength(outcomes.length);
    const children = new Set(ok.map((o) => o.body.refresh_token as string));
    expect(children.size).toBe(1);
    expect(live).toHaveLength(1);
    for (const o of ok) expect(decodeJwt(o.body.access_token).session_id).toBe(sessionId);
  } else {
    expect(ok).toHaveLength(1);
  }
  return ok;
}

describe('parallel refreshes through one app (PGlite, or Postgres with TEST_DATABASE_URL)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb();
  });
  afterAll(async () => {
    await db?.close();
  });

  test('with a reuse interval every request gets the same child, and that child works', async () => {
    const t = await buildTestApp(db, env(30));
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    const outcomes = await refreshAll([t], session.refresh_token, N);
    const ok = await assertNoFork(db, sessionId, outcomes, 30);
    const child = ok[0]!.body.refresh_token as string;
    expect(child).not.toBe(session.refresh_token);
    const next = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: child });
    expect(next.status).toBe(200);
  });

  test('without a reuse interval exactly one request succeeds', async () => {
    const t = await buildTestApp(db, env(0));
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    const outcomes = await refreshAll([t], session.refresh_token, N);
    await assertNoFork(db, sessionId, outcomes, 0);
    // The losers' retries counted as reuse, so the family is revoked.
    expect(await liveRows(db, sessionId)).toEqual([]);
  });
});

describe.runIf(TEST_DATABASE_URL)(
  'parallel refreshes through three instances, each with its own pool (Postgres)',
  () => {
    const namespace = uniqueNamespace();
    let first: Database;
    const others: Database[] = [];

    beforeAll(async () => {
      // Only the first migrates (and drops the schema on close); the others just connect.
      first = await openTestDb({ namespace });
      for (let i = 0; i < 2; i++) others.push(openPostgres({ url: TEST_DATABASE_URL!, namespace, maxPoolSize: 5 }));
    });
    afterAll(async () => {
      for (const d of others) await d.close();
      await first?.close();
    });

    async function threeApps(interval: number): Promise<TestApp[]> {
      return Promise.all([first, ...others].map((d) => buildTestApp(d, env(interval))));
    }

    test('with a reuse interval every request gets the same child', async () => {
      const apps = await threeApps(30);
      const { session } = await signUpConfirmed(apps[0]!);
      const sessionId = decodeJwt(session.access_token).session_id as string;
      const outcomes = await refreshAll(apps, session.refresh_token, N * 2);
      const ok = await assertNoFork(first, sessionId, outcomes, 30);
      const child = ok[0]!.body.refresh_token as string;
      const next = await apps[2]!.request('POST', '/token?grant_type=refresh_token', { refresh_token: child });
      expect(next.status).toBe(200);
    });

    test('without a reuse interval exactly one request succeeds', async () => {
      const apps = await threeApps(0);
      const { session } = await signUpConfirmed(apps[1]!);
      const sessionId = decodeJwt(session.access_token).session_id as string;
      const outcomes = await refreshAll(apps, session.refresh_token, N * 2);
      await assertNoFork(first, sessionId, outcomes, 0);
    });

    test('reuse of an old token racing rotations of the live one leaves no live token in the family', async () => {
      const apps = await threeApps(0);
      for (let round = 0; round < 6; round++) {
        const { session } = await signUpConfirmed(apps[round % 3]!);
        const sessionId = decodeJwt(session.access_token).session_id as string;
        const rotated = await refreshAll([apps[0]!], session.refresh_token, 1);
        const live = rotated[0]!.body.refresh_token as string;
        // The stolen parent and the live child arrive together at different instances.
        const [stolen, ...legit] = await Promise.all([
          refreshAll([apps[1]!], session.refresh_token, 1),
          refreshAll([apps[2]!], live, 1),
          refreshAll([apps[0]!], live, 1),
        ]).then((r) => r.map((o) => o[0]!));
        expect({ status: stolen!.status, code: stolen!.body.error_code }).toEqual({
          status: 400,
          code: 'refresh_token_already_used',
        });
        for (const o of legit) expect([200, 400]).toContain(o.status);
        // Whatever the order, reuse detection revoked every token, including a child minted meanwhile.
        expect(await liveRows(first, sessionId)).toEqual([]);
      }
    });

    test('repeated rounds of concurrent refreshes on one session never fork the family', async () => {
      const apps = await threeApps(30);
      const { session } = await signUpConfirmed(apps[0]!);
      const sessionId = decodeJwt(session.access_token).session_id as string;
      let token = session.refresh_token as string;
      for (let round = 1; round <= 5; round++) {
        const outcomes = await refreshAll(apps, token, 9);
        expect(outcomes.every((o) => o.status === 200)).toBe(true);
        const children = new Set(outcomes.map((o) => o.body.refresh_token as string));
        expect(children.size).toBe(1);
        token = [...children][0]!;
        expect(await tokenRows(first, sessionId)).toHaveLength(round + 1);
        expect(await liveRows(first, sessionId)).toHaveLength(1);
      }
    });
  },
);
