// Guessing a 6-digit code. GoTrue bounds it only with per-IP limits, which are off unless
// RATE_LIMIT_HEADER names the proxy's client-IP header. Here every code typed in counts as one
// attempt at each code of that user it could be, before it is compared: after MAX_CODE_ATTEMPTS
// attempts a code no longer works, right or wrong, so the user must ask for a new one (and the
// send-frequency limits bound how often that can happen). Counting first keeps the bound under
// concurrency: a thousand parallel guesses still get five chances.
import { countCodeAttempt } from '../db/code-attempts.ts';
import type { Deps } from '../deps.ts';

export const MAX_CODE_ATTEMPTS = 5;

/** Counts one attempt at the user's code of `tokenType` issued at `issuedAt`; false once it has had its attempts. */
export async function takeCodeAttempt(deps: Deps, userId: string, tokenType: string, issuedAt: Date): Promise<boolean> {
  // Outside any transaction on purpose: a failed verify rolls its transaction back, the count must stay.
  return (await countCodeAttempt(deps.db, userId, tokenType, issuedAt, deps.now())) <= MAX_CODE_ATTEMPTS;
}
