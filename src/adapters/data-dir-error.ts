// The embedded database's directory cannot be used: held by another process (or this one), or
// not creatable or writable here. The CLI prints the message, one line that says what to do, and
// exits 1. Kept apart from db-pglite.ts so that catching it does not load PGlite.
export class DataDirError extends Error {}

/** The one line for a data directory that cannot be created or written here. */
export function unwritableDataDir(dir: string, err: unknown): DataDirError {
  const code = (err as { code?: string } | undefined)?.code ?? 'error';
  return new DataDirError(
    `cannot write the embedded database's directory ${dir} (${code}): mount a writable volume there, ` +
      'set DATABASE_URL=pglite:///a/writable/directory, or use a Postgres server (DATABASE_URL=postgres://…).',
  );
}
