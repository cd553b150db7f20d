// The CLI as an operator runs it: real processes, real files, real signals.
import { existsSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, test } from 'vitest';
import { uniqueNamespace } from '../helpers/db.ts';
import { freePort } from '../helpers/free-port.ts';
import { REPO_ROOT, type ServerProcess, cleanupProcesses, runCli, startServer, tempDir } from '../helpers/server.ts';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const MIGRATIONS = readdirSync(join(REPO_ROOT, 'migrations'))
  .filter((f) => f.endsWith('.sql'))
  .map((f) => f.slice(0, -4))
  .sort();

afterAll(async () => {
  await cleanupProcesses();
});

type Log = Record<string, unknown>;
const msgs = (logs: Log[]) => logs.map((l) => String(l.msg));

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

async function signUp(s: ServerProcess, email: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.url}/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct-horse-1' }),
  });
  if (res.status !== 200) throw new Error(`signup: ${res.status} ${await res.text()}`);
  return json(res);
}

function getUser(s: ServerProcess, accessToken: string): Promise<Response> {
  return fetch(`${s.url}/user`, { headers: { authorization: `Bearer ${accessToken}` } });
}

/**
 * A POST whose headers (and the first bytes of its body) are on the wire but whose body is not
 * finished until `finish()`: the server is provably in the middle of handling it.
 */
function heldRequest(port: number, path: string, body: unknown, agent: http.Agent) {
  const text = JSON.stringify(body);
  let req!: http.ClientRequest;
  const response = new Promise<{ status: number; body: string; at: number }>((done, fail) => {
    req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          out += c;
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, body: out, at: Date.now() }));
      },
    );
    req.on('error', fail);
  });
  req.write(text.slice(0, 5));
  return { response, finish: () => req.end(text.slice(5)) };
}

/** A GET over `agent`, read to the end. */
function get(port: number, path: string, agent: http.Agent | false): Promise<number> {
  return new Promise((done, fail) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      })
      .on('error', fail);
  });
}

