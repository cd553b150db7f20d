// The Worker bundle as `wrangler deploy` builds it: no Node-only code, under 1 MiB gzipped,
// carrying exactly migrations/*.sql. Then, in workerd (no database needed): a bad configuration
// is a JSON 500 with the problems in the log (the removed KV rate-limit store among them), and
// the Durable Object rate-limit store on real Durable Objects.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type DurableObjectNamespaceLike,
  createDurableObjectRateLimitStore,
} from '../../src/adapters/workers-rate-limiter.ts';
import { MIGRATIONS_DIR } from '../../src/adapters/migrations-fs.ts';
import {
  GZIP_BUDGET_BYTES,
  type WorkerBuild,
  buildWorker,
  kib,
  COMPATIBILITY_DATE,
} from '../../scripts/build-worker.ts';

// Packages that only run on Node (or need native code) and must never reach the Worker.
const NODE_ONLY =
  /^(pg|pg-pool|pg-protocol|pg-cloudflare|pgpass|@electric-sql\/pglite|nodemailer|@node-rs\/[^/]+|@hono\/node-server)$/;

let outdir: string;
let build: WorkerBuild;
let source: string;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'authsvc-worker-'));
  build = await buildWorker(outdir);
  source = readFileSync(build.entry, 'utf8');
});

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/**
 * Packages the bundle was made from: wrangler leaves `// node_modules/<pkg>/…` above each module
 * (unminified), the path relative to the project: `../main/node_modules/…` in a git worktree
 * whose node_modules links to another checkout's.
 */
function bundledPackages(js: string): Set<string> {
  const out = new Set<string>();
  for (const m of js.matchAll(/^\/\/ (?:\S*\/)?node_modules\/((?:@[^/\s]+\/)?[^/\s]+)/gm)) if (m[1]) out.add(m[1]);
  return out;
}

