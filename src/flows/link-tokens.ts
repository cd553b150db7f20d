// Following a mailed link (GET/POST /verify with a token hash, /authorize?invite_token=): which
// pending token the value names. Our links carry 256 random bits and are found by their SHA-256.
// A value in GoTrue's format, sha224(address + code), is what rows written before migration 0004
// (or by GoTrue itself, on a database taken over from it) were mailed with. Anyone who knows the
// address can compute it from a guess of the code, so such values are looked up only while a
// global budget of misses lasts, and the callers accept them only until the code expires and only
// while the code has attempts left (review 2026-11-25, H1). authsvc never writes such rows, so the
// path closes by itself one MAILER_OTP_EXP after the switch.
import { linkShape, linkTokenHash } from '../crypto/otp.ts';
import { findLegacyOneTimeTokens, findOneTimeTokensByLink, type OneTimeTokenRow, type OneTimeTokenType } from '../db/one-time-tokens.ts';
import { consume, type Limit, release } from '../db/rate-limits.ts';
import type { Deps } from '../deps.ts';

/**
 * Old-format link values that match nothing, per hour, across all instances. At 20 an hour an
 * attacker walks 480 of a code's 10^6 values in a day (a 0.05% chance against one pending link);
 * a real old link matches and gives its count back.
 */
export const LEGACY_LINK_MISSES_PER_HOUR = 20;
const LEGACY_BUDGET: Limit = { count: LEGACY_LINK_MISSES_PER_HOUR, periodSeconds: 3600, form: 'window' };
const LEGACY_KEY = 'legacy_link_miss';

/** The pending tokens of `types` that the link value names (none for anything else). */
export async function findLinkedTokens(deps: Deps, value: string, types: readonly OneTimeTokenType[]): Promise<OneTimeTokenRow[]> {
  const shape = linkShape(value);
  if (shape === 'random') return findOneTimeTokensByLink(deps.db, linkTokenHash(value), types);
  if (shape !== 'legacy') return [];
  const at = deps.now();
  // Counted before the look-up, so parallel guesses cannot overrun the budget.
  if (!(await consume(deps.db, LEGACY_KEY, LEGACY_BUDGET, at))) {
    deps.logger.warn('old-format link refused: the hourly budget of misses is spent', { budget: LEGACY_LINK_MISSES_PER_HOUR });
    return [];
  }
  // The old link carried the stored value itself (`pkce_`-prefixed for a PKCE flow).
  const rows = await findLegacyOneTimeTokens(deps.db, value, types);
  if (rows.length > 0) await release(deps.db, LEGACY_KEY, LEGACY_BUDGET, at);
  return rows;
}
