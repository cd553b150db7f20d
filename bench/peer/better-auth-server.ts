// The peer: better-auth at its defaults (email + password enabled) on the same Postgres, in its
// own schema, served on Node through Hono and @hono/node-server (the same adapter authsvc uses).
// One deliberate change from the defaults: the rate limiter is off (better-auth turns it on when
// NODE_ENV=production and would answer most sign-ins with 429 under load; authsvc's per-IP limits
// are off as well when RATE_LIMIT_HEADER is unset). Password hashing stays at better-auth's
// default, scrypt (node:crypto, on libuv's thread pool) — not bcrypt.
//
// env: DATABASE_URL, BA_SCHEMA (created if missing), PORT, BETTER_AUTH_SECRET.
// Prints `listening <port>` once serving; SIGTERM/SIGINT stop it (pool closed).
import { serve } from '@hono/node-server';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { Hono } from 'hono';
import pg from 'pg';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = process.env.BA_SCHEMA ?? 'ba_bench';
const port = Number(process.env.PORT ?? '0');
if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);

// search_path on every pooled connection: better-auth's unqualified queries land in our schema.
// The pool is pg's default (max 10), as a user passing `new Pool(...)` would get.
const pool = new pg.Pool({
  connectionString: url,
  options: `-c search_path=${schema}`,
  application_name: 'bench-better-auth',
});
pool.on('error', () => undefined);
await pool.query(`create schema if not exists "${schema}"`);

const options = {
  database: pool,
  baseURL: process.env.BETTER_AUTH_URL ?? `http://127.0.0.1:${port}`,
  secret: process.env.BETTER_AUTH_SECRET ?? 'bench-secret-bench-secret-bench-secret',
  emailAndPassword: { enabled: true },
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
};

const { runMigrations } = await getMigrations(options);
await runMigrations();

const auth = betterAuth(options);
const app = new Hono();
app.on(['GET', 'POST'], '/api/auth/*', (c) => auth.handler(c.req.raw));
app.get('/health', (c) => c.json({ ok: true }));

const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`listening ${info.port}\n`);
});

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  const http = server as unknown as { closeAllConnections?: () => void };
  server.close(() => {
    pool.end().finally(() => process.exit(0));
  });
  http.closeAllConnections?.();
  setTimeout(() => process.exit(0), 5_000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
