// Structured JSON logs: one object per line, filtered by LOG_LEVEL. The adapter decides
// where lines go (stdout, LOG_FILE); secrets are never passed to the logger.
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

export function createLogger(level: LogLevel, write: (line: string) => void, base: Record<string, unknown> = {}): Logger {
  const log = (l: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[l] > RANK[level]) return;
    write(JSON.stringify({ level: l, time: new Date().toISOString(), msg, ...base, ...fields }));
  };
  return {
    level,
    log,
    error: (m, f) => log('error', m, f),
    warn: (m, f) => log('warn', m, f),
    info: (m, f) => log('info', m, f),
    debug: (m, f) => log('debug', m, f),
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
  };
}

/** Describes an error for the log without its message leaking into a response. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    return { error: err.message, error_name: err.name, stack: err.stack?.split('\n').slice(0, 6).join('\n') };
  }
  return { error: String(err) };
}
