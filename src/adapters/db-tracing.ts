// Statement spans for the drivers (TRACING_ENABLED only): each promise-returning `query` of a
// pg Pool, its clients, or a PGlite instance and its transactions becomes a CLIENT span named by
// telemetry/tracing.ts's statementSummary (operation and table; never text or values). Callback
// calls are pg-pool's own internal ones, already inside a traced pool.query: left alone.
import { tracedStatement } from '../telemetry/tracing.ts';

type Query = (...args: unknown[]) => unknown;

export function traceQueries(target: { query: Query }): void {
  const query = target.query.bind(target) as Query;
  target.query = (...args: unknown[]) => {
    const first = args[0];
    if (typeof args.at(-1) === 'function' || (typeof first === 'object' && first !== null && 'submit' in first)) return query(...args);
    const config = typeof first === 'object' && first !== null ? first as { text?: unknown; name?: unknown } : undefined;
    const text = typeof first === 'string' ? first : typeof config?.text === 'string' ? config.text : '';
    const name = typeof config?.name === 'string' ? config.name : undefined;
    return tracedStatement(text, name, () => query(...args) as Promise<unknown>);
  };
}

/** PGlite: its own query and those of the transaction objects it hands out. */
export function tracePgliteQueries(client: { query: Query; transaction: (fn: (tx: { query: Query }) => Promise<unknown>) => Promise<unknown> }): void {
  traceQueries(client);
  const transaction = client.transaction.bind(client);
  client.transaction = (fn) => transaction((tx) => {
    traceQueries(tx);
    return fn(tx);
  });
}
