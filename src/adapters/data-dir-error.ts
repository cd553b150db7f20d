// The embedded database's directory is held by another process (or this one): the CLI names it
// and exits. Kept apart from db-pglite.ts so that catching it does not load PGlite.
export class DataDirLockedError extends Error {}
