// Test databases: PGlite in memory by default; with TEST_DATABASE_URL a fresh schema
// (namespace) on the Postgres server per call, dropped on close, so files run in parallel.
import { openPglite } from '../../src/adapters/db-pglite.ts';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export function uniqueNamespace(): string {
  return `t_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

export async function openTestDb(opts: { namespace?: string; migrate?: boolean } = {}): Promise<Database> {
  const namespace = opts.namespace ?? (TEST_DATABASE_URL ? uniqueNamespace() : 'auth');
  const inner = TEST_DATABASE_URL
    ? openPostgres({ url: TEST_DATABASE_URL, namespace, maxPoolSize: 10 })
    : await openPglite({ namespace });
  if (opts.migrate !== false) await migrate(inner, loadMigrations());
  if (!TEST_DATABASE_URL) return inner;
  return {
    ...inner,
    async close() {
      await inner.withSession((s) => s.exec(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`)).catch(() => undefined);
      await inner.close();
    },
  };
}
