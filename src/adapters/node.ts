// Node adapter: builds Deps from the process environment and serves createApp on node:http.
import { serve, type ServerType } from '@hono/node-server';
import { createApp } from '../app.ts';
import { parseConfig } from '../config/config.ts';
import type { Config } from '../config/types.ts';
import { base64url } from '../crypto/encoding.ts';
import { loadKeySet } from '../crypto/jwt.ts';
import type { Database } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { type Deps, cryptoRandomBytes } from '../deps.ts';
import { type Mailer, createLogMailer } from '../mail/mailer.ts';
import { createTemplateRenderer } from '../mail/render.ts';
import { createResendTransport } from '../mail/resend.ts';
import { type MailTransport, createMailer as createTransportMailer } from '../mail/transport.ts';
import { createSmsProvider } from '../sms/create.ts';
import { type LogFormat, type Logger, createLogger } from '../telemetry/logger.ts';
import { type LogFile, openLogFile } from './log-file.ts';
import { readKeyFiles } from './key-files.ts';
import { loadMigrations } from './migrations-fs.ts';
import { isLocalMode, readEnv, withLocalSecret } from './node-env.ts';
import { createNodeHasher } from './node-hasher.ts';
import { nodeResolveHost } from './node-resolve.ts';
import { templateFetch, templateOptions } from './template-fetch.ts';
import type { SmtpTransportOptions } from './smtp-transport.ts';
import type { Telemetry } from './telemetry-node.ts';
import { VERSION } from './version.ts';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

export function loadConfig(rawEnv: Record<string, string> = readEnv()): {
  config: Config;
  notices: string[];
  warnings: string[];
} {
  const local = isLocalMode(rawEnv);
  const { env, notice } = withLocalSecret(rawEnv, () => base64url(cryptoRandomBytes(32)));
  const files = readKeyFiles(env);
  const result = parseConfig(files.env, { local });
  if (!result.ok || files.problems.length > 0)
    throw new ConfigError([...files.problems, ...(result.ok ? [] : result.errors)]);
  return {
    config: result.config,
    notices: notice ? [...result.notices, notice] : result.notices,
    warnings: result.warnings,
  };
}

export interface NodeLogger extends Logger {
  /** Flushes LOG_FILE and closes it (await before the process exits); nothing to do without one. */
  close(): Promise<void>;
}

/** LOG_FORMAT, else readable lines for a person at a terminal in local mode, JSON everywhere else. */
export function logFormat(config: Pick<Config, 'local' | 'log'>, stdoutIsTerminal: boolean): LogFormat {
  return config.log.format ?? (config.local && stdoutIsTerminal ? 'text' : 'json');
}

/** Lines go to stdout and, with LOG_FILE, to that file too (opened here: a bad path fails the start). */
export function createNodeLogger(config: Config): NodeLogger {
  const path = config.log.file;
  let file: LogFile | undefined;
  if (path) {
    try {
      file = openLogFile(path, (err) =>
        process.stderr.write(`authsvc: writing LOG_FILE ${path} failed, logging to stdout only: ${err.message}\n`),
      );
    } catch (err) {
      throw new ConfigError([`LOG_FILE ${path} cannot be opened: ${(err as Error).message}`]);
    }
  }
  const format = logFormat(config, process.stdout.isTTY === true);
  const logger = createLogger(
    config.log.level,
    (line) => {
      process.stdout.write(line + '\n');
      file?.write(line);
    },
    {},
    format,
  );
  return { ...logger, close: () => file?.close() ?? Promise.resolve() };
}

export async function openDatabase(config: Config): Promise<Database> {
  const { db } = config;
  const { connection } = db;
  // Only the driver the configuration names is loaded: PGlite's WASM module alone is tens of MB.
  if (connection.kind === 'postgres') {
    const { openPostgres } = await import('./db-postgres.ts');
    return openPostgres({
      url: connection.url,
      namespace: db.namespace,
      maxPoolSize: db.maxPoolSize,
      traced: config.tracing.enabled,
      ...databaseTimeouts(config),
    });
  }
  const { openPglite } = await import('./db-pglite.ts');
  return openPglite({
    dataDir: connection.kind === 'pglite' ? connection.dataDir : undefined,
    namespace: db.namespace,
    traced: config.tracing.enabled,
  });
}

/**
 * A Postgres that stops answering fails a request well inside API_MAX_REQUEST_DURATION, as 503
 * database_unavailable: a connection attempt waits at most 30% of it (≤ 5 s), a statement 50%
 * (so a request has time for its rollback and its answer). Without a limit: 5 s and 30 s.
 */
