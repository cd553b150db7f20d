// transaction(): a CommitThenFail commits what the transaction wrote, then its error is thrown;
// any other error rolls everything back.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findAuditEntries } from '../../src/db/audit-query.ts';
import { insertAudit } from '../../src/db/audit.ts';
import { CommitThenFail, type Database, transaction, transactionOutcome } from '../../src/db/database.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const count = async () => (await findAuditEntries(db, { limit: 1000n, offset: 0n })).total;
const write = (tx: Parameters<Parameters<typeof transaction>[1]>[0]) =>
  insertAudit(tx, { actor: null, action: 'logout', now: new Date() });

describe('transaction', () => {
  test('a CommitThenFail keeps the writes and throws its error to the caller', async () => {
    const before = await count();
    const refusal = new Error('refused after the commit');
    await expect(
      transaction(db, async (tx) => {
        await write(tx);
        throw new CommitThenFail(refusal);
      }),
    ).rejects.toBe(refusal);
    expect(await count()).toBe(before + 1);
  });

  test('any other error takes the writes back', async () => {
    const before = await count();
    await expect(
      transaction(db, async (tx) => {
        await write(tx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await count()).toBe(before);
  });

  test('transactionOutcome answers the committed failure instead of throwing it', async () => {
    const before = await count();
    const refusal = new Error('counted, then refused');
    const outcome = await transactionOutcome(db, async (tx) => {
      await write(tx);
      throw new CommitThenFail(refusal);
    });
    expect(outcome).toEqual({ failed: refusal });
    expect(await transactionOutcome(db, async () => 7)).toEqual({ ok: 7 });
    expect(await count()).toBe(before + 1);
  });
});
