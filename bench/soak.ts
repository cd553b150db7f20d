// `npm run soak -- --minutes N`: authsvc on Postgres for N minutes under the mixed profile
// (1 sign-in : 20 refreshes : 200 GET /user per connection, bench/lib/authsvc.ts) at a steady
// rate, beside a stream of sign-ups and email flows (sign up, POST /recover, the link from a local
// SMTP sink, POST /verify). Prints one row a minute: req/s, p99, errors, RSS, Postgres connections.
// Not part of CI. See bench/README.md.
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { type MixKind, PASSWORD, mixedRequests, seedAccounts, signupRequests, startAuthsvc } from './lib/authsvc.ts';
import { perConnection, postJson } from './lib/load.ts';
import { cleanup, installSignalHandlers, machine, onCleanup, statusKb } from './lib/procs.ts';
import { fmtMs, fmtRate, renderTable } from './lib/table.ts';

const HELP = `npm run soak [-- options]

  --minutes <n>        how long (default 5)
  --rate <n>           mixed-profile requests per second, all connections together (default 400)
  --connections <n>    mixed-profile connections, one account each (default 16)
  --signup-rate <n>    extra sign-ups per second (default 2)
  --email-workers <n>  concurrent email flows: sign-up, /recover, link, /verify (default 1)
  --database-url <u>   default $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres
`;

