// Ceiling of a refresh without HTTP and JWT: authsvc's own one-statement rotation
// (db/session-statements.ts rotateRefreshToken: revoke the token, insert its child, two audit rows,
// stamp the session, read the user back) through the driver and pool the server uses, against the
// server's schema and users. Each of `inFlight` loops owns a session and rotates its newest token,
// as a client refreshing again and again does. What a refresh costs Postgres, and so how far the
// HTTP scenario can go on the same cores (issue 45).
//
// usage: node --import tsx bench/ceilings/refresh-rotate.ts <config.json>
//   config: { url, namespace, userIds: string[], seconds, warmup, inFlight, poolMax }
// prints one JSON line: { perSecond, p50, p99, seconds, cpuMsPerOp, pgCpuMsPerOp }
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import { insertSessionWithToken, rotateRefreshToken } from '../../src/db/session-statements.ts';
import { postgresCpuMs } from '../lib/procs.ts';

interface Config {
  url: string;
  namespace: string;
  userIds: string[];
  seconds: number;
  warmup: number;
  inFlight: number;
  poolMax: number;
}

const cfg = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as Config;
const db = openPostgres({ url: cfg.url, namespace: cfg.namespace, maxPoolSize: cfg.poolMax });
const newHash = () => randomBytes(16).toString('hex');

let counting = false;
let running = true;
const latencies: number[] = [];

async function loop(i: number): Promise<void> {
  let hash = newHash();
  await insertSessionWithToken(db, {
    sessionId: randomUUID(),
    userId: cfg.userIds[i % cfg.userIds.length]!,
    now: new Date(),
    userAgent: 'bench',
    ip: '127.0.0.1',
    hmacKey: null,
    method: 'password',
    tokenHash: hash,
    audits: [],
  });
  while (running) {
    const childHash = newHash();
    const t = performance.now();
    const rotated = await rotateRefreshToken(db, {
      tokenHash: hash,
      childHash,
      now: new Date(),
      userAgent: 'bench',
      ip: '127.0.0.1',
      timebox: 0,
      inactivityTimeout: 0,
    });
    if (!rotated) throw new Error('the rotation refused a live token');
    hash = childHash;
    if (counting) latencies.push(performance.now() - t);
  }
}

const loops = Array.from({ length: cfg.inFlight }, (_, i) => loop(i));
await new Promise((r) => setTimeout(r, cfg.warmup * 1000));
counting = true;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const pg0 = postgresCpuMs();
await new Promise((r) => setTimeout(r, cfg.seconds * 1000));
const elapsed = (performance.now() - t0) / 1000;
const count = latencies.length;
const cpu = process.cpuUsage(cpu0);
const pgMs = postgresCpuMs() - pg0;
running = false;
await Promise.all(loops);
await db.close();
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
process.stdout.write(
  `${JSON.stringify({
    perSecond: count / elapsed,
    p50: pct(50),
    p99: pct(99),
    seconds: elapsed,
    cpuMsPerOp: (cpu.user + cpu.system) / 1000 / count,
    pgCpuMsPerOp: pgMs / count,
  })}\n`,
);
