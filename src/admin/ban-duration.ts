// `ban_duration` of the admin user API (GoTrue §11.6): Go's time.ParseDuration syntax (units ns,
// us/µs, ms, s, m, h — no days) or "none". Zero (or "none") lifts the ban; a negative duration
// sets banned_until in the past, which bans no one, as in GoTrue.
import { parseGoDuration } from '../config/duration.ts';
import { validationFailed } from '../core/errors.ts';

// time.Duration is an int64 of nanoseconds: Go refuses anything past ±2^63-1 ns (~292 years).
const MAX_DURATION_MS = 9_223_372_036_854.775;

/** Milliseconds to ban for (0 = unban), or GoTrue's 400 validation_failed. */
export function parseBanDuration(value: string): number {
  if (value === 'none') return 0;
  let ms: number;
  try {
    ms = parseGoDuration(value);
  } catch (err) {
    throw validationFailed(`invalid format for ban duration: time: ${(err as Error).message}`);
  }
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DURATION_MS) {
    throw validationFailed(`invalid format for ban duration: time: invalid duration ${JSON.stringify(value)}`);
  }
  return ms;
}

/** The `banned_until` column for a parsed duration: NULL when unbanning. */
export function bannedUntil(durationMs: number, now: Date): Date | null {
  return durationMs === 0 ? null : new Date(now.getTime() + durationMs);
}
