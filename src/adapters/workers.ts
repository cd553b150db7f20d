// Cloudflare Workers entry: `export default { fetch }`. What does not hold a socket (config, key
// set, mailer, hasher, logger, the Hono app itself) is built once per isolate and configuration;
// the database Pool is opened per request, handed to the app in the request's bindings and
// closed after it (ctx.waitUntil), because a Workers socket belongs to the request that opened
// it. Pending migrations are applied lazily, once per isolate, under the same advisory lock as
// `authsvc migrate`.
import { type Tables, createTables } from '../../drizzle/schema.ts';
import { version as VERSION } from '../../package.json';
import type { Hono } from 'hono';
import type { AppEnv, RequestBindings } from '../app-env.ts';
import { createApp } from '../app.ts';
import { parseConfig } from '../config/config.ts';
import { lookup } from '../config/names.ts';
import type { Config } from '../config/types.ts';
import { loadKeySet } from '../crypto/jwt.ts';
import { createPortableHasher } from '../crypto/password.ts';
import type { Database } from '../db/database.ts';
import { type Migration, migrate, pendingMigrations } from '../db/migrate.ts';
import { type Deps, cryptoRandomBytes } from '../deps.ts';
import { errorBody, unexpectedFailure } from '../http/error-body.ts';
import { type Mailer, createLogMailer } from '../mail/mailer.ts';
import { createTemplateRenderer } from '../mail/render.ts';
import { templateFetch, templateOptions } from './template-fetch.ts';
import { createResendTransport } from '../mail/resend.ts';
import { type MailTransport, createMailer as createTransportMailer } from '../mail/transport.ts';
import { createSmsProvider } from '../sms/create.ts';
import { type Logger, createLogger, errorFields } from '../telemetry/logger.ts';
import { type NeonSocketOptions, openNeon } from './db-neon.ts';
import { BUNDLED_MIGRATIONS } from './workers-migrations.ts';
import { type DurableObjectNamespaceLike, createDurableObjectRateLimitStore } from './workers-rate-limiter.ts';
import type { WorkersTracing } from './telemetry-workers.ts';
import { createWorkerSmtpTransport } from './workers-smtp.ts';
import { TcpSocketAsWebSocket, tcpProxyAddress } from './workers-tcp-socket.ts';

/** The part of a Hyperdrive binding used here. */
export interface HyperdriveLike {
  connectionString: string;
}

/** Vars, secrets and bindings (wrangler.toml, .dev.vars, `wrangler secret put`). */
export interface WorkersEnv {
  /** Optional Hyperdrive binding: when present it is the database (DATABASE_URL is not read). */
  HYPERDRIVE?: HyperdriveLike;
  /** Durable Object namespace of the RateLimiter class, for AUTHSVC_RATE_LIMIT_STORE=durable_object. */
  RATE_LIMITER?: DurableObjectNamespaceLike;
  [name: string]: unknown;
}

/** The part of the Workers ExecutionContext used here. */
export interface WorkersContext {
  waitUntil(promise: Promise<unknown>): void;
}

interface IsolateState {
  base: Omit<Deps, 'db'>;
  /** Built once: the database arrives with each request (RequestBindings.db). */
  app: Hono<AppEnv>;
  neon: NeonSocketOptions;
  tables: Tables;
  /** Set once this isolate has seen every bundled migration recorded in the database. */
  migrated: boolean;
  /** TRACING_ENABLED: spans of this isolate, exported after each response. */
  tracing?: WorkersTracing;
}

export class WorkersConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/** Vars and secrets as the flat string map parseConfig reads; bindings (objects) are left out. */
export function workersEnvStrings(env: WorkersEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  }
  return out;
}

function flag(raw: string | undefined, name: string, problems: string[]): boolean | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (/^(1|t|true)$/i.test(raw.trim())) return true;
  if (/^(0|f|false)$/i.test(raw.trim())) return false;
  problems.push(`${name}: expected true or false, got "${raw}"`);
  return undefined;
}

/** Read by this adapter, not by parseConfig. */
const WORKERS_VARIABLES = ['AUTHSVC_DB_WS_PROXY', 'AUTHSVC_DB_WS_SECURE', 'AUTHSVC_WORKERS_MAIL_LOG'] as const;

