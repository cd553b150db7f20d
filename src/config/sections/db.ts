// The database (DB_*, DATABASE_URL).
import { opt, withDefault, setting } from '../setting.ts';
import { DEFAULT_DATA_DIR, integer, oneOf, parseDatabaseUrl, sqlIdentifier } from '../values.ts';

export const db = {
  db: {
    driver: setting('DB_DRIVER', opt(oneOf(['postgres'])), 'required (local mode: postgres)', 'Must be postgres.').map(
      () => 'postgres' as const,
    ),
    connection: setting(
      'DATABASE_URL',
      opt(parseDatabaseUrl),
      'required (local mode: pglite://./.authsvc)',
      'postgres:// or postgresql:// connection string; pglite://<directory> for the embedded database; memory:// for a throw-away one.',
    )
      // Required (crossCheck); the fallback only satisfies the type checker.
      .map((v) => v ?? { kind: 'pglite' as const, url: `pglite://${DEFAULT_DATA_DIR}`, dataDir: DEFAULT_DATA_DIR }),
    maxPoolSize: setting(
      'DB_MAX_POOL_SIZE',
      withDefault(integer(0), 0),
      '0',
      'Maximum open connections; 0 means unlimited.',
    ),
    namespace: setting(
      'DB_NAMESPACE',
      withDefault(sqlIdentifier, 'auth'),
      'auth',
      'Postgres schema holding the tables.',
    ),
  },
};
