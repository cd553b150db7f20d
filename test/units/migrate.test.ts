import { describe, expect, test } from 'vitest';
import { is } from 'drizzle-orm';
import { type PgEnum, PgTable, getTableConfig, isPgEnum } from 'drizzle-orm/pg-core';
import { createTables } from '../../drizzle/schema.ts';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import { migrate, renderMigration } from '../../src/db/migrate.ts';
import { openTestDb, uniqueNamespace } from '../helpers/db.ts';

describe('migrations', () => {
  test('are applied once and recorded in <namespace>.schema_migrations', async () => {
    const ns = uniqueNamespace();
    const db = await openTestDb({ namespace: ns, migrate: false });
    try {
      const migrations = loadMigrations();
      expect(await migrate(db, migrations)).toEqual(migrations.map((m) => m.version));
      expect(await migrate(db, migrations)).toEqual([]);
      const rows = await db.withSession((s) =>
        s.exec(`SELECT version FROM "${ns}".schema_migrations ORDER BY version`),
      );
      expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      // Tables landed in the namespace, not in public or auth.
      const tables = await db.withSession((s) =>
        s.exec(`SELECT table_name FROM information_schema.tables WHERE table_schema = '${ns}' ORDER BY 1`),
      );
      expect(tables.map((r) => r.table_name)).toEqual(
        expect.arrayContaining([
          'audit_log_entries',
          'flow_state',
          'identities',
          'mfa_amr_claims',
          'one_time_tokens',
          'rate_limits',
          'refresh_tokens',
          'schema_migrations',
          'sessions',
          'users',
        ]),
      );
    } finally {
      await db.close();
    }
  });

  test('a failing migration rolls back entirely and records nothing', async () => {
    const ns = uniqueNamespace();
    const db = await openTestDb({ namespace: ns, migrate: false });
    try {
      const bad = [
        ...loadMigrations(),
        { version: '9999_broken', sql: 'CREATE TABLE "{{namespace}}".ok_table (id int); SELECT * FROM no_such_table;' },
      ];
      await expect(migrate(db, bad)).rejects.toThrow();
      const rows = await db.withSession((s) =>
        s.exec(
          `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = '${ns}' AND table_name = 'ok_table'`,
        ),
      );
      expect(rows[0]!.n).toBe(0);
      expect(await migrate(db, loadMigrations())).toEqual(loadMigrations().map((m) => m.version));
    } finally {
      await db.close();
    }
  });

  test("every migration is idempotent over an existing schema (e.g. GoTrue's tables)", async () => {
    const db = await openTestDb();
    try {
      for (const m of loadMigrations()) await db.withSession((s) => s.exec(renderMigration(m.sql, db.namespace)));
    } finally {
      await db.close();
    }
  });

  test('a namespace that is not a plain identifier is refused', () => {
    expect(() => renderMigration('{{namespace}}', 'auth"; DROP TABLE x; --')).toThrow(/plain SQL identifier/);
  });

  // What `drizzle-kit` would check, against the real migrated schema: every table createTables
  // defines, column by column (name, Postgres type, NOT NULL), and every enum's values.
  test('drizzle table definitions match the migrated tables: columns, types, NOT NULL, enum values', async () => {
    const db = await openTestDb();
    try {
      const defined: unknown[] = Object.values(createTables(db.namespace));
      const tables = defined.filter((x): x is PgTable => is(x, PgTable));
      const enums = defined.filter((x): x is PgEnum<[string, ...string[]]> => isPgEnum(x));
      expect(tables.map((t) => getTableConfig(t).name).sort()).toEqual(
        (
          await db.withSession((s) =>
            s.exec(
              `SELECT table_name FROM information_schema.tables WHERE table_schema = '${db.namespace}' ORDER BY 1`,
            ),
          )
        ).map((r) => String(r.table_name)),
      );
      for (const table of tables) {
        const cfg = getTableConfig(table);
        const rows = await db.withSession((s) =>
          s.exec(
            `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null
             FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = '${db.namespace}' AND c.relname = '${cfg.name}' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1`,
          ),
        );
        const migrated = rows.map((r) => ({
          name: String(r.name),
          type: String(r.type).replace(/^("[^"]+"|\w+)\./, ''),
          notNull: r.not_null === true,
        }));
        const drizzle = cfg.columns
          .map((c) => ({ name: c.name, type: postgresType(c.getSQLType()), notNull: c.notNull || c.primary }))
          .sort((a, b) => (a.name < b.name ? -1 : 1));
        expect(drizzle, cfg.name).toEqual(migrated);
      }
      for (const e of enums) {
        const rows = await db.withSession((s) =>
          s.exec(
            `SELECT e.enumlabel AS label FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid JOIN pg_namespace n ON n.oid = t.typnamespace
            WHERE n.nspname = '${db.namespace}' AND t.typname = '${e.enumName}' ORDER BY e.enumsortorder`,
          ),
        );
        expect([...e.enumValues], e.enumName).toEqual(rows.map((r) => String(r.label)));
      }
    } finally {
      await db.close();
    }
  });
});

/** drizzle's column type as Postgres's format_type() spells it. */
function postgresType(t: string): string {
  return t
    .replace(/^varchar\((\d+)\)$/, 'character varying($1)')
    .replace(/^varchar$/, 'character varying')
    .replace(/^timestamp(?: \((\d)\))?$/, (_m, p?: string) => `timestamp${p ? `(${p})` : ''} without time zone`)
    .replace(/^bigserial$/, 'bigint')
    .replace(/^serial$/, 'integer')
    .replace(/^smallserial$/, 'smallint')
    .replace(/^"?([^".]+)"?$/, '$1');
}
