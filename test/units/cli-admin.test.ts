// `authsvc admin createuser|deleteuser` as an operator runs them: real processes on a real data
// directory (or Postgres schema), then the real server signing those users in.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import pg from 'pg';
import { afterAll, describe, test, type ExpectStatic } from 'vitest';
import { uniqueNamespace } from '../helpers/db.ts';
import { type ServerProcess, cleanupProcesses, runCli, startServer, tempDir } from '../helpers/server.ts';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
const PASSWORD = 'correct-horse-1';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

afterAll(async () => {
  await cleanupProcesses();
});

let n = 0;
const email = (tag: string) => `cli-${tag}-${Date.now().toString(36)}-${++n}@example.com`;

async function signIn(
  s: ServerProcess,
  address: string,
  password = PASSWORD,
): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${s.url}/token?grant_type=password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: address, password }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function auditActions(s: ServerProcess, secret: string): Promise<Record<string, any>[]> {
  const token = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(secret));
  const res = await fetch(`${s.url}/admin/audit?query=author:authsvc-cli&per_page=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) throw new Error(`audit: ${res.status} ${await res.text()}`);
  return ((await res.json()) as Record<string, any>[]).map((e) => e.payload);
}

interface Target {
  cwd: string;
  env: Record<string, string>;
  /** The embedded database serves one process at a time: stop the server before the CLI runs. */
  exclusive: boolean;
  secret: () => string;
}

async function scenario(expect: ExpectStatic, target: Target): Promise<void> {
  const { cwd, env } = target;
  const admin = (...args: string[]) => runCli(['admin', ...args], { cwd, env });
  const confirmed = email('confirmed');
  const unconfirmed = email('unconfirmed');
  const byId = email('by-id');

  const a = await admin('createuser', confirmed, PASSWORD, '--confirm', '--role', 'editor');
  expect(a.code, a.proc.output()).toBe(0);
  expect(a.stdout.trim()).toMatch(
    new RegExp(`^Created user: ${confirmed} \\(id ${UUID.source}, role editor, aud authenticated, email confirmed\\)$`),
  );
  const b = await admin('createuser', unconfirmed, PASSWORD);
  expect(b.code, b.proc.output()).toBe(0);
  expect(b.stdout).toContain('role authenticated, aud authenticated, email unconfirmed');
  const c = await admin('createuser', '--confirm', byId.toUpperCase(), PASSWORD);
  expect(c.code, c.proc.output()).toBe(0);
  const cId = UUID.exec(c.stdout)![0];

  const dup = await admin('createuser', confirmed, 'another-password');
  expect(dup.code).toBe(1);
  expect(dup.stderr.trim()).toMatch(
    new RegExp(`^authsvc: a user with email ${confirmed} already exists \\(id ${UUID.source}\\)$`),
  );
  expect(dup.stdout).toBe('');
  const long = await admin('createuser', email('long'), 'x'.repeat(73));
  expect(long.code).toBe(1);
  expect(long.stderr).toContain('authsvc: Password cannot be longer than 72 characters');
  const badEmail = await admin('createuser', 'not-an-email', PASSWORD);
  expect(badEmail.code).toBe(1);
  expect(badEmail.stderr.trim()).toBe('authsvc: Unable to validate email address: invalid format');
  const usage = await admin('createuser', email('usage'));
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain('createuser needs <email> and <password>');
  expect(usage.stderr).toContain('authsvc admin deleteuser <email|id>');

  let server = await startServer({ cwd, env });
  const ok = await signIn(server, confirmed);
  expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  expect(decodeJwt(ok.body.access_token).role).toBe('editor');
  expect(ok.body.user.email_confirmed_at).toBeTruthy();
  expect(ok.body.user.identities.map((i: { provider: string }) => i.provider)).toEqual(['email']);
  expect(ok.body.user.app_metadata).toEqual({ provider: 'email', providers: ['email'] });
  const notYet = await signIn(server, unconfirmed);
  expect(notYet.status).toBe(400);
  expect(notYet.body).toMatchObject({ error_code: 'email_not_confirmed' });
  expect((await signIn(server, byId)).status).toBe(200);
  expect((await signIn(server, confirmed, 'wrong-password')).body).toMatchObject({ error_code: 'invalid_credentials' });
  if (target.exclusive) await server.stop();

  const delEmail = await admin('deleteuser', confirmed);
  expect(delEmail.code, delEmail.proc.output()).toBe(0);
  expect(delEmail.stdout.trim()).toMatch(new RegExp(`^Removed user: ${confirmed} \\(id ${UUID.source}\\)$`));
  const delId = await admin('deleteuser', cId);
  expect(delId.code, delId.proc.output()).toBe(0);
  expect(delId.stdout.trim()).toBe(`Removed user: ${byId} (id ${cId})`);
  const gone = await admin('deleteuser', confirmed);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toContain(`authsvc: no user with email or id "${confirmed}"`);

  if (target.exclusive) server = await startServer({ cwd, env });
  expect((await signIn(server, confirmed)).body).toMatchObject({ error_code: 'invalid_credentials' });
  expect((await signIn(server, byId)).body).toMatchObject({ error_code: 'invalid_credentials' });
  expect((await signIn(server, unconfirmed)).body).toMatchObject({ error_code: 'email_not_confirmed' });
  const actions = await auditActions(server, target.secret());
  expect(
    actions
      .filter((p) => p.action === 'user_signedup')
      .map((p) => p.traits.user_email)
      .sort(),
  ).toEqual([byId, confirmed, unconfirmed].sort());
  expect(
    actions
      .filter((p) => p.action === 'user_deleted')
      .map((p) => p.traits.user_email)
      .sort(),
  ).toEqual([byId, confirmed].sort());
  expect(actions.every((p) => p.actor_id === '00000000-0000-0000-0000-000000000000' && p.log_type === 'team')).toBe(
    true,
  );
  await server.stop();
}

describe('authsvc admin', { timeout: 300_000 }, () => {
  test('embedded database (local mode): createuser, sign-in, deleteuser by email and by id', async ({ expect }) => {
    const cwd = tempDir();
    await scenario(expect, {
      cwd,
      env: { DATABASE_URL: 'pglite://data' },
      exclusive: true,
      // Local mode keeps the JWT secret in the data directory: the CLI's and the server's are one.
      secret: () => readFileSync(join(cwd, 'data', 'jwt-secret'), 'utf8').trim(),
    });
  });

  test('flags: an unknown one, one another command takes, a missing value, a value on a switch: exit 2 naming it, nothing opened', async ({
    expect,
  }) => {
    const cases: [string[], string][] = [
      [['createuser', 'a@example.com', PASSWORD, '--bogus'], "Unknown option '--bogus'"],
      [['deleteuser', 'a@example.com', '--role', 'x'], "Unknown option '--role'"],
      [['createuser', 'a@example.com', PASSWORD, '--aud'], "Option '-a, --aud <value>' argument missing"],
      [['createuser', 'a@example.com', PASSWORD, '--confirm=yes'], "Option '--confirm' does not take an argument"],
      [['createuser', 'a@example.com', PASSWORD, '--aud='], '--aud needs a value'],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['admin', ...args]);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(`authsvc admin: ${message}`);
      expect(r.stderr).toContain('authsvc admin createuser <email> <password>');
    }
  });

  test('an unknown admin command exits 2 with the usage', async ({ expect }) => {
    const r = await runCli(['admin', 'frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown admin command "frobnicate"');
    expect(r.stderr).toContain('authsvc admin createuser <email> <password>');
  });

  test.runIf(TEST_DATABASE_URL)('Postgres server: the CLI works while the server runs', async ({ expect }) => {
    const url = TEST_DATABASE_URL ?? '';
    const ns = uniqueNamespace();
    const secret = 'cli-admin-secret-with-at-least-32-chars!';
    try {
      await scenario(expect, {
        cwd: tempDir(),
        exclusive: false,
        secret: () => secret,
        env: {
          DATABASE_URL: url,
          DB_NAMESPACE: ns,
          AUTHSVC_DB_DRIVER: 'postgres',
          AUTHSVC_SITE_URL: 'http://localhost:3000',
          AUTHSVC_API_EXTERNAL_URL: 'http://localhost:9999',
          AUTHSVC_JWT_SECRET: secret,
          AUTHSVC_SMTP_ADMIN_EMAIL: 'admin@example.com',
          AUTHSVC_SMTP_HOST: 'localhost',
        },
      });
    } finally {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${ns}" CASCADE`);
      await client.end();
    }
  });
});
