// npm run fuzz [-- --runs N --seed S --collect --concurrency K --profile confirm]: a seeded run against the real app on PGlite
// (or Postgres with TEST_DATABASE_URL), then the database invariants. Exits non-zero on any
// failure: a 5xx, an error body not in GoTrue's shape, a broken invariant, RSS past its bound.
// --collect sends every request and lists every failure; without it fast-check stops at the
// first failure and shrinks it. --concurrency K (implies --collect) keeps K requests in flight.
import { parseArgs } from 'node:util';
import { openTestDb, TEST_DATABASE_URL } from '../../helpers/db.ts';
import { checkInvariants } from './invariants.ts';
import { routeCount } from './requests.ts';
import { type FuzzStats, newStats, runFuzz } from './runner.ts';
import { type FuzzProfile, setupFuzzTarget } from './setup.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '17' },
    collect: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '1' },
    profile: { type: 'string', default: 'autoconfirm' },
  },
});
const runs = Number(values.runs);
const seed = Number(values.seed);
/**
 * RSS may grow this much past its level after warm-up (the first 1,000 requests), beyond the
 * growth of the database itself: PGlite keeps its files in this process's memory, and the run
 * stores megabytes of metadata on purpose.
 */
const RSS_GROWTH_BOUND_MB = 128;

const mb = (n: number) => Math.round(n / 1024 / 1024);
const gc = (globalThis as { gc?: () => void }).gc;
/** RSS after a full collection (npm run fuzz passes --expose-gc), so garbage is not counted. */
function rssNow(): number {
  gc?.();
  return process.memoryUsage().rss;
}

function print(stats: FuzzStats, seconds: number): void {
  console.log(
    `requests:        ${stats.requests} in ${seconds.toFixed(1)} s (seed ${seed}, profile ${values.profile}, ${TEST_DATABASE_URL ? 'Postgres' : 'PGlite'})`,
  );
  const table = [...stats.routes].filter((r) => !r.includes('(stray)')).length;
  console.log(
    `distinct routes: ${table} of the table's ${routeCount()} × 2 prefixes, and ${stats.routes.size - table} stray method/prefix pairs`,
  );
  console.log(
    `by class:        ${[...stats.byClass]
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  console.log(
    `valid requests accepted: ${stats.validOk} (${[...stats.validByRoute].map(([r, [n, ok]]) => `${r} ${ok}/${n}`).join(', ')})`,
  );
  console.log('4xx by code:');
  for (const [k, v] of [...stats.clientErrors].sort((a, b) => b[1] - a[1]))
    console.log(`  ${String(v).padStart(6)}  ${k}`);
  console.log(`5xx:             ${stats.serverErrors}`);
}

async function main(): Promise<number> {
  const rssStart = rssNow();
  const db = await openTestDb();
  const dbBytes = async () =>
    TEST_DATABASE_URL
      ? 0
      : Number((await db.withSession((s) => s.exec('select pg_database_size(current_database()) as n')))[0]!.n);
  const target = await setupFuzzTarget(db, values.profile as FuzzProfile);
  const stats = newStats();
  const started = performance.now();
  let warm: { rss: number; db: number } | undefined;
  let rssPeak = 0;
  let failed = false;
  try {
    await runFuzz(
      target,
      {
        seed,
        numRuns: runs,
        collect: values.collect || Number(values.concurrency) > 1,
        concurrency: Number(values.concurrency),
        onProgress: async (s) => {
          const rss = rssNow();
          rssPeak = Math.max(rssPeak, rss);
          if (!warm && s.requests >= 1000) warm = { rss, db: await dbBytes() };
          process.stderr.write(`… ${s.requests} requests, RSS ${mb(rss)} MB\n`);
        },
      },
      stats,
    );
  } catch (err) {
    failed = true;
    console.error((err as Error).message);
  }
  const rssEnd = rssNow();
  print(stats, (performance.now() - started) / 1000);
  const dbGrowth = warm ? (await dbBytes()) - warm.db : 0;
  const growth = warm ? mb(rssEnd - warm.rss - dbGrowth) : 0;
  console.log(
    `RSS MB:          start ${mb(rssStart)}, after warm-up ${warm ? mb(warm.rss) : '-'}, peak ${mb(Math.max(rssPeak, rssEnd))}, end ${mb(rssEnd)}` +
      `${TEST_DATABASE_URL ? '' : ` (in-process database grew ${mb(dbGrowth)} MB)`}; growth past the database's ${growth} MB (bound ${RSS_GROWTH_BOUND_MB})`,
  );
  if (stats.failures.length > 0) {
    failed = true;
    console.error(`\n${stats.failures.length} failing requests (first 20):`);
    for (const f of stats.failures.slice(0, 20)) console.error(`- ${f}`);
  }
  const broken = await checkInvariants(db);
  console.log(`invariants:      ${broken.length === 0 ? 'all hold' : `${broken.length} broken`}`);
  for (const b of broken) console.error(`- ${b}`);
  if (growth > RSS_GROWTH_BOUND_MB)
    console.error(`RSS grew ${growth} MB after warm-up (bound ${RSS_GROWTH_BOUND_MB} MB)`);
  await db.close();
  return failed || broken.length > 0 || stats.serverErrors > 0 || growth > RSS_GROWTH_BOUND_MB ? 1 : 0;
}

process.exitCode = await main();