// One after another: each start of the embedded database is CPU-heavy and the rest of the suite
// runs alongside (running these side by side made the whole suite slower, not faster). The time
// limit allows for a loaded machine.
describe('authsvc CLI', { timeout: 120_000 }, () => {
  test('version prints the package version', async ({ expect }) => {
    const r = await runCli(['version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  test('an unknown command exits 2 with the usage', async ({ expect }) => {
    const r = await runCli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown command "frobnicate"');
    expect(r.stderr).toContain('migrate');
  });

  test('migrate applies pending migrations once and reports them', async ({ expect }) => {
    const cwd = tempDir();
    const env = { DATABASE_URL: 'pglite://data' };
    const first = await runCli(['migrate'], { cwd, env });
    expect(first.code, first.proc.output()).toBe(0);
    expect(first.proc.logs().find((l) => Array.isArray(l.migrations))).toMatchObject({
      msg: `applied ${MIGRATIONS.length} migration(s)`,
      migrations: MIGRATIONS,
    });
    expect(existsSync(join(cwd, 'data', 'pgdata'))).toBe(true);
    expect(existsSync(join(cwd, 'data', 'authsvc.lock'))).toBe(false);

    const second = await runCli(['migrate'], { cwd, env });
    expect(second.code, second.proc.output()).toBe(0);
    expect(second.proc.logs().find((l) => Array.isArray(l.migrations))).toMatchObject({
      msg: 'database is up to date',
      migrations: [],
    });
    // migrate never serves.
    expect(msgs(second.proc.logs()).some((m) => m.includes('listening'))).toBe(false);
  });

  // One data directory throughout, as a developer restarts `npm start` in one checkout.
  test('local mode: serves on PORT with the embedded database and a kept secret; one process per directory; graceful SIGTERM', async ({
    expect,
  }) => {
    const cwd = tempDir();
    const dataDir = join(cwd, '.authsvc');
    // Read from .env, as a developer would configure it.
    writeFileSync(join(cwd, '.env'), 'AUTHSVC_MAILER_AUTOCONFIRM=true\n');

    // 1. First start: notices, the embedded database, a 0600 secret, the lock.
    const s = await startServer({ cwd });
    const logs = msgs(s.logs());
    for (const what of ['SITE_URL', 'API_EXTERNAL_URL', 'DATABASE_URL', 'JWT_SECRET', 'SMTP_HOST']) {
      expect(
        logs.some((m) => m.startsWith('local mode:') && m.includes(what)),
        `notice about ${what}`,
      ).toBe(true);
    }
    expect(logs).toContain(`local mode: API_EXTERNAL_URL is not set: using http://localhost:${s.port}.`);
    expect(s.logs().find((l) => String(l.msg).includes('listening'))).toMatchObject({
      port: s.port,
      database: 'pglite',
    });
    const secretFile = join(dataDir, 'jwt-secret');
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const secret = readFileSync(secretFile, 'utf8');
    expect(secret.trim().length).toBeGreaterThanOrEqual(32);
    expect(existsSync(join(dataDir, 'pgdata'))).toBe(true);
    expect(readFileSync(join(dataDir, 'authsvc.lock'), 'utf8').split('\n')[0]).toBe(String(s.pid));
    const session = await signUp(s, 'local@example.com');
    const accessToken = String(session.access_token);
    const userId = String((session.user as Log).id);

    // 2. A second process on the same directory is refused; the first keeps serving.
    const second = await runCli([], { cwd, env: { PORT: String(await freePort()) } });
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(realpathSync(dataDir));
    expect(second.stderr).toContain(`pid ${s.pid}`);
    expect(readFileSync(join(dataDir, 'authsvc.lock'), 'utf8').split('\n')[0]).toBe(String(s.pid));
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
    expect((await getUser(s, accessToken)).status).toBe(200);
    expect(await s.stop()).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'authsvc.lock'))).toBe(false);

    // 3. Restart: same secret, so the token issued before still works.
    const again = await startServer({ cwd });
    expect(readFileSync(secretFile, 'utf8')).toBe(secret);
    expect(again.logs().find((l) => Array.isArray(l.migrations))).toMatchObject({ migrations: [] });
    const res = await getUser(again, accessToken);
    expect(res.status).toBe(200);
    expect((await json(res)).id).toBe(userId);

    // 4. SIGTERM with a request in flight on a keep-alive connection (as undici, browsers and
    // supabase-js hold them): the request is answered, then the process exits 0.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let answeredAt = 0;
    let exitedAt = 0;
    try {
      expect(await get(again.port, '/health', agent)).toBe(200); // the connection is open and known
      const held = heldRequest(
        again.port,
        '/signup',
        { email: 'late@example.com', password: 'correct-horse-1' },
        agent,
      );
      // Once a request sent after the held one's headers is answered, the server has read them.
      expect(await get(again.port, '/health', false)).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      again.proc.kill('SIGTERM');
      await again.waitForLine((l) => l.includes('received SIGTERM'));
      held.finish();
      const answer = await held.response;
      answeredAt = answer.at;
      expect(answer.status, answer.body).toBe(200);
      expect(JSON.parse(answer.body)).toHaveProperty('access_token');
      expect(await again.exited).toEqual({ code: 0, signal: null });
      exitedAt = Date.now();
    } finally {
      agent.destroy();
    }
    await expect(fetch(`${again.url}/health`)).rejects.toThrow();

    // 5. The lock is released: the next process opens the directory, the late signup in it.
    expect(existsSync(join(dataDir, 'authsvc.lock'))).toBe(false);
    const next = await startServer({ cwd });
    const signIn = await fetch(`${next.url}/token?grant_type=password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'late@example.com', password: 'correct-horse-1' }),
    });
    expect(signIn.status).toBe(200);
    expect(await next.stop()).toEqual({ code: 0, signal: null });

    // Last, so everything above is checked either way: the connection that went idle after
    // SIGTERM must not keep the process alive until its keep-alive timeout.
    expect(exitedAt - answeredAt, 'ms from the last response to exit').toBeLessThan(2_000);
  });

  test('with DATABASE_URL=postgres://… every missing required variable is listed at once', async ({ expect }) => {
    const cwd = tempDir();
    const r = await runCli([], {
      cwd,
      env: {
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
        API_EXTERNAL_URL: 'http://localhost:9999',
        AUTHSVC_DB_DRIVER: 'postgres',
        AUTHSVC_SMTP_ADMIN_EMAIL: 'admin@example.com',
        AUTHSVC_SMTP_HOST: 'localhost',
      },
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/SITE_URL[^\n]*is required/);
    expect(r.stderr).toMatch(/JWT_SECRET[^\n]*is required/);
    expect(r.stderr).not.toMatch(/API_EXTERNAL_URL|SMTP_HOST|DB_DRIVER|SMTP_ADMIN_EMAIL/);
    // No local-mode fallbacks outside local mode.
    expect(r.stdout).not.toContain('local mode');
    expect(existsSync(join(cwd, '.authsvc'))).toBe(false);
  });

  test('.env in the working directory is read; the real environment wins over it', async ({ expect }) => {
    // The configuration errors show which value of each variable the process saw.
    const cwd = tempDir();
    writeFileSync(
      join(cwd, '.env'),
      [
        '# written by the test',
        'DATABASE_URL=postgres://postgres@127.0.0.1:5432/test',
        'AUTHSVC_SITE_URL=http://localhost:3000',
        'AUTHSVC_PASSWORD_MIN_LENGTH=from-dotenv-1',
        'AUTHSVC_JWT_EXP=from-dotenv-2',
        '',
      ].join('\n'),
    );
    const r = await runCli([], { cwd, env: { AUTHSVC_JWT_EXP: '3600' } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('AUTHSVC_PASSWORD_MIN_LENGTH'); // read from .env …
    expect(r.stderr).toContain('from-dotenv-1');
    expect(r.stderr).not.toContain('from-dotenv-2'); // … unless the environment has it
    expect(r.stderr).not.toMatch(/SITE_URL[^\n]*is required/);
    expect(r.stderr).toMatch(/JWT_SECRET[^\n]*is required/);
    expect(existsSync(join(cwd, '.authsvc'))).toBe(false); // DATABASE_URL from .env: not local mode
  });

  test.runIf(TEST_DATABASE_URL)(
    'Postgres server: two migrate processes at once both succeed, each migration recorded once',
    async ({ expect }) => {
      const url = TEST_DATABASE_URL ?? '';
      const ns = uniqueNamespace();
      const env = {
        DATABASE_URL: url,
        DB_NAMESPACE: ns,
        AUTHSVC_DB_DRIVER: 'postgres',
        AUTHSVC_SITE_URL: 'http://localhost:3000',
        AUTHSVC_API_EXTERNAL_URL: 'http://localhost:9999',
        AUTHSVC_JWT_SECRET: 'cli-test-secret-with-at-least-32-chars!!',
        AUTHSVC_SMTP_ADMIN_EMAIL: 'admin@example.com',
        AUTHSVC_SMTP_HOST: 'localhost',
      };
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const runs = await Promise.all([runCli(['migrate'], { env }), runCli(['migrate'], { env })]);
        for (const r of runs) expect(r.code, r.proc.output()).toBe(0);
        const applied = runs.flatMap(
          (r) => r.proc.logs().find((l) => Array.isArray(l.migrations))?.migrations as string[],
        );
        expect(applied.sort()).toEqual(MIGRATIONS);
        const rows = await client.query<{ version: string; n: string }>(
          `SELECT version, count(*) AS n FROM "${ns}".schema_migrations GROUP BY version ORDER BY version`,
        );
        expect(rows.rows).toEqual(MIGRATIONS.map((version) => ({ version, n: '1' })));
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${ns}" CASCADE`);
        await client.end();
      }
    },
  );
});
