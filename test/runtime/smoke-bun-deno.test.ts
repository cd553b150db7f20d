// The runtime smoke suite under Bun and Deno: the command lines of `npm run start:bun` and
// `npm run start:deno` (their binaries from node_modules/.bin), as real processes, on the embedded
// database with the log mailer and, with TEST_DATABASE_URL, on the Postgres server with mail over
// SMTP. Each ends with SIGTERM while a request is in flight: answered, then exit 0.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { SignJWT } from 'jose';
import { afterAll, describe, expect, test } from 'vitest';
import { TEST_DATABASE_URL, uniqueNamespace } from '../helpers/db.ts';
import { REPO_ROOT, type ServerProcess, cleanupProcesses, runCli, startServer, tempDir } from '../helpers/server.ts';
import { createTestIdp } from '../helpers/saml-idp.ts';
import { type SmokeTarget, runSmoke } from '../helpers/smoke.ts';
import { mailCode, mailLink, startMailbox } from '../helpers/smtp.ts';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  scripts: Record<string, string>;
};

/** An npm script's command line: the runtime from node_modules/.bin, source paths from the repository root. */
function scriptCommand(script: string): string[] {
  const [bin, ...args] = (pkg.scripts[script] ?? '').split(/\s+/);
  if (!bin) throw new Error(`package.json has no script ${script}`);
  return [join(REPO_ROOT, 'node_modules/.bin', bin), ...args.map((a) => (a.endsWith('.ts') ? join(REPO_ROOT, a) : a))];
}

const RUNTIMES = [
  { runtime: 'bun', command: scriptCommand('start:bun') },
  { runtime: 'deno', command: scriptCommand('start:deno') },
];

afterAll(async () => {
  await cleanupProcesses();
});

/** The log transport's line for `email` (local mode): its link and code. */
function logMail(server: ServerProcess): SmokeTarget['lastMail'] {
  return async (email) => {
    const line = await server.waitForLine((l) => l.includes('email (log transport') && l.includes(email), 10_000);
    const j = JSON.parse(line) as { link: string; code: string };
    return { link: j.link, code: j.code };
  };
}

/**
 * SIGTERM while a POST is on the wire (headers sent, body not finished) over a keep-alive
 * connection, with undici's idle keep-alive connections from the smoke run still open: the
 * request is answered, then the process exits 0 and the port is closed.
 */
async function stopWithRequestInFlight(server: ServerProcess): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ email: 'nobody@example.com', password: 'not-the-password-1' });
  try {
    let req!: http.ClientRequest;
    const answer = new Promise<{ status: number; body: string }>((done, fail) => {
      req = http.request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/token?grant_type=password',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let out = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            out += c;
          });
          res.on('end', () => done({ status: res.statusCode ?? 0, body: out }));
        },
      );
      req.on('error', fail);
    });
    req.write(body.slice(0, 5));
    // A request sent after the held one's headers is answered: the server has read them.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    server.proc.kill('SIGTERM');
    await server.waitForLine((l) => l.includes('received SIGTERM'));
    req.end(body.slice(5));
    const res = await answer;
    expect(res.status, res.body).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error_code: 'invalid_credentials' });
    expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
  } finally {
    agent.destroy();
  }
  expect(
    server.stderr.filter((l) => l.trim()),
    'stderr',
  ).toEqual([]);
  expect(server.logs().at(-1)).toMatchObject({ msg: 'stopped' });
  await expect(fetch(`${server.url}/health`)).rejects.toThrow();
}

const JWT_SECRET = 'smoke-secret-at-least-32-characters-long';
const SAML_ENV = {
  AUTHSVC_SAML_ENABLED: 'true',
  AUTHSVC_JWT_SECRET: JWT_SECRET,
  AUTHSVC_SAML_PRIVATE_KEY: generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'der' })
    .toString('base64'),
};

