// `npm start` runs compiled JavaScript (issue 18): dist/node is built at install (`prepare`) or by
// `npm run build`, and bin/authsvc.js runs it with source maps, never building it (issue 26:
// test/runtime/read-only-package.test.ts proves a start writes nothing into the package).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, test } from 'vitest';
// @ts-expect-error plain JavaScript module without types
import { ENTRY, OUT, buildNode, isFresh, newestSource, sourceDigest } from '../../scripts/build-node.mjs';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The sources of every module a start loads: the entry and the chunks it imports statically, and
 * theirs (a shared chunk is loaded with the entry even where only a lazy module needs most of it);
 * `import("./chunks/…")` is left out, as it loads on first use.
 */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>();
  const sources: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    sources.push(...map.sources);
    for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*)["'](\.{1,2}\/[^"']+\.js)["']/g))
      visit(join(dirname(file), m[1] as string));
  };
  visit(entry);
  return sources;
}

test('a build is fresh until a source changes; its source maps name the TypeScript files', async () => {
  await buildNode();
  expect(isFresh()).toBe(true);
  expect(statSync(join(OUT, 'build.json')).mtimeMs).toBeGreaterThanOrEqual(newestSource());
  const map = JSON.parse(readFileSync(`${ENTRY}.map`, 'utf8')) as { sources: string[] };
  expect(map.sources).toContain('../../src/adapters/node-cli.ts');
  const loadedAtStart = staticClosure(ENTRY);
  // The lazily loaded drivers and SMTP are chunks of their own, not part of the entry.
  const entry = readFileSync(ENTRY, 'utf8');
  expect(entry).not.toMatch(/from\s+["']@electric-sql\/pglite["']/);
  expect(entry).not.toMatch(/from\s+["']nodemailer["']/);
  expect(entry).not.toMatch(/from\s+["']pg["']/);
  // What a default start never runs stays out of the entry, so it is neither read nor parsed at
  // start (idle RSS, docs/runtimes.md): zod's 40 locales (`import * as z` lets them be dropped),
  // the WebAuthn library and its ASN.1/X.509 stack, the Web3 curves, the QR encoder.
  const lazy = [
    /zod\/v4\/locales\/(?!en\.)/,
    /@simplewebauthn/,
    /@peculiar/,
    /asn1js/,
    /@noble\/curves/,
    /qrcode-generator/,
  ];
  for (const pattern of lazy)
    expect(
      loadedAtStart.filter((s) => pattern.test(s)),
      String(pattern),
    ).toEqual([]);
}, 30_000);

test('bin/authsvc.js runs the compiled server: the CLI answers from dist/node', () => {
  const out = execFileSync(process.execPath, [join(ROOT, 'bin', 'authsvc.js'), '--version'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(out.trim()).toContain(pkg.version);
  expect(isFresh()).toBe(true);
});

test('an installed package whose files npm unpacked with new mtimes in any order is still fresh; an edited source is not', () => {
  // A package tree as npm unpacks it: the stamp may be older than a source it was built from.
  const root = mkdtempSync(join(tmpdir(), 'authsvc-fresh-'));
  try {
    mkdirSync(join(root, 'src', 'adapters'), { recursive: true });
    mkdirSync(join(root, 'dist', 'node'), { recursive: true });
    writeFileSync(join(root, 'src', 'adapters', 'node-cli.ts'), 'export {};\n');
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(root, 'package.json'), '{}');
    writeFileSync(join(root, 'dist', 'node', 'node-cli.js'), '');
    const stamp = join(root, 'dist', 'node', 'build.json');
    writeFileSync(stamp, JSON.stringify({ sources: sourceDigest(root) }));
    const past = new Date(Date.now() - 60_000);
    utimesSync(stamp, past, past);
    expect(statSync(stamp).mtimeMs).toBeLessThan(newestSource(root));
    expect(isFresh(root)).toBe(true);
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 2;\n');
    expect(isFresh(root)).toBe(false);
    // A stamp written before the digest was recorded falls back to the mtimes alone.
    writeFileSync(stamp, JSON.stringify({ builtAt: past.toISOString() }));
    utimesSync(stamp, past, past);
    expect(isFresh(root)).toBe(false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the build records the digest of the sources it was built from', () => {
  expect(JSON.parse(readFileSync(join(OUT, 'build.json'), 'utf8')).sources).toBe(sourceDigest());
});

test('a tree that ships dist/node without its sources (the container image) is fresh, whatever the mtimes of what it keeps', () => {
  // The image keeps package.json and one worker script of src/, copied after the build: the
  // layer's mtimes (whole seconds) may make either look newer than the stamp.
  const root = mkdtempSync(join(tmpdir(), 'authsvc-image-'));
  try {
    mkdirSync(join(root, 'src', 'adapters'), { recursive: true });
    mkdirSync(join(root, 'dist', 'node'), { recursive: true });
    writeFileSync(join(root, 'dist', 'node', 'node-cli.js'), '');
    const stamp = join(root, 'dist', 'node', 'build.json');
    writeFileSync(stamp, JSON.stringify({ sources: 'the digest of the whole tree it was built from' }));
    const past = new Date(Date.now() - 60_000);
    utimesSync(stamp, past, past);
    writeFileSync(join(root, 'src', 'adapters', 'pglite-initdb-worker.mjs'), '');
    writeFileSync(join(root, 'package.json'), '{}');
    expect(isFresh(root)).toBe(true);
    // With the entry's source present it is a checkout again, and judged as one.
    writeFileSync(join(root, 'src', 'adapters', 'node-cli.ts'), 'export {};\n');
    expect(isFresh(root)).toBe(false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
