// `authsvc [serve|migrate|version|admin|doctor|hash-refresh-tokens]` — GoTrue's commands, shared by Node, Bun and Deno. Config,
// database, mailer and hasher come from the Node adapter (Bun and Deno run node:* and npm
// packages); a runtime supplies only its HTTP server and, if it has its own, its signal API.
import process from 'node:process';
import type { Deps } from '../deps.ts';
import { DataDirError } from './data-dir-error.ts';
import { runAdminCommand } from './node-admin.ts';
import { runDoctor, runHashRefreshTokens } from './node-doctor.ts';
import {
  ConfigError,
  applyMigrations,
  buildNodeDeps,
  createNodeLogger,
  loadConfig,
  openDatabase,
  startTelemetry,
} from './node.ts';
import { VERSION } from './version.ts';

const USAGE = `Usage: authsvc [command]

Commands:
  serve      apply pending migrations, then serve (the default)
  migrate    apply pending migrations and report them
  version    print the version
  admin      createuser <email> <password> [--confirm] [--role R] | deleteuser <email|id>
             (authsvc admin help for details)
  doctor     report what the database holds (GoTrue's release, pending migrations, GoTrue's
             refresh tokens, encrypted secrets, what will not carry over); changes nothing [--json]
  hash-refresh-tokens
             replace GoTrue's refresh tokens still in clear by keyed digests (after leaving GoTrue)`;

export interface Listening {
  port: number;
  /** Stops accepting, lets in-flight requests finish, closes idle connections; may close the database. */
  stop(): Promise<void>;
}

export interface Runtime {
  /** e.g. "bun 1.2.3", logged with the listening line. */
  name: string;
  listen(deps: Deps): Promise<Listening>;
  /** Resolves with the first SIGTERM or SIGINT; a second one gets the runtime's default (exit). */
  stopSignal?(): Promise<string>;
}

/** Node's signal API, which Bun implements too. */
function processStopSignal(): Promise<string> {
  return new Promise((resolveSignal) => {
    process.once('SIGTERM', resolveSignal);
    process.once('SIGINT', resolveSignal);
  });
}

/**
 * Binds with `bind(hostname)` (synchronous, as Bun.serve and Deno.serve are). API_HOST empty means
 * every interface: `::` (IPv6 and IPv4), then `0.0.0.0` where IPv6 is off, as Node does. A busy
 * port reads as Node's error does.
 */
export function bindServer<T>(host: string, port: number, bind: (hostname: string) => T): T {
  const hosts = host ? [host] : ['::', '0.0.0.0'];
  for (const [i, hostname] of hosts.entries()) {
    try {
      return bind(hostname);
    } catch (err) {
      if (i < hosts.length - 1) continue;
      if ((err as { code?: unknown }).code === 'EADDRINUSE') {
        throw new Error(`listen EADDRINUSE: address already in use ${hostname}:${port}`, { cause: err });
      }
      throw err;
    }
  }
  throw new Error('no address to listen on');
}

async function main(argv: string[], runtime: Runtime, atExit: (() => Promise<void>)[]): Promise<number> {
  const cmd = argv[0] ?? 'serve';
  if (cmd === 'version' || cmd === '--version') {
    process.stdout.write(VERSION + '\n');
    return 0;
  }
  if (cmd === 'help' || cmd === '--help' || cmd === '-h') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (cmd === 'admin') return runAdminCommand(argv.slice(1));
  if (cmd === 'doctor') return runDoctor(argv.slice(1));
  if (cmd === 'hash-refresh-tokens') return runHashRefreshTokens();
  if (cmd !== 'serve' && cmd !== 'migrate') {
    process.stderr.write(`Unknown command "${cmd}".\n\n${USAGE}\n`);
    return 2;
  }
  const { config, notices, warnings } = loadConfig();
  const logger = createNodeLogger(config);
  atExit.push(() => logger.close()); // LOG_FILE's last lines, after the finally below has logged
  for (const n of notices) logger.info(`local mode: ${n}`);
  for (const w of warnings) logger.warn(w);
  const telemetry = cmd === 'serve' ? await startTelemetry(config, logger) : undefined;
  const db = await openDatabase(config);
  try {
    const applied = await applyMigrations(db);
    logger.info(applied.length ? `applied ${applied.length} migration(s)` : 'database is up to date', {
      migrations: applied,
    });
    if (cmd === 'migrate') return 0;
    const deps = await buildNodeDeps(config, db, logger);
    const running = await runtime.listen(deps);
    logger.info(`authsvc ${VERSION} listening on http://${config.api.host || 'localhost'}:${running.port}`, {
      port: running.port,
      database: config.db.connection.kind,
      runtime: runtime.name,
    });
    const signal = await (runtime.stopSignal ?? processStopSignal)();
    logger.info(`received ${signal}: finishing in-flight requests, then stopping`);
    await running.stop().catch((err: unknown) => logger.error('stopping the server failed', { error: String(err) }));
    logger.info('stopped');
    return 0;
  } finally {
    await db.close(); // idempotent: a runtime's stop() may have closed it already
    await telemetry?.shutdown(); // the last spans and metrics go out
  }
}

/** Runs the command line, flushes the log file, then exits with its status. */
export function runCli(argv: string[], runtime: Runtime): void {
  const atExit: (() => Promise<void>)[] = [];
  const exit = async (code: number) => {
    for (const fn of atExit) await fn().catch(() => undefined);
    process.exit(code);
  };
  main(argv, runtime, atExit).then(
    (code) => exit(code),
    (err: unknown) => {
      if (err instanceof ConfigError || err instanceof DataDirError) {
        process.stderr.write(`authsvc: ${err.message}\n`);
      } else {
        process.stderr.write(`authsvc: ${err instanceof Error ? err.stack : String(err)}\n`);
      }
      return exit(1);
    },
  );
}
