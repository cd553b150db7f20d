// Per-client limits keyed on RATE_LIMIT_HEADER, in memory and in Postgres.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgres } from '../src/adapters/db-postgres.ts';
import type { Database } from '../src/db/database.ts';
import { createMemoryRateLimitStore, createPostgresRateLimitStore } from '../src/lib/rate-limit.ts';
import { buildTestApp } from './helpers/app.ts';
import { openTestDb, TEST_DATABASE_URL } from './helpers/db.ts';

let db: Database;
beforeAll(async () => { db = await openTestDb(); });
afterAll(async () => { await db?.close(); });

const login = { email: 'nobody@example.com', password: 'x' };

describe.each(['memory', 'postgres'] as const)('RATE_LIMIT_STORE=%s', (store) => {
  test('/token allows a burst of 30 per client, then 429; other clients and other routes are unaffected; it refills', async () => {
    await db.orm.delete(db.t.rateLimits);
    let now = new Date('2034-01-01T00:00:00Z');
    const t = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_HEADER: 'X-Real-IP', AUTHSVC_RATE_LIMIT_STORE: store, AUTHSVC_RATE_LIMIT_TOKEN_REFRESH: '150' }, { now: () => now });
    const token = (ip: string) => t.request('POST', '/token?grant_type=password', login, { 'x-real-ip': ip });
    for (let i = 0; i < 30; i++) expect((await token('1.2.3.4')).status).toBe(400);
    const limited = await token('1.2.3.4');
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ code: 429, error_code: 'over_request_rate_limit', msg: 'Request rate limit reached' });
    expect((await token('5.6.7.8')).status).toBe(400);
    expect((await t.request('POST', '/verify', { type: 'signup', token_hash: 'x' }, { 'x-real-ip': '1.2.3.4' })).status).toBe(403);
    // 150 per 5 minutes = one token every 2 s.
    now = new Date(now.getTime() + 2_100);
    expect((await token('1.2.3.4')).status).toBe(400);
    expect((await token('1.2.3.4')).status).toBe(429);
  });
});

test('without RATE_LIMIT_HEADER (or without the header on the request) nothing is limited, as in GoTrue', async () => {
  const off = await buildTestApp(db);
  for (let i = 0; i < 40; i++) expect((await off.request('POST', '/token?grant_type=password', login)).status).toBe(400);
  const on = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_HEADER: 'X-Real-IP' });
  for (let i = 0; i < 40; i++) expect((await on.request('POST', '/token?grant_type=password', login)).status).toBe(400);
});

test('memory store: each key has its own bucket', async () => {
  const s = createMemoryRateLimitStore();
  const now = new Date();
  const b = { capacity: 2, refillPerSecond: 0 };
  expect([await s.take('a', b, now), await s.take('a', b, now), await s.take('a', b, now), await s.take('b', b, now)]).toEqual([true, true, false, true]);
});

// Needs a Postgres server: CI runs the whole suite a second time with TEST_DATABASE_URL set.
describe.runIf(TEST_DATABASE_URL)('postgres store across instances', () => {
  test('two stores on one database share a bucket exactly under concurrency', async () => {
    await db.orm.delete(db.t.rateLimits);
    const other = openPostgres({ url: TEST_DATABASE_URL!, namespace: db.namespace, maxPoolSize: 10 });
    try {
      const a = createPostgresRateLimitStore(db);
      const b = createPostgresRateLimitStore(other);
      const now = new Date();
      const bucket = { capacity: 10, refillPerSecond: 0 };
      const results = await Promise.all(Array.from({ length: 25 }, (_, i) => (i % 2 ? a : b).take('shared', bucket, now)));
      expect(results.filter(Boolean)).toHaveLength(10);
    } finally {
      await other.close();
    }
  });
});
