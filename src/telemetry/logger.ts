// Structured logs, one line per entry, filtered by LOG_LEVEL: a JSON object (LOG_FORMAT=json, for
// machines) or `time LEVEL message key=value…` (LOG_FORMAT=text, for people); the same fields
// either way. The adapter decides where lines go (stdout, LOG_FILE); secrets are never passed to
// the logger.
export type LogLevel = 'panic' | 'fatal' | 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<LogLevel, number> = { panic: 0, fatal: 1, error: 2, warn: 3, info: 4, debug: 5 };

export interface Logger {
  level: LogLevel;
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` (e.g. request_id) to every line. */
  child(fields: Record<string, unknown>): Logger;
}

export type LogFormat = 'json' | 'text';

/** A field's value in a text line: bare when it is a plain word, else JSON (quoted, escaped: one line). */
function textValue(v: unknown): string {
  if (typeof v === 'string') return /^[\w.:/@+-]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? String(v);
}

/** `2026-12-03T12:10:26.976Z INFO  message key=value …` */
export function textLine(entry: Record<string, unknown>): string {
  const { level, time, msg, ...fields } = entry;
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}=${textValue(v)}`)
    .join('');
  return `${time} ${String(level).toUpperCase().padEnd(5)} ${JSON.stringify(msg).slice(1, -1)}${rest}`;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void,
  base: Record<string, unknown> = {},
  format: LogFormat = 'json',
): Logger {
  const log = (l: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[l] > RANK[level]) return;
    const entry = { level: l, time: new Date().toISOString(), msg, ...base, ...fields };
    write(format === 'text' ? textLine(entry) : JSON.stringify(entry));
  };
  return {
    level,
    log,
    error: (m, f) => log('error', m, f),
    warn: (m, f) => log('warn', m, f),
    info: (m, f) => log('info', m, f),
    debug: (m, f) => log('debug', m, f),
    child: (fields) => createLogger(level, write, { ...base, ...fields }, format),
  };
}

/** A driver's error from Postgres or PGlite: it carries the SQLSTATE. */
function sqlError(e: unknown): (Error & { code: string }) | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? (e as Error & { code: string }) : undefined;
}

/** The stack's frames only: its first line repeats the message, which may hold a statement's parameters. */
function frames(err: Error): string | undefined {
  const lines = err.stack
    ?.split('\n')
    .filter((l) => /^\s+at /.test(l))
    .slice(0, 5);
  return lines?.length ? lines.join('\n') : undefined;
}

/**
 * Class 22 (data exception: 22P02 invalid text representation, 22001 value too long…): Postgres
 * quotes the offending input in the message (`invalid input syntax for type uuid: "…"`).
 */
const DATA_EXCEPTION = 'data exception (SQLSTATE class 22); the message is not logged, as it may quote the input';

/**
 * Describes an error for the log without its message leaking into a response. A failed
 * statement is described by its SQLSTATE and the driver's message only (a generic text for data
 * exceptions): drizzle's own message lists every parameter (password hashes, emails, token
 * hashes), and pg's `detail` repeats values.
 */
export function errorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { error: String(err) };
  const cause = (err as { cause?: unknown }).cause;
  const db = sqlError(err) ?? sqlError(cause);
  const isQuery = db !== undefined || ('params' in err && 'query' in err);
  if (isQuery) {
    // Without a SQLSTATE the cause is the connection's (ECONNREFUSED, a timeout): its message has no values.
    const reason = db ?? (cause instanceof Error ? cause : undefined);
    const message = db?.code.startsWith('22') ? DATA_EXCEPTION : (reason?.message ?? 'database statement failed');
    return { error: message, error_name: reason?.name ?? err.name, sqlstate: db?.code, stack: frames(err) };
  }
  return { error: err.message, error_name: err.name, stack: frames(err) };
}
