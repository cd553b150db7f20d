// Applies pending migrations under a Postgres advisory lock, recording each in
// <namespace>.schema_migrations, so instances starting together apply each migration once.
import type { Database } from './database.ts';

export interface Migration {
  version: string;
  sql: string;
}

// Fixed key: every authsvc instance on a database contends for the same lock.
const LOCK_KEY = 7_361_902_114;

const NAMESPACE_RE = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export function renderMigration(sql: string, namespace: string): string {
  if (!NAMESPACE_RE.test(namespace)) throw new Error(`DB_NAMESPACE "${namespace}" is not a plain SQL identifier`);
  return sql.replaceAll('{{namespace}}', namespace);
}

export function sortMigrations(migrations: Migration[]): Migration[] {
  return [...migrations].sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0));
}

/** Returns the versions applied by this call (empty when the database was up to date). */
export async function migrate(db: Database, migrations: Migration[]): Promise<string[]> {
  const ns = db.namespace;
  const q = (s: string) => renderMigration(s, ns);
  return db.withSession(async (s) => {
    await s.exec('BEGIN');
    try {
      await s.exec(`SELECT pg_advisory_xact_lock(${LOCK_KEY})`);
      await s.exec(q(`CREATE SCHEMA IF NOT EXISTS "{{namespace}}";
        CREATE TABLE IF NOT EXISTS "{{namespace}}".schema_migrations (version varchar(255) PRIMARY KEY)`));
      const rows = await s.exec(q(`SELECT version FROM "{{namespace}}".schema_migrations`));
      const done = new Set(rows.map((r) => String(r.version)));
      const applied: string[] = [];
      for (const m of sortMigrations(migrations)) {
        if (done.has(m.version)) continue;
        await s.exec(q(m.sql));
        await s.exec(q(`INSERT INTO "{{namespace}}".schema_migrations (version) VALUES ('${m.version.replaceAll("'", "''")}')`));
        applied.push(m.version);
      }
      await s.exec('COMMIT');
      return applied;
    } catch (err) {
      await s.exec('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}
