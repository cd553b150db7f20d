// Named prepared statements for the hot paths (GET /user, refresh, session creation).
// The SQL text is built once per table set, and Postgres parses it once per connection,
// instead of drizzle rebuilding and Postgres re-parsing it on every request. Rows come back
// as driver values; `mapRow` turns them (or the `row_to_json` of a row) into drizzle's row
// types with the columns' own mappers, so callers see exactly what a drizzle select returns.
import { type Column, getTableColumns, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Tables } from '../../drizzle/schema.ts';
import type { Executor, Orm } from './database.ts';

export type RawRow = Record<string, unknown>;

interface BuiltQuery { sql: string; params: unknown[] }
interface DriverPrepared { execute(placeholders: Record<string, unknown>): Promise<unknown> }
/** The two members of drizzle's PgDatabase that `db.execute` itself uses. */
interface OrmInternals {
  dialect: { sqlToQuery(sql: SQL): BuiltQuery };
  session: { prepareQuery(query: BuiltQuery, fields: undefined, name: string, arrayMode: boolean): DriverPrepared };
}

export type Statement = (ex: Executor, params: Record<string, unknown>) => Promise<RawRow[]>;

/**
 * Each orm's prepared statements, in a property of the orm itself rather than a WeakMap keyed
 * by it: a transaction (and, with tracing on, a request) has an orm of its own, and a WeakMap
 * entry for each would be garbage the young-generation collector has to walk until the next
 * full collection.
 */
const PREPARED = Symbol('authsvc.prepared');
type PreparedSlots = (DriverPrepared | undefined)[];
let statements = 0;

/**
 * A statement named `authsvc_<name>`; `build` uses `sql.placeholder(...)` for every value.
 * One Database has one namespace, so a name always carries the same text on a connection.
 */
export function statement(name: string, build: (t: Tables) => SQL): Statement {
  const texts = new WeakMap<Tables, BuiltQuery>();
  const slot = statements++;
  const fullName = `authsvc_${name}`;
  const prepare = (orm: object, t: Tables): DriverPrepared => {
    const holder = orm as { [PREPARED]?: PreparedSlots };
    // Own, not inherited: an orm derived from another (adapters/db-tracing.ts) has its own.
    let slots = Object.hasOwn(holder, PREPARED) ? holder[PREPARED] : undefined;
    if (!slots) {
      slots = [];
      Object.defineProperty(holder, PREPARED, { value: slots });
    }
    let p = slots[slot];
    if (p) return p;
    const internals = orm as unknown as OrmInternals;
    const base = Object.getPrototypeOf(orm) as object | null;
    if (base && Object.hasOwn(orm, 'session') && Object.hasOwn(base, 'session')) {
      // A traced request's orm: its session is the base orm's with another client. The base
      // orm's prepared query over that client, instead of building one per request.
      p = Object.create(prepare(base, t)) as DriverPrepared;
      (p as { client?: unknown }).client = (internals.session as { client?: unknown }).client;
    } else {
      let query = texts.get(t);
      if (!query) {
        query = internals.dialect.sqlToQuery(build(t));
        texts.set(t, query);
      }
      p = internals.session.prepareQuery(query, undefined, fullName, false);
    }
    slots[slot] = p;
    return p;
  };
  return async (ex, params) => {
    const p = prepare(ex.orm, ex.t);
    const res = await p.execute(params);
    return (res as { rows: RawRow[] }).rows;
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
