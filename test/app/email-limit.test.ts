// RATE_LIMIT_EMAIL_SENT: counted in Postgres, so two instances share one hourly count.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb, TEST_DATABASE_URL } from '../helpers/db.ts';

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

function clock(start: string) {
  let now = new Date(start);
  return {
    now: () => now,
    advance: (s: number) => {
      now = new Date(now.getTime() + s * 1000);
    },
  };
}

async function resetCounter() {
  await db.orm.delete(db.t.rateLimits);
}

describe('RATE_LIMIT_EMAIL_SENT', () => {
  test('N per hour across endpoints; the next hour starts a new count', async () => {
    await resetCounter();
    const c = clock('2032-01-01T10:00:00Z');
    const t = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '3' }, { now: c.now });
    for (let i = 0; i < 3; i++)
      expect((await t.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })).status).toBe(200);
    const over = await t.request('POST', '/otp', { email: uniqueEmail() });
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({
      code: 429,
      error_code: 'over_email_send_rate_limit',
      msg: 'email rate limit exceeded',
    });
    // The refused signup left no user behind.
    expect(t.mails).toHaveLength(3);
    c.advance(3600);
    expect((await t.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })).status).toBe(200);
  });

  test('N/duration is a bucket of N refilled one email per duration', async () => {
    await resetCounter();
    const c = clock('2032-02-01T00:00:00Z');
    const t = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '2/10m' }, { now: c.now });
    const send = async () =>
      (await t.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })).status;
    expect([await send(), await send(), await send()]).toEqual([200, 200, 429]);
    c.advance(300);
    expect(await send()).toBe(429);
    c.advance(301);
    expect([await send(), await send()]).toEqual([200, 429]);
  });

  test('a failed send does not use up the count', async () => {
    await resetCounter();
    const broken = await buildTestApp(
      db,
      { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '1' },
      {
        mailer: {
          async send() {
            throw new Error('down');
          },
        },
      },
    );
    expect((await broken.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })).status).toBe(
      500,
    );
    const ok = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '1' });
    expect((await ok.request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })).status).toBe(200);
  });

  test('skipped under MAILER_AUTOCONFIRM, but 0 still blocks every email', async () => {
    await resetCounter();
    const auto = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '1', AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const emails = [uniqueEmail(), uniqueEmail()];
    for (const email of emails) await auto.request('POST', '/signup', { email, password: 'secret-pw-1' });
    for (const email of emails) expect((await auto.request('POST', '/magiclink', { email })).status).toBe(200);
    const zero = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '0', AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    expect((await zero.request('POST', '/magiclink', { email: emails[0]! })).status).toBe(429);
  });
});

// Needs a Postgres server: CI runs the whole suite a second time with TEST_DATABASE_URL set.
describe.runIf(TEST_DATABASE_URL)('two instances on one database', () => {
  test('share the hourly count exactly, also under concurrency', async () => {
    await resetCounter();
    const other = openPostgres({ url: TEST_DATABASE_URL!, namespace: db.namespace, maxPoolSize: 10 });
    try {
      const a = await buildTestApp(db, { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '5' });
      const b = await buildTestApp(other, { AUTHSVC_RATE_LIMIT_EMAIL_SENT: '5' });
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 ? a : b)
            .request('POST', '/signup', { email: uniqueEmail(), password: 'secret-pw-1' })
            .then((r) => r.status),
        ),
      );
      expect(results.filter((s) => s === 200)).toHaveLength(5);
      expect(results.filter((s) => s === 429)).toHaveLength(7);
      expect(a.mails.length + b.mails.length).toBe(5);
    } finally {
      await other.close();
    }
  });
});
