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
import { runClosedLoop } from './closed-loop.ts';

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

await runClosedLoop({
  inFlight: cfg.inFlight,
  warmup: cfg.warmup,
  seconds: cfg.seconds,
  // Each loop owns a session and rotates its newest token.
  prepare: async (i) => {
    const state = { hash: newHash() };
    await insertSessionWithToken(db, {
      sessionId: randomUUID(),
      userId: cfg.userIds[i % cfg.userIds.length]!,
      now: new Date(),
      userAgent: 'bench',
      ip: '127.0.0.1',
      hmacKey: null,
      method: 'password',
      tokenHash: state.hash,
      audits: [],
    });
    return state;
  },
  op: async (state) => {
    const childHash = newHash();
    const rotated = await rotateRefreshToken(db, {
      tokenHash: state.hash,
      childHash,
      now: new Date(),
      userAgent: 'bench',
      ip: '127.0.0.1',
      timebox: 0,
      inactivityTimeout: 0,
    });
    if (!rotated) throw new Error('the rotation refused a live token');
    state.hash = childHash;
  },
  close: () => db.close(),
});
