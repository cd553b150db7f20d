// Starts the server with glibc's malloc trim threshold fixed at 1 MB (Linux with glibc only).
//
// glibc raises the threshold at which it gives freed memory back to the system to twice the
// largest block it has just unmapped, up to 64 MB, and every thread's arena then keeps that much
// freed memory for good. V8's background threads that optimize PGlite's WebAssembly (TurboFan
// tier-up of the 9 MB Postgres module) each left 11-35 MB behind that way: an idle embedded
// server sat at 183-233 MB, 145-148 MB with the threshold fixed (docs/runtimes.md, footprint).
// A Postgres-server start is unchanged at 72-73 MB.
//
// glibc reads its tunables once, when the process starts, so the launcher replaces itself
// (process.execve: same pid, same arguments and Node flags) with the variable set. An operator's
// own GLIBC_TUNABLES are kept; one that already sets a malloc threshold is left alone.
// Plain JavaScript: bin/authsvc.js imports it before anything else runs.

export const TRIM_THRESHOLD = 1048576;
const TUNABLE = `glibc.malloc.trim_threshold=${TRIM_THRESHOLD}`;
/** Set in the replaced process's environment so it never replaces itself a second time. */
const MARKER = 'AUTHSVC_LAUNCHER_MALLOC_TUNED';

/**
 * The environment to start again with, or undefined when the process should go on as it is: not
 * glibc, already started again, or the operator chose malloc thresholds of their own.
 */
export function tunedEnvironment(env, glibcVersion) {
  if (!glibcVersion || env[MARKER] !== undefined) return undefined;
  if (env.MALLOC_TRIM_THRESHOLD_ !== undefined || env.MALLOC_MMAP_THRESHOLD_ !== undefined) return undefined;
  const tunables = env.GLIBC_TUNABLES ?? '';
  if (/(^|:)glibc\.malloc\.(trim|mmap)_threshold=/.test(tunables)) return undefined;
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${TUNABLE}` : TUNABLE, [MARKER]: '1' };
}

/** Replaces the process with one whose malloc trims (returns only when nothing is to be done). */
export function startWithMallocTrim() {
  if (process.env[MARKER] !== undefined) {
    delete process.env[MARKER]; // neither the configuration nor child processes see it
    return;
  }
  if (process.platform !== 'linux' || typeof process.execve !== 'function') return;
  let glibc;
  try {
    glibc = process.report.getReport().header.glibcVersionRuntime; // undefined on musl
  } catch {
    return;
  }
  const env = tunedEnvironment(process.env, glibc);
  if (!env) return;
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env);
  } catch {
    // execve refused (e.g. a sandbox forbids it): run on untuned, as before.
  }
}
