// Per-client rate limits (GoTrue §8): token buckets keyed on the header named by
// RATE_LIMIT_HEADER (or Sb-Forwarded-For when enabled); with neither, no per-IP limiting, as in
// GoTrue. Buckets live in memory (one instance) or Postgres (RATE_LIMIT_STORE=postgres: exact
// across instances), or wherever an adapter's store puts them (Durable Objects on Workers).
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.ts';
import type { Config } from '../config/types.ts';
import { sha256Hex } from '../crypto/encoding.ts';
import type { Database } from '../db/database.ts';
import { type Bucket, expireRateLimitRows, takeToken } from '../db/rate-limits.ts';
import { ApiError } from '../core/errors.ts';
import type { RateLimitStore } from '../db/rate-limit-store.ts';
import { isIp } from './request-meta.ts';

export type LimitName =
  | 'token'
  | 'verify'
  | 'otp'
  | 'magiclink'
  | 'recover'
  | 'resend'
  | 'signup'
  | 'user'
  | 'anonymous'
  | 'mfa_challenge'
  | 'mfa_verify'
  | 'passkey'
  | 'oauth_client_register'
  | 'web3'
  | 'sso'
  | 'saml_assertion';

const FIVE_MINUTES = 300;

/** GoTrue's refill rates and bursts per limiter. */
export function bucketFor(name: LimitName, cfg: Config['rateLimit']): Bucket {
  switch (name) {
    case 'token':
      return { capacity: 30, refillPerSecond: cfg.tokenRefresh / FIVE_MINUTES };
    case 'verify':
      return { capacity: 30, refillPerSecond: cfg.verify / FIVE_MINUTES };
    case 'web3':
      return { capacity: 30, refillPerSecond: cfg.web3 / FIVE_MINUTES };
    // RATE_LIMIT_SSO (POST /sso) and SAML_RATE_LIMIT_ASSERTION (the ACS): N per 5 minutes, burst 30.
    case 'sso':
      return { capacity: 30, refillPerSecond: cfg.sso / FIVE_MINUTES };
    case 'saml_assertion':
      return { capacity: 30, refillPerSecond: cfg.samlAssertion / FIVE_MINUTES };
    // MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY: N per minute, burst 30, one bucket per endpoint.
    case 'mfa_challenge':
    case 'mfa_verify':
      return { capacity: 30, refillPerSecond: cfg.mfaChallengeAndVerify / 60 };
    // RATE_LIMIT_PASSKEY: N per 5 minutes, burst 30 (passkey sign-in options only).
    case 'passkey':
      return { capacity: 30, refillPerSecond: cfg.passkey / FIVE_MINUTES };
    case 'oauth_client_register':
      return { capacity: 30, refillPerSecond: cfg.oauthClientRegister / FIVE_MINUTES };
    case 'anonymous':
      return { capacity: cfg.anonymousUsers, refillPerSecond: cfg.anonymousUsers / 3600 };
    default:
      return { capacity: 30, refillPerSecond: cfg.otp / FIVE_MINUTES };
  }
}

const MEMORY_MAX_KEYS = 100_000;

/** One process's buckets; idle buckets (full again) are dropped, and the map never grows past a bound. */
export function createMemoryRateLimitStore(): RateLimitStore {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    async take(key, bucket, now) {
      const t = now.getTime();
      const b = buckets.get(key);
      const tokens = b
        ? Math.min(bucket.capacity, b.tokens + ((t - b.at) / 1000) * bucket.refillPerSecond)
        : bucket.capacity;
      if (tokens < 1) return false;
      buckets.delete(key); // re-insert: Map order is then least recently used first
      buckets.set(key, { tokens: tokens - 1, at: t });
      if (buckets.size > MEMORY_MAX_KEYS) buckets.delete(buckets.keys().next().value!);
      return true;
    },
  };
}

/** Rows untouched this long are dropped; every bucket GoTrue's rates allow is full again by then. */
export const ROW_HORIZON_SECONDS = 24 * 3600;
const SWEEP_EVERY_MS = 10 * 60 * 1000;

/** When the Postgres store last swept idle rows; shared by the stores of one app. */
export interface SweepClock {
  last: number;
}

/**
 * Buckets in the rate_limits table. At most every ten minutes one take also deletes per-client
 * rows (and code-attempt rows) idle for a day or more, or for as long as the slowest bucket
 * takes to refill: deleting a full bucket changes nothing. Stores over per-request databases
 * (Workers) pass one `sweeps` so they sweep every ten minutes, not on every request.
 */
export function createPostgresRateLimitStore(
  db: Database,
  horizonSeconds = ROW_HORIZON_SECONDS,
  sweeps: SweepClock = { last: -Infinity },
): RateLimitStore {
  return {
    async take(key, bucket, now) {
      const allowed = await takeToken(db, `ip:${key}`, bucket, now);
      if (now.getTime() - sweeps.last >= SWEEP_EVERY_MS) {
        sweeps.last = now.getTime();
        const refill = bucket.refillPerSecond > 0 ? bucket.capacity / bucket.refillPerSecond : 0;
        const horizon = Math.max(horizonSeconds, Math.min(refill, 30 * 24 * 3600));
        // A failed sweep is retried at the next one; the request's own answer stands.
        await expireRateLimitRows(db, new Date(now.getTime() - horizon * 1000)).catch(() => undefined);
      }
      return allowed;
    },
  };
}

/**
 * The store RATE_LIMIT_STORE names, over a given database. One function per app: the memory
 * store is one for every call, the Postgres stores share their sweep clock, so an adapter that
 * opens the database per request (Workers) gets the same limits as one that opens it once.
 */
export function rateLimitStores(config: Config): (db: Database) => RateLimitStore {
  if (config.rateLimit.store !== 'postgres') {
    const memory = createMemoryRateLimitStore();
    return () => memory;
  }
  // A code-attempt counter must outlive its code: rows stay at least as long as a code is valid.
  const horizon = Math.max(ROW_HORIZON_SECONDS, config.mailer.otpExp, config.sms.otpExp);
  const sweeps: SweepClock = { last: -Infinity };
  return (db) => createPostgresRateLimitStore(db, horizon, sweeps);
}

/**
 * A header value as a bounded key: an IP address as it is (IPv6 lower-cased), anything else as
 * `h:` and a hash, so a long or odd value neither overflows an index row nor reaches a store raw.
 */
export function clientKey(value: string): string {
  if (isIp(value)) return value.includes(':') ? value.toLowerCase() : value;
  return `h:${sha256Hex(value).slice(0, 32)}`;
}

/** The client key GoTrue limits on, or undefined when per-IP limiting is off for this request. */
export function rateLimitKey(c: Context<AppEnv>): string | undefined {
  const cfg = c.get('deps').config;
  if (cfg.security.sbForwardedForEnabled) {
    const sb = c.req.header('sb-forwarded-for')?.split(',')[0]?.trim();
    if (sb && isIp(sb)) return clientKey(sb);
  }
  const header = cfg.rateLimit.header;
  if (!header) return undefined;
  const value = c.req.header(header)?.split(',')[0]?.trim();
  return value ? clientKey(value) : undefined;
}

export async function enforceRateLimit(c: Context<AppEnv>, name: LimitName): Promise<void> {
  const key = rateLimitKey(c);
  if (key === undefined) return;
  const deps = c.get('deps');
  if (!(await c.get('limiter').take(`${name}:${key}`, bucketFor(name, deps.config.rateLimit), deps.now()))) {
    throw new ApiError(429, 'over_request_rate_limit', 'Request rate limit reached');
  }
}
