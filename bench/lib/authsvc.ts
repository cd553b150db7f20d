// authsvc under load: start `node bin/authsvc.js` with a fresh schema (or PGlite directory),
// seed accounts through the API, and the request lists of each scenario.
import type { Request } from 'autocannon';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/free-port.ts';
import { type Child, REPO_ROOT, spawnChild, waitForHttp } from './procs.ts';
import { jsonHeaders, mapLimit, postJson } from './load.ts';

export const JWT_SECRET = 'bench-jwt-secret-bench-jwt-secret-0123456789';
export const PASSWORD = 'bench-Password-1';

/**
 * The Node flags `npm start` passes (package.json: `node <flags> bin/authsvc.js`), so the bench
 * measures the process a user runs.
 */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const m = /^node\s+(.*?)\s*bin\/authsvc\.js$/.exec(pkg.scripts.start.trim());
  if (!m) throw new Error(`package.json scripts.start is not "node [flags] bin/authsvc.js": ${pkg.scripts.start}`);
  return m[1] ? m[1].split(/\s+/) : [];
}

export interface AuthsvcOptions {
  /** postgres://… or pglite://<dir> */
  databaseUrl: string;
  namespace: string;
  threadpool: number;
  /** DB_MAX_POOL_SIZE; undefined leaves the service default. */
  poolSize?: number;
  /** Directory for `node --cpu-prof` output. */
  cpuProfDir?: string;
  extraEnv?: Record<string, string>;
  /** Node flags in place of `npm start`'s (`--node-flags`). */
  nodeFlags?: string[];
}

export interface Authsvc {
  child: Child;
  url: string;
}

export async function startAuthsvc(o: AuthsvcOptions): Promise<Authsvc> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const nodeArgs = [
    ...(o.nodeFlags ?? startNodeFlags()),
    ...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []),
  ];
  const child = spawnChild('authsvc', process.execPath, [...nodeArgs, join(REPO_ROOT, 'bin/authsvc.js')], {
    DATABASE_URL: o.databaseUrl,
    DB_NAMESPACE: o.namespace,
    PORT: String(port),
    AUTHSVC_SITE_URL: 'http://localhost:3000',
    AUTHSVC_API_EXTERNAL_URL: url,
    AUTHSVC_JWT_SECRET: JWT_SECRET,
    AUTHSVC_DB_DRIVER: 'postgres',
    AUTHSVC_SMTP_ADMIN_EMAIL: 'bench@example.com',
    // Required with a postgres URL; nothing is sent under autoconfirm.
    AUTHSVC_SMTP_HOST: '127.0.0.1',
    AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    AUTHSVC_LOG_LEVEL: 'warn',
    UV_THREADPOOL_SIZE: String(o.threadpool),
    NODE_ENV: 'production',
    ...(o.poolSize !== undefined ? { AUTHSVC_DB_MAX_POOL_SIZE: String(o.poolSize) } : {}),
    ...o.extraEnv,
  });
  await waitForHttp(`${url}/health`, child);
  return { child, url };
}

export interface Account {
  email: string;
  password: string;
  userId: string;
  access: string;
  refresh: string;
}

interface TokenBody {
  access_token?: string;
  refresh_token?: string;
  user?: { id?: string };
}

