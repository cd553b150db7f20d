// The peer, better-auth (bench/peer/better-auth-server.ts): start it, seed accounts, and the
// request lists of its three scenarios (email sign-up, email sign-in, get-session).
import type { Request } from 'autocannon';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/free-port.ts';
import { type Child, REPO_ROOT, spawnChild, waitForHttp } from './procs.ts';
import { jsonHeaders, mapLimit, postJson } from './load.ts';
import { PASSWORD, type SqlRunner } from './authsvc.ts';

export interface Peer {
  child: Child;
  url: string;
}

export async function startPeer(o: { databaseUrl: string; schema: string; threadpool: number }): Promise<Peer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnChild(
    'better-auth',
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'bench/peer/better-auth-server.ts')],
    {
      DATABASE_URL: o.databaseUrl,
      BA_SCHEMA: o.schema,
      PORT: String(port),
      BETTER_AUTH_URL: url,
      BETTER_AUTH_SECRET: 'bench-better-auth-secret-0123456789abcdef',
      BETTER_AUTH_TELEMETRY: '0',
      UV_THREADPOOL_SIZE: String(o.threadpool),
      NODE_ENV: 'production',
    },
  );
  await waitForHttp(`${url}/health`, child);
  return { child, url };
}

export interface PeerAccount {
  email: string;
  password: string;
  cookie: string;
}

function sessionCookie(res: Response): string {
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('better-auth.session_token='));
  if (!cookie) throw new Error(`no session cookie in ${res.status} answer`);
  return cookie;
}

export async function seedPeerAccounts(url: string, runId: string, n: number): Promise<PeerAccount[]> {
  return mapLimit(
    Array.from({ length: n }, (_, i) => i),
    8,
    async (i) => {
      const email = `seed-${runId}-${i}@bench.example.com`;
      // fetch sends Sec-Fetch-Mode, which makes better-auth demand an Origin; autocannon sends neither.
      const res = await postJson(
        `${url}/api/auth/sign-up/email`,
        { email, password: PASSWORD, name: `seed ${i}` },
        { origin: url },
      );
      if (res.status !== 200)
        throw new Error(`peer seeding ${email}: ${res.status} ${(await res.text()).slice(0, 300)}`);
      await res.body?.cancel();
      return { email, password: PASSWORD, cookie: sessionCookie(res) };
    },
  );
}

export function peerSignupRequests(runId: string): Request[] {
  let n = 0;
  return [
    {
      method: 'POST',
      path: '/api/auth/sign-up/email',
      headers: jsonHeaders(),
      setupRequest: (req) => {
        const i = n++;
        return {
          ...req,
          body: JSON.stringify({
            email: `signup-${runId}-${i}@bench.example.com`,
            password: PASSWORD,
            name: `user ${i}`,
          }),
        };
      },
    },
  ];
}

export function peerSigninRequests(a: PeerAccount): Request[] {
  return [
    {
      method: 'POST',
      path: '/api/auth/sign-in/email',
      headers: jsonHeaders(),
      body: JSON.stringify({ email: a.email, password: a.password }),
    },
  ];
}

export function peerSessionRequests(a: PeerAccount): Request[] {
  return [{ method: 'GET', path: '/api/auth/get-session', headers: { cookie: a.cookie } }];
}

/** get-session answers 200 `null` for a missing session: only a body with a user counts. */
export function peerSessionOk(body: string): boolean {
  return body.startsWith('{"session"');
}

/** The peer's share of `seedBackgroundUsers`: `n` users with a credential account each. */
export async function seedPeerBackgroundUsers(db: SqlRunner, schema: string, runId: string, n: number): Promise<void> {
  if (n <= 0) return;
  const s = `"${schema}"`;
  await db.query(
    `
    insert into ${s}."user" (id, name, email, "emailVerified", "createdAt", "updatedAt")
    select md5('bg' || $1 || g), 'bg ' || g, 'bg-' || $1 || '-' || g || '@bench.example.com', false, now(), now()
    from generate_series(1, $2::int) g`,
    [runId, n],
  );
  await db.query(`
    insert into ${s}.account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt")
    select md5('bg-account' || u.id), u.id, 'credential', u.id, 'unused', now(), now()
    from ${s}."user" u where u.email like 'bg-%'`);
  await db.query(`analyze ${s}."user", ${s}.account`);
}
