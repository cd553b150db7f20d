// The embedded database's lock file (src/adapters/data-dir-lock.ts): a live holder is refused, a
// stale lock is taken, also the one a container restarted after SIGKILL finds (its own pid, on its
// own host); another host's lock is taken only once it has gone untouched for STALE_MS; and a
// directory that cannot be written gets one line saying what to mount or set.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { DataDirError } from '../../src/adapters/data-dir-error.ts';
import { lockDataDir, STALE_MS, TOUCH_MS } from '../../src/adapters/data-dir-lock.ts';
import { runCli, tempDir } from '../helpers/server.ts';

const HOST = 'host-a';
const NS = 'pid:[1]';
const lockOf = (dir: string) => join(dir, 'authsvc.lock');
const holderOf = (dir: string) => readFileSync(lockOf(dir), 'utf8').split('\n').slice(0, 3);
const noSleep = async () => {
  throw new Error('must not wait');
};

afterEach(() => {
  vi.useRealTimers();
});

describe('on this host', () => {
  test('a free directory: the lock names this pid and host, and release removes it', async () => {
    const dir = join(tempDir(), 'data');
    const release = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep });
    expect(holderOf(dir)).toEqual([String(process.pid), HOST, NS]);
    release();
    expect(existsSync(lockOf(dir))).toBe(false);
  });

  test('held by this process already: refused', async () => {
    const dir = tempDir();
    const release = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep });
    await expect(lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep })).rejects.toThrow(
      /is already open in this process/,
    );
    release();
  });

  test('this pid in a lock this process does not hold (a container restarted after SIGKILL is pid 1 again): taken', async () => {
    const dir = tempDir();
    writeFileSync(lockOf(dir), `${process.pid}\n${HOST}\n${NS}\n`);
    const release = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep });
    expect(holderOf(dir)).toEqual([String(process.pid), HOST, NS]);
    release();
  });

  test('a lock of the old format (the pid alone) naming this pid: taken', async () => {
    const dir = tempDir();
    writeFileSync(lockOf(dir), String(process.pid));
    const release = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep });
    expect(holderOf(dir)).toEqual([String(process.pid), HOST, NS]);
    release();
  });

  test('a running process holds it: refused with its pid, the lock left alone', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(lockOf(dir), `${child.pid}\n${HOST}\n${NS}\n`);
      const err = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DataDirError);
      expect((err as Error).message).toContain(`in use by another authsvc process (pid ${child.pid})`);
      expect(holderOf(dir)).toEqual([String(child.pid), HOST, NS]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('a process that is gone: taken', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((r) => child.once('exit', r));
    writeFileSync(lockOf(dir), `${child.pid}\n${HOST}\n${NS}\n`);
    const release = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep });
    expect(holderOf(dir)).toEqual([String(process.pid), HOST, NS]);
    release();
  });

  test('the holder touches its lock every TOUCH_MS', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const dir = tempDir();
    const release = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep });
    const past = new Date('2029-01-01T00:00:00Z');
    utimesSync(lockOf(dir), past, past);
    vi.advanceTimersByTime(TOUCH_MS);
    expect(statSync(lockOf(dir)).mtime.getUTCFullYear()).toBe(2030);
    release();
  });
});

describe('from another host or pid namespace (a container restarted or recreated on its volume)', () => {
  test('pid 1 of another pid namespace on this host (a container restarted after SIGKILL) is watched, not trusted: taken once untouched', async () => {
    const dir = tempDir();
    writeFileSync(lockOf(dir), `1\n${HOST}\npid:[2]\n`);
    const waits: number[] = [];
    const release = await lockDataDir(dir, {
      host: HOST,
      pidNamespace: NS,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(waits).toHaveLength(1);
    expect(holderOf(dir)).toEqual([String(process.pid), HOST, NS]);
    release();
  });

  test('untouched for STALE_MS already: taken at once', async () => {
    const dir = tempDir();
    writeFileSync(lockOf(dir), `1\nhost-b\n`);
    const old = new Date(Date.now() - STALE_MS - 1_000);
    utimesSync(lockOf(dir), old, old);
    const release = await lockDataDir(dir, { host: HOST, pidNamespace: NS, sleep: noSleep });
    expect(holderOf(dir)).toEqual([String(process.pid), HOST, NS]);
    release();
  });

  test('touched recently and not again while watched: taken after the rest of STALE_MS', async () => {
    const dir = tempDir();
    writeFileSync(lockOf(dir), `1\nhost-b\n`);
    const now = Date.now();
    const touched = new Date(now - 5_000);
    utimesSync(lockOf(dir), touched, touched);
    const waits: number[] = [];
    const release = await lockDataDir(dir, {
      host: HOST,
      pidNamespace: NS,
      now: () => now,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(STALE_MS - 5_000 - 50);
    expect(waits[0]).toBeLessThanOrEqual(STALE_MS - 5_000 + 50);
    expect(holderOf(dir)).toEqual([String(process.pid), HOST, NS]);
    release();
  });

  test('touched again while watched (its holder is alive): refused, the lock left alone', async () => {
    const dir = tempDir();
    writeFileSync(lockOf(dir), `7\nhost-b\n`);
    const err = await lockDataDir(dir, {
      host: HOST,
      pidNamespace: NS,
      sleep: async () => {
        const later = new Date(Date.now() + 3_000);
        utimesSync(lockOf(dir), later, later);
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirError);
    expect((err as Error).message).toContain('in use by authsvc on host host-b (pid 7)');
    expect(holderOf(dir)).toEqual(['7', 'host-b', '']);
  });
});

describe('a directory that cannot be written', () => {
  test('lockDataDir: one line naming the directory, the reason, and what to mount or set', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const err = await lockDataDir(join(file, 'data'), { host: HOST, pidNamespace: NS, sleep: noSleep }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataDirError);
    expect((err as Error).message).toBe(
      `cannot write the embedded database's directory ${join(file, 'data')} (ENOTDIR): mount a writable volume there, ` +
        'set DATABASE_URL=pglite:///a/writable/directory, or use a Postgres server (DATABASE_URL=postgres://…).',
    );
  });

  test('the CLI in local mode: exit 1 and that one line on stderr, no stack trace', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'not-a-dir'), '');
    const run = await runCli([], { cwd, env: { DATABASE_URL: `pglite://${join(cwd, 'not-a-dir', 'data')}` } });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([
      `authsvc: cannot write the embedded database's directory ${join(cwd, 'not-a-dir', 'data')} (ENOTDIR): mount a writable volume there, ` +
        'set DATABASE_URL=pglite:///a/writable/directory, or use a Postgres server (DATABASE_URL=postgres://…).',
    ]);
  });
});
