// Postgres unreachable for ~10 s under a steady mixed load, through a fault proxy: 5 s black-holed
// (connections accepted, nothing answered), then 5 s refused (every connection closed, ECONNREFUSED).
// Requests fail fast with a JSON 503 database_unavailable (never 500 unexpected_failure, never past
// API_MAX_REQUEST_DURATION), /health/ready says 503 while /health and /health/live stay 200, and once the proxy heals the same process answers
// 200 again: no restart, no connection left inside a transaction. Then every backend terminated
// by Postgres itself (57P01). Postgres server only.
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { TEST_DATABASE_URL } from '../../helpers/db.ts';
import { cleanupProcesses } from '../../helpers/server.ts';
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { brokenInvariants, leftInTransaction } from './invariants.ts';
import { call, dropSchema, mixedLoad, newNamespace, signUp, sleep, startAuthsvc, tally } from './setup.ts';

const LIMIT_S = 4;

describe.runIf(TEST_DATABASE_URL)('Postgres outage under load', () => {
  const namespace = newNamespace();
  let proxy: FaultProxy | undefined;
  afterAll(async () => {
    await cleanupProcesses();
    await proxy?.close();
    await dropSchema(namespace);
  });

  test('503 database_unavailable within the time limit while it lasts, /health/ready 503 (/health/live 200), then recovery by itself', async () => {
    proxy = await startFaultProxy(Number(new URL(TEST_DATABASE_URL!).port || 5432));
    // A rotation can commit while its answer is held by the outage; the client retries with the
    // old token after the heal. Within the reuse interval it gets the same child; past it (GoTrue's
    // default is 10 s, as long as this outage) the retry is a reuse and ends the session.
    const server = await startAuthsvc(proxy.port, namespace, {
      AUTHSVC_API_MAX_REQUEST_DURATION: String(LIMIT_S),
      AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '30',
    });
    const base = server.url;
    const accounts = await Promise.all(Array.from({ length: 8 }, (_, i) => signUp(base, `outage${i}`)));
    const load = mixedLoad([base], accounts);
    await sleep(1_500);

    const outageStart = Date.now();
    proxy.blackhole();
    await sleep(2_500);
    const healthBlackholed = await call(base, 'GET', '/health/ready');
    const liveBlackholed = await call(base, 'GET', '/health/live');
    await sleep(2_500);
    await proxy.refuse();
    await sleep(2_500);
    const healthRefused = await call(base, 'GET', '/health/ready');
    const gotrueHealthRefused = await call(base, 'GET', '/health');
    await sleep(2_500);
    await proxy.heal();
    const healedAt = Date.now();
    await sleep(3_000);
    const healthAfter = await call(base, 'GET', '/health/ready');
    await load.stop();

    const during = load.answers.filter((a) => a.at >= outageStart && a.at < healedAt);
    const after = load.answers.filter((a) => a.at >= healedAt + 500);
    const summary = { during: tally(during), after: tally(after) };
    if (process.env.FAULTS_VERBOSE)
      console.log('outage', JSON.stringify(summary), 'slowest ms', Math.max(...load.answers.map((a) => a.ms)));

    expect(healthBlackholed.status, JSON.stringify(healthBlackholed)).toBe(503);
    expect(healthBlackholed.json.error_code).toBe('database_unavailable');
    expect(healthRefused.status).toBe(503);
    expect(healthRefused.ms).toBeLessThan(1_000);
    expect(liveBlackholed.status).toBe(200);
    expect(gotrueHealthRefused.status).toBe(200);
    expect(gotrueHealthRefused.json.name).toBe('GoTrue');
    expect(healthAfter.status).toBe(200);
    expect(healthAfter.json).toEqual({ status: 'ready' });

    // The outage was seen, and only as 503 database_unavailable in the JSON error shape.
    const failed = during.filter((a) => a.status !== 200);
    expect(failed.length, JSON.stringify(summary)).toBeGreaterThan(20);
    expect(
      failed.filter((a) => a.status !== 503 || a.code !== 'database_unavailable'),
      JSON.stringify(summary),
    ).toEqual([]);
    // Nothing waited for the 504: each answer came before API_MAX_REQUEST_DURATION.
    expect(Math.max(...load.answers.map((a) => a.ms))).toBeLessThan(LIMIT_S * 1000);
    // While refused, failing is fast (connection refused at once).
    const refusedPhase = during.filter((a) => a.at >= outageStart + 6_000 && a.status === 503);
    expect(refusedPhase.length).toBeGreaterThan(10);
    expect(
      refusedPhase.every((a) => a.ms < 500),
      JSON.stringify(refusedPhase.map((a) => a.ms)),
    ).toBe(true);

    // Recovered with no restart: every answer 200, no connection left in a transaction.
    expect(after.length).toBeGreaterThan(50);
    expect(
      after.filter((a) => a.status !== 200),
      JSON.stringify(summary),
    ).toEqual([]);
    expect(server.exit).toBeUndefined();
    expect(await leftInTransaction(TEST_DATABASE_URL!, proxy.upstreamPorts())).toEqual([]);
    expect(await brokenInvariants(TEST_DATABASE_URL!, namespace)).toEqual({});
  }, 60_000);

  test('every backend terminated at once (57P01, as a restart or failover does): 503 for what was in flight, then 200 with no restart', async () => {
    const direct = Number(new URL(TEST_DATABASE_URL!).port || 5432);
    const local = await startFaultProxy(direct);
    try {
      const server = await startAuthsvc(local.port, `${namespace}_b`);
      const accounts = await Promise.all(Array.from({ length: 8 }, (_, i) => signUp(server.url, `term${i}`)));
      const load = mixedLoad([server.url], accounts);
      await sleep(1_000);
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      const killedAt = Date.now();
      const { rows } = await admin.query(
        'select pg_terminate_backend(pid) as done from pg_stat_activity where client_port = any($1::int[])',
        [local.upstreamPorts()],
      );
      await admin.end();
      await sleep(2_000);
      await load.stop();
      const before = load.answers.filter((a) => a.at < killedAt);
      const after = load.answers.filter((a) => a.at >= killedAt + 500);
      const summary = JSON.stringify({ terminated: rows.length, all: tally(load.answers) });
      if (process.env.FAULTS_VERBOSE) console.log('terminate', summary);
      expect(rows.length, summary).toBeGreaterThan(0);
      expect(
        load.answers.filter((a) => a.status !== 200 && !(a.status === 503 && a.code === 'database_unavailable')),
        summary,
      ).toEqual([]);
      expect(before.length).toBeGreaterThan(20);
      expect(after.length).toBeGreaterThan(50);
      expect(
        after.filter((a) => a.status !== 200),
        summary,
      ).toEqual([]);
      expect(server.exit).toBeUndefined();
    } finally {
      await local.close();
      await dropSchema(`${namespace}_b`);
    }
  }, 60_000);
});
