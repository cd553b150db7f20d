// Issue 26: starting never writes into the package. The package as npm would ship it (the files
// `npm pack` lists, with the dist/node the install built) is copied to a temporary directory and
// made read-only; its dependencies are the installed node_modules. Tests run as root, where a
// read-only mode stops nothing, so every file's mtime and hash are compared before and after too.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, lstatSync, readFileSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { REPO_ROOT, cleanupProcesses, runCli, startServer, tempDir } from '../helpers/server.ts';

const copies: string[] = [];
afterAll(async () => {
  await cleanupProcesses();
  // Writable again, so the temporary directories can be removed by a user other than root.
  for (const dir of copies) setWritable(dir, true);
});

/** The package's files as `npm pack` lists them (package.json's "files"), without running scripts. */
function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

/** Copies `files` of the repository to a new directory with their mtimes; node_modules is the installed one. */
function copyPackage(files: string[]): string {
  const pkg = join(tempDir('authsvc-pkg-'), 'authsvc');
  for (const f of files) cpSync(join(REPO_ROOT, f), join(pkg, f), { preserveTimestamps: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  copies.push(pkg);
  setWritable(pkg, false);
  return pkg;
}

/** chmod -R a-w (or u+w), not following the node_modules link. */
function setWritable(dir: string, writable: boolean): void {
  const walk = (p: string) => {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st || st.isSymbolicLink()) return;
    if (st.isDirectory()) for (const f of readdirSync(p)) walk(join(p, f));
    chmodSync(p, writable ? st.mode | 0o200 : st.mode & ~0o222);
  };
  walk(dir);
}

/** Every entry under `dir` (not following links): directories by name, files by mtime and SHA-256. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    const p = join(dir, rel);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) out[rel] = 'link';
    else if (st.isDirectory()) {
      out[rel] = 'dir';
      for (const f of readdirSync(p)) walk(rel ? join(rel, f) : f);
    } else out[rel] = `${st.mtimeMs} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`;
  };
  walk('');
  return out;
}

/** The production dependencies' files (paths, sizes, mtimes): what a start could write besides the package. */
function productionDependencies(): Record<string, string> {
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isDirectory()) for (const f of readdirSync(p)) walk(join(p, f));
    else out[p] = `${st.size} ${st.mtimeMs}`;
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path && !entry.dev && existsSync(join(REPO_ROOT, path))) walk(join(REPO_ROOT, path));
  }
  return out;
}

test('the built package starts from a read-only copy, serves a signup on an embedded directory outside it, and nothing in it changes', async () => {
  const pkg = copyPackage(packedFiles());
  expect(existsSync(join(pkg, 'dist', 'node', 'node-cli.js'))).toBe(true);
  expect(statSync(join(pkg, 'bin', 'authsvc.js')).mode & 0o222).toBe(0);
  const before = snapshot(pkg);
  const depsBefore = productionDependencies();

  // `npx authsvc` from a working directory of its own: local mode keeps ./.authsvc there.
  const server = await startServer({ command: [process.execPath, join(pkg, 'bin', 'authsvc.js')] });
  const res = await fetch(`${server.url}/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'read-only@example.com', password: 'correct-horse-9' }),
  });
  const body = (await res.json()) as { email?: string; user?: { email?: string } };
  expect(res.status).toBe(200);
  expect(body.user?.email ?? body.email).toBe('read-only@example.com');
  // On glibc the launcher replaced itself with malloc's trim threshold fixed (scripts/malloc-trim.mjs).
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  if (process.platform === 'linux' && glibc) {
    expect(readFileSync(`/proc/${server.pid}/environ`, 'latin1').split('\0')).toContain(
      'GLIBC_TUNABLES=glibc.malloc.trim_threshold=1048576',
    );
  }
  expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });

  expect(server.stderr.join('\n')).not.toContain('older than the sources');
  expect(existsSync(join(server.cwd, '.authsvc', 'pgdata', 'PG_VERSION'))).toBe(true);
  expect(snapshot(pkg)).toEqual(before);
  expect(productionDependencies()).toEqual(depsBefore);
}, 120_000);

test('without dist/node a start fails, names `npm run build`, and builds nothing', async () => {
  const pkg = copyPackage(packedFiles().filter((f) => !f.startsWith('dist/')));
  const before = snapshot(pkg);
  const run = await runCli(['--version'], { command: [process.execPath, join(pkg, 'bin', 'authsvc.js')] });
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`${join(pkg, 'dist', 'node', 'node-cli.js')} is missing`);
  expect(run.stderr).toContain('npm run build');
  expect(snapshot(pkg)).toEqual(before);
});
