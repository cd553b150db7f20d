// Child processes of the bench (servers, ceiling probes), their peak memory, and cleanup: every
// process started here and every cleanup step registered here runs on normal exit, on an error
// and on Ctrl-C (SIGINT/SIGTERM), each exactly once.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** stdout and stderr lines, in arrival order. */
  lines: string[];
  exited: Promise<number | null>;
  exitCode?: number | null;
  waitForLine(pred: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

const live = new Set<Child>();
const cleanups: { name: string; fn: () => Promise<void> | void }[] = [];

/** Only what a child needs from our environment; the caller's variables come on top. */
function childEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const v = process.env[key];
    if (v !== undefined) out[key] = v;
  }
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

export function spawnChild(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
): Child {
  const proc = spawn(command, args, { cwd: REPO_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters = new Set<{ pred: (l: string) => boolean; done: (l: string) => void }>();
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let rest = '';
    stream?.setEncoding('utf8');
    const push = (line: string) => {
      lines.push(line);
      if (lines.length > 5_000) lines.splice(0, lines.length - 5_000);
      for (const w of waiters)
        if (w.pred(line)) {
          waiters.delete(w);
          w.done(line);
        }
    };
    stream?.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) push(p);
    });
    stream?.on('end', () => {
      if (rest) push(rest);
      rest = '';
    });
  };
  collect(proc.stdout);
  collect(proc.stderr);
  const child: Child = {
    name,
    proc,
    pid: proc.pid ?? -1,
    lines,
    exited: new Promise((done) => {
      proc.once('close', (code) => {
        live.delete(child);
        child.exitCode = code;
        done(code);
      });
      proc.once('error', () => {
        live.delete(child);
        child.exitCode = null;
        done(null);
      });
    }),
    waitForLine(pred, timeoutMs = 60_000) {
      const seen = lines.find(pred);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((done, fail) => {
        const w = {
          pred,
          done: (l: string) => {
            clearTimeout(timer);
            done(l);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          fail(new Error(`${name}: no matching output within ${timeoutMs} ms:\n${lines.slice(-30).join('\n')}`));
        }, timeoutMs);
        waiters.add(w);
        void child.exited.then(() => {
          if (!waiters.delete(w)) return;
          clearTimeout(timer);
          fail(new Error(`${name} exited (${child.exitCode}):\n${lines.slice(-30).join('\n')}`));
        });
      });
    },
    async stop(timeoutMs = 10_000) {
      if (child.exitCode !== undefined) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      await child.exited;
      clearTimeout(timer);
    },
  };
  live.add(child);
  return child;
}

/** Runs a child to completion and returns its last stdout line that parses as JSON. */
export async function runJsonChild<T>(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs: number,
): Promise<T> {
  const child = spawnChild(name, command, args, env);
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  const json = [...child.lines].reverse().find((l) => l.startsWith('{'));
  if (code !== 0 || !json) throw new Error(`${name} failed (exit ${code}):\n${child.lines.slice(-30).join('\n')}`);
  return JSON.parse(json) as T;
}

export async function waitForHttp(url: string, child: Child, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== undefined)
      throw new Error(
        `${child.name} exited (${child.exitCode}) before answering ${url}:\n${child.lines.slice(-30).join('\n')}`,
      );
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms:\n${child.lines.slice(-30).join('\n')}`);
}

/** Registers a cleanup step; steps run newest first. */
export function onCleanup(name: string, fn: () => Promise<void> | void): void {
  cleanups.push({ name, fn });
}

let cleaning: Promise<void> | undefined;

/** Stops every live child, then runs the cleanup steps. Idempotent. */
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...live].map((c) => c.stop(5_000)));
    for (const { name, fn } of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        process.stderr.write(`cleanup "${name}" failed: ${(err as Error).message}\n`);
      }
    }
  })();
  return cleaning;
}

/** Ctrl-C / SIGTERM: stop the load, clean up, exit 130. */
export function installSignalHandlers(onInterrupt: () => void): void {
  let interrupted = false;
  const handler = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping everything the bench started…\n`);
    onInterrupt();
    const force = setTimeout(() => process.exit(130), 20_000);
    force.unref();
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  process.on('exit', () => {
    for (const c of live) c.proc.kill('SIGKILL');
  });
}

export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export interface RssMonitor {
  /** Peak resident set size in bytes since start(). */
  stop(): number;
}

/**
 * Peak RSS of a process over a window: resets the kernel's high-water mark (VmHWM, via
 * /proc/<pid>/clear_refs) and also polls VmRSS every 100 ms in case the reset is not permitted.
 */
export function monitorRss(pid: number): RssMonitor {
  let resetOk = false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    resetOk = true;
  } catch {
    // not permitted: polling only
  }
  let peak = statusKb(pid, 'VmRSS');
  const timer = setInterval(() => {
    peak = Math.max(peak, statusKb(pid, 'VmRSS'));
  }, 100);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, statusKb(pid, 'VmRSS'));
      if (resetOk) peak = Math.max(peak, statusKb(pid, 'VmHWM'));
      return peak * 1024;
    },
  };
}

export interface Machine {
  cores: number;
  cpuModel: string;
  memBytes: number;
  node: string;
  /** Load average over the last minute when the run started (a busy machine skews everything). */
  loadAvg1: number;
}

export function machine(): Machine {
  const list = cpus();
  let load = 0;
  try {
    load = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    // not Linux
  }
  return {
    cores: list.length,
    cpuModel: list[0]?.model.trim() ?? '?',
    memBytes: totalmem(),
    node: process.version,
    loadAvg1: load,
  };
}

const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ

/** CPU time (user + system, all threads) of a process in ms; 0 when unknown. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat), for a busy share over a window. */
export function machineJiffies(): { busy: number; total: number } {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.reduce((a, b) => a + b, 0);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/**
 * CPU ms of every process named `postgres` on this machine (server and backends). On a quiet
 * machine that is what the database spent for the bench; anyone else's queries count too.
 * Children's reaped time (cutime/cstime) is included, so a backend that exits during the window
 * (the pool closing idle connections) moves its CPU to the postmaster instead of taking it away.
 */
export function postgresCpuMs(): number {
  let ms = 0;
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      ms += (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // gone
    }
  }
  return ms;
}

export interface Window {
  /** Ends the window: peak RSS (bytes) and CPU ms of the process and of Postgres, machine busy share (0..1). */
  end(): { peakRss: number; cpuMs: number; pgCpuMs: number; machineBusy: number };
}

/** Starts a measurement window over a process: peak RSS, its CPU time, the machine's busy share. */
export function startWindow(pid: number): Window {
  const rss = monitorRss(pid);
  const cpu0 = processCpuMs(pid);
  const pg0 = postgresCpuMs();
  const m0 = machineJiffies();
  return {
    end() {
      const m1 = machineJiffies();
      return {
        peakRss: rss.stop(),
        cpuMs: processCpuMs(pid) - cpu0,
        pgCpuMs: postgresCpuMs() - pg0,
        machineBusy: m1.total > m0.total ? (m1.busy - m0.busy) / (m1.total - m0.total) : 0,
      };
    },
  };
}

/** Waits until a process uses under 10% of a core over 300 ms (at most `timeoutMs`). */
export async function waitIdle(pid: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const before = processCpuMs(pid);
    await new Promise((r) => setTimeout(r, 300));
    if (processCpuMs(pid) - before < 30) return;
  }
}
