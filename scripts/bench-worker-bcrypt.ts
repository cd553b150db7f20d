// `npm run bench:worker-bcrypt`: CPU time of one bcrypt cost-10 hash (and verify) in workerd.
// Bundles scripts/bench-worker-bcrypt.worker.ts with wrangler, runs it in miniflare, and reads
// the workerd process's CPU time (utime + stime from /proc) around requests doing N hashes,
// minus a request doing none. Linux only for the CPU figure; wall time is printed everywhere.
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { COMPATIBILITY_DATE, buildWorker } from './build-worker.ts';

const N = Number(process.argv[2] ?? '20');
const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ

function workerdPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === 'workerd' && ppid === process.pid) pids.push(Number(entry));
    } catch {
      // the process went away
    }
  }
  return pids;
}

/** CPU milliseconds (user + system, all threads) of the given processes. */
function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

async function main(): Promise<void> {
  const outdir = mkdtempSync(join(tmpdir(), 'authsvc-bcrypt-bench-'));
  try {
    const build = await buildWorker(outdir, { script: 'scripts/bench-worker-bcrypt.worker.ts' });
    const mf = new Miniflare({
      modules: true,
      scriptPath: build.entry,
      modulesRoot: build.outdir,
      compatibilityDate: COMPATIBILITY_DATE,
    });
    try {
      await mf.ready;
      const pids = process.platform === 'linux' ? workerdPids() : [];
      const run = async (n: number, op: string) => {
        const cpu0 = pids.length ? cpuMs(pids) : 0;
        const t0 = performance.now();
        const res = await mf.dispatchFetch(`http://bench/?n=${n}&op=${op}`);
        const body = (await res.json()) as { clockMs: number };
        return {
          wallMs: performance.now() - t0,
          cpuMs: pids.length ? cpuMs(pids) - cpu0 : Number.NaN,
          clockMs: body.clockMs,
        };
      };
      await run(5, 'hash'); // warm up the JIT
      for (const op of ['hash', 'verify']) {
        const base = await run(0, op);
        const full = await run(N, op);
        const per = (x: number, b: number) => ((x - b) / N).toFixed(1);
        console.log(
          `bcrypt cost 10 ${op} in workerd (${N} runs): ` +
            `${pids.length ? `${per(full.cpuMs, base.cpuMs)} ms CPU, ` : ''}${per(full.wallMs, base.wallMs)} ms wall, ` +
            `${(full.clockMs / N).toFixed(1)} ms by the Worker's clock, per ${op}`,
        );
      }
    } finally {
      await mf.dispose();
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
