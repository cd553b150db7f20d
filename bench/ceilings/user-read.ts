// Ceiling of GET /user without HTTP: HS256 verify (jose, a WebCrypto HMAC key, as src/crypto/jwt.ts
// does) plus one primary-key select of the user row through the same driver the server uses —
// node-postgres against the server's own schema, or PGlite (a private copy of the schema: the
// server holds the data directory's lock). `inFlight` loops run at once, as many as the HTTP
// scenario has connections; the pg pool has the server's size.
//
// usage: node --import tsx bench/ceilings/user-read.ts <config.json>
//   config: { driver: 'postgres'|'pglite', url, namespace, secret, tokens: string[], seconds,
//             warmup, inFlight, poolMax, pgliteDir? }
// prints one JSON line: { perSecond, p50, p99, seconds, cpuMsPerOp, pgCpuMsPerOp }
import { PGlite } from '@electric-sql/pglite';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, jwtVerify } from 'jose';
import pg from 'pg';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import { renderMigration, sortMigrations } from '../../src/db/migrate.ts';
import { runClosedLoop } from './closed-loop.ts';

interface Config {
  driver: 'postgres' | 'pglite';
  url: string;
  namespace: string;
  secret: string;
  tokens: string[];
  seconds: number;
  warmup: number;
  inFlight: number;
  poolMax: number;
  pgliteDir?: string;
}

const cfg = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as Config;
const text = `select * from "${cfg.namespace}"."users" where "id" = $1 limit 1`;

type Select = (id: string) => Promise<number>;

async function postgresSelect(): Promise<{ select: Select; close: () => Promise<void> }> {
  const pool = new pg.Pool({ connectionString: cfg.url, max: cfg.poolMax, application_name: 'bench-ceiling' });
  pool.on('error', () => undefined);
  // The form drizzle's node-postgres session sends: unnamed statement, array rows.
  const select: Select = async (id) => (await pool.query({ text, values: [id], rowMode: 'array' })).rowCount ?? 0;
  return { select, close: () => pool.end() };
}

async function pgliteSelect(): Promise<{ select: Select; close: () => Promise<void> }> {
  const dir = join(cfg.pgliteDir ?? '', 'pgdata');
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  for (const m of sortMigrations(loadMigrations())) await db.exec(renderMigration(m.sql, cfg.namespace));
  for (const token of cfg.tokens) {
    const claims = decodeJwt(token);
    await db.query(
      `insert into "${cfg.namespace}"."users" (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
         raw_app_meta_data, raw_user_meta_data, created_at, updated_at, last_sign_in_at)
       values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', $2,
         '$2a$10$nTlQXtNXspo.kNIF3HVtZesQkxcCd5ctW.k15Maydhl4KwJ52e72W', now(),
         '{"provider":"email","providers":["email"]}', $3, now(), now(), now())
       on conflict do nothing`,
      [
        claims.sub,
        claims.email,
        JSON.stringify({ sub: claims.sub, email: claims.email, email_verified: true, phone_verified: false }),
      ],
    );
  }
  const select: Select = async (id) => (await db.query(text, [id], { rowMode: 'array' })).rows.length;
  return { select, close: () => db.close() };
}

const key = await crypto.subtle.importKey(
  'raw',
  new TextEncoder().encode(cfg.secret),
  { name: 'HMAC', hash: 'SHA-256' },
  false,
  ['sign', 'verify'],
);
const { select, close } = cfg.driver === 'pglite' ? await pgliteSelect() : await postgresSelect();

let next = 0;
await runClosedLoop({
  inFlight: cfg.inFlight,
  warmup: cfg.warmup,
  seconds: cfg.seconds,
  prepare: async () => undefined,
  op: async () => {
    const token = cfg.tokens[next++ % cfg.tokens.length]!;
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
    if ((await select(String(payload.sub))) !== 1) throw new Error(`user ${payload.sub} not found`);
  },
  close,
});
