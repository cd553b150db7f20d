// Rate-limit buckets in Durable Objects (AUTHSVC_RATE_LIMIT_STORE=durable_object, a namespace of
// the RateLimiter class bound as RATE_LIMITER): one object per bucket key. An object runs one
// event at a time and its storage calls keep other events out until they finish, so a take is
// atomic and exact across isolates and locations, like the Postgres store, without a database
// write per limited request. Docs: docs/decisions/workers-rate-limit-store.md.
import type { Bucket } from '../db/rate-limits.ts';
import type { RateLimitStore } from '../db/rate-limit-store.ts';

/** The parts of a Durable Object's state used here (workerd's DurableObjectState). */
export interface DurableObjectStateLike {
  storage: {
    get<T>(key: string): Promise<T | undefined>;
    put(key: string, value: unknown): Promise<void>;
    deleteAll(): Promise<void>;
    setAlarm(scheduledTime: number): Promise<void>;
  };
}

/** The parts of a Durable Object namespace binding used here. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: never): { fetch(input: string, init?: RequestInit): Promise<Response> };
}

interface Stored {
  /** Tokens left at `at`. */
  tokens: number;
  /** Milliseconds since the epoch. */
  at: number;
}

interface TakeRequest {
  capacity: number;
  refillPerSecond: number;
  now: number;
}

const IDLE_MS = 24 * 3600 * 1000;
const MAX_KEEP_MS = 30 * 24 * 3600 * 1000;

function readTake(body: unknown): TakeRequest | undefined {
  const b = body as Partial<Record<keyof TakeRequest, unknown>> | null;
  const ok = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  if (!b || !ok(b.capacity) || !ok(b.refillPerSecond) || !ok(b.now)) return undefined;
  return { capacity: b.capacity, refillPerSecond: b.refillPerSecond, now: b.now };
}

/**
 * The Durable Object class; the Worker's entry module exports it. Its bucket is stored, not held
 * in memory only (an idle object is evicted), and deleted by an alarm once it is full again:
 * a full bucket and no bucket mean the same.
 */
export class RateLimiter {
  constructor(private readonly state: DurableObjectStateLike) {}

  async fetch(request: Request): Promise<Response> {
    const take = readTake(await request.json().catch(() => null));
    if (!take) return new Response('bad take', { status: 400 });
    const { capacity, refillPerSecond, now } = take;
    const storage = this.state.storage;
    const b = await storage.get<Stored>('bucket');
    // Clocks of different isolates may disagree a little: time never runs backwards for a bucket.
    const elapsed = b ? Math.max(0, now - b.at) / 1000 : 0;
    const tokens = b ? Math.min(capacity, b.tokens + elapsed * refillPerSecond) : capacity;
    if (tokens < 1) return Response.json({ allowed: false });
    const left = tokens - 1;
    await storage.put('bucket', { tokens: left, at: Math.max(now, b?.at ?? 0) } satisfies Stored);
    // Deleted once full again; a bucket that never refills (a rate of 0) after a day without a
    // take, as the Postgres store sweeps its rows (http/rate-limit.ts).
    const untilFull = refillPerSecond > 0 ? Math.ceil(((capacity - left) / refillPerSecond) * 1000) : IDLE_MS;
    await storage.setAlarm(now + Math.min(untilFull, MAX_KEEP_MS));
    return Response.json({ allowed: true });
  }

  async alarm(): Promise<void> {
    await this.state.storage.deleteAll();
  }
}

/** The store over a RATE_LIMITER namespace: one round trip to the bucket's object per take. */
export function createDurableObjectRateLimitStore(namespace: DurableObjectNamespaceLike): RateLimitStore {
  return {
    async take(key: string, bucket: Bucket, now: Date): Promise<boolean> {
      const stub = namespace.get(namespace.idFromName(key) as never);
      const res = await stub.fetch('https://rate-limiter.invalid/take', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          capacity: bucket.capacity,
          refillPerSecond: bucket.refillPerSecond,
          now: now.getTime(),
        } satisfies TakeRequest),
      });
      if (!res.ok) throw new Error(`rate limiter object answered ${res.status}`);
      return ((await res.json()) as { allowed?: unknown }).allowed === true;
    },
  };
}
