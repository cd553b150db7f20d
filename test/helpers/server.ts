// Runs the real CLI (`node bin/authsvc.js …`) as a child process: free port, empty temp working
// directory, a clean environment (nothing leaks in from the developer's shell), captured output.
// Every process and directory made here is tracked; `cleanupProcesses()` (call it in afterAll)
// stops what is still running, and an exit hook kills stragglers if a test run is aborted.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(REPO_ROOT, 'bin/authsvc.js');

const live = new Set<ChildProcess>();
const dirs = new Set<string>();

process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** An empty temporary directory, removed by cleanupProcesses(). */
export function tempDir(prefix = 'authsvc-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

/** Only what a process needs to run; the test's own variables come on top. */
function childEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'SYSTEMROOT']) {
    const v = process.env[key];
    if (v !== undefined) base[key] = v;
  }
  return { ...base, ...env };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliProcess {
  proc: ChildProcess;
  pid: number;
  cwd: string;
  /** stdout and stderr lines in arrival order. */
  lines: string[];
  stdout: string[];
  stderr: string[];
  exited: Promise<Exit>;
  exit?: Exit;
  /** stdout lines that are JSON objects (the structured log). */
  logs(): Record<string, unknown>[];
  output(): string;
  /** Resolves with the first line (present or future) matching `pred`. */
  waitForLine(pred: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Sends `signal` and waits for the exit; SIGKILL after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  cwd?: string;
  args?: string[];
  /** Program and leading arguments in place of `node bin/authsvc.js` (e.g. another runtime's adapter). */
  command?: string[];
}

export function spawnCli(opts: SpawnOptions = {}): CliProcess {
  const cwd = opts.cwd ?? tempDir();
  const [program, ...leading] = opts.command ?? [process.execPath, CLI];
  const proc = spawn(program!, [...leading, ...(opts.args ?? [])], {
    cwd,
    env: childEnv(opts.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(proc);
  const lines: string[] = [];
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters = new Set<{ pred: (l: string) => boolean; done: (l: string) => void }>();
  const collect = (stream: NodeJS.ReadableStream | null, into: string[]) => {
    let rest = '';
    stream?.setEncoding('utf8');
    const push = (line: string) => {
      into.push(line);
      lines.push(line);
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
  collect(proc.stdout, stdout);
  collect(proc.stderr, stderr);

  const handle: CliProcess = {
    proc,
    pid: proc.pid ?? -1,
    cwd,
    lines,
    stdout,
    stderr,
    exited: new Promise<Exit>((done) => {
      // 'close' (not 'exit') so every output line has been read when this resolves.
      proc.once('close', (code, signal) => {
        live.delete(proc);
        handle.exit = { code, signal };
        done(handle.exit);
      });
      proc.once('error', () => {
        live.delete(proc);
        handle.exit = { code: null, signal: null };
        done(handle.exit);
      });
    }),
    logs() {
      const out: Record<string, unknown>[] = [];
      for (const l of stdout) {
        if (!l.startsWith('{')) continue;
        try {
          out.push(JSON.parse(l) as Record<string, unknown>);
        } catch {
          // a non-JSON line that happens to start with a brace
        }
      }
      return out;
    },
    output: () => lines.join('\n'),
    waitForLine(pred, timeoutMs = 30_000) {
      const seen = lines.find(pred);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((done, fail) => {
        const w = {
          pred,
          done: (l: string) => {
            clearTimeout(timer);
            done(l);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          fail(new Error(`no matching output line within ${timeoutMs} ms; output so far:\n${handle.output()}`));
        }, timeoutMs);
        waiters.add(w);
        void handle.exited.then(() => {
          if (!waiters.delete(w)) return;
          clearTimeout(timer);
          fail(
            new Error(
              `process exited (${JSON.stringify(handle.exit)}) without a matching line; output:\n${handle.output()}`,
            ),
          );
        });
      });
    },
    async stop(signal = 'SIGTERM', timeoutMs = 10_000) {
      if (handle.exit) return handle.exit;
      proc.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const killed = new Promise<void>((done) => {
        timer = setTimeout(() => {
          proc.kill('SIGKILL');
          done();
        }, timeoutMs);
      });
      const result = await Promise.race([handle.exited, killed.then(() => handle.exited)]);
      clearTimeout(timer);
      return result;
    },
  };
  return handle;
}

export interface RunResult extends Exit {
  stdout: string;
  stderr: string;
  proc: CliProcess;
}

/** Runs a command to completion (killed after `timeoutMs`). */
export async function runCli(
  args: string[],
  opts: Omit<SpawnOptions, 'args'> & { timeoutMs?: number } = {},
): Promise<RunResult> {
  const p = spawnCli({ ...opts, args });
  const timer = setTimeout(() => p.proc.kill('SIGKILL'), opts.timeoutMs ?? 90_000);
  const exit = await p.exited;
  clearTimeout(timer);
  return { ...exit, stdout: p.stdout.join('\n'), stderr: p.stderr.join('\n'), proc: p };
}

export interface ServerProcess extends CliProcess {
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
}

export interface StartOptions extends SpawnOptions {
  /** Port to poll. Without it a free port is picked and passed as PORT (unless env sets PORT). */
  port?: number;
  timeoutMs?: number;
}

/** Starts the server and resolves once GET /health answers 200. */
export async function startServer(opts: StartOptions = {}): Promise<ServerProcess> {
  const env = { ...(opts.env ?? {}) };
  const picked = opts.port === undefined && env.PORT === undefined;
  for (let attempt = 0; ; attempt++) {
    const port = opts.port ?? (picked ? await freePort() : Number(env.PORT));
    const p = spawnCli({ ...opts, env: picked ? { ...env, PORT: String(port) } : env });
    try {
      await waitForHealth(p, port, opts.timeoutMs ?? 90_000);
      return Object.assign(p, { port, url: `http://127.0.0.1:${port}` });
    } catch (err) {
      await p.stop('SIGKILL');
      // Someone took the port between freePort() and listen(): try another one.
      if (picked && attempt < 2 && /EADDRINUSE/.test(p.output())) continue;
      throw err;
    }
  }
}

async function waitForHealth(p: CliProcess, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (p.exit)
      throw new Error(`server exited (${JSON.stringify(p.exit)}) before answering /health; output:\n${p.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not answer /health within ${timeoutMs} ms; output:\n${p.output()}`);
}

/** Stops every process still running (SIGTERM, then SIGKILL) and removes the temp directories. */
export async function cleanupProcesses(): Promise<void> {
  await Promise.all(
    [...live].map(async (proc) => {
      const closed = new Promise<void>((done) => proc.once('close', () => done()));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await closed;
      clearTimeout(timer);
    }),
  );
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}
