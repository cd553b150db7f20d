// The package as npm publishes it (issue 42 item 5): `npm pack` makes a tarball that
// `npm install -g` installs, and its `authsvc` command starts in local mode in an empty directory,
// serves, reports the package's version, and stops on SIGTERM; the build it ships is fresh (npm
// unpacks files with new mtimes in any order). It installs the dependencies from the registry (or
// npm's cache), so it runs with the other system tests, in the Postgres run.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { TEST_DATABASE_URL } from '../helpers/db.ts';
import { REPO_ROOT, cleanupProcesses, runCli, startServer, tempDir } from '../helpers/server.ts';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

afterAll(async () => {
  await cleanupProcesses();
});

describe.runIf(TEST_DATABASE_URL)('npm pack, npm install -g', () => {
  test('the installed `authsvc` starts in local mode, serves a signup, reports its version and exits 0 on SIGTERM', async () => {
    const out = tempDir();
    const npm = (args: string[], cwd: string) =>
      execFileSync('npm', args, {
        cwd,
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, npm_config_loglevel: 'error' },
      });
    // `prepare` (the build) prints its line before npm's JSON.
    const packOut = npm(['pack', '--json', '--pack-destination', out], REPO_ROOT);
    const [packed] = JSON.parse(packOut.slice(packOut.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed!.files.map((f) => f.path);
    expect(files).toContain('dist/node/node-cli.js');
    expect(files).toContain('migrations/0001_init.sql');
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('bench/') || f.startsWith('.ci/'))).toEqual([]);

    const prefix = join(out, 'prefix');
    npm(
      ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', join(out, packed!.filename)],
      out,
    );
    const bin = join(prefix, 'bin', 'authsvc');
    expect(existsSync(bin)).toBe(true);

    const version = await runCli(['version'], { command: [bin] });
    expect(version.stdout.trim()).toBe(VERSION);

    const cwd = tempDir();
    const server = await startServer({ command: [bin], cwd, env: { GOTRUE_MAILER_AUTOCONFIRM: 'true' } });
    expect(server.stderr.join('\n')).not.toContain('older than the sources');
    expect(server.logs().find((l) => String(l.msg).includes('listening'))).toMatchObject({ database: 'pglite' });
    const health = (await (await fetch(`${server.url}/health`)).json()) as Record<string, unknown>;
    expect(health.version).toBe(VERSION);
    const signup = await fetch(`${server.url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'packaged@example.com', password: 'correct-horse-1' }),
    });
    expect(signup.status).toBe(200);
    expect(existsSync(join(cwd, '.authsvc', 'pgdata'))).toBe(true);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  }, 400_000);
});
