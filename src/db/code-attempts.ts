// Attempts at one emailed or texted code, counted in rate_limits under `otp:<user>:<token type>`
// with the code's issue time as the window: a new code starts from zero. One statement, so the
// count is exact under concurrency and across instances.
import { sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

/** Adds one attempt at the code issued at `issuedAt` and returns the attempts so far, this one included. */
export async function countCodeAttempt(ex: Executor, userId: string, tokenType: string, issuedAt: Date, now: Date): Promise<number> {
  const rl = ex.t.rateLimits;
  const rows = await ex.orm.insert(rl)
    .values({ key: `otp:${userId}:${tokenType}`, windowStart: issuedAt, count: 1, updatedAt: now })
    .onConflictDoUpdate({
      target: rl.key,
      set: {
        count: sql`CASE WHEN ${rl.windowStart} = excluded.window_start THEN ${rl.count} + 1 ELSE 1 END`,
        windowStart: sql`excluded.window_start`,
        updatedAt: sql`excluded.updated_at`,
      },
    })
    .returning({ count: rl.count });
  return rows[0]?.count ?? 1;
}
