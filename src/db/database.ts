// One query code base over every driver: routes and db/* functions see only `Executor`.
import type { Context } from '@opentelemetry/api';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { Tables } from '../../drizzle/schema.ts';

export type Orm = PgDatabase<PgQueryResultHKT, Record<string, never>>;

/** Where audit entries go besides audit_log_entries (GoTrue logs each one as `audit_event`). */
export interface AuditSink {
  /** AUDIT_LOG_DISABLE_POSTGRES: log only, write no audit_log_entries rows. */
  disablePostgres: boolean;
  /** False when the log level drops info lines: callers may skip building records just to log. */
  logs: boolean;
  log(record: { id: string; payload: Record<string, unknown>; created_at: Date; ip: string }): void;
}

export type RawRow = Record<string, unknown>;

/**
 * Runs one statement whose text was built once (db/prepared.ts): the project's own executor per
 * driver (adapters/db-runner.ts), not drizzle's session. Rows are keyed by column name, with
 * timestamps, dates and intervals as the text Postgres sent (what drizzle's column mappers take).
 */
export interface StatementRunner {
  /** `name`: a named prepared statement, parsed once per connection where the driver has them. */
  run(name: string, text: string, values: unknown[]): Promise<RawRow[]>;
}

/** One connection (or the pool) as drizzle and as our statement runner. */
export interface Connection {
  orm: Orm;
  runner: StatementRunner;
}

/** What db/* functions take first: a connection or a transaction, plus the tables. */
export interface Executor extends Connection {
  t: Tables;
  /** Unset: audit entries are written, not logged (migrations, tests of the db layer). */
  audit?: AuditSink;
  /** The request's deadline: once aborted, a transaction rolls back instead of committing. */
  signal?: AbortSignal;
}

/** A single dedicated connection speaking the simple protocol (multi-statement scripts). */
export interface RawSession {
  exec(sql: string): Promise<Record<string, unknown>[]>;
}

export interface Database extends Executor {
  kind: 'pglite' | 'postgres' | 'neon';
  namespace: string;
  withSession<T>(fn: (s: RawSession) => Promise<T>): Promise<T>;
  /** BEGIN on one connection, `fn`, COMMIT (ROLLBACK when it throws); the connection is then released. */
  begin<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * TRACING_ENABLED only: the same connections, every statement a span under `parent` (the
   * request's span). Made per request: no async context is needed to tell one request's
   * statements from another's.
   */
  traced?(parent: Context): Connection & Pick<Database, 'begin'>;
}

/** Runs `fn` in one transaction; rows it locks stay locked until it returns. Not nested. */
export async function transaction<T>(ex: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  const outcome = await transactionOutcome(ex, fn);
  if ('failed' in outcome) throw outcome.failed;
  return outcome.ok;
}

/**
 * Thrown inside a transaction: what it wrote commits, and then `error` is what the caller gets (a
 * refresh-token reuse revokes the family and answers 400; a wrong MFA code is counted and refused).
 */
export class CommitThenFail extends Error {
  constructor(readonly error: unknown) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/** The transaction's result, or the error of a CommitThenFail once its writes committed. */
export type TransactionOutcome<T> = { ok: T } | { failed: unknown };

/** transaction(), answering a CommitThenFail as `{ failed }` instead of throwing it (for callers with work after a commit, e.g. the outbox). */
export function transactionOutcome<T>(ex: Executor, fn: (tx: Executor) => Promise<T>): Promise<TransactionOutcome<T>> {
  const { begin } = ex as Partial<Database>;
  if (!begin)
    return Promise.reject(new Error('transaction() needs a database, not a transaction (nothing nests them)'));
  return begin(async (conn): Promise<TransactionOutcome<T>> => {
    let outcome: TransactionOutcome<T>;
    try {
      outcome = { ok: await fn({ orm: conn.orm, runner: conn.runner, t: ex.t, audit: ex.audit, signal: ex.signal }) };
    } catch (err) {
      if (!(err instanceof CommitThenFail)) throw err;
      outcome = { failed: err.error };
    }
    // The client has had its 504 already: what it asked for must not happen after all.
    if (ex.signal?.aborted) throw new Error('the request timed out before its transaction could commit');
    return outcome;
  });
}

/** Postgres error code of a driver error (pg, PGlite and neon all expose `code`). */
export function pgErrorCode(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e && i < 4; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isUniqueViolation(err: unknown): boolean {
  return pgErrorCode(err) === '23505';
}

// Driver messages of a connection that failed, closed or stopped answering (node-postgres,
// pg-pool, neon): no SQLSTATE comes with them.
const CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|query read timeout|not queryable|connection (?:error|refused|is broken)|socket hang up/i;
const CONNECTION_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether `err` says the database cannot be reached (rather than refusing a statement): a
 * SQLSTATE of class 08 (connection exception), 57P01–57P03 (shutting down, cannot connect
 * now), 53300 (too many connections), a socket error, or the driver's own connection messages.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = pgErrorCode(err);
  if (code)
    return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
  for (let e: unknown = err, i = 0; e && i < 4; i++) {
    const errno = (e as { code?: unknown }).code;
    if (typeof errno === 'string' && CONNECTION_ERRNO.has(errno)) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
