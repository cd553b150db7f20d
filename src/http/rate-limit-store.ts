// Where per-key rate-limit buckets live. Memory (one process), Postgres (exact across
// instances) and, on Workers, KV (approximate: eventually consistent) implement this.
export interface Bucket {
  /** Most requests allowed at once (GoTrue's burst). */
  capacity: number;
  /** Tokens added back per second. */
  refillPerSecond: number;
}

export interface RateLimitStore {
  /** Takes one token from the bucket named `key`; false when it is empty (nothing is taken then). */
  take(key: string, bucket: Bucket, now: Date): Promise<boolean>;
}
