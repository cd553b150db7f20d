// `authsvc [serve|migrate|version]` — GoTrue's commands, on Node.
import { DataDirLockedError } from './db-pglite.ts';
import { ConfigError, applyMigrations, buildNodeDeps, createNodeLogger, loadConfig, openDatabase, startServer } from './node.ts';
import { VERSION } from './version.ts';

const USAGE = `Usage: authsvc [command]

Commands:
  serve      apply pending migrations, then serve (the default)
  migrate    apply pending migrations and report them
  version    print the version`;

async function main(argv: string[]): Promise<number> {
  const cmd = argv[0] ?? 'serve';
  if (cmd === 'version' || cmd === '--version') {
    process.stdout.write(VERSION + '\n');
    return 0;
  }
  if (cmd === 'help' || cmd === '--help' || cmd === '-h') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (cmd !== 'serve' && cmd !== 'migrate') {
    process.stderr.write(`Unknown command "${cmd}".\n\n${USAGE}\n`);
    return 2;
  }
  const { config, notices } = loadConfig();
  const logger = createNodeLogger(config);
  for (const n of notices) logger.info(`local mode: ${n}`);
  const db = await openDatabase(config);
  let handedOver = false;
  try {
    const applied = await applyMigrations(db);
    logger.info(applied.length ? `applied ${applied.length} migration(s)` : 'database is up to date', { migrations: applied });
    if (cmd === 'migrate') return 0;
    const deps = await buildNodeDeps(config, db, logger);
    const running = await startServer(deps);
    handedOver = true;
    logger.info(`authsvc ${VERSION} listening on http://${config.api.host || 'localhost'}:${running.port}`, {
      port: running.port, database: config.db.kind,
    });
    await new Promise<void>((resolveSignal) => {
      const onSignal = (signal: string) => {
        logger.info(`received ${signal}: finishing in-flight requests, then stopping`);
        running.stop().then(resolveSignal, resolveSignal);
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    });
    logger.info('stopped');
    return 0;
  } finally {
    if (!handedOver) await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof DataDirLockedError) {
      process.stderr.write(`authsvc: ${err.message}\n`);
    } else {
      process.stderr.write(`authsvc: ${err instanceof Error ? err.stack : String(err)}\n`);
    }
    process.exit(1);
  },
);
