// Compiles the Node server (src/adapters/node-cli.ts and what it imports) to dist/node with
// esbuild: ES modules, lazily loaded modules (database drivers, SMTP) in their own chunks, source
// maps so stack traces name .ts lines. It runs when the package is installed (`prepare`: `npm ci`
// and `npm install` in a clone) and on `npm run build`; bin/authsvc.js only runs the result, so a
// start never writes into the package. esbuild is a dev dependency: production needs only dist/.
// Plain JavaScript, so the launcher can import isFresh() without a TypeScript loader.
//
// The pure-JavaScript packages (hono, zod, drizzle, jose, pg, ...) are bundled in, tree-shaken:
// left as imports, Node loads each package's own source maps once maps are on, about 8 MB of the
// idle process (issue 18). Packages with native code or files of their own next to them stay
// imports (EXTERNAL), and so does nodemailer, which is loaded with the first email.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const OUT = join(ROOT, 'dist', 'node');
export const ENTRY = join(OUT, 'node-cli.js');
const STAMP = join(OUT, 'build.json');
const INPUTS = ['src', 'drizzle', 'package.json', 'package-lock.json'];

/** Packages left as imports: native addons, PGlite (its WASM and data files sit beside it), the SMTP library. */
export const EXTERNAL = ['@node-rs/*', 'pg-native', '@electric-sql/pglite', '@electric-sql/pglite/*', 'nodemailer'];

/** The newest modification time among the sources the bundle is made of (ms). */
export function newestSource(root = ROOT) {
  let newest = 0;
  const walk = (p) => {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) return; // package-lock.json is not part of an installed package
    // Plain concatenation: path.join normalizes every path, and over the whole tree that made V8
    // optimize normalizeString at start (5 MB of TurboFan code pages in an idle server, docs/runtimes.md).
    if (st.isDirectory()) for (const f of readdirSync(p)) walk(`${p}/${f}`);
    else if (st.mtimeMs > newest) newest = st.mtimeMs;
  };
  for (const input of INPUTS) walk(join(root, input));
  return newest;
}

/** SHA-256 over the sources' paths and contents (INPUTS, in a fixed order). */
export function sourceDigest(root = ROOT) {
  const hash = createHash('sha256');
  const walk = (p, rel) => {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const f of readdirSync(p).sort()) walk(`${p}/${f}`, `${rel}/${f}`);
    } else {
      hash.update(`${rel}\0`).update(readFileSync(p)).update('\0');
    }
  };
  // package-lock.json is not part of an installed package, so it is not part of the digest.
  for (const input of INPUTS.filter((i) => i !== 'package-lock.json')) walk(join(root, input), input);
  return hash.digest('hex');
}

/**
 * Whether dist/node was built from the sources as they are now: the stamp is newer than every
 * source (a checkout), or, where mtimes say nothing (npm sets them to the time a package is
 * unpacked, in no order), the sources are byte for byte the ones it was built from. A tree that
 * ships dist/node without the sources it was built from (the container image keeps one worker
 * script of src/) has nothing it could be older than: fresh.
 */
export function isFresh(root = ROOT) {
  const stamp = join(root, 'dist', 'node', 'build.json');
  if (!existsSync(stamp) || !existsSync(join(root, 'dist', 'node', 'node-cli.js'))) return false;
  if (!existsSync(join(root, 'src', 'adapters', 'node-cli.ts'))) return true;
  if (statSync(stamp).mtimeMs >= newestSource(root)) return true;
  try {
    const { sources } = JSON.parse(readFileSync(stamp, 'utf8'));
    return typeof sources === 'string' && sources === sourceDigest(root);
  } catch {
    return false;
  }
}

/**
 * Builds into a private directory, then moves the result in: chunks first (their names carry a
 * content hash, so a running server's lazily loaded chunks are never replaced or removed), the
 * entry and the stamp last, each by an atomic rename. A concurrent start sees the old build or
 * the new one, never half of one.
 */
export async function buildNode({ clean = false } = {}) {
  const { build } = await import('esbuild');
  const tmp = `${OUT}.tmp-${process.pid}-${Date.now()}`;
  try {
    await build({
      entryPoints: [join(ROOT, 'src', 'adapters', 'node-cli.ts')],
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      external: EXTERNAL,
      sourcemap: true,
      sourcesContent: false,
      minifyWhitespace: true,
      minifySyntax: true,
      entryNames: '[name]',
      chunkNames: 'chunks/[name]-[hash]',
      // Bundled CommonJS packages (pg) still call require() for their optional and external parts.
      banner: {
        js: "import { createRequire as __authsvcCreateRequire } from 'node:module'; const require = __authsvcCreateRequire(import.meta.url);",
      },
      logLevel: 'warning',
    });
    if (clean) rmSync(OUT, { recursive: true, force: true });
    mkdirSync(join(OUT, 'chunks'), { recursive: true });
    for (const f of readdirSync(join(tmp, 'chunks'))) {
      if (!existsSync(join(OUT, 'chunks', f))) renameSync(join(tmp, 'chunks', f), join(OUT, 'chunks', f));
    }
    for (const f of ['node-cli.js.map', 'node-cli.js']) renameSync(join(tmp, f), join(OUT, f));
    writeFileSync(
      join(tmp, 'build.json'),
      JSON.stringify({ builtAt: new Date().toISOString(), sources: sourceDigest() }),
    );
    renameSync(join(tmp, 'build.json'), STAMP);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Whether esbuild can be loaded (it is missing after `npm ci --omit=dev`). */
async function hasEsbuild() {
  try {
    await import('esbuild');
    return true;
  } catch (err) {
    if (err?.code === 'ERR_MODULE_NOT_FOUND') return false;
    throw err;
  }
}

// `node scripts/build-node.mjs` (npm run build) builds or fails. With --prepare (the `prepare`
// script) an install without dev dependencies is not failed for want of esbuild: it says so, and
// a start without dist/node then fails with its own message.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--prepare') && !(await hasEsbuild())) {
    const state = existsSync(ENTRY)
      ? isFresh()
        ? 'the existing dist/node is up to date'
        : 'the existing dist/node is OLDER than the sources'
      : 'there is no dist/node, so authsvc cannot start';
    console.warn(
      `authsvc: esbuild (a dev dependency) is not installed, so dist/node was not built; ${state}. Build where the dev dependencies are installed (npm ci && npm run build) and ship dist/node.`,
    );
  } else {
    const started = Date.now();
    await buildNode({ clean: true });
    console.log(`dist/node built in ${Date.now() - started} ms`);
  }
}
