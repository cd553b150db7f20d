// The embedded database's lock file, `<dir>/authsvc.lock`: PGlite serves one process, and two
// processes on one directory would corrupt it. The file names the holder (pid, host and pid
// namespace, one per line), and the holder touches it every few seconds. A lock is stale when its
// holder is gone: in this pid namespace of this host, when its pid is not running, or is this
// process's own pid while this process does not hold it; from anywhere else (a container restarted
// after SIGKILL: pid 1 again, in a new namespace; a volume moved to a new container or host), when
// it has not been touched for STALE_MS. A pid alone says nothing across namespaces: two containers
// on one volume are both pid 1.
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { DataDirError, unwritableDataDir } from './data-dir-error.ts';

/** How often the holder touches the lock, and after how long untouched another host may take it. */
export const TOUCH_MS = 5_000;
export const STALE_MS = 20_000;

/** The lock files this process holds. */
const held = new Set<string>();

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This process's pid namespace (Linux: `pid:[4026531836]`), or '' where there is none to read. */
function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

export interface LockOptions {
  /** This host's name (the container's, in a container). */
  host?: string;
  /** This process's pid namespace. */
  pidNamespace?: string;
  now?: () => number;
  /** Waits `ms` (another host's lock is watched for one STALE_MS before it is taken). */
  sleep?: (ms: number) => Promise<void>;
}

function mkdirOrExplain(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    // A directory that exists but is read-only fails here, not at PGlite's first write.
    closeSync(openSync(join(dir, '.authsvc-write-check'), 'w'));
    unlinkSync(join(dir, '.authsvc-write-check'));
  } catch (err) {
    throw unwritableDataDir(resolve(dir), err);
  }
}

interface Holder {
  pid: number;
  /** Unset in a lock written before the host was recorded (the pid alone). */
  host: string | undefined;
  ns: string;
  touched: number;
}

function readHolder(path: string): Holder | undefined {
  try {
    const [pid, host, ns] = readFileSync(path, 'utf8').split('\n');
    return {
      pid: Number.parseInt(pid ?? '', 10),
      host: host?.trim() || undefined,
      ns: ns?.trim() ?? '',
      touched: statSync(path).mtimeMs,
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Takes `<dir>/authsvc.lock`; resolves to its release function. */
export async function lockDataDir(dir: string, opts: LockOptions = {}): Promise<() => void> {
  const host = opts.host ?? hostname();
  const ns = opts.pidNamespace ?? pidNamespace();
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const path = resolve(dir, 'authsvc.lock');
  if (held.has(path)) throw new DataDirError(`The data directory ${resolve(dir)} is already open in this process.`);
  mkdirOrExplain(dir);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${process.pid}\n${host}\n${ns}\n`);
      closeSync(fd);
      return hold(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(path);
    if (!holder) continue;
    // Whether the holder's pid means anything here: same host, same pid namespace.
    const sameHost = holder.host === undefined || (holder.host === host && holder.ns === ns);
    if (sameHost && Number.isInteger(holder.pid) && holder.pid !== process.pid && pidAlive(holder.pid)) {
      throw new DataDirError(
        `The data directory ${resolve(dir)} is in use by another authsvc process (pid ${holder.pid}). ` +
          'The embedded database serves one process at a time: stop that process, point DATABASE_URL ' +
          'at another pglite:// directory, or use a Postgres server (postgres://…) to run several instances.',
      );
    }
    if (!sameHost) {
      // A holder elsewhere may be alive: it touches the lock every TOUCH_MS. Watch it for as long
      // as a live holder could stay silent before calling it stale.
      const untouched = now() - holder.touched;
      if (untouched < STALE_MS) {
        await sleep(STALE_MS - untouched);
        const later = readHolder(path);
        if (later && later.touched !== holder.touched) {
          throw new DataDirError(
            `The data directory ${resolve(dir)} is in use by authsvc on host ${holder.host} (pid ${holder.pid}). ` +
              'The embedded database serves one process at a time: stop it, or use a Postgres server (postgres://…).',
          );
        }
        if (!later) continue;
      }
    }
    unlinkSync(path); // stale: its holder is gone
  }
  throw new DataDirError(`Could not lock the data directory ${resolve(dir)}.`);
}

function hold(path: string): () => void {
  held.add(path);
  const timer = setInterval(() => {
    try {
      const t = new Date();
      utimesSync(path, t, t);
    } catch {
      /* removed by hand: nothing to keep fresh */
    }
  }, TOUCH_MS);
  timer.unref?.();
  return () => {
    clearInterval(timer);
    held.delete(path);
    try {
      unlinkSync(path);
    } catch {
      /* already gone */
    }
  };
}