interface WorkersSettings {
  config: Config;
  /** Variables that name no setting (parseConfig's `warnings`). */
  warnings: string[];
  neon: NeonSocketOptions;
  mailToLog: boolean;
  rateLimiter?: DurableObjectNamespaceLike;
}

/**
 * Parses the Worker's env. There is no local mode on Workers: DATABASE_URL must be postgres://,
 * or a HYPERDRIVE binding replaces it. Adapter-only variables: AUTHSVC_DB_WS_PROXY and
 * AUTHSVC_DB_WS_SECURE (a WebSocket proxy in front of a non-Neon Postgres),
 * AUTHSVC_WORKERS_MAIL_LOG (development: emails go to the log when neither SMTP_HOST nor
 * RESEND_API_KEY is set) and AUTHSVC_RATE_LIMIT_STORE=durable_object (with a RATE_LIMITER binding).
 */
export function parseWorkersEnv(env: WorkersEnv): WorkersSettings {
  const problems: string[] = [];
  const raw = workersEnvStrings(env);
  const strings: Record<string, string> = { ...raw };

  // Memory buckets would hold for one isolate of many (and vanish with it): Postgres (exact) is
  // the default on Workers, a Durable Object (exact, no database write) the opt-in. KV was
  // removed: eventually consistent, so it could not hold a limit (docs/decisions/workers-rate-limit-store.md).
  let rateLimiter: DurableObjectNamespaceLike | undefined;
  const store = lookup(raw, 'RATE_LIMIT_STORE');
  if (store === undefined) strings.AUTHSVC_RATE_LIMIT_STORE = 'postgres';
  else if (store === 'memory')
    problems.push('RATE_LIMIT_STORE: memory does not work on Workers; use postgres (the default) or durable_object');
  else if (store === 'kv') {
    problems.push(
      'RATE_LIMIT_STORE: kv is no longer supported (Workers KV is eventually consistent and cannot hold a limit); use postgres (the default) or durable_object with a RateLimiter namespace bound as RATE_LIMITER',
    );
  } else if (store === 'durable_object') {
    if (!env.RATE_LIMITER)
      problems.push(
        'RATE_LIMIT_STORE=durable_object needs a Durable Object namespace of the RateLimiter class bound as RATE_LIMITER',
      );
    rateLimiter = env.RATE_LIMITER;
  }
  if (store === 'kv' || store === 'durable_object') {
    // parseConfig knows memory and postgres only; the adapter's store replaces the Postgres one.
    delete strings.GOTRUE_RATE_LIMIT_STORE;
    strings.AUTHSVC_RATE_LIMIT_STORE = 'postgres';
  }

  // Cloudflare sets CF-Connecting-IP to the client's address and no client can forge it: per-IP
  // limits key on it unless RATE_LIMIT_HEADER names another header.
  if (lookup(raw, 'RATE_LIMIT_HEADER') === undefined) strings.AUTHSVC_RATE_LIMIT_HEADER = 'CF-Connecting-IP';

  const mailToLog = flag(raw.AUTHSVC_WORKERS_MAIL_LOG, 'AUTHSVC_WORKERS_MAIL_LOG', problems) ?? false;
  const noTransport = !lookup(raw, 'SMTP_HOST') && !lookup(raw, 'RESEND_API_KEY');
  // parseConfig insists on a transport outside local mode; a placeholder host satisfies it and
  // is replaced by the log transport below.
  if (mailToLog && noTransport) strings.AUTHSVC_SMTP_HOST = 'log.invalid';

  // Hyperdrive: its connection string is the database, reached over TCP (cloudflare:sockets).
  const hyperdrive = typeof env.HYPERDRIVE?.connectionString === 'string' ? env.HYPERDRIVE.connectionString : undefined;
  if (hyperdrive !== undefined) {
    strings.AUTHSVC_DATABASE_URL = hyperdrive;
    if (raw.AUTHSVC_DB_WS_PROXY)
      problems.push('AUTHSVC_DB_WS_PROXY: not used with a HYPERDRIVE binding; remove one of them');
  }
  const dbUrl = lookup(strings, 'DATABASE_URL');
  if (dbUrl !== undefined && !/^postgres(ql)?:\/\//i.test(dbUrl.trim())) {
    problems.push(
      'DATABASE_URL: Workers need postgres://… or postgresql://… (there is no embedded database on Workers)',
    );
  }
  const parsed = parseConfig(strings, { local: false, adapterVariables: WORKERS_VARIABLES });
  if (!parsed.ok) problems.push(...parsed.errors);
  let config = parsed.ok ? parsed.config : undefined;
  if (config && mailToLog && noTransport) {
    config = { ...config, smtp: { ...config.smtp, host: undefined }, mailer: { ...config.mailer, transport: 'log' } };
  }

  const wsProxy = raw.AUTHSVC_DB_WS_PROXY?.trim() || undefined;
  if (wsProxy && /^[a-z]+:\/\//i.test(wsProxy)) {
    problems.push(
      `AUTHSVC_DB_WS_PROXY: give host[:port]/path without the protocol (AUTHSVC_DB_WS_SECURE picks wss: or ws:), got "${wsProxy}"`,
    );
  }
  const secureWebSocket = flag(raw.AUTHSVC_DB_WS_SECURE, 'AUTHSVC_DB_WS_SECURE', problems);

  if (problems.length > 0 || !config) throw new WorkersConfigError(problems);
  const neon: NeonSocketOptions =
    hyperdrive !== undefined
      ? { wsProxy: tcpProxyAddress, secureWebSocket: false, webSocket: TcpSocketAsWebSocket }
      : { wsProxy, secureWebSocket };
  return { config, warnings: parsed.ok ? parsed.warnings : [], neon, mailToLog, rateLimiter };
}

