// Attempts at one emailed or texted code, counted in rate_limits under `otp:<user>:<token type>`
// with the code's issue time as the window: a new code starts from zero. One statement, so the
// count is exact under concurrency and across instances.
import type { Executor } from './database.ts';
import { countInWindow } from './rate-limits.ts';

/** Adds one attempt at the code issued at `issuedAt` and returns the attempts so far, this one included. */
export async function countCodeAttempt(ex: Executor, userId: string, tokenType: string, issuedAt: Date, now: Date): Promise<number> {
  return (await countInWindow(ex, `otp:${userId}:${tokenType}`, issuedAt, now)) ?? 1;
}
