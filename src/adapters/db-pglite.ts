// Embedded Postgres (PGlite). One process per data directory: PGlite has no multi-process
// access, so we hold a lock file (data-dir-lock.ts) and refuse a second process with a clear message.
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createTables } from '../../drizzle/schema.ts';
import type { Connection, Database, Orm } from '../db/database.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { type PgliteQueryable, pgliteRunner } from './db-runner.ts';
import { ormVia, pgliteView } from './db-tracing.ts';
import { PACKAGE_ROOT } from './package-root.ts';

// A buffer pool of 16 MB instead of Postgres's 128 MB: one process and small tables, and every
// megabyte of it is WASM memory the process holds for good (a restarted server: 366 → 317 MB RSS).
const OPTIONS = { postgresqlconf: ['shared_buffers=16MB'] };

/** Node itself (not Bun or Deno, whose worker threads differ): initdb can run in a worker. */
const plainNode =
  typeof process !== 'undefined' && !!process.versions?.node && !process.versions.bun && !('Deno' in globalThis);

function initdbInWorker(pgdata: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const script = join(PACKAGE_ROOT, 'src', 'adapters', 'pglite-initdb-worker.mjs');
    const worker = new Worker(script, { workerData: { pgdata, options: OPTIONS } });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`creating the embedded database in ${pgdata} failed (worker exit code ${code})`));
    });
  });
}

async function createClient(pgdata: string | undefined): Promise<PGlite> {
  if (pgdata === undefined) return PGlite.create(OPTIONS);
  if (existsSync(join(pgdata, 'PG_VERSION'))) return PGlite.create(pgdata, OPTIONS);
  // A new directory: initdb's instance keeps about 570 MB for its lifetime, so it must not be
  // the one that serves. On Node it runs in a worker thread that exits (first start: 439 MB RSS
  // instead of 757–926; 220 MB since the launcher fixes malloc's trim threshold,
  // docs/decisions/malloc-trim.md); elsewhere it is closed and reopened, and the memory goes at a
  // later GC.
  if (plainNode) {
    await initdbInWorker(pgdata);
  } else {
    await (await PGlite.create(pgdata, OPTIONS)).close();
  }
  return PGlite.create(pgdata, OPTIONS);
}

export async function openPglite(opts: { dataDir?: string; namespace: string; traced?: boolean }): Promise<Database> {
  const release = opts.dataDir ? await lockDataDir(opts.dataDir) : () => undefined;
  let client: PGlite;
  try {
    // Postgres files live in <dir>/pgdata; <dir> also holds our lock file and local JWT secret.
    client = await createClient(opts.dataDir ? join(resolve(opts.dataDir), 'pgdata') : undefined);
  } catch (err) {
    release();
    throw err;
  }
  const orm = drizzle({ client }) as unknown as Orm;
  // PGlite's own transaction: it holds the one connection for `fn` alone (other statements wait).
  const beginOn =
    (c: PGlite) =>
    <T>(fn: (conn: Connection) => Promise<T>): Promise<T> =>
      c.transaction((tx) =>
        fn({
          orm: drizzle({ client: tx as unknown as PGlite }) as unknown as Orm,
          runner: pgliteRunner(tx as unknown as PgliteQueryable),
        }),
      );
  let closed = false;
  return {
    kind: 'pglite',
    namespace: opts.namespace,
    orm,
    runner: pgliteRunner(client as unknown as PgliteQueryable),
    t: createTables(opts.namespace),
    begin: beginOn(client),
    ...(opts.traced
      ? {
          traced: (parent) => {
            const view = pgliteView(client, parent);
            return {
              orm: ormVia(orm, view),
              runner: pgliteRunner(view as unknown as PgliteQueryable),
              begin: beginOn(view),
            };
          },
        }
      : {}),
    async withSession(fn) {
      return fn({
        exec: async (sql) => {
          const results = await client.exec(sql);
          return (results.at(-1)?.rows ?? []) as Record<string, unknown>[];
        },
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
      release();
    },
  };
}
