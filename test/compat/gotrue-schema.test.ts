// Issue 31 item 4: authsvc's migrations over a database GoTrue's migrations built (the project's
// fixture of v2.150.0 and v2.196.0): they apply, twice is a no-op, every statement is idempotent,
// GoTrue's columns keep their types, its schema_migrations rows stay.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate, renderMigration } from '../../src/db/migrate.ts';
import { type GoTrueRelease, gotrueSchemaSql, gotrueVersions } from '../fixtures/gotrue-schema.ts';
import { openTestDb, uniqueNamespace } from '../helpers/db.ts';
import { exec } from '../helpers/gotrue-rows.ts';

interface Column {
  table: string;
  column: string;
  type: string;
  length: number | null;
  nullable: string;
}

async function columns(db: Database): Promise<Column[]> {
  return (await exec(
    db,
    `select table_name as table, column_name as column, data_type as type,
      character_maximum_length as length, is_nullable as nullable
    from information_schema.columns where table_schema = '${db.namespace}' order by 1, 2`,
  )) as unknown as Column[];
}

for (const release of ['v2.150.0', 'v2.196.0'] as GoTrueRelease[]) {
  describe(`authsvc's migrations over GoTrue ${release}`, () => {
    let db: Database;
    let before: Column[];
    beforeAll(async () => {
      db = await openTestDb({ migrate: false, namespace: uniqueNamespace() });
      await exec(db, gotrueSchemaSql(db.namespace, release));
      before = await columns(db);
    });
    afterAll(async () => {
      await exec(db, `drop schema if exists "${db.namespace}" cascade`).catch(() => undefined);
      await db?.close();
    });

    test('apply, and a second run applies nothing', async () => {
      const applied = await migrate(db, loadMigrations());
      expect(applied).toEqual(loadMigrations().map((m) => m.version));
      expect(await migrate(db, loadMigrations())).toEqual([]);
    });

    test('every statement runs again over the result', async () => {
      for (const m of loadMigrations()) await exec(db, renderMigration(m.sql, db.namespace));
    });

    test("GoTrue's schema_migrations rows stay", async () => {
      const rows = await exec(db, `select version from "${db.namespace}".schema_migrations`);
      const versions = rows.map((r) => String(r.version));
      expect(versions).toEqual(expect.arrayContaining(gotrueVersions(release)));
      // pop's varchar(14) ledger keeps its type: authsvc's versions go in by number.
      expect(versions.filter((v) => v.startsWith('authsvc_')).sort()).toEqual(
        loadMigrations().map((m) => `authsvc_${m.version.slice(0, 4)}`),
      );
      const [width] = await exec(
        db,
        `select character_maximum_length as n from information_schema.columns
        where table_schema = '${db.namespace}' and table_name = 'schema_migrations' and column_name = 'version'`,
      );
      expect(width!.n).toBe(14);
    });

    test('no column GoTrue created is dropped or retyped', async () => {
      const after = await columns(db);
      const key = (c: Column) => `${c.table}.${c.column}`;
      const now = new Map(after.map((c) => [key(c), c]));
      for (const c of before) {
        expect(now.get(key(c)), key(c)).toMatchObject({ type: c.type, length: c.length });
      }
      // Nullability: only what GoTrue itself relaxed later (20260115000000) on flow_state.
      const relaxed = before.filter((c) => now.get(key(c))!.nullable !== c.nullable).map(key);
      expect(relaxed).toEqual(
        release === 'v2.150.0'
          ? ['flow_state.auth_code', 'flow_state.code_challenge', 'flow_state.code_challenge_method']
          : [],
      );
    });
  });
}
