// `npm run bench [-- options]`: authsvc under load beside the limits that bound it and a peer.
// See bench/README.md for what is measured and how; `--help` for the options.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Options } from 'autocannon';
import pg from 'pg';
import {
  type Account,
  JWT_SECRET,
  MIX,
  type MixKind,
  mixedRequests,
  refreshRequests,
  seedAccounts,
  seedBackgroundUsers,
  signinRequest,
  signupRequests,
  startAuthsvc,
  startNodeFlags,
  userRequests,
} from './lib/authsvc.ts';
import { type LoadResult, perConnection, runLoad, stopAllLoad } from './lib/load.ts';
import {
  type PeerAccount,
  peerSessionOk,
  peerSessionRequests,
  peerSigninRequests,
  peerSignupRequests,
  seedPeerAccounts,
  seedPeerBackgroundUsers,
  startPeer,
} from './lib/peer.ts';
import { type OtlpSink, startOtlpSink } from './lib/otlp-sink.ts';
import { type PgCounts, type PgCountProxy, startPgCountProxy } from './lib/pg-count-proxy.ts';
import {
  type Child,
  REPO_ROOT,
  cleanup,
  installSignalHandlers,
  machine,
  onCleanup,
  runJsonChild,
  spawnChild,
  type Window,
  startWindow,
  waitForHttp,
  waitIdle,
} from './lib/procs.ts';
import { fmtMiB, fmtMs, fmtRate, fmtRatio, renderTable } from './lib/table.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { footprintTable, measureFootprint } from './lib/footprint.ts';

const HELP = `npm run bench [-- options]

  --duration <s>      measured seconds per scenario (default 10)
  --quick             ~2 s per scenario, short warm-ups: a smoke run, not numbers to quote
  --connections <n>   concurrent HTTP connections (default 32)
  --pglite            authsvc on the embedded engine (PGlite) instead of the Postgres server
  --database-url <u>  Postgres for authsvc and the peer (default $BENCH_DATABASE_URL or
                      postgres://postgres@127.0.0.1:5432/postgres)
  --threadpool <n>    UV_THREADPOOL_SIZE for the servers and the bcrypt ceiling
                      (default $UV_THREADPOOL_SIZE or 4, libuv's default)
  --pool <n>          authsvc DB_MAX_POOL_SIZE (default: the service default)
  --users <n>         users already in each database, written with SQL before the scenarios
                      (default 100000, --quick 2000; Postgres only, PGlite starts empty)
  --only <list>       scenarios, comma-separated: signup,signin,refresh,user,mixed
  --no-peer           skip better-auth
  --no-ceilings       skip the ceiling measurements
  --cpu-prof          run authsvc under node --cpu-prof (profile in bench/profiles/, summarize with
                      node --import tsx bench/cpuprofile-summary.ts <file>)
  --count-queries     route authsvc's Postgres traffic through a counting proxy and print
                      statements / round trips per request (adds a hop: not the numbers to quote)
  --tracing           authsvc with TRACING_ENABLED (every request sampled), exporting OTLP
                      http/protobuf to a collector stand-in in this process; compare with a run without
  --sample-ratio <r>  with --tracing: OTEL_TRACES_SAMPLER=parentbased_traceidratio at r (0..1) instead of
                      always_on (every request)
  --warmup <s>        seconds of each run left unmeasured (default 20% of --duration, 1 to 3 s); with
                      --tracing use 30: a fresh process's first span exports deoptimize Node's stream
                      code for the next tens of seconds (docs/observability.md)
  --env KEY=VALUE     an extra setting for authsvc, with its AUTHSVC_ or GOTRUE_ prefix (repeatable), e.g.:
                      --env AUTHSVC_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED=true --env AUTHSVC_HOOK_CUSTOM_ACCESS_TOKEN_URI=pg-functions://…
  --footprint         start-up time and idle RSS (3 starts each, Postgres and embedded); no load
  --node-flags <f>    Node flags for authsvc in place of those \`npm start\` passes (package.json),
                      e.g. --node-flags="" for Node's defaults
  --json <file>       also write every measurement as JSON
`;

const SCENARIOS = ['signup', 'signin', 'refresh', 'user', 'mixed'] as const;
type Scenario = (typeof SCENARIOS)[number];

