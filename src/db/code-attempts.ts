// Attempts at one emailed or texted code, counted in rate_limits under `otp:<user>:<token type>`
// with the code's issue time as the window: a new code starts from zero. One statement, so the
// count is exact under concurrency and across instances.
import { sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { consume, countInWindow } from './rate-limits.ts';

/** Adds one attempt at the code issued at `issuedAt` and returns the attempts so far, this one included. */
export async function countCodeAttempt(
  ex: Executor,
  userId: string,
  tokenType: string,
  issuedAt: Date,
  now: Date,
): Promise<number> {
  return (await countInWindow(ex, `otp:${userId}:${tokenType}`, issuedAt, now)) ?? 1;
}

/**
 * True for one caller per window of `everySeconds`, across instances (one shared counter row):
 * whoever gets it sweeps the code-attempt rows for everyone.
 */
export async function claimCodeAttemptSweep(ex: Executor, everySeconds: number, now: Date): Promise<boolean> {
  return consume(ex, 'code_attempts_sweep', { count: 1, periodSeconds: everySeconds, form: 'window' }, now);
}

/** Deletes code-attempt counters not touched since `before`; returns how many. */
export async function expireCodeAttempts(ex: Executor, before: Date): Promise<number> {
  const rl = ex.t.rateLimits;
  const rows = await ex.orm
    .delete(rl)
    .where(sql`${rl.key} like 'otp:%' and ${rl.updatedAt} < ${before.toISOString()}::timestamptz`)
    .returning({ key: rl.key });
  return rows.length;
}
