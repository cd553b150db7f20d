// The real server (`node bin/authsvc.js`) on a fresh schema of TEST_DATABASE_URL, reached through
// a fault proxy, and a small mixed load (1 sign-in : 20 refreshes : 200 GET /user per account,
// as bench/lib/authsvc.ts) that records every answer with its time.
import pg from 'pg';
import { TEST_DATABASE_URL, uniqueNamespace } from '../../helpers/db.ts';
import { freePort } from '../../helpers/free-port.ts';
import { type ServerProcess, startServer } from '../../helpers/server.ts';

export const PASSWORD = 'faults-Password-1';
export const JWT_SECRET = 'faults-jwt-secret-faults-jwt-secret-0123456789';

/** TEST_DATABASE_URL with its host and port replaced by a proxy's. */
export function viaPort(port: number): string {
  const u = new URL(TEST_DATABASE_URL!);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

export async function dropSchema(namespace: string): Promise<void> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  try {
    await c.query(`drop schema if exists "${namespace}" cascade`);
  } finally {
    await c.end();
  }
}

export function newNamespace(): string {
  return uniqueNamespace();
}

export async function startAuthsvc(
  dbPort: number,
  namespace: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    port,
    env: {
      PORT: String(port),
      DATABASE_URL: viaPort(dbPort),
      DB_NAMESPACE: namespace,
      AUTHSVC_SITE_URL: 'http://localhost:3000',
      AUTHSVC_API_EXTERNAL_URL: `http://127.0.0.1:${port}`,
      AUTHSVC_JWT_SECRET: JWT_SECRET,
      AUTHSVC_SMTP_ADMIN_EMAIL: 'faults@example.com',
      AUTHSVC_DB_DRIVER: 'postgres',
      AUTHSVC_SMTP_HOST: '127.0.0.1',
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_LOG_LEVEL: 'warn',
      AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10',
      ...env,
    },
  });
}

export type Json = Record<string, any>;

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Json; ms: number }> {
  const started = Date.now();
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = { notJson: text.slice(0, 200) };
  }
  return { status: res.status, json, ms: Date.now() - started };
}

export interface Account {
  email: string;
  access: string;
  refresh: string;
}

export async function signUp(base: string, tag: string): Promise<Account> {
  const email = `${tag}-${crypto.randomUUID().slice(0, 8)}@faults.example.com`;
  const r = await call(base, 'POST', '/signup', { email, password: PASSWORD });
  if (r.status !== 200) throw new Error(`signup ${email}: ${r.status} ${JSON.stringify(r.json)}`);
  return { email, access: r.json.access_token, refresh: r.json.refresh_token };
}

export interface Answer {
  at: number;
  kind: 'signin' | 'refresh' | 'user';
  status: number;
  code?: string;
  ms: number;
  base: string;
  network?: string;
}

/**
 * Runs the mixed profile over `accounts` (one worker each, round robin over `bases`) until stop()
 * and records every answer; a request that could not get an answer is status 0.
 */
export function mixedLoad(bases: string[], accounts: Account[]): { answers: Answer[]; stop(): Promise<void> } {
  const answers: Answer[] = [];
  let running = true;
  const worker = async (a: Account, w: number) => {
    let pos = (w * 37) % 221;
    let n = 0;
    while (running) {
      const base = bases[(w + n++) % bases.length]!;
      const kind = pos === 0 ? 'signin' : pos % 11 === 0 ? 'refresh' : 'user';
      pos = (pos + 1) % 221;
      const started = Date.now();
      try {
        const r =
          kind === 'signin'
            ? await call(base, 'POST', '/token?grant_type=password', { email: a.email, password: PASSWORD })
            : kind === 'refresh'
              ? await call(base, 'POST', '/token?grant_type=refresh_token', { refresh_token: a.refresh })
              : await call(base, 'GET', '/user', undefined, { authorization: `Bearer ${a.access}` });
        answers.push({ at: started, kind, status: r.status, code: r.json.error_code ?? r.json.code, ms: r.ms, base });
        if (r.status === 200 && kind !== 'user') {
          a.access = r.json.access_token;
          a.refresh = r.json.refresh_token;
        }
        if (r.status >= 500) await new Promise((res) => setTimeout(res, 50));
      } catch (err) {
        answers.push({
          at: started,
          kind,
          status: 0,
          ms: Date.now() - started,
          base,
          network: String((err as Error).cause ?? err),
        });
        await new Promise((res) => setTimeout(res, 50));
      }
    }
  };
  const done = Promise.all(accounts.map((a, i) => worker(a, i)));
  return {
    answers,
    async stop() {
      running = false;
      await done;
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** status → count, for messages. */
export function tally(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const k = `${a.status}${a.code ? ` ${a.code}` : ''}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
