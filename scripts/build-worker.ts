// `npm run build:worker [-- <outdir>]`: bundles the Worker exactly as `wrangler deploy` would
// (wrangler's dry run, wrangler.toml's entry and rules) into dist/worker and prints its size,
// raw and gzipped. Also used by the Workers tests, which load the same bundle into workerd.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WRANGLER = join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

/** wrangler.toml's `compatibility_date`: what `wrangler deploy` runs with, so the tests' workerd does too. */
export const COMPATIBILITY_DATE = (() => {
  const m = /^compatibility_date\s*=\s*"(\d{4}-\d{2}-\d{2})"/m.exec(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8'));
  if (!m?.[1]) throw new Error('wrangler.toml has no compatibility_date');
  return m[1];
})();

/** Cloudflare's limit on a Worker's compressed size (free plan: 3 MiB; we hold ourselves to 1 MiB). */
export const GZIP_BUDGET_BYTES = 1024 * 1024;

export interface WorkerModule {
  /** File name in the output directory, as the bundle imports it. */
  name: string;
  type: 'ESModule' | 'Text';
  bytes: number;
  gzipBytes: number;
}

export interface WorkerBuild {
  outdir: string;
  /** The entry module (ES module). */
  entry: string;
  modules: WorkerModule[];
  rawBytes: number;
  gzipBytes: number;
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0 ? done(out) : fail(new Error(`wrangler ${args.join(' ')} exited with ${code}:\n${out}`)),
    );
  });
}

/** Bundles `script` (default: wrangler.toml's main) into `outdir` with wrangler's dry run. */
export async function buildWorker(outdir: string, opts: { script?: string } = {}): Promise<WorkerBuild> {
  rmSync(outdir, { recursive: true, force: true });
  await run(['deploy', '--dry-run', '--outdir', outdir, ...(opts.script ? [opts.script] : [])], {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    // No account is needed for a dry run; never pick one up from the developer's shell.
    CLOUDFLARE_API_TOKEN: '',
    CLOUDFLARE_ACCOUNT_ID: '',
  });
  const files = readdirSync(outdir).filter((f) => f.endsWith('.js') || f.endsWith('.mjs') || f.endsWith('.sql'));
  const modules = files.map((name): WorkerModule => {
    const bytes = readFileSync(join(outdir, name));
    return {
      name,
      type: name.endsWith('.sql') ? 'Text' : 'ESModule',
      bytes: bytes.length,
      gzipBytes: gzipSync(bytes, { level: 9 }).length,
    };
  });
  const entries = modules.filter((m) => m.type === 'ESModule');
  if (entries.length !== 1 || !entries[0])
    throw new Error(`expected one JS module in ${outdir}, found ${entries.map((m) => m.name).join(', ') || 'none'}`);
  return {
    outdir,
    entry: join(outdir, entries[0].name),
    modules,
    rawBytes: modules.reduce((n, m) => n + m.bytes, 0),
    gzipBytes: modules.reduce((n, m) => n + m.gzipBytes, 0),
  };
}

export const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

async function main(): Promise<void> {
  const outdir = resolve(process.argv[2] ?? join(ROOT, 'dist', 'worker'));
  const build = await buildWorker(outdir);
  for (const m of build.modules)
    console.log(`  ${m.name.padEnd(60)} ${kib(m.bytes).padStart(12)}  gzip ${kib(m.gzipBytes).padStart(10)}`);
  console.log(
    `Worker bundle in ${outdir}: ${kib(build.rawBytes)} raw, ${kib(build.gzipBytes)} gzipped (budget ${kib(GZIP_BUDGET_BYTES)} gzipped)`,
  );
  if (build.gzipBytes > GZIP_BUDGET_BYTES) {
    console.error('The Worker bundle is over its gzipped budget.');
    process.exitCode = 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
