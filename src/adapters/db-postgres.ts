// node-postgres: DATABASE_URL=postgres://… on Node, Bun and Deno.
import { metrics } from '@opentelemetry/api';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { createTables } from '../../drizzle/schema.ts';
import type { Database, Orm } from '../db/database.ts';
import { METER_NAME } from '../telemetry/metrics.ts';
import { traceQueries } from './db-tracing.ts';

export function openPostgres(opts: { url: string; namespace: string; maxPoolSize: number; traced?: boolean }): Database {
  // DB_MAX_POOL_SIZE=0 means unlimited, as in GoTrue.
  const max = opts.maxPoolSize > 0 ? opts.maxPoolSize : Number.MAX_SAFE_INTEGER;
  const pool = new pg.Pool({ connectionString: opts.url, max, application_name: 'authsvc' });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  if (opts.traced) {
    traceQueries(pool as unknown as Parameters<typeof traceQueries>[0]);
    pool.on('connect', (client) => traceQueries(client as unknown as Parameters<typeof traceQueries>[0]));
  }
  poolMetrics(pool);
  const orm = drizzle({ client: pool }) as unknown as Orm;
  let closed = false;
  return {
    kind: 'postgres',
    namespace: opts.namespace,
    orm,
    t: createTables(opts.namespace),
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn({ exec: async (sql) => {
          const res = await client.query(sql);
          const last = Array.isArray(res) ? res.at(-1) : res;
          return (last?.rows ?? []) as Record<string, unknown>[];
        } });
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

/** db.client.connection.count (used, idle) and pending_requests; the API's no-op without METRICS_ENABLED. */
function poolMetrics(pool: pg.Pool): void {
  const meter = metrics.getMeter(METER_NAME);
  const pool_name = { 'db.client.connection.pool.name': 'authsvc' };
  meter.createObservableUpDownCounter('db.client.connection.count', { unit: '{connection}', description: 'Open connections of the pool, by state.' })
    .addCallback((r) => {
      r.observe(pool.totalCount - pool.idleCount, { ...pool_name, 'db.client.connection.state': 'used' });
      r.observe(pool.idleCount, { ...pool_name, 'db.client.connection.state': 'idle' });
    });
  meter.createObservableUpDownCounter('db.client.connection.pending_requests', { unit: '{request}', description: 'Requests waiting for a connection.' })
    .addCallback((r) => r.observe(pool.waitingCount, pool_name));
}
