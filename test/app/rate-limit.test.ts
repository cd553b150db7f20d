// Per-client limits keyed on RATE_LIMIT_HEADER, in memory and in Postgres.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import type { Database } from '../../src/db/database.ts';
import { createMemoryRateLimitStore, createPostgresRateLimitStore } from '../../src/http/rate-limit.ts';
import { buildTestApp } from '../helpers/app.ts';
import { openTestDb, TEST_DATABASE_URL } from '../helpers/db.ts';

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const login = { email: 'nobody@example.com', password: 'x' };

describe.each(['memory', 'postgres'] as const)('RATE_LIMIT_STORE=%s', (store) => {
  test('/token allows a burst of 30 per client, then 429; other clients and other routes are unaffected; it refills', async () => {
    await db.orm.delete(db.t.rateLimits);
    let now = new Date('2034-01-01T00:00:00Z');
    const t = await buildTestApp(
      db,
      {
        AUTHSVC_RATE_LIMIT_HEADER: 'X-Real-IP',
        AUTHSVC_RATE_LIMIT_STORE: store,
        AUTHSVC_RATE_LIMIT_TOKEN_REFRESH: '150',
      },
      { now: () => now },
    );
    const token = (ip: string) => t.request('POST', '/token?grant_type=password', login, { 'x-real-ip': ip });
    for (let i = 0; i < 30; i++) expect((await token('1.2.3.4')).status).toBe(400);
    const limited = await token('1.2.3.4');
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      code: 429,
      error_code: 'over_request_rate_limit',
      msg: 'Request rate limit reached',
    });
    expect((await token('5.6.7.8')).status).toBe(400);
    expect(
      (await t.request('POST', '/verify', { type: 'signup', token_hash: 'x' }, { 'x-real-ip': '1.2.3.4' })).status,
    ).toBe(403);
    // 150 per 5 minutes = one token every 2 s.
    now = new Date(now.getTime() + 2_100);
    expect((await token('1.2.3.4')).status).toBe(400);
    expect((await token('1.2.3.4')).status).toBe(429);
  });
});

test('without RATE_LIMIT_HEADER (or without the header on the request) nothing is limited, as in GoTrue', async () => {
  const off = await buildTestApp(db);
  for (let i = 0; i < 40; i++)
    expect((await off.request('POST', '/token?grant_type=password', login)).status).toBe(400);
  const on = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_HEADER: 'X-Real-IP' });
  for (let i = 0; i < 40; i++) expect((await on.request('POST', '/token?grant_type=password', login)).status).toBe(400);
});

test('memory store: each key has its own bucket', async () => {
  const s = createMemoryRateLimitStore();
  const now = new Date();
  const b = { capacity: 2, refillPerSecond: 0 };
  expect([
    await s.take('a', b, now),
    await s.take('a', b, now),
    await s.take('a', b, now),
    await s.take('b', b, now),
  ]).toEqual([true, true, false, true]);
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
      const results = await Promise.all(
        Array.from({ length: 25 }, (_, i) => (i % 2 ? a : b).take('shared', bucket, now)),
      );
      expect(results.filter(Boolean)).toHaveLength(10);
    } finally {
      await other.close();
    }
  });
});

