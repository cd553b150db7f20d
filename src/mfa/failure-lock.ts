// Guessing a second factor (security review 2026-12-01, M1). Wrong codes are counted where they
// were typed (a TOTP or phone factor, or the user's recovery-code set), across challenges:
// every fifth wrong code in a row locks it, each lock twice as long as the one before, up to a
// day. Meanwhile even the right code is refused, without being compared. A right code resets the
// count. The caller holds the row's lock from the check to the write, so parallel guesses are
// counted one after the other and no more than five are compared before the lock.
import { ApiError } from '../core/errors.ts';

export const MAX_FAILED_VERIFICATIONS = 5;
/** The longest lock: from then on about five guesses a day. */
export const MAX_LOCK_SECONDS = 24 * 3600;
/** The first lock of a TOTP or phone factor: a user who mistypes five times waits a minute. */
export const FACTOR_FIRST_LOCK_SECONDS = 60;

export interface FailureState {
  failedVerificationCount: number;
  verificationLockedUntil: Date | null;
}

/** The seconds left of the row's lock, or 0 when it is not locked. */
export function lockSecondsLeft(s: FailureState, now: Date): number {
  const until = s.verificationLockedUntil;
  return until && until > now ? Math.ceil((until.getTime() - now.getTime()) / 1000) : 0;
}

/** The row's state after one more wrong code (written by the caller under the row's lock). */
export function afterFailure(s: FailureState, firstLockSeconds: number, now: Date): FailureState {
  const count = s.failedVerificationCount + 1;
  if (count % MAX_FAILED_VERIFICATIONS !== 0)
    return { failedVerificationCount: count, verificationLockedUntil: s.verificationLockedUntil };
  // The n-th lock in a row lasts first · 2^(n−1) seconds (2 ** a large n is Infinity: the cap holds).
  const seconds = Math.min(firstLockSeconds * 2 ** (count / MAX_FAILED_VERIFICATIONS - 1), MAX_LOCK_SECONDS);
  return { failedVerificationCount: count, verificationLockedUntil: new Date(now.getTime() + seconds * 1000) };
}

/** After a right code. */
export const RESET_FAILURES: FailureState = { failedVerificationCount: 0, verificationLockedUntil: null };

/** A locked TOTP or phone factor, at challenge and verify (GoTrue has no such lock, nor a code for it). */
export const factorLocked = (seconds: number) =>
  new ApiError(
    429,
    'mfa_factor_locked',
    `Too many invalid codes for this factor. For security purposes, you can only try again after ${seconds} seconds.`,
  );
