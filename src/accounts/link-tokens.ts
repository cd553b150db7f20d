// Following a mailed link (GET/POST /verify with a token hash, /authorize?invite_token=): which
// pending token the value names. Our links carry 256 random bits and are found by their SHA-256.
// A value in GoTrue's format, sha224(address + code), is what rows written before migration 0004
// (or by GoTrue itself, on a database taken over from it) were mailed with. Anyone who knows the
// address can compute it from a guess of the code, so such values are looked up only while a
// global budget of misses lasts, and the client's share of it; the callers accept them only until
// the code expires and only while the code has attempts left (review 2026-11-25, H1). authsvc
// never writes such rows, so the path closes by itself one MAILER_OTP_EXP after the switch.
import { linkShape, linkTokenHash } from '../crypto/otp.ts';
import {
  findLegacyOneTimeTokens,
  findOneTimeTokensByLink,
  type OneTimeTokenRow,
  type OneTimeTokenType,
} from '../db/one-time-tokens.ts';
import { consume, type Limit, release } from '../db/rate-limits.ts';
import type { Deps } from '../deps.ts';

/**
 * Old-format link values that match nothing, per hour, across all instances. At 20 an hour an
 * attacker walks 480 of a code's 10^6 values in a day (a 0.05% chance against one pending link);
 * a real old link matches and gives its count back.
 */
export const LEGACY_LINK_MISSES_PER_HOUR = 20;
/**
 * The share of that budget one client may spend in an hour (review 2026-12-01, section 5): a
 * miss cannot be laid at any address's door (the value is a hash of address and guess), so it is
 * laid at the client's, and one client no longer spends the budget of every genuine old link:
 * that takes seven. A mail scanner's visit and a second click are two misses; a third is spare.
 */
export const LEGACY_LINK_MISSES_PER_CLIENT_PER_HOUR = 3;
const LEGACY_BUDGET: Limit = { count: LEGACY_LINK_MISSES_PER_HOUR, periodSeconds: 3600, form: 'window' };
const CLIENT_BUDGET: Limit = { count: LEGACY_LINK_MISSES_PER_CLIENT_PER_HOUR, periodSeconds: 3600, form: 'window' };
const LEGACY_KEY = 'legacy_link_miss';

/**
 * Whose share a look-up spends: the client key of RATE_LIMIT_HEADER (or Sb-Forwarded-For), as
 * every per-client limit; with the header configured but missing from the request, one shared
 * share for all such requests; without the header configured, none (the socket peer may be
 * the proxy every user comes through, and one share for all would be smaller than the budget).
 * `ip:` rows are swept when idle (db/rate-limits.ts).
 */
function clientBudgetKey(deps: Deps, client: string | undefined): string | undefined {
  const who = client ?? (deps.config.rateLimit.header ? 'unidentified' : undefined);
  return who === undefined ? undefined : `ip:${LEGACY_KEY}:${who}`;
}

/**
 * The pending tokens of `types` that the link value names (none for anything else). `client`:
 * the request's rate-limit client key (http/rate-limit.ts rateLimitKey), spent on an old-format miss.
 */
export async function findLinkedTokens(
  deps: Deps,
  value: string,
  types: readonly OneTimeTokenType[],
  client?: string,
): Promise<OneTimeTokenRow[]> {
  const shape = linkShape(value);
  if (shape === 'random') return findOneTimeTokensByLink(deps.db, linkTokenHash(value), types);
  if (shape !== 'legacy') return [];
  const at = deps.now();
  const share = clientBudgetKey(deps, client);
  // Counted before the look-up, so parallel guesses cannot overrun either budget.
  if (share && !(await consume(deps.db, share, CLIENT_BUDGET, at))) {
    deps.logger.warn("old-format link refused: this client's hourly share of misses is spent", {
      budget: LEGACY_LINK_MISSES_PER_CLIENT_PER_HOUR,
    });
    return [];
  }
  if (!(await consume(deps.db, LEGACY_KEY, LEGACY_BUDGET, at))) {
    if (share) await release(deps.db, share, CLIENT_BUDGET, at);
    deps.logger.warn('old-format link refused: the hourly budget of misses is spent', {
      budget: LEGACY_LINK_MISSES_PER_HOUR,
    });
    return [];
  }
  // The old link carried the stored value itself (`pkce_`-prefixed for a PKCE flow).
  const rows = await findLegacyOneTimeTokens(deps.db, value, types);
  if (rows.length > 0) {
    await release(deps.db, LEGACY_KEY, LEGACY_BUDGET, at);
    if (share) await release(deps.db, share, CLIENT_BUDGET, at);
  }
  return rows;
}
