// Guessing a 6-digit code. GoTrue bounds it only with per-IP limits, which are off unless
// RATE_LIMIT_HEADER names the proxy's client-IP header. Here every code typed in counts as one
// attempt at each code of that user it could be, before it is compared: after MAX_CODE_ATTEMPTS
// attempts a code no longer works, right or wrong, so the user must ask for a new one (and the
// send-frequency limits bound how often that can happen). Counting first keeps the bound under
// concurrency: a thousand parallel guesses still get five chances.
import { claimCodeAttemptSweep, countCodeAttempt, expireCodeAttempts } from '../db/code-attempts.ts';
import type { Deps } from '../deps.ts';
import { errorFields } from '../telemetry/logger.ts';

export const MAX_CODE_ATTEMPTS = 5;

/** How often (at most) the code path deletes idle attempt counters, and how idle they must be. */
export const CODE_ATTEMPT_SWEEP_SECONDS = 10 * 60;
const MIN_IDLE_SECONDS = 24 * 3600;

/** Counts one attempt at the user's code of `tokenType` issued at `issuedAt`; false once it has had its attempts. */
export async function takeCodeAttempt(deps: Deps, userId: string, tokenType: string, issuedAt: Date): Promise<boolean> {
  const now = deps.now();
  // Outside any transaction on purpose: a failed verify rolls its transaction back, the count must stay.
  const count = await countCodeAttempt(deps.db, userId, tokenType, issuedAt, now);
  await sweepCodeAttempts(deps, now);
  return count <= MAX_CODE_ATTEMPTS;
}

/**
 * One row per user and code type would otherwise stay for ever (the Postgres per-IP store sweeps
 * them too, the default memory store cannot). A counter idle for a day, or for longer than a code
 * is valid, belongs to an expired code: deleting it changes nothing.
 */
async function sweepCodeAttempts(deps: Deps, now: Date): Promise<void> {
  const idle = Math.max(MIN_IDLE_SECONDS, deps.config.mailer.otpExp, deps.config.sms.otpExp);
  try {
    if (await claimCodeAttemptSweep(deps.db, CODE_ATTEMPT_SWEEP_SECONDS, now)) {
      await expireCodeAttempts(deps.db, new Date(now.getTime() - idle * 1000));
    }
  } catch (err) {
    // A failed sweep is retried in a later window; the attempt's own answer stands.
    deps.logger.warn('deleting idle code-attempt counters failed', errorFields(err));
  }
}
