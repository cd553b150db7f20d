// `npm run bench -- --footprint` (issues 18, 45): how fast authsvc starts and how small it sits
// idle, on a Postgres server and on an existing embedded directory, beside the floors under it
// (bench/ceilings/floor-server.cjs: a bare node:http server, with the WHATWG fetch classes, and
// Hono on @hono/node-server). Each figure is the median of `runs` starts of
// `node <npm start's flags> bin/authsvc.js` (npm's own start-up, ~0.2 s, is not counted): time
// from spawn to the first GET /health 200, and resident memory 3 s after it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/free-port.ts';
import { startAuthsvc, startNodeFlags } from './authsvc.ts';
import { REPO_ROOT, spawnChild, statusKb, waitForHttp } from './procs.ts';
import { renderTable } from './table.ts';

export interface FootprintRow {
  label: string;
  startMs: number[];
  idleRssMb: number[];
  /** Undefined for a floor row (nothing to pass). */
  targetStartMs?: number;
  targetRssMb?: number;
}

const IDLE_MS = 3000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function startsOf(
  databaseUrl: string,
  namespace: string,
  runs: number,
  nodeFlags?: string[],
): Promise<{ startMs: number[]; idleRssMb: number[] }> {
  const startMs: number[] = [];
  const idleRssMb: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const a = await startAuthsvc({ databaseUrl, namespace, threadpool: 4, nodeFlags });
    startMs.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    idleRssMb.push(statusKb(a.child.pid, 'VmRSS') / 1024);
    await a.child.stop();
  }
  return { startMs, idleRssMb };
}

const FLOORS = [
  ['bare', 'floor: node:http alone'],
  ['web', 'floor: node:http + Request/Response (undici)'],
  ['hono', 'floor: + Hono on @hono/node-server'],
] as const;

/** `runs` starts of one floor server, measured as authsvc is. */
async function floorOf(variant: string, runs: number, nodeFlags?: string[]) {
  const startMs: number[] = [];
  const idleRssMb: number[] = [];
  for (let i = 0; i < runs; i++) {
    const port = await freePort();
    const t0 = performance.now();
    const child = spawnChild(
      `floor-${variant}`,
      process.execPath,
      [...(nodeFlags ?? startNodeFlags()), join(REPO_ROOT, 'bench/ceilings/floor-server.cjs'), variant],
      { PORT: String(port), NODE_ENV: 'production' },
    );
    await waitForHttp(`http://127.0.0.1:${port}/health`, child);
    startMs.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    idleRssMb.push(statusKb(child.pid, 'VmRSS') / 1024);
    await child.stop();
  }
  return { startMs, idleRssMb };
}

export async function measureFootprint(o: {
  databaseUrl: string;
  namespace: string;
  runs: number;
  pglite: boolean;
  nodeFlags?: string[];
}): Promise<FootprintRow[]> {
  const rows: FootprintRow[] = [];
  if (o.databaseUrl) {
    for (const [variant, label] of FLOORS) {
      rows.push({ label, ...(await floorOf(variant, o.runs, o.nodeFlags)) });
    }
    // The first start migrates the new schema; the measured ones find it migrated, as a restart does.
    await startsOf(o.databaseUrl, o.namespace, 1, o.nodeFlags);
    rows.push({
      label: 'Postgres server',
      ...(await startsOf(o.databaseUrl, o.namespace, o.runs, o.nodeFlags)),
      targetStartMs: 500,
      targetRssMb: 60,
    });
  }
  if (o.pglite) {
    const dir = mkdtempSync(join(tmpdir(), 'authsvc-footprint-'));
    try {
      await startsOf(`pglite://${dir}`, 'auth', 1, o.nodeFlags); // creates the directory (initdb): not measured
      rows.push({
        label: 'embedded, existing directory',
        ...(await startsOf(`pglite://${dir}`, 'auth', o.runs, o.nodeFlags)),
        targetStartMs: 800,
        targetRssMb: 130,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

export function footprintTable(rows: FootprintRow[]): string {
  const fmt = (xs: number[], digits: number) => xs.map((x) => x.toFixed(digits)).join(' / ');
  const body = rows.map((r) => {
    const s = median(r.startMs);
    const m = median(r.idleRssMb);
    return [
      r.label,
      fmt(r.startMs, 0),
      s.toFixed(0),
      r.targetStartMs === undefined ? '' : `≤ ${r.targetStartMs}`,
      r.targetStartMs === undefined ? '' : s <= r.targetStartMs ? 'PASS' : 'MISS',
      fmt(r.idleRssMb, 0),
      m.toFixed(0),
      r.targetRssMb === undefined ? '' : `≤ ${r.targetRssMb}`,
      r.targetRssMb === undefined ? '' : m <= r.targetRssMb ? 'PASS' : 'MISS',
    ];
  });
  return renderTable(
    ['footprint', 'start ms (runs)', 'median', 'target', '', 'idle RSS MB (runs)', 'median', 'target', ''],
    body,
    new Set([2, 6]),
  );
}