export function databaseTimeouts(config: Config): { connectTimeoutMs: number; queryTimeoutMs: number } {
  const limitMs = config.api.maxRequestDuration * 1000;
  if (!(limitMs > 0)) return { connectTimeoutMs: 5_000, queryTimeoutMs: 30_000 };
  return {
    connectTimeoutMs: Math.max(250, Math.min(5_000, Math.floor(limitMs * 0.3))),
    queryTimeoutMs: Math.max(500, Math.floor(limitMs * 0.5)),
  };
}

/**
 * TRACING_ENABLED / METRICS_ENABLED: registers the OpenTelemetry SDK (before the database opens,
 * so its pool gauges and statement spans find it). Nothing of the SDK is loaded otherwise.
 */
export async function startTelemetry(config: Config, logger: Logger): Promise<Telemetry | undefined> {
  if (!config.tracing.enabled && !config.metrics.enabled) return undefined;
  const { startNodeTelemetry } = await import('./telemetry-node.ts');
  return startNodeTelemetry(config, readEnv(), logger, VERSION);
}

/**
 * 70% of API_MAX_REQUEST_DURATION: under the outbox's 80% (accounts/outbox.ts), so an SMTP server
 * that stops answering fails the send in nodemailer before the outbox gives up on it and takes
 * its writes back; a late answer then cannot deliver a link that no longer works.
 */
function smtpStepTimeoutMs(config: Config): number | undefined {
  const limit = config.api.maxRequestDuration;
  return limit > 0 ? Math.max(400, Math.floor(limit * 700)) : undefined;
}

/** nodemailer is loaded with the first email, not at start-up. */
function lazySmtpTransport(opts: SmtpTransportOptions): MailTransport {
  let transport: Promise<MailTransport> | undefined;
  return {
    async deliver(m) {
      transport ??= import('./smtp-transport.ts').then((t) => t.createSmtpTransport(opts));
      return (await transport).deliver(m);
    },
  };
}

function createMailer(config: Config, logger: Logger): Mailer {
  if (config.mailer.transport === 'log') return createLogMailer(logger);
  const fetch = globalThis.fetch.bind(globalThis);
  const transport =
    config.mailer.transport === 'resend'
      ? createResendTransport({ apiKey: config.resend.apiKey ?? '', baseUrl: config.resend.baseUrl, fetch })
      : lazySmtpTransport({
          host: config.smtp.host ?? '',
          port: config.smtp.port,
          user: config.smtp.user,
          pass: config.smtp.pass,
          stepTimeoutMs: smtpStepTimeoutMs(config),
        });
  return createTransportMailer({
    config,
    transport,
    renderer: createTemplateRenderer({
      fetch: templateFetch(config, fetch, nodeResolveHost),
      logger,
      ...templateOptions(config),
    }),
    logger,
  });
}

export async function buildNodeDeps(config: Config, db: Database, logger: Logger): Promise<Deps> {
  return {
    config,
    db,
    logger,
    keys: await loadKeySet(config.jwt),
    mailer: createMailer(config, logger),
    sms: createSmsProvider(config.sms, globalThis.fetch.bind(globalThis)),
    hasher: createNodeHasher(),
    fetch: globalThis.fetch.bind(globalThis),
    now: () => new Date(),
    randomBytes: cryptoRandomBytes,
    version: VERSION,
    resolveHost: nodeResolveHost,
    samlXml: () => import('./saml-xml.ts').then((m) => m.samlXml),
    migrations: loadMigrations().map((m) => m.version),
  };
}

export async function applyMigrations(db: Database): Promise<string[]> {
  return migrate(db, loadMigrations());
}

export interface RunningServer {
  server: ServerType;
  port: number;
  stop(): Promise<void>;
}

/** Serves until stop(): in-flight requests finish, idle keep-alive sockets close, then the database. */
export async function startServer(deps: Deps): Promise<RunningServer> {
  const app = createApp(deps);
  const { host, port } = deps.config.api;
  const server = await new Promise<ServerType>((resolveListen, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host || undefined }, () => resolveListen(s));
    s.once('error', reject);
  });
  const addr = server.address();
  const actualPort = typeof addr === 'object' && addr ? addr.port : port;
  let stopping: Promise<void> | undefined;
  return {
    server,
    port: actualPort,
    stop() {
      stopping ??= new Promise<void>((done) => {
        const http = server as unknown as { closeAllConnections(): void; closeIdleConnections(): void };
        const force = setTimeout(() => http.closeAllConnections(), 30_000);
        force.unref();
        // A keep-alive socket busy at SIGTERM turns idle only after its response: keep sweeping.
        const sweep = setInterval(() => http.closeIdleConnections(), 100);
        server.close(() => {
          clearTimeout(force);
          clearInterval(sweep);
          deps.db.close().then(done, done);
        });
        http.closeIdleConnections();
      });
      return stopping;
    },
  };
}
