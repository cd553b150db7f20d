// The launcher's malloc tuning (scripts/malloc-trim.mjs): on Linux with glibc, bin/authsvc.js
// replaces itself, same pid, arguments and Node flags, with glibc's trim threshold fixed at 1 MB,
// so the arenas of V8's compiler threads give freed memory back (embedded idle RSS 230 -> 149 MB,
// docs/runtimes.md). test/runtime/read-only-package.test.ts checks a real start's environment.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from 'vitest';
// @ts-expect-error plain JavaScript module without types
import { TRIM_THRESHOLD, tunedEnvironment } from '../../scripts/malloc-trim.mjs';

const tuned = tunedEnvironment as (
  env: Record<string, string | undefined>,
  glibc: string | undefined,
) => Record<string, string> | undefined;
const MODULE = pathToFileURL(join(import.meta.dirname, '..', '..', 'scripts', 'malloc-trim.mjs')).href;
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;

test("the tunable is added on glibc, after an operator's own tunables, and once", () => {
  expect(TRIM_THRESHOLD).toBe(1048576);
  const first = tuned({ PATH: '/bin' }, '2.36');
  expect(first).toEqual({
    PATH: '/bin',
    GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=1048576',
    AUTHSVC_LAUNCHER_MALLOC_TUNED: '1',
  });
  // Started again: never a second time.
  expect(tuned(first!, '2.36')).toBeUndefined();
  expect(tuned({ GLIBC_TUNABLES: 'glibc.pthread.rseq=0' }, '2.36')?.GLIBC_TUNABLES).toBe(
    'glibc.pthread.rseq=0:glibc.malloc.trim_threshold=1048576',
  );
});

test("musl, other systems and an operator's own malloc thresholds are left as they are", () => {
  expect(tuned({ PATH: '/bin' }, undefined)).toBeUndefined();
  expect(tuned({ MALLOC_TRIM_THRESHOLD_: '0' }, '2.36')).toBeUndefined();
  expect(tuned({ MALLOC_MMAP_THRESHOLD_: '65536' }, '2.36')).toBeUndefined();
  expect(tuned({ GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=4096' }, '2.36')).toBeUndefined();
  expect(tuned({ GLIBC_TUNABLES: 'glibc.pthread.rseq=0:glibc.malloc.mmap_threshold=4096' }, '2.36')).toBeUndefined();
  // A name that only ends like one is not a malloc threshold.
  expect(tuned({ GLIBC_TUNABLES: 'x.glibc.malloc.trim_threshold=1' }, '2.36')?.GLIBC_TUNABLES).toContain(
    ':glibc.malloc.trim_threshold=1048576',
  );
});

test('a process that starts with it goes on as the same process, with its arguments, flags and the tunable, and without the marker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'authsvc-malloc-'));
  const script = join(dir, 'probe.mjs');
  writeFileSync(
    script,
    [
      `import { readFileSync } from 'node:fs';`,
      `import { startWithMallocTrim } from ${JSON.stringify(MODULE)};`,
      `startWithMallocTrim();`,
      `const environ = process.platform === 'linux' ? readFileSync('/proc/self/environ', 'latin1').split('\\0') : [];`,
      `console.log(JSON.stringify({ pid: process.pid, argv: process.argv.slice(2), execArgv: process.execArgv,`,
      `  tunables: process.env.GLIBC_TUNABLES ?? null, marker: process.env.AUTHSVC_LAUNCHER_MALLOC_TUNED ?? null,`,
      `  environ: environ.filter((l) => l.startsWith('GLIBC_TUNABLES=')) }));`,
    ].join('\n'),
  );
  const run = spawnSync(process.execPath, ['--max-semi-space-size=4', script, 'serve', '--x'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  expect(run.status, run.stderr).toBe(0);
  const out = JSON.parse(run.stdout) as {
    pid: number;
    argv: string[];
    execArgv: string[];
    tunables: string | null;
    marker: string | null;
    environ: string[];
  };
  expect(out.argv).toEqual(['serve', '--x']);
  expect(out.execArgv).toEqual(['--max-semi-space-size=4']);
  expect(out.pid).toBe(run.pid); // replaced, not a child
  expect(out.marker).toBeNull();
  if (process.platform === 'linux' && glibc) {
    expect(out.tunables).toBe('glibc.malloc.trim_threshold=1048576');
    // What glibc read when the process started, not only what JavaScript sees.
    expect(out.environ).toEqual(['GLIBC_TUNABLES=glibc.malloc.trim_threshold=1048576']);
  } else {
    expect(out.tunables).toBeNull();
  }
});
