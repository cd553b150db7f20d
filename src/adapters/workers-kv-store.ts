// Rate-limit buckets in Workers KV: opt-in, and approximate by design. KV is eventually
// consistent (a write can take up to a minute to be seen in other locations), a read-modify-write
// is not atomic (concurrent requests may both take the last token), and KV accepts about one
// write per second per key (a refused write is ignored: the request is allowed). It bounds abuse
// per location cheaply; for exact limits across instances use the Postgres store.
import type { Bucket } from '../db/rate-limits.ts';
import type { RateLimitStore } from '../http/rate-limit-store.ts';

/** The part of a Workers KV namespace binding used here. */
export interface KvNamespaceLike {
  get(key: string, type: 'text'): Promise<string | null>;
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
}

interface Stored {
  /** Tokens left at `at`. */
  tokens: number;
  /** Milliseconds since the epoch. */
  at: number;
}

// KV refuses expirationTtl below 60 seconds and keys over 512 bytes.
const MIN_TTL_SECONDS = 60;
const KEY_PREFIX = 'authsvc:rl:';
const MAX_PLAIN_KEY_BYTES = 256;

async function kvKey(key: string): Promise<string> {
  const bytes = new TextEncoder().encode(key);
  if (bytes.length <= MAX_PLAIN_KEY_BYTES) return KEY_PREFIX + key;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return `${KEY_PREFIX}sha256:${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function parseStored(raw: string | null): Stored | undefined {
  if (!raw) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v !== 'object' || v === null) return undefined;
    const { tokens, at } = v as { tokens?: unknown; at?: unknown };
    return typeof tokens === 'number' && typeof at === 'number' && Number.isFinite(tokens) && Number.isFinite(at)
      ? { tokens, at }
      : undefined;
  } catch {
    return undefined;
  }
}

export function createKvRateLimitStore(kv: KvNamespaceLike): RateLimitStore {
  return {
    async take(key: string, bucket: Bucket, now: Date): Promise<boolean> {
      if (bucket.capacity < 1) return false;
      const name = await kvKey(key);
      const stored = parseStored(await kv.get(name, 'text'));
      const nowMs = now.getTime();
      const refill = Math.max(0, bucket.refillPerSecond);
      const tokens = stored
        ? Math.min(bucket.capacity, stored.tokens + (Math.max(0, nowMs - stored.at) / 1000) * refill)
        : bucket.capacity;
      if (tokens < 1) return false;
      const left = tokens - 1;
      // Once the bucket would be full again the entry says nothing a missing one would not: let it expire.
      const untilFull = refill > 0 ? Math.ceil((bucket.capacity - left) / refill) : undefined;
      try {
        await kv.put(name, JSON.stringify({ tokens: left, at: nowMs } satisfies Stored),
          untilFull === undefined ? undefined : { expirationTtl: Math.max(MIN_TTL_SECONDS, untilFull) });
      } catch {
        // Over KV's per-key write rate: the token is not recorded (approximate, see above).
      }
      return true;
    },
  };
}
