import { describe, expect, test } from 'vitest';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { createTables } from '../drizzle/schema.ts';
import { loadMigrations } from '../src/adapters/migrations-fs.ts';
import { migrate, renderMigration } from '../src/db/migrate.ts';
import { openTestDb, uniqueNamespace } from './helpers/db.ts';

describe('migrations', () => {
  test('are applied once and recorded in <namespace>.schema_migrations', async () => {
    const ns = uniqueNamespace();
    const db = await openTestDb({ namespace: ns, migrate: false });
    try {
      const migrations = loadMigrations();
      expect(await migrate(db, migrations)).toEqual(migrations.map((m) => m.version));
      expect(await migrate(db, migrations)).toEqual([]);
      const rows = await db.withSession((s) => s.exec(`SELECT version FROM "${ns}".schema_migrations ORDER BY version`));
      expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      // Tables landed in the namespace, not in public or auth.
      const tables = await db.withSession((s) => s.exec(`SELECT table_name FROM information_schema.tables WHERE table_schema = '${ns}' ORDER BY 1`));
      expect(tables.map((r) => r.table_name)).toEqual(expect.arrayContaining([
        'audit_log_entries', 'flow_state', 'identities', 'mfa_amr_claims', 'one_time_tokens', 'rate_limits', 'refresh_tokens', 'schema_migrations', 'sessions', 'users',
      ]));
    } finally {
      await db.close();
    }
  });

  test('a failing migration rolls back entirely and records nothing', async () => {
    const ns = uniqueNamespace();
    const db = await openTestDb({ namespace: ns, migrate: false });
    try {
      const bad = [...loadMigrations(), { version: '9999_broken', sql: 'CREATE TABLE "{{namespace}}".ok_table (id int); SELECT * FROM no_such_table;' }];
      await expect(migrate(db, bad)).rejects.toThrow();
      const rows = await db.withSession((s) => s.exec(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = '${ns}' AND table_name = 'ok_table'`));
      expect(rows[0]!.n).toBe(0);
      expect(await migrate(db, loadMigrations())).toEqual(loadMigrations().map((m) => m.version));
    } finally {
      await db.close();
    }
  });

  test('every migration is idempotent over an existing schema (e.g. GoTrue\'s tables)', async () => {
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

  test('drizzle table definitions match the migrated columns', async () => {
    const db = await openTestDb();
    try {
      const t = createTables(db.namespace);
      const tables = [t.users, t.identities, t.sessions, t.refreshTokens, t.mfaAmrClaims, t.oneTimeTokens, t.flowState, t.auditLogEntries, t.rateLimits] as PgTable[];
      for (const table of tables) {
        const cfg = getTableConfig(table);
        const rows = await db.withSession((s) => s.exec(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = '${db.namespace}' AND table_name = '${cfg.name}' ORDER BY 1`));
        expect(cfg.columns.map((c) => c.name).sort(), cfg.name).toEqual(rows.map((r) => String(r.column_name)));
      }
    } finally {
      await db.close();
    }
  });
});
