// node-postgres: DATABASE_URL=postgres://… on Node, Bun and Deno.
import { metrics } from '@opentelemetry/api';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { createTables } from '../../drizzle/schema.ts';
import { type Database, type Orm, pgErrorCode } from '../db/database.ts';
import { METER_NAME } from '../telemetry/metrics.ts';
import { pgRunner, pgTextTimeTypes, pgTransaction } from './db-runner.ts';
import { ormVia, poolView } from './db-tracing.ts';

const TYPES = pgTextTimeTypes(pg.types.getTypeParser as (typeId: number, format?: string) => unknown);
/** drizzle over one checked-out connection (a transaction's). */
const ormOver = (client: object) => drizzle({ client: client as pg.PoolClient }) as unknown as Orm;

export interface PostgresOptions {
  url: string;
  namespace: string;
  maxPoolSize: number;
  traced?: boolean;
  /** Longest wait for a new connection (or a free one, with a pool limit); unset: no limit. */
  connectTimeoutMs?: number;
  /** Longest wait for a statement's answer; its connection is then closed. Unset: no limit. */
  queryTimeoutMs?: number;
}

export function openPostgres(opts: PostgresOptions): Database {
  // DB_MAX_POOL_SIZE=0 means unlimited, as in GoTrue.
  const max = opts.maxPoolSize > 0 ? opts.maxPoolSize : Number.MAX_SAFE_INTEGER;
  const pool = new pg.Pool({
    connectionString: opts.url,
    max,
    application_name: 'authsvc',
    keepAlive: true,
    connectionTimeoutMillis: opts.connectTimeoutMs,
    query_timeout: opts.queryTimeoutMs,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  guardCheckouts(pool);
  poolMetrics(pool);
  const orm = drizzle({ client: pool }) as unknown as Orm;
  let closed = false;
  return {
    kind: 'postgres',
    namespace: opts.namespace,
    orm,
    runner: pgRunner(pool, TYPES),
    t: createTables(opts.namespace),
    begin: (fn) => pgTransaction(pool, ormOver, TYPES, fn),
    ...(opts.traced
      ? {
          traced: (parent) => {
            const view = poolView(pool, parent);
            return {
              orm: ormVia(orm, view),
              runner: pgRunner(view, TYPES),
              begin: (fn) => pgTransaction(view, ormOver, TYPES, fn),
            };
          },
        }
      : {}),
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn({
          exec: async (sql) => {
            // Scripts (migrations: index builds, the advisory lock) are not bounded by the query timeout.
            const res = await client.query({ text: sql, query_timeout: 86_400_000 } as pg.QueryConfig);
            const last = Array.isArray(res) ? res.at(-1) : res;
            return (last?.rows ?? []) as Record<string, unknown>[];
          },
        });
      } finally {
        client.release();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

/**
 * A checked-out connection (a transaction, a raw session) that failed without a SQLSTATE (reset,
 * closed, or a statement that timed out while its answer may still come) is never handed out
 * again: its later statements fail at once, and it is closed when released. Otherwise a
 * transaction whose statement timed out could stay open on it, and the next request's COMMIT on
 * that connection would commit the failed request's writes.
 */
function guardCheckouts(pool: pg.Pool): void {
  // The first error each broken client met: later statements fail with it as their cause.
  const broken = new WeakMap<pg.PoolClient, unknown>();
  const guarded = new WeakSet<pg.PoolClient>();
  // pg-pool listens for errors only while a client is idle: a connection reset between two
  // statements of a transaction would be an unhandled 'error' event and end the process.
  pool.on('connect', (client) =>
    client.on('error', (err) => {
      if (!broken.has(client)) broken.set(client, err);
    }),
  );
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const checkout = async (): Promise<pg.PoolClient> => {
    const client = await connect();
    if (!guarded.has(client)) {
      guarded.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        if (broken.has(client)) {
          const cause = broken.get(client);
          const err = new Error(`connection is broken: ${cause instanceof Error ? cause.message : String(cause)}`, {
            cause,
          });
          const callback = args.at(-1);
          if (typeof callback === 'function') return void queueMicrotask(() => callback(err));
          return Promise.reject(err);
        }
        const result = query(...args);
        if (!(result instanceof Promise)) return result;
        return result.catch((err: unknown) => {
          if (pgErrorCode(err) === undefined && !broken.has(client)) broken.set(client, err);
          throw err;
        });
      };
    }
    const release = client.release;
    client.release = (err?: Error | boolean) => {
      if (!err && !broken.has(client)) return release(err);
      release(err || new Error('connection is broken'));
      // Closed now, not at the next answer: the server rolls back what was left open on it.
      client.connection.stream.destroy();
    };
    return client;
  };
  (pool as { connect: unknown }).connect = (...args: unknown[]) => {
    // pg-pool's own pool.query() passes a callback and releases with the error itself.
    if (args.length > 0) return (connect as (...a: unknown[]) => unknown)(...args);
    return checkout();
  };
}

/** db.client.connection.count (used, idle) and pending_requests; the API's no-op without METRICS_ENABLED. */
function poolMetrics(pool: pg.Pool): void {
  const meter = metrics.getMeter(METER_NAME);
  const pool_name = { 'db.client.connection.pool.name': 'authsvc' };
  meter
    .createObservableUpDownCounter('db.client.connection.count', {
      unit: '{connection}',
      description: 'Open connections of the pool, by state.',
    })
    .addCallback((r) => {
      r.observe(pool.totalCount - pool.idleCount, { ...pool_name, 'db.client.connection.state': 'used' });
      r.observe(pool.idleCount, { ...pool_name, 'db.client.connection.state': 'idle' });
    });
  meter
    .createObservableUpDownCounter('db.client.connection.pending_requests', {
      unit: '{request}',
      description: 'Requests waiting for a connection.',
    })
    .addCallback((r) => r.observe(pool.waitingCount, pool_name));
}
