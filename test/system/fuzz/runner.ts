// Runs generated requests through the real app (app.request, in process) and checks each answer:
// no 5xx, and every error a JSON body in GoTrue's shape whose code matches the status.
import fc from 'fast-check';
import { wantsApiVersion2024 } from '../../../src/http/error-body.ts';
import { anyRequest, type FuzzRequest, materialize } from './requests.ts';
import { cap, type FuzzTarget, harvest, refreshPool } from './setup.ts';

export interface FuzzStats {
  requests: number;
  /** `METHOD /pattern` under each prefix. */
  routes: Set<string>;
  /** `status error_code` → count, for 4xx answers. */
  clientErrors: Map<string, number>;
  byClass: Map<string, number>;
  serverErrors: number;
  /** Requests meant to succeed that did (deep paths reached). */
  validOk: number;
  /** Per route: [valid requests sent, accepted]. */
  validByRoute: Map<string, [number, number]>;
  failures: string[];
}

export const newStats = (): FuzzStats => ({
  requests: 0,
  routes: new Set(),
  clientErrors: new Map(),
  byClass: new Map(),
  serverErrors: 0,
  validOk: 0,
  validByRoute: new Map(),
  failures: [],
});

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

/** What is wrong with this answer, or undefined. */
export function checkAnswer(req: Request, status: number, headers: Headers, text: string): string | undefined {
  if (status >= 500) return `status ${status}: ${text.slice(0, 300)}`;
  if (status < 400) return undefined;
  // A HEAD answer has the status and headers of the GET, and no body.
  if (req.method === 'HEAD') return text === '' ? undefined : `HEAD answered with a body: ${text.slice(0, 100)}`;
  if (!(headers.get('content-type') ?? '').includes('application/json'))
    return `status ${status} without a JSON content type: ${text.slice(0, 200)}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `status ${status}, body is not JSON: ${text.slice(0, 200)}`;
  }
  if (status === 400 && typeof body.error === 'string' && typeof body.error_description === 'string') return undefined;
  // The OAuth server's own endpoints answer RFC 6749 / 6750 bodies at every 4xx (401 invalid_client, 413…).
  if (
    /\/oauth\/(token|revoke|introspect|userinfo|clients\/register)\/?$/.test(new URL(req.url).pathname) &&
    typeof body.error === 'string' &&
    typeof body.error_description === 'string'
  )
    return undefined;
  if (wantsApiVersion2024(req.headers.get('x-supabase-api-version') ?? undefined)) {
    if (typeof body.code !== 'string' || typeof body.message !== 'string')
      return `2024 error shape expected: ${text.slice(0, 200)}`;
    const header = headers.get('x-sb-error-code');
    if (header !== null && header !== body.code) return `x-sb-error-code ${header} differs from ${String(body.code)}`;
    return undefined;
  }
  if (body.code !== status || typeof body.error_code !== 'string' || typeof body.msg !== 'string') {
    return `legacy error shape {code: ${status}, error_code, msg} expected: ${text.slice(0, 200)}`;
  }
  if (headers.get('x-sb-error-code') !== body.error_code)
    return `x-sb-error-code differs from error_code ${String(body.error_code)}`;
  return undefined;
}

/** Sends one generated request; returns the failure, if any, and counts it in `stats`. */
export async function sendOne(target: FuzzTarget, spec: FuzzRequest, stats: FuzzStats): Promise<string | undefined> {
  stats.requests += 1;
  stats.routes.add(`${spec.prefix}${spec.route}`);
  if (stats.requests % 50 === 0) await refreshPool(target);
  const req = materialize(spec, target.pool);
  const probe = new Request(req.url, { method: req.method === 'HEAD' ? 'HEAD' : 'GET', headers: req.headers });
  const logsBefore = target.t.logs.length;
  let res: Response;
  try {
    res = await target.t.app.request(req);
  } catch (err) {
    stats.serverErrors += 1;
    return `threw: ${(err as Error).stack ?? String(err)}`;
  }
  const text = await res.text();
  bump(stats.byClass, `${Math.floor(res.status / 100)}xx`);
  if (res.status >= 500) stats.serverErrors += 1;
  if (res.status >= 400 && res.status < 500) {
    let code = spec.method === 'HEAD' ? '(HEAD: no body)' : '?';
    try {
      const b = JSON.parse(text) as { error_code?: unknown; code?: unknown; error?: unknown };
      code = String(b.error_code ?? b.code ?? b.error);
    } catch {
      /* no JSON body: counted as above */
    }
    bump(stats.clientErrors, `${res.status} ${code}`);
  }
  if (spec.valid) {
    const counts = stats.validByRoute.get(spec.route) ?? [0, 0];
    counts[0] += 1;
    if (res.status < 400) {
      counts[1] += 1;
      stats.validOk += 1;
    }
    stats.validByRoute.set(spec.route, counts);
  }
  const location = res.headers.get('location');
  if (location?.includes('state=')) {
    try {
      cap(target.pool.state, new URL(location).searchParams.get('state'));
    } catch {
      /* not a URL */
    }
  }
  if (res.status < 300) {
    try {
      const body = JSON.parse(text) as { user?: { email?: unknown } };
      harvest(target.pool, body);
      // A valid email signup used FUZZ_PASSWORD: its address can sign in.
      if (spec.valid && spec.route === 'POST /signup') cap(target.pool.login, body.user?.email);
    } catch {
      /* not JSON (redirects, HTML) */
    }
  }
  const failure = checkAnswer(probe, res.status, res.headers, text);
  // The server's own account of an unexpected error (logged at level error).
  const logged =
    res.status >= 500 ? `\n  log: ${target.t.logs.slice(logsBefore).join('\n  log: ').slice(0, 2000)}` : '';
  if (failure) stats.failures.push(`${describe(spec)}\n  → ${failure}${logged}`);
  return failure;
}

/** A short, replayable description of a request (long strings cut). */
export function describe(spec: FuzzRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s);
  const body =
    spec.body === undefined
      ? ''
      : typeof spec.body === 'string'
        ? cut(JSON.stringify(spec.body))
        : `bytes[${[...spec.body].join(',')}]`;
  const headers = Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [k, cut(v)]));
  return `${spec.method} ${cut(spec.url)} ${JSON.stringify(headers)} ${body}`;
}

export interface FuzzOptions {
  seed: number;
  numRuns: number;
  /** Keep going past failures (every failure listed) instead of stopping and shrinking the first. */
  collect?: boolean;
  /** With `collect`: requests in flight at once (races on the Postgres server). */
  concurrency?: number;
  onProgress?: (stats: FuzzStats) => void | Promise<void>;
}

/**
 * A seeded run. With `collect`, every request is sent and failures are gathered; otherwise
 * fast-check stops at the first failure and shrinks it (the error names seed and path).
 */
export async function runFuzz(target: FuzzTarget, opts: FuzzOptions, stats = newStats()): Promise<FuzzStats> {
  const tick = async (): Promise<void> => {
    if (opts.onProgress && stats.requests % 1000 === 0) await opts.onProgress(stats);
  };
  if (opts.collect) {
    // In chunks of 100, each with a seed of its own derived from the run's (runs with
    // neighbouring seeds share no chunk): a whole run's requests at once would hold gigabytes.
    // With `concurrency`, that many requests are in flight at once.
    const width = Math.max(1, opts.concurrency ?? 1);
    for (let done = 0, chunk = 0; done < opts.numRuns; chunk++) {
      const specs = fc.sample(anyRequest, {
        seed: (opts.seed * 1_000_003 + chunk) | 0,
        numRuns: Math.min(100, opts.numRuns - done),
      });
      for (let i = 0; i < specs.length; i += width) {
        const batch = specs.slice(i, i + width);
        await Promise.all(batch.map((spec) => sendOne(target, spec, stats)));
        if (stats.requests % 1000 < batch.length) await opts.onProgress?.(stats);
      }
      done += specs.length;
    }
    return stats;
  }
  await fc.assert(
    fc.asyncProperty(anyRequest, async (spec) => {
      const failure = await sendOne(target, spec, stats);
      await tick();
      if (failure) throw new Error(failure);
    }),
    { seed: opts.seed, numRuns: opts.numRuns, endOnFailure: false, verbose: 0 },
  );
  return stats;
}
