import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { createNodeLogger } from '../../src/adapters/node.ts';
import { parseConfig } from '../../src/config/config.ts';
import { BASE_ENV } from '../helpers/app.ts';
import { REPO_ROOT, cleanupProcesses, startServer } from '../helpers/server.ts';

afterAll(async () => {
  await cleanupProcesses();
});

function logFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'log-')), 'authsvc.log');
}

function nodeLogger(env: Record<string, string>) {
  const parsed = parseConfig({ ...BASE_ENV, ...env }, { local: true });
  if (!parsed.ok) throw new Error(parsed.errors.join());
  return createNodeLogger(parsed.config);
}

function readLines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Runs `fn` with stdout swallowed (the logger writes every line there too). */
async function quiet<T>(fn: () => Promise<T> | T): Promise<T> {
  const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    return await fn();
  } finally {
    write.mockRestore();
  }
}

test('LOG_FILE appends JSON lines at LOG_LEVEL; lower levels are dropped', async () => {
  const file = logFile();
  await quiet(async () => {
    const root = nodeLogger({ AUTHSVC_LOG_LEVEL: 'warn', AUTHSVC_LOG_FILE: file });
    const logger = root.child({ request_id: 'r1' });
    logger.info('not at this level');
    logger.warn('first', { a: 1 });
    logger.error('second');
    await root.close();
  });
  const lines = readLines(file);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({ level: 'warn', msg: 'first', a: 1, request_id: 'r1' });
  expect(lines[1]).toMatchObject({ level: 'error', msg: 'second', request_id: 'r1' });
  expect(typeof lines[0]!.time).toBe('string');
});

test('LOG_FILE: close() writes every buffered line in order; a line after close() is still appended', async () => {
  const file = logFile();
  await quiet(async () => {
    const logger = nodeLogger({ AUTHSVC_LOG_FILE: file, AUTHSVC_LOG_LEVEL: 'info' });
    for (let i = 0; i < 5000; i++) logger.info(`line ${i}`, { pad: 'x'.repeat(200) });
    await logger.close();
    logger.warn('after close');
  });
  const msgs = readLines(file).map((l) => l.msg);
  expect(msgs).toHaveLength(5001);
  expect(msgs.slice(0, 5000)).toEqual(Array.from({ length: 5000 }, (_, i) => `line ${i}`));
  expect(msgs[5000]).toBe('after close');
});

test('LOG_FILE that cannot be opened fails at start-up with the path and the reason', () => {
  const file = join(logFile(), 'no-such-dir', 'authsvc.log');
  expect(() => nodeLogger({ AUTHSVC_LOG_FILE: file })).toThrow(`LOG_FILE ${file} cannot be opened: ENOENT`);
});

test('LOG_FILE: a process that exits without close() still leaves every line in the file', () => {
  const file = logFile();
  const script = `
    import { openLogFile } from './src/adapters/log-file.ts';
    const log = openLogFile(${JSON.stringify(file)}, (err) => { throw err; });
    for (let i = 0; i < 3000; i++) log.write(JSON.stringify({ msg: 'line ' + i, pad: 'x'.repeat(200) }));
    process.exit(3);
  `;
  let status: number | null = null;
  try {
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      stdio: 'pipe',
    });
  } catch (err) {
    status = (err as { status: number | null }).status;
  }
  expect(status).toBe(3);
  // A line whose write had just completed may be written twice at exit; none may be missing.
  const msgs = [...new Set(readLines(file).map((l) => l.msg))];
  expect(msgs).toEqual(Array.from({ length: 3000 }, (_, i) => `line ${i}`));
});

test('LOG_FILE on the real server: after SIGTERM the file holds every line of stdout, down to "stopped"', async () => {
  const file = logFile();
  const server = await startServer({
    env: { DATABASE_URL: 'memory://', AUTHSVC_LOG_FILE: file, AUTHSVC_LOG_LEVEL: 'debug' },
  });
  // Requests in flight when the signal arrives: their lines come last.
  const inFlight = Array.from({ length: 20 }, () =>
    fetch(`${server.url}/settings`).then(
      (r) => r.text(),
      () => '',
    ),
  );
  expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  await Promise.all(inFlight);
  const stdout = server.stdout.filter((l) => l.startsWith('{'));
  expect(stdout.at(-1)).toContain('"msg":"stopped"');
  expect(readFileSync(file, 'utf8').trim().split('\n')).toEqual(stdout);
}, 90_000);