describe('bounded keys and expiry (issue 11, item 14)', () => {
  test('a header value that is not an IP is keyed by its hash: a 5,000-character value is limited, never a 500', async () => {
    await db.orm.delete(db.t.rateLimits);
    const fixed = new Date('2034-02-01T00:00:00Z');
    const t = await buildTestApp(
      db,
      { AUTHSVC_RATE_LIMIT_HEADER: 'X-Real-IP', AUTHSVC_RATE_LIMIT_STORE: 'postgres' },
      { now: () => fixed },
    );
    const long = 'x'.repeat(5000);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++)
      statuses.push((await t.request('POST', '/token?grant_type=password', login, { 'x-real-ip': long })).status);
    expect(statuses.slice(0, 30).every((s) => s === 400)).toBe(true);
    expect(statuses[30]).toBe(429);
    const keys = (await db.orm.select({ key: db.t.rateLimits.key }).from(db.t.rateLimits)).map((r) => r.key);
    expect(keys).toEqual([expect.stringMatching(/^ip:token:h:[0-9a-f]{32}$/)]);
    // IPv6 in either case is one client.
    await t.request('POST', '/token?grant_type=password', login, { 'x-real-ip': '2001:DB8::1' });
    await t.request('POST', '/token?grant_type=password', login, { 'x-real-ip': '2001:db8::1' });
    const v6 = await db.orm.select().from(db.t.rateLimits).where(eq(db.t.rateLimits.key, 'ip:token:2001:db8::1'));
    expect(v6).toHaveLength(1);
    expect(v6[0]!.count).toBe(28);
  });

  test('the Postgres store deletes client and code-attempt rows idle past the horizon, at most every ten minutes', async () => {
    await db.orm.delete(db.t.rateLimits);
    const now = new Date('2035-06-01T12:00:00Z');
    const ago = (s: number) => new Date(now.getTime() - s * 1000);
    const row = (key: string, at: Date) => ({ key, windowStart: at, count: 1, updatedAt: at });
    await db.orm
      .insert(db.t.rateLimits)
      .values([
        row('ip:token:9.9.9.9', ago(25 * 3600)),
        row('otp:00000000-0000-0000-0000-000000000001:confirmation_token', ago(25 * 3600)),
        row('ip:token:8.8.8.8', ago(23 * 3600)),
        row('email_sent', ago(40 * 3600)),
      ]);
    const store = createPostgresRateLimitStore(db);
    const bucket = { capacity: 30, refillPerSecond: 0.5 };
    expect(await store.take('token:1.1.1.1', bucket, now)).toBe(true);
    const keys = async () =>
      (await db.orm.select({ key: db.t.rateLimits.key }).from(db.t.rateLimits)).map((r) => r.key).sort();
    expect(await keys()).toEqual(['email_sent', 'ip:token:1.1.1.1', 'ip:token:8.8.8.8']);
    // Within ten minutes of the last sweep nothing more is deleted.
    await db.orm.insert(db.t.rateLimits).values(row('ip:token:7.7.7.7', ago(48 * 3600)));
    await store.take('token:1.1.1.1', bucket, new Date(now.getTime() + 9 * 60_000));
    expect(await keys()).toContain('ip:token:7.7.7.7');
    await store.take('token:1.1.1.1', bucket, new Date(now.getTime() + 10 * 60_000));
    expect(await keys()).not.toContain('ip:token:7.7.7.7');
  });

  test('a code-attempt counter outlives its code: the horizon is at least MAILER_OTP_EXP', async () => {
    await db.orm.delete(db.t.rateLimits);
    const t = await buildTestApp(db, {
      AUTHSVC_RATE_LIMIT_HEADER: 'X-Real-IP',
      AUTHSVC_RATE_LIMIT_STORE: 'postgres',
      AUTHSVC_MAILER_OTP_EXP: String(3 * 86400),
    });
    const now = Date.now();
    await db.orm.insert(db.t.rateLimits).values({
      key: 'otp:00000000-0000-0000-0000-000000000002:recovery_token',
      windowStart: new Date(now - 2 * 86400_000),
      count: 4,
      updatedAt: new Date(now - 2 * 86400_000),
    });
    await t.request('POST', '/token?grant_type=password', login, { 'x-real-ip': '1.2.3.4' });
    const left = await db.orm
      .select()
      .from(db.t.rateLimits)
      .where(eq(db.t.rateLimits.key, 'otp:00000000-0000-0000-0000-000000000002:recovery_token'));
    expect(left).toHaveLength(1);
  });
});

test('SECURITY_SB_FORWARDED_FOR_ENABLED: the audit log records the Sb-Forwarded-For address, as GoTrue', async () => {
  const t = await buildTestApp(db, {
    AUTHSVC_SECURITY_SB_FORWARDED_FOR_ENABLED: 'true',
    AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  });
  const email = `sbff-${Date.now()}@example.com`;
  const res = await t.request(
    'POST',
    '/signup',
    { email, password: 'a-long-password-1' },
    { 'sb-forwarded-for': '203.0.113.7, 10.0.0.1', 'x-forwarded-for': '198.51.100.1' },
  );
  expect(res.status).toBe(200);
  const rows = await db.orm.select().from(db.t.auditLogEntries);
  const mine = rows.filter((r) => JSON.stringify(r.payload).includes(email));
  expect(mine.length).toBeGreaterThan(0);
  expect(mine.map((r) => r.ipAddress)).toEqual(mine.map(() => '203.0.113.7'));
});