/** SAML SSO on this runtime (xml-crypto over its node:crypto): an IdP-initiated response signs a user in. */
async function samlRoundTrip(baseUrl: string): Promise<void> {
  const metadata = await (await fetch(`${baseUrl}/sso/saml/metadata`)).text();
  const audience = /entityID="([^"]+)"/.exec(metadata)![1]!;
  const acsUrl = /Location="([^"]+)"/.exec(metadata)![1]!;
  const idp = createTestIdp('smoke');
  const admin = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  const created = await fetch(`${baseUrl}/admin/sso/providers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'saml', metadata_xml: idp.metadataXml, domains: ['sso.example.com'] }),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  const res = await fetch(`${baseUrl}/sso/saml/acs`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      SAMLResponse: idp.response({ audience, acsUrl, attributes: { email: ['smoke@sso.example.com'] } }),
    }).toString(),
  });
  expect(res.status, res.headers.get('location') ?? '').toBe(302);
  expect(res.headers.get('location')).toContain('#access_token=');
}

// Concurrent: each process spends its start-up on one core (PGlite's initdb), so two runtimes
// side by side take the time of one.
describe.concurrent.each(RUNTIMES)('$runtime', ({ runtime, command }) => {
  test('version', async () => {
    const r = await runCli(['version'], { command, timeoutMs: 20_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  test('local mode (pglite:// directory, log mailer): smoke, a SAML sign-in, then SIGTERM with a request in flight', async () => {
    const dataDir = join(tempDir(), 'data');
    const server = await startServer({
      command,
      env: { DATABASE_URL: `pglite://${dataDir}`, ...SAML_ENV },
      timeoutMs: 90_000,
    });
    expect(server.logs().find((l) => String(l.msg).includes('listening'))).toMatchObject({
      port: server.port,
      database: 'pglite',
      runtime: expect.stringMatching(new RegExp(`^${runtime} \\d`)),
    });
    expect(readFileSync(join(dataDir, 'authsvc.lock'), 'utf8').split('\n')[0]).toBe(String(server.pid));
    await runSmoke({ baseUrl: server.url, lastMail: logMail(server) });
    await samlRoundTrip(server.url);
    await stopWithRequestInFlight(server);
    expect(existsSync(join(dataDir, 'authsvc.lock')), 'lock released').toBe(false);
    // A first start creates the embedded database (initdb): seconds alone, much longer on a loaded machine.
  }, 120_000);

  test.runIf(TEST_DATABASE_URL)(
    'Postgres server (node-postgres, SMTP mail): smoke, then SIGTERM',
    async () => {
      const namespace = uniqueNamespace();
      const mailbox = await startMailbox();
      try {
        const server = await startServer({
          command,
          env: {
            DATABASE_URL: TEST_DATABASE_URL!,
            DB_NAMESPACE: namespace,
            GOTRUE_DB_DRIVER: 'postgres',
            GOTRUE_JWT_SECRET: 'smoke-secret-at-least-32-characters-long',
            GOTRUE_SITE_URL: 'http://localhost:3000',
            API_EXTERNAL_URL: 'http://localhost:9999',
            GOTRUE_SMTP_ADMIN_EMAIL: 'admin@example.com',
            GOTRUE_SMTP_HOST: '127.0.0.1',
            GOTRUE_SMTP_PORT: String(mailbox.port),
          },
          timeoutMs: 30_000,
        });
        expect(server.logs().find((l) => String(l.msg).includes('listening'))).toMatchObject({ database: 'postgres' });
        await runSmoke({
          baseUrl: server.url,
          async lastMail(email) {
            const mail = await mailbox.next(email, 10_000);
            return { link: mailLink(mail) ?? '', code: mailCode(mail) };
          },
        });
        await stopWithRequestInFlight(server);
      } finally {
        await mailbox.close();
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try {
          await client.query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`);
        } finally {
          await client.end();
        }
      }
    },
    120_000,
  );
});
