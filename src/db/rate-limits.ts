// Shared rate-limit counters in Postgres: one statement per attempt, so the count is exact
// across instances. Returns false when the limit is reached (nothing is consumed then).
import { sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export interface Limit {
  count: number;
  periodSeconds: number;
  /** window: `count` per fixed window; bucket: `count` tokens refilled one per period. */
  form: 'window' | 'bucket';
}

export async function consume(ex: Executor, key: string, limit: Limit, now: Date): Promise<boolean> {
  if (limit.count <= 0) return false;
  const rl = ex.t.rateLimits;
  if (limit.form === 'window') {
    const periodMs = limit.periodSeconds * 1000;
    const windowStart = new Date(Math.floor(now.getTime() / periodMs) * periodMs);
    const rows = await ex.orm.insert(rl).values({ key, windowStart, count: 1, updatedAt: now })
      .onConflictDoUpdate({
        target: rl.key,
        set: {
          count: sql`CASE WHEN ${rl.windowStart} = excluded.window_start THEN ${rl.count} + 1 ELSE 1 END`,
          windowStart: sql`excluded.window_start`,
          updatedAt: sql`excluded.updated_at`,
        },
        setWhere: sql`${rl.windowStart} <> excluded.window_start OR ${rl.count} < ${limit.count}`,
      })
      .returning({ count: rl.count });
    return rows.length > 0;
  }
  const refilled = sql`least(${limit.count}::float8, ${rl.count} + greatest(0, extract(epoch from (excluded.updated_at - ${rl.updatedAt}))) / ${limit.periodSeconds}::float8)`;
  const rows = await ex.orm.insert(rl).values({ key, windowStart: now, count: limit.count - 1, updatedAt: now })
    .onConflictDoUpdate({
      target: rl.key,
      set: { count: sql`${refilled} - 1`, updatedAt: sql`excluded.updated_at` },
      setWhere: sql`${refilled} >= 1`,
    })
    .returning({ count: rl.count });
  return rows.length > 0;
}
