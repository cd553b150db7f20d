// The project's own statement runners and transactions over the three drivers (db/database.ts:
// StatementRunner, Database.begin): the hot paths' prepared statements run here, through each
// driver's public query API, instead of through drizzle's session internals. No driver is
// imported: node-postgres and neon (a port of it) share one shape, PGlite has its own.
import type { Connection, Orm, RawRow, StatementRunner } from '../db/database.ts';

// Type ids whose values stay the text Postgres sent, as drizzle's drivers keep them: its column
// mappers parse them (timestamp, timestamptz, date, interval, and their arrays; numeric[]).
const TEXT_TYPE_IDS = [1114, 1184, 1082, 1186, 1231, 1115, 1185, 1187, 1182] as const;
const asText = (value: string) => value;

type GetTypeParser = (typeId: number, format?: string) => unknown;

/** A pg `types` option: TEXT_TYPE_IDS as text, every other type as the driver parses it. */
export function pgTextTimeTypes(driverParser: GetTypeParser): { getTypeParser: GetTypeParser } {
  const ids = new Set<number>(TEXT_TYPE_IDS);
  return { getTypeParser: (typeId, format) => (ids.has(typeId) ? asText : driverParser(typeId, format)) };
}

/** What node-postgres and neon clients and pools both have. */
interface PgQueryable {
  query(config: { name?: string; text: string; values?: unknown[]; types?: unknown }): Promise<{ rows: unknown[] }>;
}
interface PgPoolLike extends PgQueryable {
  connect(): Promise<PgQueryable & { release(err?: Error | boolean): void }>;
}

/** node-postgres or neon: named statements are parsed once per connection by the server. */
export function pgRunner(client: PgQueryable, types: { getTypeParser: GetTypeParser }): StatementRunner {
  return {
    async run(name, text, values) {
      return (await client.query({ name, text, values, types })).rows as RawRow[];
    },
  };
}

/**
 * BEGIN … COMMIT on one connection of `pool`, ROLLBACK when `fn` throws (its error is the one
 * thrown; a connection too broken to roll back is closed by the pool's release guard, and the
 * server rolls back what was left open on it). `orm`: drizzle over that connection.
 */
export async function pgTransaction<T>(
  pool: PgPoolLike,
  orm: (client: PgQueryable) => Orm,
  types: { getTypeParser: GetTypeParser },
  fn: (conn: Connection) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query({ text: 'begin' });
    let result: T;
    try {
      result = await fn({ orm: orm(client), runner: pgRunner(client, types) });
    } catch (err) {
      await client.query({ text: 'rollback' }).catch(() => undefined);
      throw err;
    }
    await client.query({ text: 'commit' });
    return result;
  } finally {
    client.release();
  }
}

/** What a PGlite instance and its transactions both have. */
export interface PgliteQueryable {
  query(
    text: string,
    params?: unknown[],
    options?: { rowMode?: 'object'; parsers?: Record<number, (value: string) => unknown> },
  ): Promise<{ rows: unknown[] }>;
}

const PGLITE_OPTIONS = {
  rowMode: 'object' as const,
  parsers: Object.fromEntries(TEXT_TYPE_IDS.map((id) => [id, asText])),
};

/** PGlite: one connection in the process, no named statements (nothing to parse twice over a socket). */
export function pgliteRunner(client: PgliteQueryable): StatementRunner {
  return {
    async run(_name, text, values) {
      return (await client.query(text, values, PGLITE_OPTIONS)).rows as RawRow[];
    },
  };
}
