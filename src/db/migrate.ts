// Applies pending migrations under a Postgres advisory lock, recording each in
// <namespace>.schema_migrations, so instances starting together apply each migration once.
import { type Database, pgErrorCode } from './database.ts';

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

// GoTrue's migrator (pop) creates schema_migrations itself, with version varchar(14) (a 14-digit
// timestamp) and a unique index: over that table every version is recorded by its number alone,
// `authsvc_0002`, so the table stays GoTrue's and the row still names authsvc.
const shortVersion = (version: string) => `authsvc_${version.slice(0, 4)}`;

/** The versions of `migrations` that `recorded` (schema_migrations' rows) does not hold. */
export function pendingVersions(
  migrations: readonly Pick<Migration, 'version'>[],
  recorded: Iterable<string>,
): string[] {
  const done = new Set(recorded);
  return migrations.filter((m) => !done.has(m.version) && !done.has(shortVersion(m.version))).map((m) => m.version);
}

const UNDEFINED_TABLE = '42P01';
const UNDEFINED_SCHEMA = '3F000';

/**
 * Versions of `migrations` not yet recorded in the database (all of them when it is empty): one
 * read, no lock and no DDL (a cold Workers isolate, the readiness probe).
 */
export async function pendingMigrations(
  db: Database,
  migrations: readonly Pick<Migration, 'version'>[],
): Promise<string[]> {
  const rows = await db
    .withSession((s) => s.exec(renderMigration('SELECT version FROM "{{namespace}}".schema_migrations', db.namespace)))
    .catch((err: unknown) => {
      const code = pgErrorCode(err);
      if (code === UNDEFINED_TABLE || code === UNDEFINED_SCHEMA) return [];
      throw err;
    });
  return pendingVersions(
    migrations,
    rows.map((r) => String(r.version)),
  );
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
      await s.exec(
        q(`CREATE SCHEMA IF NOT EXISTS "{{namespace}}";
        CREATE TABLE IF NOT EXISTS "{{namespace}}".schema_migrations (version varchar(255) PRIMARY KEY)`),
      );
      const rows = await s.exec(q(`SELECT version FROM "{{namespace}}".schema_migrations`));
      const pending = new Set(
        pendingVersions(
          migrations,
          rows.map((r) => String(r.version)),
        ),
      );
      const width = await s.exec(
        q(`SELECT character_maximum_length AS n FROM information_schema.columns
        WHERE table_schema = '{{namespace}}' AND table_name = 'schema_migrations' AND column_name = 'version'`),
      );
      const popLedger = Number(width[0]?.n ?? 255) < 255;
      const applied: string[] = [];
      for (const m of sortMigrations(migrations)) {
        if (!pending.has(m.version)) continue;
        await s.exec(q(m.sql));
        const recorded = popLedger ? shortVersion(m.version) : m.version;
        await s.exec(
          q(`INSERT INTO "{{namespace}}".schema_migrations (version) VALUES ('${recorded.replaceAll("'", "''")}')`),
        );
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
