// Load generation: autocannon run programmatically in the bench process (the servers are other
// processes). Every connection can get its own request list and state through `setupClient`,
// which is how sessions stay one per connection and refresh tokens are fed the latest value.
//
// Warm-up and measurement are one autocannon run: the first `warmup` seconds are not counted.
// (Two runs would abandon the warm-up's in-flight requests, and the server would spend the start
// of the measured run finishing them — for bcrypt-bound scenarios a second or more of work.)
// Statistics come from autocannon's per-response events, over the measured window only.
import autocannon, { type Client, type Options, type Request } from 'autocannon';

export interface LoadResult {
  /** Successful (2xx, body accepted) responses per second over the measured window. */
  rps: number;
  /** Latency percentiles of the successful responses, ms. */
  p50: number;
  p99: number;
  /** non-2xx responses + socket errors + timeouts + bodies `verifyBody` refused. */
  errors: number;
  ok: number;
  statusCodes: Record<string, number>;
  seconds: number;
}

const running = new Set<{ stop(): void }>();

/** Stops every load generator (Ctrl-C). */
export function stopAllLoad(): void {
  for (const i of running) i.stop();
}

export interface LoadOptions extends Options {
  duration: number;
  /** Seconds at the start of the run that are not measured. */
  warmup?: number;
  /** Called when the measured window opens. */
  onMeasureStart?: () => void;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const { warmup = 0, onMeasureStart, ...rest } = opts;
  const inst = autocannon({ timeout: 30, ...rest, duration: warmup + opts.duration });
  running.add(inst);
  let measuring = warmup <= 0;
  let t0 = performance.now();
  if (measuring) onMeasureStart?.();
  const timer = measuring
    ? undefined
    : setTimeout(() => {
        measuring = true;
        t0 = performance.now();
        onMeasureStart?.();
      }, warmup * 1000);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let errors = 0;
  inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (!measuring) return;
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status >= 200 && status < 300) {
      ok++;
      latencies.push(ms);
    } else {
      errors++;
    }
  });
  // Emitted right after the 'response' of the same answer.
  inst.on('reqMismatch', () => {
    if (!measuring) return;
    ok--;
    latencies.pop();
    errors++;
  });
  inst.on('reqError', () => {
    if (measuring) errors++;
  });
  try {
    await inst;
  } finally {
    clearTimeout(timer);
    running.delete(inst);
  }
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rps: ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    ok,
    statusCodes,
    seconds,
  };
}

/**
 * `setupClient` that hands each new connection the next item of `items` (round robin) and the
 * request list `build` makes for it: per-connection state with no sharing between connections.
 */
export function perConnection<T>(items: T[], build: (item: T, index: number) => Request[]): (client: Client) => void {
  let next = 0;
  return (client) => {
    const index = next++;
    const item = items[index % items.length];
    if (item === undefined) throw new Error('perConnection: no items');
    client.setRequests(build(item, index));
  };
}

/** A fresh object each time: autocannon writes Content-Length into the headers it is given. */
export function jsonHeaders(): Record<string, string> {
  return { 'content-type': 'application/json' };
}

/** POST with a JSON body, outside autocannon (seeding). */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { ...jsonHeaders(), ...headers }, body: JSON.stringify(body) });
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
