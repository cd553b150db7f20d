// Shared rate-limit counters in Postgres: one statement per attempt, so the count is exact
// across instances. Returns false when the limit is reached (nothing is consumed then).
import { sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export interface Bucket {
  /** Most requests allowed at once (GoTrue's burst). */
  capacity: number;
  /** Tokens added back per second. */
  refillPerSecond: number;
}

export interface Limit {
  count: number;
  periodSeconds: number;
  /** window: `count` per fixed window; bucket: `count` tokens refilled one per period. */
  form: 'window' | 'bucket';
}

export async function consume(ex: Executor, key: string, limit: Limit, now: Date): Promise<boolean> {
  if (limit.count <= 0) return false;
  if (limit.form === 'window') {
    const periodMs = limit.periodSeconds * 1000;
    const windowStart = new Date(Math.floor(now.getTime() / periodMs) * periodMs);
    return (await countInWindow(ex, key, windowStart, now, limit.count)) !== undefined;
  }
  return takeToken(ex, key, { capacity: limit.count, refillPerSecond: 1 / limit.periodSeconds }, now);
}

/**
 * Adds one to the count of `key` for the window starting at `windowStart` (a new window starts
 * from 1) and returns the new count; with `max`, undefined instead once the window holds `max`
 * (nothing is added then). One statement, so exact under concurrency and across instances.
 */
export async function countInWindow(
  ex: Executor,
  key: string,
  windowStart: Date,
  now: Date,
  max?: number,
): Promise<number | undefined> {
  const rl = ex.t.rateLimits;
  const rows = await ex.orm
    .insert(rl)
    .values({ key, windowStart, count: 1, updatedAt: now })
    .onConflictDoUpdate({
      target: rl.key,
      set: {
        count: sql`CASE WHEN ${rl.windowStart} = excluded.window_start THEN ${rl.count} + 1 ELSE 1 END`,
        windowStart: sql`excluded.window_start`,
        updatedAt: sql`excluded.updated_at`,
      },
      ...(max === undefined
        ? {}
        : { setWhere: sql`${rl.windowStart} <> excluded.window_start OR ${rl.count} < ${max}` }),
    })
    .returning({ count: rl.count });
  return rows[0]?.count;
}

/** Token bucket: `capacity` tokens, refilled `refillPerSecond`; one statement, so exact under concurrency. */
export async function takeToken(ex: Executor, key: string, bucket: Bucket, now: Date): Promise<boolean> {
  if (bucket.capacity <= 0) return false;
  const rl = ex.t.rateLimits;
  const refilled = sql`least(${bucket.capacity}::float8, ${rl.count} + greatest(0, extract(epoch from (excluded.updated_at - ${rl.updatedAt}))) * ${bucket.refillPerSecond}::float8)`;
  const rows = await ex.orm
    .insert(rl)
    .values({ key, windowStart: now, count: bucket.capacity - 1, updatedAt: now })
    .onConflictDoUpdate({
      target: rl.key,
      set: { count: sql`${refilled} - 1`, updatedAt: sql`excluded.updated_at` },
      setWhere: sql`${refilled} >= 1`,
    })
    .returning({ count: rl.count });
  return rows.length > 0;
}

/** Gives back what `consume` took at `at` (a send that failed): one count of that window, or one token of the bucket. */
export async function release(ex: Executor, key: string, limit: Limit, at: Date): Promise<void> {
  const rl = ex.t.rateLimits;
  if (limit.form === 'window') {
    const periodMs = limit.periodSeconds * 1000;
    const windowStart = new Date(Math.floor(at.getTime() / periodMs) * periodMs);
    await ex.orm
      .update(rl)
      .set({ count: sql`greatest(0, ${rl.count} - 1)` })
      .where(sql`${rl.key} = ${key} and ${rl.windowStart} = ${windowStart.toISOString()}::timestamptz`);
    return;
  }
  await ex.orm
    .update(rl)
    .set({ count: sql`least(${limit.count}::float8, ${rl.count} + 1)` })
    .where(sql`${rl.key} = ${key}`);
}

/**
 * Deletes per-client buckets (`ip:`) and code-attempt counters (`otp:`) not touched since
 * `before`. Shared counters (`email_sent`, …) are one row each and stay.
 */
export async function expireRateLimitRows(ex: Executor, before: Date): Promise<number> {
  const rl = ex.t.rateLimits;
  const rows = await ex.orm
    .delete(rl)
    .where(
      sql`(${rl.key} like 'ip:%' or ${rl.key} like 'otp:%') and ${rl.updatedAt} < ${before.toISOString()}::timestamptz`,
    )
    .returning({ key: rl.key });
  return rows.length;
}
