// npm run fuzz [-- --runs N --seed S --collect]: a seeded run against the real app on PGlite
// (or Postgres with TEST_DATABASE_URL), then the database invariants. Exits non-zero on any
// failure: a 5xx, an error body not in GoTrue's shape, a broken invariant, RSS past its bound.
import { parseArgs } from 'node:util';
import { openTestDb } from '../helpers/db.ts';
import { checkInvariants } from './invariants.ts';
import { routeCount } from './requests.ts';
import { type FuzzStats, newStats, runFuzz } from './runner.ts';
import { setupFuzzTarget } from './setup.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, seed: { type: 'string', default: '17' }, collect: { type: 'boolean', default: false } },
});
const runs = Number(values.runs);
const seed = Number(values.seed);
/** RSS may grow this much past its level after warm-up (the first 1,000 requests). */
const RSS_GROWTH_BOUND_MB = 256;

const mb = (n: number) => Math.round(n / 1024 / 1024);
const rss: number[] = [];

function print(stats: FuzzStats, seconds: number): void {
  console.log(`requests:        ${stats.requests} in ${seconds.toFixed(1)} s (seed ${seed})`);
  console.log(`distinct routes: ${stats.routes.size} (${routeCount()} route patterns × 2 prefixes)`);
  console.log(`valid requests accepted: ${stats.validOk}`);
  console.log(`by class:        ${[...stats.byClass].sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log('4xx by code:');
  for (const [k, v] of [...stats.clientErrors].sort((a, b) => b[1] - a[1])) console.log(`  ${String(v).padStart(6)}  ${k}`);
  console.log(`5xx:             ${stats.serverErrors}`);
  console.log(`RSS MB:          start ${mb(rss[0]!)}, after warm-up ${mb(rss[1] ?? rss[0]!)}, peak ${mb(Math.max(...rss))}, end ${mb(rss.at(-1)!)}`);
}

async function main(): Promise<number> {
  rss.push(process.memoryUsage().rss);
  const db = await openTestDb();
  const target = await setupFuzzTarget(db);
  const stats = newStats();
  const started = performance.now();
  let failed = false;
  try {
    await runFuzz(target, {
      seed, numRuns: runs, collect: values.collect,
      onProgress: (s) => { rss.push(process.memoryUsage().rss); process.stderr.write(`… ${s.requests} requests, RSS ${mb(rss.at(-1)!)} MB\n`); },
    }, stats);
  } catch (err) {
    failed = true;
    console.error((err as Error).message);
  }
  rss.push(process.memoryUsage().rss);
  print(stats, (performance.now() - started) / 1000);
  if (stats.failures.length > 0) {
    failed = true;
    console.error(`\n${stats.failures.length} failing requests (first 20):`);
    for (const f of stats.failures.slice(0, 20)) console.error(`- ${f}`);
  }
  const broken = await checkInvariants(db);
  console.log(`invariants:      ${broken.length === 0 ? 'all hold' : `${broken.length} broken`}`);
  for (const b of broken) console.error(`- ${b}`);
  const growth = mb(Math.max(...rss.slice(1)) - (rss[1] ?? rss[0]!));
  if (growth > RSS_GROWTH_BOUND_MB) console.error(`RSS grew ${growth} MB after warm-up (bound ${RSS_GROWTH_BOUND_MB} MB)`);
  await db.close();
  return failed || broken.length > 0 || stats.serverErrors > 0 || growth > RSS_GROWTH_BOUND_MB ? 1 : 0;
}

process.exitCode = await main();
