// One memory-reducing collection of V8's heap a second after the server starts listening. Start-up
// leaves garbage behind (migration checks, configuration parsing, module evaluation) and a young
// generation grown to its maximum; V8 would only give that memory back under pressure, so an idle
// server kept about 10 MB it no longer used (docs/runtimes.md, footprint: 81 -> 72 MB on a
// Postgres server). The collection is V8's "last resort" major GC, taken once; it pauses the event
// loop for 10-50 ms, at a time when a new server has rarely any traffic yet.
//
// `gc` is reached the way V8 allows without starting Node with --expose-gc: the flag is switched
// on only while a fresh context is made, so the global object of the application never has `gc`.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options?: {
  type?: 'major' | 'minor';
  execution?: 'sync' | 'async';
  flavor?: 'regular' | 'last-resort';
}) => void;

/** The collector, or undefined where the runtime does not offer one this way. */
function collector(): Gc | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as Gc | undefined;
    return gc;
  } catch {
    return undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** Schedules the collection `delayMs` after now; the timer never keeps the process alive. */
export function collectStartupGarbage(delayMs = 1000): void {
  setTimeout(() => collector()?.({ type: 'major', execution: 'sync', flavor: 'last-resort' }), delayMs).unref();
}
