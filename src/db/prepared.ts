// Named prepared statements for the hot paths (GET /user, refresh, session creation).
// The SQL text is built once per table set by drizzle's dialect (its public PgDialect), and
// Postgres parses it once per connection, instead of drizzle rebuilding and Postgres re-parsing
// it on every request. They run through the executor's StatementRunner (adapters/db-runner.ts,
// one per driver, ours), not drizzle's session. Rows come back as driver values; `mapRow` turns
// them (or the `row_to_json` of a row) into drizzle's row types with the columns' own mappers,
// so callers see exactly what a drizzle select returns.
import { type Column, fillPlaceholders, getTableColumns, type SQL } from 'drizzle-orm';
import { PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import type { Tables } from '../../drizzle/schema.ts';
import type { Executor, RawRow } from './database.ts';

export type { RawRow } from './database.ts';

export type Statement = (ex: Executor, params: Record<string, unknown>) => Promise<RawRow[]>;

// The orms are made without casing or other options: a plain dialect writes the same text.
const dialect = new PgDialect();

/**
 * A statement named `authsvc_<name>`; `build` uses `sql.placeholder(...)` for every value.
 * One Database has one namespace, so a name always carries the same text on a connection.
 */
export function statement(name: string, build: (t: Tables) => SQL): Statement {
  const texts = new WeakMap<Tables, { sql: string; params: unknown[] }>();
  const fullName = `authsvc_${name}`;
  return (ex, params) => {
    let query = texts.get(ex.t);
    if (!query) {
      query = dialect.sqlToQuery(build(ex.t));
      texts.set(ex.t, query);
    }
    return ex.runner.run(fullName, query.sql, fillPlaceholders(query.params, params));
  };
}

type ColumnList = [key: string, dbName: string, column: Column][];
const columnLists = new WeakMap<PgTable, ColumnList>();

function columnsOf(table: PgTable): ColumnList {
  let list = columnLists.get(table);
  if (!list) {
    list = Object.entries(getTableColumns(table)).map(([key, col]) => [key, col.name, col]);
    columnLists.set(table, list);
  }
  return list;
}

/** A row keyed by column name (a raw row or `row_to_json`) as drizzle's select would return it. */
export function mapRow<T>(table: PgTable, row: RawRow): T {
  const out: Record<string, unknown> = {};
  for (const [key, dbName, col] of columnsOf(table)) {
    const v = row[dbName];
    out[key] = v === null || v === undefined ? null : col.mapFromDriverValue(v);
  }
  return out as T;
}

/** A `json` value from the driver: PGlite, pg and neon parse it, but accept text too. */
export function jsonValue<T>(v: unknown): T {
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}
