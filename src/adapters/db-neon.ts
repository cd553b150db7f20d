// @neondatabase/serverless over WebSocket: Workers → Neon, or any Postgres behind a WebSocket
// proxy (neon's wsproxy). Only its Pool/Client (sessions, transactions) — never the HTTP driver,
// which cannot hold a transaction open. On Workers a Pool lives for one request (`close()` in
// ctx.waitUntil): a socket opened in one request cannot be used by another.
import { Client, type ClientConfig, Pool, type PoolClient, types } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-serverless';
import { type Tables, createTables } from '../../drizzle/schema.ts';
import type { Database, Orm } from '../db/database.ts';
import { pgRunner, pgTextTimeTypes, pgTransaction } from './db-runner.ts';
import { ormVia, poolView } from './db-tracing.ts';

const TYPES = pgTextTimeTypes(types.getTypeParser as (typeId: number, format?: string) => unknown);
/** drizzle over one checked-out connection (a transaction's). */
const ormOver = (client: object) => drizzle({ client: client as PoolClient }) as unknown as Orm;

export interface NeonSocketOptions {
  /**
   * A WebSocket proxy in front of a non-Neon Postgres, without protocol, e.g.
   * `wsproxy.example.com/v1`; `?address=<host>:<port>` of DATABASE_URL is appended.
   * Unset: Neon's own endpoint (`<host>/v2`).
   */
  wsProxy?: string | ((host: string, port: number | string) => string);
  /** wss: (default) or ws:. Plain ws: only for a proxy on the same machine or a private network. */
  secureWebSocket?: boolean;
  /** Another socket than the runtime's WebSocket (e.g. TCP for Hyperdrive: workers-tcp-socket.ts). */
  webSocket?: typeof WebSocket;
}

export interface NeonOptions extends NeonSocketOptions {
  url: string;
  namespace: string;
  /** Connections one request may hold; Workers allow 6 open connections per request in all. */
  maxConnections?: number;
  /** Prebuilt tables for the namespace (cached per isolate by the caller). */
  tables?: Tables;
  /** TRACING_ENABLED: statements as spans under the request's span (Database.traced). */
  traced?: boolean;
}

export const DEFAULT_MAX_CONNECTIONS = 4;

function clientClass(opts: NeonSocketOptions): typeof Client {
  // Per-client settings rather than the global neonConfig: two envs in one isolate stay apart.
  return class ConfiguredClient extends Client {
    constructor(config?: string | ClientConfig) {
      super(config);
      if (opts.wsProxy !== undefined) {
        this.neonConfig.wsProxy = opts.wsProxy;
        // Pipelining the password message assumes cleartext password auth, which Neon's proxy
        // speaks; an ordinary Postgres may ask for SCRAM, MD5 or nothing (trust).
        this.neonConfig.pipelineConnect = false;
      }
      if (opts.secureWebSocket !== undefined) this.neonConfig.useSecureWebSocket = opts.secureWebSocket;
      if (opts.webSocket !== undefined) this.neonConfig.webSocketConstructor = opts.webSocket;
    }
  };
}

export function openNeon(opts: NeonOptions): Database {
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    application_name: 'authsvc',
  });
  // neon's Pool sets its Client class as an instance field, over any `Client` option.
  pool.Client = clientClass(opts);
  // A connection dropping while idle must not surface as an unhandled error event.
  pool.on('error', () => undefined);
  const orm = drizzle({ client: pool }) as unknown as Orm;
  let closed: Promise<void> | undefined;
  return {
    kind: 'neon',
    namespace: opts.namespace,
    orm,
    runner: pgRunner(pool, TYPES),
    t: opts.tables ?? createTables(opts.namespace),
    begin: (fn) => pgTransaction(pool, ormOver, TYPES, fn),
    ...(opts.traced
      ? {
          traced: (parent) => {
            const view = poolView(pool, parent);
            return {
              orm: ormVia(orm, view),
              runner: pgRunner(view, TYPES),
              begin: (fn) => pgTransaction(view, ormOver, TYPES, fn),
            };
          },
        }
      : {}),
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn({
          exec: async (sql) => {
            // Simple protocol (no parameters): multi-statement scripts answer one result each.
            const res: unknown = await client.query(sql);
            const last = (Array.isArray(res) ? res.at(-1) : res) as { rows?: unknown[] } | undefined;
            return (last?.rows ?? []) as Record<string, unknown>[];
          },
        });
      } finally {
        client.release();
      }
    },
    close() {
      closed ??= pool.end().catch(() => undefined);
      return closed;
    },
  };
}