/** Signs `n` users up through POST /signup (autoconfirm: each answer carries a session). */
export async function seedAccounts(url: string, runId: string, n: number, tag = 'seed'): Promise<Account[]> {
  return mapLimit(
    Array.from({ length: n }, (_, i) => i),
    8,
    async (i) => {
      const email = `${tag}-${runId}-${i}@bench.example.com`;
      const res = await postJson(`${url}/signup`, { email, password: PASSWORD });
      const body = (await res.json()) as TokenBody;
      if (res.status !== 200 || !body.access_token || !body.refresh_token || !body.user?.id) {
        throw new Error(`seeding ${email}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      }
      return {
        email,
        password: PASSWORD,
        userId: body.user.id,
        access: body.access_token,
        refresh: body.refresh_token,
      };
    },
  );
}

/** Takes the tokens of a 200 token response into `a`. */
function adoptTokens(a: Account, status: number, body: string): void {
  if (status !== 200) return;
  const t = JSON.parse(body) as TokenBody;
  if (t.access_token) a.access = t.access_token;
  if (t.refresh_token) a.refresh = t.refresh_token;
}

export function signupRequests(runId: string): Request[] {
  let n = 0;
  return [
    {
      method: 'POST',
      path: '/signup',
      headers: jsonHeaders(),
      setupRequest: (req) => ({
        ...req,
        body: JSON.stringify({ email: `signup-${runId}-${n++}@bench.example.com`, password: PASSWORD }),
      }),
    },
  ];
}

export function signinRequest(a: Account): Request {
  return {
    method: 'POST',
    path: '/token?grant_type=password',
    headers: jsonHeaders(),
    body: JSON.stringify({ email: a.email, password: a.password }),
  };
}

export function refreshRequests(a: Account): Request[] {
  return [
    {
      method: 'POST',
      path: '/token?grant_type=refresh_token',
      headers: jsonHeaders(),
      // The latest token of this connection's session: rotation makes each one single-use.
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ refresh_token: a.refresh }) }),
      onResponse: (status, body) => adoptTokens(a, status, body),
    },
  ];
}

export function userRequests(a: Account): Request[] {
  return [
    {
      method: 'GET',
      path: '/user',
      setupRequest: (req) => ({ ...req, headers: { authorization: `Bearer ${a.access}` } }),
    },
  ];
}

export const MIX = { signin: 1, refresh: 20, user: 200 } as const;
const CYCLE = MIX.signin + MIX.refresh + MIX.user; // 221
const REFRESH_EVERY = Math.floor((CYCLE - MIX.signin) / MIX.refresh); // 11

export type MixKind = 'signin' | 'refresh' | 'user';

/** Position in the 221-request cycle → kind: 0 signs in, every 11th refreshes, the rest read /user. */
export function mixKind(pos: number): MixKind {
  if (pos === 0) return 'signin';
  return pos % REFRESH_EVERY === 0 ? 'refresh' : 'user';
}

/** 1 sign-in : 20 refreshes : 200 GET /user per connection; connections start at different points of the cycle. */
export function mixedRequests(a: Account, index: number, counts: Record<MixKind, Record<string, number>>): Request[] {
  let pos = (index * 37) % CYCLE;
  let inflight: MixKind = 'user';
  return [
    {
      method: 'GET',
      path: '/user',
      setupRequest: (req) => {
        inflight = mixKind(pos);
        pos = (pos + 1) % CYCLE;
        if (inflight === 'signin') return { ...req, ...signinRequest(a) };
        if (inflight === 'refresh') {
          return {
            ...req,
            method: 'POST',
            path: '/token?grant_type=refresh_token',
            headers: jsonHeaders(),
            body: JSON.stringify({ refresh_token: a.refresh }),
          };
        }
        return { ...req, method: 'GET', path: '/user', headers: { authorization: `Bearer ${a.access}` }, body: '' };
      },
      onResponse: (status, body) => {
        const c = counts[inflight];
        c[status] = (c[status] ?? 0) + 1;
        if (inflight !== 'user') adoptTokens(a, status, body);
      },
    },
  ];
}

/** A bcrypt cost-10 hash nobody signs in with: the background users only fill the tables. */
const BACKGROUND_HASH = '$2a$10$nTlQXtNXspo.kNIF3HVtZesQkxcCd5ctW.k15Maydhl4KwJ52e72W';

export interface SqlRunner {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/**
 * `n` confirmed email users with their identities, written straight into the schema, so that
 * look-ups run against tables of a real deployment's size (a missing index shows in the numbers).
 */
export async function seedBackgroundUsers(db: SqlRunner, namespace: string, runId: string, n: number): Promise<void> {
  if (n <= 0) return;
  const ns = `"${namespace}"`;
  await db.query(
    `
    insert into ${ns}.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
                             raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
    select '00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
           'bg-' || $1 || '-' || g || '@bench.example.com', $2, now(),
           '{"provider": "email", "providers": ["email"]}', '{}', now(), now()
    from generate_series(1, $3::int) g`,
    [runId, BACKGROUND_HASH, n],
  );
  await db.query(`
    insert into ${ns}.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
    select u.id::text, u.id, jsonb_build_object('sub', u.id::text, 'email', u.email, 'email_verified', true, 'phone_verified', false),
           'email', now(), now(), now()
    from ${ns}.users u where u.email like 'bg-%'`);
  await db.query(`analyze ${ns}.users, ${ns}.identities`);
}
