// bin/authsvc.js maps stack frames of dist/node to the TypeScript lines, reading a source map only
// when a stack is first formatted (scripts/stack-traces.mjs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'authsvc-stack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('frames of built files name the source line; other frames are left alone', async () => {
  const { build } = await import('esbuild');
  // Line 5 of thrower.ts throws; the bundle is minified onto a few lines, as dist/node is.
  writeFileSync(
    join(dir, 'thrower.ts'),
    [
      'export interface Box { n: number }',
      'const double = (b: Box): number => b.n * 2;',
      'export function fail(b: Box): never {',
      '  const twice: number = double(b);',
      '  throw new TypeError("bad " + twice);',
      '}',
      '',
    ].join('\n'),
  );
  await build({
    entryPoints: [join(dir, 'thrower.ts')],
    outdir: join(dir, 'out'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    sourcemap: true,
    sourcesContent: false,
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'silent',
  });
  const script = `
    import { installStackMapping } from ${JSON.stringify(join(ROOT, 'scripts', 'stack-traces.mjs'))};
    import { readFileSync } from 'node:fs';
    installStackMapping(${JSON.stringify(join(dir, 'out'))});
    const { fail } = await import(${JSON.stringify(join(dir, 'out', 'thrower.js'))});
    try { fail({ n: 21 }); } catch (err) { console.log(err.stack); }
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const lines = out.trim().split('\n');
  expect(lines[0]).toBe('TypeError: bad 42');
  expect(lines[1]).toMatch(new RegExp(`^    at fail \\(${join(dir, 'thrower.ts').replaceAll('/', '\\/')}:5:\\d+\\)$`));
  // The caller (the -e script) is not under the mapped directory: left as V8 wrote it.
  expect(lines.slice(2).join('\n')).not.toContain('thrower');
});

test("bin/authsvc.js installs it instead of Node's eager source maps", async () => {
  const { readFileSync } = await import('node:fs');
  const bin = readFileSync(join(ROOT, 'bin', 'authsvc.js'), 'utf8');
  expect(bin).toContain('installStackMapping(OUT)');
  expect(bin).not.toContain('setSourceMapsEnabled');
});
