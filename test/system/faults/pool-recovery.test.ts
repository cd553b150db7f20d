// The Postgres pool after a statement timed out inside a transaction (the network black-holed,
// then healed): the connection is closed rather than handed to the next request, so that
// request's COMMIT cannot commit the failed one's writes, and the error reads as an outage.
// Postgres server only.
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, test } from 'vitest';
import { openPostgres } from '../../../src/adapters/db-postgres.ts';
import { isDatabaseUnavailable, transaction } from '../../../src/db/database.ts';
import { TEST_DATABASE_URL } from '../../helpers/db.ts';
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { leftInTransaction } from './invariants.ts';
import { dropSchema, newNamespace, sleep, viaPort } from './setup.ts';

describe.runIf(TEST_DATABASE_URL)('pool after a timed-out statement', () => {
  const namespace = newNamespace();
  let proxy: FaultProxy | undefined;
  afterAll(async () => {
    await proxy?.close();
    await dropSchema(namespace);
  });

  test('a transaction cut off mid-way is rolled back, not committed by the next one on its connection', async () => {
    proxy = await startFaultProxy(Number(new URL(TEST_DATABASE_URL!).port || 5432));
    // One connection, so the next transaction would get the same one back.
    const db = openPostgres({
      url: viaPort(proxy.port),
      namespace,
      maxPoolSize: 1,
      connectTimeoutMs: 1_000,
      queryTimeoutMs: 300,
    });
    try {
      await db.withSession((s) => s.exec(`create schema "${namespace}"; create table "${namespace}".rows (x int)`));
      const failed = await transaction(db, async (tx) => {
        await tx.orm.execute(sql.raw(`insert into "${namespace}".rows values (1)`));
        proxy!.blackhole();
        await tx.orm.execute(sql`select 1`);
      }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(Error);
      expect(isDatabaseUnavailable(failed)).toBe(true);

      await proxy.heal();
      await sleep(100);
      await transaction(db, (tx) => tx.orm.execute(sql.raw(`insert into "${namespace}".rows values (2)`)));
      const rows = await db.orm.execute(sql.raw(`select x from "${namespace}".rows order by x`));
      expect((rows as unknown as { rows: unknown[] }).rows).toEqual([{ x: 2 }]);
      expect(await leftInTransaction(TEST_DATABASE_URL!, proxy.upstreamPorts())).toEqual([]);
    } finally {
      await db.close();
    }
  });

  test('connection errors and outage SQLSTATEs read as the database being unavailable; others do not', () => {
    const wrapped = (cause: unknown) => Object.assign(new Error('Failed query: select 1'), { cause });
    expect(
      isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })),
    ).toBe(true);
    expect(isDatabaseUnavailable(wrapped(new Error('Connection terminated unexpectedly')))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(new Error('timeout exceeded when trying to connect')))).toBe(true);
    expect(
      isDatabaseUnavailable(
        wrapped(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
      ),
    ).toBe(true);
    expect(isDatabaseUnavailable(wrapped(Object.assign(new Error('connection failure'), { code: '08006' })))).toBe(
      true,
    );
    expect(isDatabaseUnavailable(wrapped(Object.assign(new Error('duplicate key'), { code: '23505' })))).toBe(false);
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
  });
});