function parseCli() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      env: { type: 'string', multiple: true },
      quick: { type: 'boolean' },
      connections: { type: 'string' },
      pglite: { type: 'boolean' },
      'database-url': { type: 'string' },
      threadpool: { type: 'string' },
      pool: { type: 'string' },
      users: { type: 'string' },
      only: { type: 'string' },
      'no-peer': { type: 'boolean' },
      'no-ceilings': { type: 'boolean' },
      'cpu-prof': { type: 'boolean' },
      'count-queries': { type: 'boolean' },
      json: { type: 'string' },
      footprint: { type: 'boolean' },
      tracing: { type: 'boolean' },
      'sample-ratio': { type: 'string' },
      'node-flags': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const num = (v: string | undefined, d: number, name: string) => {
    if (v === undefined) return d;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: expected a number, got "${v}"`);
    return n;
  };
  const ratio = (v: string) => {
    const n = Number(v);
    if (!(n >= 0 && n <= 1)) throw new Error(`--sample-ratio: expected a number from 0 to 1, got "${v}"`);
    return n;
  };
  const seconds = values.quick ? num(values.duration, 2, 'duration') : num(values.duration, 10, 'duration');
  const only = new Set<Scenario>();
  for (const s of (values.only ?? SCENARIOS.join(','))
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    if (!(SCENARIOS as readonly string[]).includes(s))
      throw new Error(`--only: unknown scenario "${s}" (${SCENARIOS.join(', ')})`);
    only.add(s as Scenario);
  }
  return {
    seconds,
    warmup:
      values.warmup !== undefined
        ? num(values.warmup, 0, 'warmup')
        : values.quick
          ? 0.5
          : Math.min(3, Math.max(1, seconds * 0.2)),
    quick: !!values.quick,
    connections: num(values.connections, 32, 'connections'),
    pglite: !!values.pglite,
    databaseUrl:
      values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    threadpool: num(values.threadpool, Number(process.env.UV_THREADPOOL_SIZE ?? '4'), 'threadpool'),
    pool: values.pool === undefined ? undefined : num(values.pool, 0, 'pool'),
    users: num(values.users, values.quick ? 2000 : 100_000, 'users'),
    only,
    peer: !values['no-peer'],
    ceilings: !values['no-ceilings'],
    cpuProf: !!values['cpu-prof'],
    countQueries: !!values['count-queries'],
    json: values.json,
    footprint: !!values.footprint,
    tracing: !!values.tracing,
    sampleRatio: values['sample-ratio'] === undefined ? undefined : ratio(values['sample-ratio']),
    nodeFlags: values['node-flags'] === undefined ? undefined : values['node-flags'].split(/\s+/).filter(Boolean),
    env: Object.fromEntries(
      (values.env ?? []).map((kv) => {
        const at = kv.indexOf('=');
        if (at <= 0) throw new Error(`--env: expected KEY=VALUE, got "${kv}"`);
        return [kv.slice(0, at), kv.slice(at + 1)];
      }),
    ),
  };
}

interface Measured extends LoadResult {
  peakRss: number;
  cpuMsPerReq: number;
  pgCpuMsPerReq: number;
  machineBusy: number;
  counts?: PgCounts;
}

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

async function main(): Promise<void> {
  const args = parseCli();
  installSignalHandlers(stopAllLoad);
  const m = machine();
  const runId = randomBytes(4).toString('hex');
  const namespace = `bench_${runId}`;
  const peerSchema = `bench_ba_${runId}`;
  const { seconds, warmup, connections } = args;

  const admin = new pg.Pool({ connectionString: args.databaseUrl, max: 1, application_name: 'bench-admin' });
  admin.on('error', () => undefined);
  onCleanup('close admin pool', () => admin.end());
  let pgVersion = '?';
  try {
    pgVersion = String((await admin.query('show server_version')).rows[0]?.server_version ?? '?');
  } catch (err) {
    // Only `--pglite --no-peer` can do without the Postgres server.
    if (!args.pglite || args.peer)
      throw new Error(`cannot reach Postgres at ${args.databaseUrl}: ${(err as Error).message}`);
  }
  const dropSchema = (schema: string) =>
    onCleanup(`drop schema ${schema}`, async () => {
      await admin.query(`drop schema if exists "${schema}" cascade`);
    });

  if (args.footprint) {
    log('footprint: start-up time and idle RSS, 3 starts each (Postgres, then an embedded directory)');
    dropSchema(`${namespace}_fp`);
    const rows = await measureFootprint({
      databaseUrl: args.pglite ? '' : args.databaseUrl,
      namespace: `${namespace}_fp`,
      runs: 3,
      pglite: true,
      nodeFlags: args.nodeFlags,
    });
    process.stdout.write(
      `authsvc footprint — ${m.cores} cores (${m.cpuModel}), Node ${m.node}, load average ${m.loadAvg1}\n\n${footprintTable(rows)}\n`,
    );
    await cleanup();
    return;
  }

  /** One scenario: one load run whose first `warmup` seconds are not measured (`beside` runs alongside). */
  async function scenario(
    label: string,
    child: Child,
    opts: Options,
    beside?: Options,
    counter?: PgCountProxy,
    inProcessDb = false,
  ): Promise<Measured & { beside?: LoadResult }> {
    log(`${label}: ${warmup}s warm-up + ${seconds}s`);
    let w: Window | undefined;
    const [r, b] = await Promise.all([
      runLoad({
        connections,
        ...opts,
        duration: seconds,
        warmup,
        onMeasureStart: () => {
          counter?.reset();
          w = startWindow(child.pid);
        },
      }),
      beside ? runLoad({ ...beside, duration: seconds, warmup }) : undefined,
    ]);
    const win = w!.end();
    const counts = counter ? structuredClone(counter.snapshot()) : undefined;
    // Requests abandoned when the run stopped are still being served: let the server go idle.
    await waitIdle(child.pid);
    // Per request of the scenario itself (a probe running beside it costs next to nothing).
    const requests = r.ok + r.errors;
    return {
      ...r,
      ...win,
      cpuMsPerReq: requests > 0 ? win.cpuMs / requests : NaN,
      // With PGlite the database runs inside the server process: its CPU is in the server's.
      pgCpuMsPerReq: requests > 0 && !inProcessDb ? win.pgCpuMs / requests : NaN,
      ...(b ? { beside: b } : {}),
      ...(counts ? { counts } : {}),
    };
  }

  const results: Partial<Record<Scenario, Measured>> = {};
  let health: LoadResult | undefined;
  const mixCounts: Record<MixKind, Record<string, number>> = { signin: {}, refresh: {}, user: {} };
  interface HashCeiling {
    perSecond: number;
    threads: number;
    cpuMsPerOp: number;
  }
  const ceil: {
    bcrypt?: HashCeiling;
    scrypt?: HashCeiling;
    userRead?: { perSecond: number; p50: number; p99: number; cpuMsPerOp: number; pgCpuMsPerOp: number };
    refreshRotate?: { perSecond: number; p50: number; p99: number; cpuMsPerOp: number; pgCpuMsPerOp: number };
    hello?: Measured;
  } = {};
  const peer: Partial<Record<'signup' | 'signin' | 'session', Measured>> = {};
  let profileDir: string | undefined;

  // 1. Ceilings that need nothing else running.
  if (args.ceilings) {
    const hashCeiling = (algo: string) =>
      runJsonChild<HashCeiling>(
        `${algo} ceiling`,
        process.execPath,
        ['--import', 'tsx', join(REPO_ROOT, 'bench/ceilings/password.ts'), algo, String(seconds), String(warmup)],
        { UV_THREADPOOL_SIZE: String(args.threadpool) },
        (seconds + warmup) * 1000 + 60_000,
      );
    if (args.only.has('signin') || args.only.has('signup')) {
      log(`ceiling: bcrypt cost-10 verify, UV_THREADPOOL_SIZE=${args.threadpool}, ${seconds}s`);
      ceil.bcrypt = await hashCeiling('bcrypt');
      if (args.peer) {
        log(`ceiling: better-auth scrypt verify, UV_THREADPOOL_SIZE=${args.threadpool}, ${seconds}s`);
        ceil.scrypt = await hashCeiling('scrypt-better-auth');
      }
    }
    const port = await freePort();
    const hello = spawnChild(
      'hello-json',
      process.execPath,
      // Plain JavaScript with npm start's flags, as authsvc runs: its peak RSS is the floor of authsvc's.
      [...(args.nodeFlags ?? startNodeFlags()), join(REPO_ROOT, 'bench/ceilings/floor-server.cjs'), 'hono'],
      { PORT: String(port), NODE_ENV: 'production' },
    );
    await waitForHttp(`http://127.0.0.1:${port}/health`, hello);
    ceil.hello = await scenario('ceiling: hello JSON (Hono, @hono/node-server)', hello, {
      url: `http://127.0.0.1:${port}/health`,
    });
    await hello.stop();
  }

  // 2. authsvc.
  let pgliteDir: string | undefined;
  if (args.pglite) {
    pgliteDir = mkdtempSync(join(tmpdir(), 'authsvc-bench-pglite-'));
    const dir = pgliteDir;
    onCleanup('remove PGlite directory', () => rmSync(dir, { recursive: true, force: true }));
  } else {
    dropSchema(namespace);
  }
  let counter: PgCountProxy | undefined;
  let serverDbUrl = pgliteDir ? `pglite://${pgliteDir}` : args.databaseUrl;
  if (args.countQueries && !pgliteDir) {
    const u = new URL(args.databaseUrl);
    counter = await startPgCountProxy({ host: u.hostname, port: Number(u.port || '5432') }, namespace);
    const c = counter;
    onCleanup('stop pg counting proxy', () => c.close());
    u.host = `127.0.0.1:${counter.port}`;
    serverDbUrl = u.toString();
  }
  if (args.cpuProf) {
    profileDir = join(REPO_ROOT, 'bench/profiles', new Date().toISOString().replace(/[:.]/g, '-'));
    mkdirSync(profileDir, { recursive: true });
  }
  let sink: OtlpSink | undefined;
  if (args.tracing) {
    sink = await startOtlpSink();
    const s = sink;
    onCleanup('close the OTLP sink', () => s.close());
  }
  log(
    `authsvc: starting on ${args.pglite ? 'PGlite' : 'Postgres'} (schema ${namespace})${sink ? `, tracing to ${sink.url}` : ''}`,
  );
  const svc = await startAuthsvc({
    databaseUrl: serverDbUrl,
    namespace,
    threadpool: args.threadpool,
    poolSize: args.pool,
    cpuProfDir: profileDir,
    nodeFlags: args.nodeFlags,
    // Rotation stays on. A pass that ends with a refresh in flight leaves its connection holding the
    // predecessor of the live token: the reuse window lets the next pass pick up from there.
    extraEnv: {
      AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '600',
      // Every request sampled; a queue deep enough that no span is dropped under load.
      ...(sink
        ? {
            AUTHSVC_TRACING_ENABLED: 'true',
            OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
            OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
            OTEL_BSP_MAX_QUEUE_SIZE: '65536',
            OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2048',
            ...(args.sampleRatio === undefined
              ? { OTEL_TRACES_SAMPLER: 'always_on' }
              : { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(args.sampleRatio) }),
            // The batch processor's settings from the bench's own environment, to compare them.
            ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('OTEL_BSP_'))),
          }
        : {}),
      ...args.env,
    },
  });
  const background = args.pglite ? 0 : args.users;
  if (background > 0) {
    log(`authsvc: writing ${background} background users`);
    await seedBackgroundUsers(admin, namespace, runId, background);
  }
  log(`authsvc: seeding ${connections} accounts`);
  const accounts: Account[] = await seedAccounts(svc.url, runId, connections);

  if (args.ceilings && (args.only.has('user') || args.only.has('refresh') || args.only.has('mixed'))) {
    log(`ceiling: HS256 verify + primary-key select (${args.pglite ? 'PGlite' : 'node-postgres'}), ${seconds}s`);
    const cfgDir = mkdtempSync(join(tmpdir(), 'authsvc-bench-ceiling-'));
    onCleanup('remove ceiling directory', () => rmSync(cfgDir, { recursive: true, force: true }));
    const cfgFile = join(cfgDir, 'config.json');
    writeFileSync(
      cfgFile,
      JSON.stringify({
        driver: args.pglite ? 'pglite' : 'postgres',
        url: args.databaseUrl,
        namespace,
        secret: JWT_SECRET,
        tokens: accounts.map((a) => a.access),
        seconds,
        warmup,
        inFlight: connections,
        // DB_MAX_POOL_SIZE=0 (the default) is unlimited: as many connections as queries in flight.
        poolMax: args.pool ? args.pool : connections,
        pgliteDir: join(cfgDir, 'db'),
      }),
    );
    ceil.userRead = await runJsonChild(
      'user-read ceiling',
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'bench/ceilings/user-read.ts'), cfgFile],
      { UV_THREADPOOL_SIZE: String(args.threadpool) },
      (seconds + warmup) * 1000 + 120_000,
    );
    if (!args.pglite && args.only.has('refresh')) {
      log(`ceiling: the refresh statement alone (rotateRefreshToken, node-postgres), ${seconds}s`);
      const rotFile = join(cfgDir, 'rotate.json');
      writeFileSync(
        rotFile,
        JSON.stringify({
          url: args.databaseUrl,
          namespace,
          userIds: accounts.map((a) => a.userId),
          seconds,
          warmup,
          inFlight: connections,
          poolMax: args.pool ? args.pool : connections,
        }),
      );
      ceil.refreshRotate = await runJsonChild(
        'refresh statement ceiling',
        process.execPath,
        ['--import', 'tsx', join(REPO_ROOT, 'bench/ceilings/refresh-rotate.ts'), rotFile],
        { UV_THREADPOOL_SIZE: String(args.threadpool) },
        (seconds + warmup) * 1000 + 120_000,
      );
    }
  }

  const url = svc.url;
  if (args.only.has('signup')) {
    results.signup = await scenario(
      'signup',
      svc.child,
      { url, requests: signupRequests(runId) },
      undefined,
      counter,
      args.pglite,
    );
  }
  if (args.only.has('signin')) {
    const r = await scenario(
      'password sign-in (+ GET /health at 50/s)',
      svc.child,
      { url, setupClient: perConnection(accounts, (a) => [signinRequest(a)]) },
      { url: `${url}/health`, connections: 2, overallRate: 50 },
      counter,
      args.pglite,
    );
    health = r.beside;
    results.signin = r;
  }
  if (args.only.has('user')) {
    results.user = await scenario(
      'GET /user',
      svc.child,
      { url, setupClient: perConnection(accounts, (a) => userRequests(a)) },
      undefined,
      counter,
      args.pglite,
    );
  }
  if (args.only.has('refresh')) {
    results.refresh = await scenario(
      'refresh',
      svc.child,
      { url, setupClient: perConnection(accounts, (a) => refreshRequests(a)) },
      undefined,
      counter,
      args.pglite,
    );
  }
  if (args.only.has('mixed')) {
    for (const k of Object.keys(mixCounts) as MixKind[]) mixCounts[k] = {};
    results.mixed = await scenario(
      `mixed ${MIX.signin}:${MIX.refresh}:${MIX.user}`,
      svc.child,
      { url, setupClient: perConnection(accounts, (a, i) => mixedRequests(a, i, mixCounts)) },
      undefined,
      counter,
      args.pglite,
    );
  }
  log('authsvc: stopping');
  await svc.child.stop(30_000);

  // 3. The peer.
  const peerWanted = args.peer && (args.only.has('signup') || args.only.has('signin') || args.only.has('user'));
  if (peerWanted) {
    dropSchema(peerSchema);
    log(`better-auth: starting (schema ${peerSchema})`);
    const p = await startPeer({ databaseUrl: args.databaseUrl, schema: peerSchema, threadpool: args.threadpool });
    if (args.users > 0) {
      log(`better-auth: writing ${args.users} background users`);
      await seedPeerBackgroundUsers(admin, peerSchema, runId, args.users);
    }
    log(`better-auth: seeding ${connections} accounts`);
    const peerAccounts: PeerAccount[] = await seedPeerAccounts(p.url, runId, connections);
    if (args.only.has('signup'))
      peer.signup = await scenario('better-auth sign-up', p.child, { url: p.url, requests: peerSignupRequests(runId) });
    if (args.only.has('signin')) {
      peer.signin = await scenario('better-auth sign-in', p.child, {
        url: p.url,
        setupClient: perConnection(peerAccounts, (a) => peerSigninRequests(a)),
      });
    }
    if (args.only.has('user')) {
      peer.session = await scenario('better-auth get-session', p.child, {
        url: p.url,
        setupClient: perConnection(peerAccounts, (a) => peerSessionRequests(a)),
        verifyBody: peerSessionOk,
      });
    }
    log('better-auth: stopping');
    await p.child.stop();
  }

  // 4. The table.
  interface Target {
    label: string;
    value: number;
    threshold: number;
    pass: boolean;
    detail: string;
  }
  const targets: Target[] = [];
  const target = (
    label: string,
    value: number | undefined,
    threshold: number,
    detail: string,
    extra = true,
  ): string => {
    if (value === undefined || !Number.isFinite(value)) return '';
    const pass = value >= threshold && extra;
    targets.push({ label, value, threshold, pass, detail });
    return `${fmtRatio(value)} ${pass ? 'PASS' : 'MISS'}`;
  };
  const rows: string[][] = [];
  const row = (
    name: string,
    r: Partial<Measured> | undefined,
    bound = '',
    ofBound = '',
    peerRate = '',
    vsPeer = '',
  ) => {
    rows.push([
      name,
      fmtRate(r?.rps),
      fmtMs(r?.p50),
      fmtMs(r?.p99),
      r?.errors === undefined ? '–' : String(r.errors),
      fmtMiB(r?.peakRss),
      fmtMs(r?.cpuMsPerReq),
      fmtMs(r?.pgCpuMsPerReq),
      r?.machineBusy === undefined ? '–' : `${Math.round(r.machineBusy * 100)}%`,
      bound,
      ofBound,
      peerRate,
      vsPeer,
    ]);
  };
  // Password endpoints on both sides are bound by their hash: the ratio of the two hash ceilings
  // is as far as sign-up / sign-in can get ahead of the peer.
  const hashRatio = ceil.bcrypt && ceil.scrypt ? ceil.bcrypt.perSecond / ceil.scrypt.perSecond : undefined;
  const vsPeer = (label: string, mine: Measured | undefined, theirs: Measured | undefined, hashBound = false) =>
    mine && theirs
      ? target(
          `${label} vs better-auth (≥ 1.5×)`,
          mine.rps / theirs.rps,
          1.5,
          `${fmtRate(mine.rps)} vs ${fmtRate(theirs.rps)} req/s` +
            (hashBound && hashRatio ? `; bcrypt-10/scrypt ceiling ratio ${fmtRatio(hashRatio)} bounds this` : ''),
        )
      : '';
  const u = ceil.userRead?.perSecond;
  const uBound = u ? `HS256+PK select ${fmtRate(u)}/s` : '';

  if (results.signup) {
    // No target against it: a signup hashes once (cost 10, the same work as one verify).
    const b = ceil.bcrypt?.perSecond;
    row(
      'signup (autoconfirm)',
      results.signup,
      b ? `bcrypt-10 verify ${fmtRate(b)}/s` : '',
      b ? fmtRatio(results.signup.rps / b) : '',
      fmtRate(peer.signup?.rps),
      vsPeer('signup', results.signup, peer.signup, true),
    );
  }
  if (results.signin) {
    const b = ceil.bcrypt?.perSecond;
    const healthOk = health !== undefined && health.p99 < 50 && health.errors === 0;
    row(
      'password sign-in',
      results.signin,
      b ? `bcrypt-10 verify ${fmtRate(b)}/s` : '',
      b
        ? target(
            'sign-in / bcrypt ceiling (≥ 0.9, GET /health p99 < 50 ms)',
            results.signin.rps / b,
            0.9,
            `GET /health p99 ${fmtMs(health?.p99)} ms, ${health?.errors ?? '?'} errors`,
            healthOk,
          ) + ' (≥0.9)'
        : '',
      fmtRate(peer.signin?.rps),
      vsPeer('sign-in', results.signin, peer.signin, true),
    );
    rows.push([
      ' └ GET /health, 50/s alongside',
      fmtRate(health?.rps),
      fmtMs(health?.p50),
      fmtMs(health?.p99),
      String(health?.errors ?? '–'),
      '',
      '',
      '',
      '',
      'p99 < 50 ms',
      healthOk ? 'PASS' : 'MISS',
      '',
      '',
    ]);
  }
  if (results.refresh) {
    row(
      'refresh',
      results.refresh,
      uBound,
      u ? target('refresh / GET /user ceiling (≥ 0.35)', results.refresh.rps / u, 0.35, '') + ' (≥0.35)' : '',
    );
    const r = ceil.refreshRotate?.perSecond;
    if (r)
      rows.push([
        ' └ of the refresh statement alone',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        `rotation statement ${fmtRate(r)}/s`,
        `${fmtRatio(results.refresh.rps / r)}; statement / GET /user ceiling ${u ? fmtRatio(r / u) : '–'}`,
        '',
        '',
      ]);
  }
  if (results.user) {
    row(
      'GET /user',
      results.user,
      uBound,
      u ? target('GET /user / its ceiling (≥ 0.75)', results.user.rps / u, 0.75, '') + ' (≥0.75)' : '',
      fmtRate(peer.session?.rps),
      vsPeer('session read (GET /user vs get-session)', results.user, peer.session),
    );
  }
  if (results.mixed) {
    const share = (k: MixKind) =>
      Object.entries(mixCounts[k])
        .filter(([s]) => s !== '200')
        .reduce((a, [, n]) => a + n, 0);
    row(
      `mixed ${MIX.signin}:${MIX.refresh}:${MIX.user}`,
      results.mixed,
      ceil.hello ? `hello JSON ${fmtRate(ceil.hello.rps)}/s` : '',
      ceil.hello ? fmtRatio(results.mixed.rps / ceil.hello.rps) : '',
    );
    if (share('signin') + share('refresh') + share('user') > 0) {
      log(`mixed: non-200 by kind: ${JSON.stringify(mixCounts)}`);
    }
  }
  if (ceil.bcrypt)
    rows.push([
      `ceiling: bcrypt-10 verify (${ceil.bcrypt.threads} threads, own process)`,
      fmtRate(ceil.bcrypt.perSecond),
      '',
      '',
      '',
      '',
      fmtMs(ceil.bcrypt.cpuMsPerOp),
    ]);
  if (ceil.userRead)
    rows.push([
      `ceiling: HS256 verify + PK select (no HTTP, ${args.pglite ? 'PGlite' : 'node-postgres'})`,
      fmtRate(ceil.userRead.perSecond),
      fmtMs(ceil.userRead.p50),
      fmtMs(ceil.userRead.p99),
      '',
      '',
      fmtMs(ceil.userRead.cpuMsPerOp),
      fmtMs(ceil.userRead.pgCpuMsPerOp),
    ]);
  if (ceil.refreshRotate)
    rows.push([
      'ceiling: the refresh statement alone (no HTTP, no JWT, node-postgres)',
      fmtRate(ceil.refreshRotate.perSecond),
      fmtMs(ceil.refreshRotate.p50),
      fmtMs(ceil.refreshRotate.p99),
      '',
      '',
      fmtMs(ceil.refreshRotate.cpuMsPerOp),
      fmtMs(ceil.refreshRotate.pgCpuMsPerOp),
    ]);
  if (ceil.hello) row('ceiling: hello JSON (Hono, @hono/node-server)', ceil.hello);
  if (ceil.scrypt)
    rows.push([
      `ceiling: better-auth scrypt verify (${ceil.scrypt.threads} threads, own process)`,
      fmtRate(ceil.scrypt.perSecond),
      '',
      '',
      '',
      '',
      fmtMs(ceil.scrypt.cpuMsPerOp),
    ]);
  const sBound = ceil.scrypt ? `scrypt verify ${fmtRate(ceil.scrypt.perSecond)}/s` : '';
  if (peer.signup)
    row(
      'better-auth sign-up (scrypt)',
      peer.signup,
      sBound,
      ceil.scrypt ? fmtRatio(peer.signup.rps / ceil.scrypt.perSecond) : '',
    );
  if (peer.signin)
    row(
      'better-auth sign-in (scrypt)',
      peer.signin,
      sBound,
      ceil.scrypt ? fmtRatio(peer.signin.rps / ceil.scrypt.perSecond) : '',
    );
  if (peer.session) row('better-auth get-session', peer.session);

  const head = [
    `authsvc bench — ${m.cores} cores (${m.cpuModel}), ${(m.memBytes / 1024 ** 3).toFixed(1)} GiB RAM, Node ${m.node}, ` +
      `${args.pglite ? 'PGlite (peer on Postgres ' + pgVersion + ')' : 'Postgres ' + pgVersion}`,
    `${connections} connections, ${seconds}s per scenario after ${warmup}s warm-up, UV_THREADPOOL_SIZE=${args.threadpool}, ` +
      `DB_MAX_POOL_SIZE=${args.pool ?? 'default'}, ${args.pglite ? 0 : args.users} background users, load average at start ${m.loadAvg1.toFixed(2)}` +
      (args.quick ? ' — QUICK RUN: smoke numbers' : '') +
      (args.countQueries ? ' — COUNTING PROXY IN PATH' : '') +
      (args.cpuProf ? ' — UNDER --cpu-prof' : '') +
      (args.tracing
        ? ` — TRACING ON (${args.sampleRatio === undefined ? 100 : args.sampleRatio * 100}% sampled, OTLP http/protobuf to a local sink)`
        : ''),
  ];
  if (m.loadAvg1 > m.cores * 0.5)
    head.push(
      `warning: the machine was busy at start (load ${m.loadAvg1.toFixed(2)} on ${m.cores} cores): numbers are not comparable`,
    );
  const table = renderTable(
    [
      'scenario',
      'req/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'peak RSS',
      'srv CPU ms/req',
      'pg CPU ms/req',
      'machine busy',
      'bound',
      'of bound',
      'better-auth req/s',
      'vs better-auth',
    ],
    rows,
    new Set([1, 2, 3, 4, 5, 6, 7, 8]),
  );
  const out = [...head, '', table, ''];
  if (targets.length > 0) {
    out.push(`targets: ${targets.filter((t) => t.pass).length}/${targets.length} PASS`);
    for (const t of targets)
      out.push(`  ${t.pass ? 'PASS' : 'MISS'}  ${t.label}: ${fmtRatio(t.value)}${t.detail ? ` (${t.detail})` : ''}`);
  }
  out.push(
    "notes: req/s counts 2xx answers only; errors = non-2xx + socket errors + timeouts; srv CPU ms/req = the server process's CPU time",
    '       (all threads: bcrypt/scrypt included) per request; pg CPU ms/req = every postgres process on the machine, per request;',
    '       better-auth runs at its defaults (scrypt password hashing, pg pool of 10) with its rate limiter off; authsvc per-IP limits are off (no RATE_LIMIT_HEADER).',
  );
  if (counter) {
    out.push('', 'Postgres traffic per request (counting proxy):');
    for (const [name, r] of Object.entries(results) as [string, Measured][]) {
      if (!r.counts) continue;
      const n = r.ok + r.errors;
      out.push(
        `  ${name}: ${(r.counts.statements / n).toFixed(2)} statements, ${(r.counts.roundTrips / n).toFixed(2)} round trips, ${(r.counts.parses / n).toFixed(2)} parses`,
      );
      const top = [...r.counts.bySql.entries()].sort((a, b) => b[1] - a[1]).slice(0, 16);
      for (const [sql, c] of top) out.push(`    ${(c / n).toFixed(2)}  ${sql}`);
    }
  }
  if (sink) {
    await new Promise((r) => setTimeout(r, 2000)); // the last batch
    const t = sink.stats();
    out.push(
      '',
      `tracing: ${t.spans} spans in ${t.exports} OTLP exports (${(t.bytes / 1024 ** 2).toFixed(1)} MiB) reached the sink`,
    );
  }
  if (profileDir)
    out.push('', `CPU profile of authsvc: ${profileDir} (node --import tsx bench/cpuprofile-summary.ts <file>)`);
  process.stdout.write(out.join('\n') + '\n');
  if (args.json) {
    const replacer = (_k: string, v: unknown) => (v instanceof Map ? Object.fromEntries(v) : v);
    writeFileSync(
      args.json,
      JSON.stringify(
        {
          machine: m,
          args: { ...args, only: [...args.only] },
          pgVersion,
          results,
          health,
          mixCounts,
          ceilings: ceil,
          peer,
          targets,
        },
        replacer,
        2,
      ),
    );
  }
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
} finally {
  stopAllLoad();
  await cleanup();
}
process.exit(failed ? 1 : 0);