describe('Worker bundle', () => {
  test('contains no node-postgres, PGlite, nodemailer, @node-rs or other Node-only module', () => {
    const packages = bundledPackages(source);
    // The markers are there at all (the check is not vacuous): the core's own dependencies.
    for (const expected of ['hono', 'drizzle-orm', '@neondatabase/serverless', 'bcryptjs', 'worker-mailer']) {
      expect(packages, `expected ${expected} in the bundle`).toContain(expected);
    }
    expect([...packages].filter((p) => NODE_ONLY.test(p))).toEqual([]);
    // Imports left to the runtime: the bundled migrations and cloudflare:sockets, nothing from node:*.
    const imports = [...source.matchAll(/^import\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1] ?? '');
    expect([...new Set(imports.filter((i) => !i.endsWith('.sql')))]).toEqual(['cloudflare:sockets']);
    expect(source).not.toMatch(/\brequire\(\s*["']node:/);
  });

  test('stays under 1 MiB gzipped', () => {
    console.log(`Worker bundle: ${kib(build.rawBytes)} raw, ${kib(build.gzipBytes)} gzipped`);
    expect(build.gzipBytes).toBeLessThan(GZIP_BUDGET_BYTES);
  });

  test('carries exactly migrations/*.sql, byte for byte', () => {
    const files = readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    // wrangler names a text module <sha1 of its content>-<file name>.
    const bundled = build.modules
      .filter((m) => m.type === 'Text')
      .map((m) => m.name)
      .sort((a, b) => a.slice(41).localeCompare(b.slice(41)));
    expect(bundled.map((n) => n.replace(/^[0-9a-f]{40}-/, ''))).toEqual(files);
    bundled.forEach((name, i) => {
      expect(readFileSync(join(outdir, name), 'utf8')).toBe(readFileSync(join(MIGRATIONS_DIR, files[i] ?? ''), 'utf8'));
      expect(source).toContain(`from "./${name}"`);
    });
    // …and the Worker's migration list names each one by its version.
    const versions = [...source.matchAll(/\{ version: "([^"]+)", sql: \w+ \}/g)].map((m) => m[1]);
    expect(versions).toEqual(files.map((f) => f.replace(/\.sql$/, '')));
  });
});

describe('in workerd', () => {
  const secret = 'do-not-log-this-secret-7f3a9c';
  let mf: Miniflare;
  let logged = '';

  beforeAll(async () => {
    const worker = {
      modules: true,
      scriptPath: build.entry,
      modulesRoot: build.outdir,
      modulesRules: [{ type: 'Text' as const, include: ['**/*.sql'] }],
      compatibilityDate: COMPATIBILITY_DATE,
    };
    mf = new Miniflare({
      workers: [
        {
          ...worker,
          name: 'bad',
          // Deliberately incomplete: no SITE_URL etc., and the embedded database, which Workers lack.
          bindings: { DATABASE_URL: 'pglite://./data', AUTHSVC_JWT_SECRET: secret },
          durableObjects: { RATE_LIMITER: 'RateLimiter' },
        },
        {
          ...worker,
          name: 'kv',
          // Complete but for the removed KV store (and its binding, which is ignored).
          bindings: {
            AUTHSVC_SITE_URL: 'http://localhost:3000',
            DATABASE_URL: 'postgres://db.invalid/authsvc',
            AUTHSVC_JWT_SECRET: secret,
            AUTHSVC_SMTP_ADMIN_EMAIL: 'auth@example.com',
            AUTHSVC_WORKERS_MAIL_LOG: 'true',
            AUTHSVC_RATE_LIMIT_STORE: 'kv',
          },
          kvNamespaces: ['RATE_LIMIT_KV'],
        },
      ],
      // What the Worker writes to its console, a line at a time.
      handleStructuredLogs({ message }: { message: string }) {
        logged += `${message}\n`;
      },
    });
    await mf.ready;
  });

  afterAll(async () => {
    await mf?.dispose();
  });

  test("a bad configuration answers GoTrue's JSON 500; the problems go to the log, the secret nowhere", async () => {
    const res = await (await mf.getWorker('bad')).fetch('http://localhost/health');
    expect(res.status).toBe(500);
    expect(res.headers.get('x-sb-error-code')).toBe('unexpected_failure');
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({
      code: 500,
      error_code: 'unexpected_failure',
      msg: 'Unexpected failure, please check server logs for more information',
    });
    await expect.poll(() => logged, { timeout: 5_000 }).toContain('Workers need postgres://');
    expect(logged).toContain('AUTHSVC_SITE_URL (or GOTRUE_SITE_URL) is required');
    expect(logged + body).not.toContain(secret);
  });

  test('AUTHSVC_RATE_LIMIT_STORE=kv is refused at start-up, naming what to use instead', async () => {
    const res = await (await mf.getWorker('kv')).fetch('http://localhost/health');
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error_code: 'unexpected_failure' });
    await expect
      .poll(() => logged, { timeout: 5_000 })
      .toContain(
        'RATE_LIMIT_STORE: kv is no longer supported (Workers KV is eventually consistent and cannot hold a limit); use postgres (the default) or durable_object with a RateLimiter namespace bound as RATE_LIMITER',
      );
  });

  test('Durable Object rate-limit store: a bucket empties, refills with time, and keys stay apart', async () => {
    const namespace = (await mf.getDurableObjectNamespace(
      'RATE_LIMITER',
      'bad',
    )) as unknown as DurableObjectNamespaceLike;
    const store = createDurableObjectRateLimitStore(namespace);
    const bucket = { capacity: 3, refillPerSecond: 1 / 60 };
    const t0 = new Date('2030-01-01T00:00:00Z');
    const takes = [];
    for (let i = 0; i < 4; i++) takes.push(await store.take('ip:192.0.2.1', bucket, t0));
    expect(takes).toEqual([true, true, true, false]);
    expect(await store.take('ip:192.0.2.2', bucket, t0)).toBe(true);
    // One token back per minute, never more than the capacity.
    expect(await store.take('ip:192.0.2.1', bucket, new Date(t0.getTime() + 30_000))).toBe(false);
    expect(await store.take('ip:192.0.2.1', bucket, new Date(t0.getTime() + 60_000))).toBe(true);
    expect(await store.take('ip:192.0.2.1', bucket, new Date(t0.getTime() + 60_000))).toBe(false);
    // Any key length names an object; an empty bucket refuses at once.
    expect(await store.take(`email:${'x'.repeat(600)}@example.com`, bucket, t0)).toBe(true);
    expect(await store.take('nothing-allowed', { capacity: 0, refillPerSecond: 1 }, t0)).toBe(false);
    // One object per key, each take atomic: ten at once on a fresh bucket of 3 allow exactly 3.
    const burst = await Promise.all(Array.from({ length: 10 }, () => store.take('ip:192.0.2.3', bucket, t0)));
    expect(burst.filter(Boolean)).toHaveLength(3);
  });
});
