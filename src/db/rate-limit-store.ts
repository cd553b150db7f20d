// Where per-key rate-limit buckets live. Memory (one process), Postgres (exact across
// instances) and, on Workers, Durable Objects (exact, one object per key) implement this.
import type { Bucket } from './rate-limits.ts';

export interface RateLimitStore {
  /** Takes one token from the bucket named `key`; false when it is empty (nothing is taken then). */
  take(key: string, bucket: Bucket, now: Date): Promise<boolean>;
}
