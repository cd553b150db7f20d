// MFA recovery codes (migration 0006): one set per user and its codes, stored as SHA-256 hashes.
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type RecoverySetRow = Executor['t']['mfaRecoveryCodeSets']['$inferSelect'];
export type RecoveryCodeRow = Executor['t']['mfaRecoveryCodes']['$inferSelect'];

/** The user's set; locked, it serialises verifications, regenerations and deletions of the set. */
export async function findRecoverySet(
  ex: Executor,
  userId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<RecoverySetRow | undefined> {
  const s = ex.t.mfaRecoveryCodeSets;
  const q = ex.orm.select().from(s).where(eq(s.userId, userId)).limit(1);
  return (opts.forUpdate ? await q.for('update') : await q)[0];
}

/** Inserts the user's set; undefined when the user already has one (the unique user_id decides). */
export async function insertRecoverySet(
  ex: Executor,
  row: Executor['t']['mfaRecoveryCodeSets']['$inferInsert'],
): Promise<RecoverySetRow | undefined> {
  return (
    await ex.orm
      .insert(ex.t.mfaRecoveryCodeSets)
      .values(row)
      .onConflictDoNothing({ target: ex.t.mfaRecoveryCodeSets.userId })
      .returning()
  )[0];
}

export async function updateRecoverySet(
  ex: Executor,
  id: string,
  patch: Partial<Executor['t']['mfaRecoveryCodeSets']['$inferInsert']>,
): Promise<void> {
  await ex.orm.update(ex.t.mfaRecoveryCodeSets).set(patch).where(eq(ex.t.mfaRecoveryCodeSets.id, id));
}

/** Deletes the user's set (its codes go by cascade); the row as it was, or undefined when there was none. */
export async function deleteRecoverySet(ex: Executor, userId: string): Promise<RecoverySetRow | undefined> {
  return (
    await ex.orm.delete(ex.t.mfaRecoveryCodeSets).where(eq(ex.t.mfaRecoveryCodeSets.userId, userId)).returning()
  )[0];
}

/** The set's codes become exactly `hashes` (a regeneration kills every earlier code). */
export async function replaceRecoveryCodes(ex: Executor, setId: string, hashes: string[], now: Date): Promise<void> {
  const c = ex.t.mfaRecoveryCodes;
  await ex.orm.delete(c).where(eq(c.setId, setId));
  await ex.orm
    .insert(c)
    .values(hashes.map((codeHash) => ({ id: crypto.randomUUID(), setId, codeHash, createdAt: now })));
}

export async function recoveryCodeCounts(ex: Executor, setId: string): Promise<{ total: number; remaining: number }> {
  const c = ex.t.mfaRecoveryCodes;
  const row = (
    await ex.orm
      .select({ total: count(), remaining: sql<number>`count(*) filter (where ${c.usedAt} is null)`.mapWith(Number) })
      .from(c)
      .where(eq(c.setId, setId))
  )[0];
  return { total: row?.total ?? 0, remaining: row?.remaining ?? 0 };
}

/** The set's unused codes (at most 20): compared in constant time by the caller, not looked up by hash. */
export async function unusedRecoveryCodes(ex: Executor, setId: string): Promise<RecoveryCodeRow[]> {
  const c = ex.t.mfaRecoveryCodes;
  return ex.orm
    .select()
    .from(c)
    .where(and(eq(c.setId, setId), isNull(c.usedAt)));
}

/** Marks a code used; false when it already was (the second of two concurrent uses). */
export async function useRecoveryCode(ex: Executor, id: string, now: Date): Promise<boolean> {
  const c = ex.t.mfaRecoveryCodes;
  const rows = await ex.orm
    .update(c)
    .set({ usedAt: now })
    .where(and(eq(c.id, id), isNull(c.usedAt)))
    .returning({ id: c.id });
  return rows.length > 0;
}