function createWorkersMailer(config: Config, logger: Logger, fetchFn: typeof fetch): Mailer {
  if (config.mailer.transport === 'log') return createLogMailer(logger);
  const transport: MailTransport =
    config.mailer.transport === 'resend'
      ? createResendTransport({ apiKey: config.resend.apiKey ?? '', baseUrl: config.resend.baseUrl, fetch: fetchFn })
      : createWorkerSmtpTransport({
          host: config.smtp.host ?? '',
          port: config.smtp.port,
          user: config.smtp.user,
          pass: config.smtp.pass,
        });
  return createTransportMailer({
    config,
    transport,
    renderer: createTemplateRenderer({ fetch: templateFetch(config, fetchFn), logger, ...templateOptions(config) }),
    logger,
  });
}

async function buildIsolateState(env: WorkersEnv): Promise<IsolateState> {
  const { config, warnings, neon, mailToLog, rateLimiter } = parseWorkersEnv(env);
  const logger = createLogger(config.log.level, (line) => console.log(line), {}, config.log.format ?? 'json');
  for (const w of warnings) logger.warn(w);
  if (mailToLog && config.mailer.transport === 'log') {
    logger.warn('AUTHSVC_WORKERS_MAIL_LOG: emails are written to the log, not sent (development only)');
  }
  const fetchFn: typeof fetch = (input, init) => fetch(input, init);
  const tracing = config.tracing.enabled
    ? (await import('./telemetry-workers.ts')).startWorkersTracing(config, VERSION, logger)
    : undefined;
  const base: Omit<Deps, 'db'> = {
    config,
    keys: await loadKeySet(config.jwt),
    mailer: createWorkersMailer(config, logger, fetchFn),
    sms: createSmsProvider(config.sms, fetchFn),
    hasher: createPortableHasher(),
    fetch: fetchFn,
    now: () => new Date(),
    randomBytes: cryptoRandomBytes,
    logger,
    version: VERSION,
    migrations: BUNDLED_MIGRATIONS.map((m) => m.version),
  };
  return {
    base,
    app: createApp({ ...base, limiter: rateLimiter ? createDurableObjectRateLimitStore(rateLimiter) : undefined }),
    neon,
    tables: createTables(config.db.namespace),
    migrated: false,
    tracing,
  };
}

/**
 * One cheap read per cold isolate; the advisory-locked migrate() only when something is pending,
 * so isolates starting together apply each migration once and a migrated database needs no DDL rights.
 */
export async function ensureMigrated(
  db: Database,
  migrations: readonly Migration[] = BUNDLED_MIGRATIONS,
): Promise<string[]> {
  if ((await pendingMigrations(db, migrations)).length === 0) return [];
  return migrate(db, [...migrations]);
}

/** errorFields, plus the message of the ErrorEvent a failed WebSocket rejects with. */
function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error || typeof err !== 'object' || err === null) return errorFields(err);
  const { message, type } = err as { message?: unknown; type?: unknown };
  return {
    error: typeof message === 'string' && message ? message : String(err),
    error_name: typeof type === 'string' ? type : undefined,
  };
}

