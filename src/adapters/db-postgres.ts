// node-postgres: DATABASE_URL=postgres://… on Node, Bun and Deno.
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { createTables } from '../../drizzle/schema.ts';
import type { Database, Orm } from '../db/database.ts';

export function openPostgres(opts: { url: string; namespace: string; maxPoolSize: number }): Database {
  // DB_MAX_POOL_SIZE=0 means unlimited, as in GoTrue.
  const max = opts.maxPoolSize > 0 ? opts.maxPoolSize : Number.MAX_SAFE_INTEGER;
  const pool = new pg.Pool({ connectionString: opts.url, max, application_name: 'authsvc' });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
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
