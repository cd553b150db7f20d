// Statement spans for the drivers (TRACING_ENABLED only). Per request, the adapter builds a
// drizzle instance over a *view* of its driver: an object that is the pool (or PGlite instance)
// for every purpose (`instanceof`, its fields) except `query` and the calls that hand out a
// connection, which run on the real driver and trace what they run under the request's span.
// Each promise-returning `query` becomes a CLIENT span named by telemetry/tracing.ts's
// statementSummary (operation and table; never text or values).
import type { Context } from '@opentelemetry/api';
import { tracedStatement } from '../telemetry/tracing.ts';

type Query = (...args: unknown[]) => unknown;
interface Queryable {
  query: Query;
}

/** `target.query` traced under `parent` (callback and submittable forms are passed through). */
function tracedQuery(target: Queryable, parent: Context): Query {
  return (...args: unknown[]) => {
    const first = args[0];
    if (typeof args.at(-1) === 'function' || (typeof first === 'object' && first !== null && 'submit' in first))
      return target.query(...args);
    const config =
      typeof first === 'object' && first !== null ? (first as { text?: unknown; name?: unknown }) : undefined;
    const text = typeof first === 'string' ? first : typeof config?.text === 'string' ? config.text : '';
    const name = typeof config?.name === 'string' ? config.name : undefined;
    return tracedStatement(parent, text, name, () => target.query(...args) as Promise<unknown>);
  };
}

/**
 * An object whose prototype is `target` and whose own members are `own`. Assigned rather than
 * defined with descriptors: V8 keeps such an object small and in fast mode (one is made per
 * traced request).
 */
function view<T extends object>(target: T, own: Record<string, unknown>): T {
  const v = Object.create(target) as Record<string, unknown>;
  for (const key in own) v[key] = own[key];
  return v as T;
}

/** A checked-out connection whose statements are traced; `release` and the rest are its own. */
function connectionView<T extends Queryable>(conn: T, parent: Context): T {
  return view(conn, { query: tracedQuery(conn, parent) });
}

/** A pg (or neon) Pool whose statements, and those of the connections it hands out, are traced. */
export function poolView<T extends object>(pool: T, parent: Context): T {
  const p = pool as unknown as Queryable & { connect(...args: unknown[]): Promise<Queryable> };
  return view(pool, {
    query: tracedQuery(p, parent),
    // pg-pool's callback form is its own (pool.query): passed through.
    connect: (...args: unknown[]) =>
      args.length > 0 ? p.connect(...args) : p.connect().then((conn) => connectionView(conn, parent)),
  });
}

/** A PGlite instance whose statements, and those of its transactions, are traced. */
export function pgliteView<T extends object>(client: T, parent: Context): T {
  const c = client as unknown as Queryable & { transaction(fn: (tx: Queryable) => Promise<unknown>): Promise<unknown> };
  return view(client, {
    query: tracedQuery(c, parent),
    transaction: (fn: (tx: Queryable) => Promise<unknown>) => c.transaction((tx) => fn(connectionView(tx, parent))),
  });
}

/**
 * `orm` (the database's drizzle instance) sending its statements through `client` (a view of the
 * same driver): everything else, the dialect and the session's settings, is the orm's own.
 * Cheaper than a drizzle instance per request. (Prepared statements do not go through it: they
 * run on a runner over the same view, db-runner.ts.)
 */
export function ormVia<T extends object>(orm: T, client: object): T {
  const session = (orm as unknown as { session: object }).session;
  return view(orm, { session: view(session, { client }) });
}