function parseCli() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      rate: { type: 'string' },
      connections: { type: 'string' },
      'signup-rate': { type: 'string' },
      'email-workers': { type: 'string' },
      'database-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const num = (v: string | undefined, d: number, name: string) => {
    const n = v === undefined ? d : Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: expected a number, got "${v}"`);
    return n;
  };
  return {
    minutes: num(values.minutes, 5, 'minutes'),
    rate: num(values.rate, 400, 'rate'),
    connections: num(values.connections, 16, 'connections'),
    signupRate: num(values['signup-rate'], 2, 'signup-rate'),
    emailWorkers: num(values['email-workers'], 1, 'email-workers'),
    databaseUrl:
      values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}

/** One minute of the run. */
interface Minute {
  ok: number;
  latencies: number[];
  errors: Record<string, number>;
  signups: number;
  emailFlows: number;
  rssKb: number[];
  pgConns: number[];
}
const newMinute = (): Minute => ({
  ok: 0,
  latencies: [],
  errors: {},
  signups: 0,
  emailFlows: 0,
  rssKb: [],
  pgConns: [],
});
const addError = (m: Minute, key: string) => {
  m.errors[key] = (m.errors[key] ?? 0) + 1;
};

/** TCP connections of process `pid` to `port` (its Postgres pool), from /proc. */
function connectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // remote address is field 2 (ADDR:PORT), state 3 (01 = established), inode 9.
      if (f.length > 9 && f[2]!.endsWith(`:${hexPort}`) && f[3] === '01' && inodes.has(f[9]!)) n++;
    }
  }
  return n;
}

/** A local SMTP server that keeps only the newest link per recipient (the soak reads each once). */
async function startLinkSink(): Promise<{
  port: number;
  next(address: string, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}> {
  const links = new Map<string, string>();
  const waiters = new Map<string, (link: string) => void>();
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    closeTimeout: 100,
    onData(stream, session, cb) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => {
        raw += c;
      });
      stream.on('end', () => {
        const to = session.envelope.rcptTo[0]?.address.toLowerCase() ?? '';
        const token = /token=3D([0-9a-f]+)|token=([0-9a-f]+)/.exec(raw.replace(/=\r?\n/g, ''));
        const link = token?.[1] ?? token?.[2] ?? '';
        const w = waiters.get(to);
        if (w) {
          waiters.delete(to);
          w(link);
        } else links.set(to, link);
        cb();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    next(address, timeoutMs) {
      const have = links.get(address);
      if (have !== undefined) {
        links.delete(address);
        return Promise.resolve(have);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(address);
          reject(new Error(`no mail to ${address} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(address, (l) => {
          clearTimeout(timer);
          resolve(l);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function p99(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!;
}

async function main(): Promise<void> {
  const args = parseCli();
  const runs: { stop(): void }[] = [];
  let stopping = false;
  installSignalHandlers(() => {
    stopping = true;
    for (const r of runs) r.stop();
  });
  const m = machine();
  const runId = randomBytes(4).toString('hex');
  const namespace = `soak_${runId}`;
  const admin = new pg.Pool({ connectionString: args.databaseUrl, max: 1, application_name: 'soak-admin' });
  admin.on('error', () => undefined);
  onCleanup('close admin pool', () => admin.end());
  onCleanup(`drop schema ${namespace}`, async () => {
    await admin.query(`drop schema if exists "${namespace}" cascade`);
  });
  const pgPort = Number(new URL(args.databaseUrl).port || 5432);

  const sink = await startLinkSink();
  onCleanup('close SMTP sink', () => sink.close());
  const svc = await startAuthsvc({
    databaseUrl: args.databaseUrl,
    namespace,
    threadpool: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
    extraEnv: {
      AUTHSVC_SMTP_PORT: String(sink.port),
      AUTHSVC_RATE_LIMIT_EMAIL_SENT: '100000000',
      AUTHSVC_SMTP_MAX_FREQUENCY: '1s',
    },
  });
  const accounts = await seedAccounts(svc.url, runId, args.connections);
  process.stderr.write(
    `[soak] authsvc pid ${svc.child.pid} on ${svc.url}, schema ${namespace}; ${args.minutes} min, ` +
      `mixed ${args.rate} req/s over ${args.connections} connections, ${args.signupRate} sign-ups/s, ${args.emailWorkers} email worker(s)\n`,
  );

  const minutes: Minute[] = [];
  const started = performance.now();
  const minute = () => {
    const i = Math.floor((performance.now() - started) / 60_000);
    while (minutes.length <= i) minutes.push(newMinute());
    return minutes[i]!;
  };
  const seconds = Math.round(args.minutes * 60);

  // The mixed profile, rate-limited so the figures show drift, not the machine's ceiling.
  const counts: Record<MixKind, Record<string, number>> = { signin: {}, refresh: {}, user: {} };
  const mixed = autocannon({
    url: svc.url,
    connections: args.connections,
    duration: seconds,
    timeout: 30,
    overallRate: args.rate || undefined,
    requests: [{ method: 'GET', path: '/user' }],
    setupClient: perConnection(accounts, (a, i) => mixedRequests(a, i, counts)),
  });
  runs.push(mixed);
  mixed.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
    const cur = minute();
    if (status >= 200 && status < 300) {
      cur.ok++;
      cur.latencies.push(ms);
    } else addError(cur, `mixed ${status}`);
  });
  mixed.on('reqError', () => addError(minute(), 'mixed socket'));

  const signups =
    args.signupRate > 0
      ? autocannon({
          url: svc.url,
          connections: 2,
          duration: seconds,
          timeout: 30,
          overallRate: args.signupRate,
          requests: signupRequests(`${runId}s`),
        })
      : undefined;
  if (signups) {
    runs.push(signups);
    signups.on('response', (_c: unknown, status: number) => {
      if (status === 200) minute().signups++;
      else addError(minute(), `signup ${status}`);
    });
    signups.on('reqError', () => addError(minute(), 'signup socket'));
  }

  // Email flows: sign up, ask for a recovery link, use it.
  let flowSeq = 0;
  const emailWorker = async () => {
    const end = started + seconds * 1000;
    while (!stopping && performance.now() < end) {
      const email = `mail-${runId}-${flowSeq++}@bench.example.com`;
      const step = async (name: string, res: Response) => {
        await res.body?.cancel();
        if (res.status !== 200) throw new Error(`email ${name} ${res.status}`);
      };
      try {
        await step('signup', await postJson(`${svc.url}/signup`, { email, password: PASSWORD }));
        await step('recover', await postJson(`${svc.url}/recover`, { email }));
        const token = await sink.next(email, 15_000);
        await step('verify', await postJson(`${svc.url}/verify`, { type: 'recovery', token_hash: token }));
        minute().emailFlows++;
      } catch (err) {
        addError(minute(), (err as Error).message.startsWith('email') ? (err as Error).message : 'email no mail');
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  const flows = Promise.all(Array.from({ length: args.emailWorkers }, emailWorker));

  // Gauges every 5 s; a row every minute.
  const printed = new Set<number>();
  const headers = ['min', 'req/s', 'p99 ms', 'errors', 'RSS MiB', 'PG conns', 'sign-ups', 'email flows'];
  const row = (i: number, mm: Minute): string[] => [
    String(i + 1),
    fmtRate(mm.ok / 60),
    fmtMs(p99(mm.latencies)),
    String(Object.values(mm.errors).reduce((a, b) => a + b, 0)),
    mm.rssKb.length ? (Math.max(...mm.rssKb) / 1024).toFixed(0) : '–',
    mm.pgConns.length ? String(Math.max(...mm.pgConns)) : '–',
    String(mm.signups),
    String(mm.emailFlows),
  ];
  const gauge = setInterval(() => {
    const cur = minute();
    try {
      cur.rssKb.push(statusKb(svc.child.pid, 'VmRSS'));
      cur.pgConns.push(connectionsTo(svc.child.pid, pgPort));
    } catch {
      // the server is gone: the errors column will say so
    }
    const done = minutes.length - 1;
    for (let i = 0; i < done; i++) {
      if (printed.has(i)) continue;
      printed.add(i);
      const mm = minutes[i]!;
      const errs = Object.entries(mm.errors)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ');
      process.stderr.write(
        `[soak] ${row(i, mm)
          .map((c, j) => `${headers[j]} ${c}`)
          .join(' | ')}${errs ? ` | ${errs}` : ''}\n`,
      );
    }
  }, 5_000);
  await Promise.all([mixed, signups, flows]);
  clearInterval(gauge);

  // Answers that arrive after the last full minute (requests in flight at the end) are left out.
  const full = minutes.slice(0, Math.max(1, Math.ceil(seconds / 60)));
  const totalErrors: Record<string, number> = {};
  for (const mm of full) for (const [k, v] of Object.entries(mm.errors)) totalErrors[k] = (totalErrors[k] ?? 0) + v;
  process.stdout.write(
    `\nauthsvc soak — ${args.minutes} min on Postgres, ${m.cores} cores (${m.cpuModel}), Node ${m.node}, load average at the end ${machine().loadAvg1}\n` +
      `mixed profile at ${args.rate} req/s over ${args.connections} connections (${JSON.stringify(counts)}), ${args.signupRate} sign-ups/s, ` +
      `${args.emailWorkers} email-flow worker(s); RSS and PG conns are the minute's highest sample (every 5 s)\n\n` +
      `${renderTable(
        headers,
        full.map((mm, i) => row(i, mm)),
        new Set([0, 1, 2, 3, 4, 5, 6, 7]),
      )}\n\n` +
      `errors: ${Object.keys(totalErrors).length ? JSON.stringify(totalErrors) : 'none'}\n`,
  );
  await cleanup();
}

main().catch(async (err: unknown) => {
  process.stderr.write(`soak failed: ${(err as Error).stack ?? String(err)}\n`);
  await cleanup();
  process.exit(1);
});