/** GoTrue's 500 body; what went wrong goes to the log only. */
function failure(logLine: Record<string, unknown>): Response {
  console.error(JSON.stringify({ level: 'error', time: new Date().toISOString(), ...logLine }));
  const err = unexpectedFailure();
  return new Response(JSON.stringify(errorBody(err, false)), {
    status: err.status,
    headers: { 'content-type': 'application/json', 'x-sb-error-code': err.errorCode },
  });
}

// Per isolate and configuration. Workers usually hands an isolate the same env object for every
// request, but need not: a new object with the same vars, secrets and bindings finds the same
// state through its fingerprint, so the app, keys and caches are not rebuilt for it.
const byEnv = new WeakMap<object, Promise<IsolateState>>();
const byFingerprint = new Map<string, Promise<IsolateState>>();
/** Configurations kept at once: an isolate sees one; the bound only stops a leak. */
const MAX_CONFIGURATIONS = 4;
const bindingIds = new WeakMap<object, number>();
let nextBindingId = 0;

/** What the state is built from: every var and secret, the Hyperdrive string, the RATE_LIMITER binding's identity. */
export function envFingerprint(env: WorkersEnv): string {
  const limiter = env.RATE_LIMITER;
  let limiterId: number | undefined;
  if (limiter) {
    limiterId = bindingIds.get(limiter);
    if (limiterId === undefined) {
      limiterId = nextBindingId++;
      bindingIds.set(limiter, limiterId);
    }
  }
  const strings = Object.entries(workersEnvStrings(env)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const hyperdrive = typeof env.HYPERDRIVE?.connectionString === 'string' ? env.HYPERDRIVE.connectionString : null;
  return JSON.stringify([strings, hyperdrive, limiterId ?? null]);
}

function isolateState(env: WorkersEnv): Promise<IsolateState> {
  let state = byEnv.get(env);
  if (state) return state;
  const fingerprint = envFingerprint(env);
  state = byFingerprint.get(fingerprint);
  if (!state) {
    state = buildIsolateState(env);
    if (byFingerprint.size >= MAX_CONFIGURATIONS) byFingerprint.delete(byFingerprint.keys().next().value!);
    byFingerprint.set(fingerprint, state);
  }
  const built = state;
  byEnv.set(env, built);
  // A bad config is reported on every request until it is fixed, not cached as a failure.
  built.catch(() => {
    if (byEnv.get(env) === built) byEnv.delete(env);
    if (byFingerprint.get(fingerprint) === built) byFingerprint.delete(fingerprint);
  });
  return built;
}

export async function handleRequest(request: Request, env: WorkersEnv, ctx: WorkersContext): Promise<Response> {
  let state: IsolateState;
  try {
    state = await isolateState(env);
  } catch (err) {
    const problems = err instanceof WorkersConfigError ? err.problems : undefined;
    return failure({
      msg: 'authsvc cannot start: invalid configuration',
      problems,
      ...(problems ? {} : describeError(err)),
    });
  }
  const { config } = state.base;
  const db = openNeon({
    url: config.db.connection.url,
    namespace: config.db.namespace,
    tables: state.tables,
    traced: config.tracing.enabled,
    ...state.neon,
  });
  try {
    if (!state.migrated) {
      const applied = await ensureMigrated(db);
      if (applied.length > 0) state.base.logger.info(`applied ${applied.length} migration(s)`, { migrations: applied });
      state.migrated = true;
    }
    // Cloudflare names the client in CF-Connecting-IP: the socket peer, for audit entries.
    const bindings: RequestBindings = { remoteAddr: request.headers.get('cf-connecting-ip') ?? undefined, db };
    return await state.app.fetch(request, bindings);
  } catch (err) {
    return failure({ msg: 'database unavailable or migration failed', ...describeError(err) });
  } finally {
    ctx.waitUntil(db.close());
    if (state.tracing) ctx.waitUntil(state.tracing.flush());
  }
}

export default {
  fetch: handleRequest,
};

// AUTHSVC_RATE_LIMIT_STORE=durable_object: the class behind the RATE_LIMITER binding.
export { RateLimiter } from './workers-rate-limiter.ts';
