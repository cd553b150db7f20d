// `npm run dev:worker` (`wrangler dev`) as a developer runs it: wrangler.toml as it is (its entry,
// its rules for the SQL migrations, its [alias]), bundled by wrangler and served by its own
// miniflare, with the settings given as --var. The runtime smoke conversation runs against it:
// the database through the WebSocket-to-TCP proxy (as Neon's), email over SMTP to a local mailbox.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from '../../scripts/build-worker.ts';
import { TEST_DATABASE_URL, uniqueNamespace } from '../helpers/db.ts';
import { freePort } from '../helpers/free-port.ts';
import { runSmoke } from '../helpers/smoke.ts';
import { type Mailbox, mailLink, nextLinkAndCode, startMailbox } from '../helpers/smtp.ts';
import { type WsTcpProxy, startWsTcpProxy } from '../helpers/ws-tcp-proxy.ts';

const WRANGLER = join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

describe.runIf(TEST_DATABASE_URL)('wrangler dev with wrangler.toml', () => {
  const namespace = uniqueNamespace();
  let state: string;
  let proxy: WsTcpProxy;
  let mailbox: Mailbox;
  let child: ChildProcess | undefined;
  let output = '';
  let baseUrl: string;

  beforeAll(async () => {
    const dbUrl = new URL(TEST_DATABASE_URL ?? '');
    state = mkdtempSync(join(tmpdir(), 'authsvc-wrangler-dev-'));
    [proxy, mailbox] = await Promise.all([
      startWsTcpProxy({ allow: [`${dbUrl.hostname}:${dbUrl.port || '5432'}`] }),
      startMailbox(),
    ]);
    const [port, inspectorPort] = [await freePort(), await freePort()];
    const vars: Record<string, string> = {
      AUTHSVC_API_EXTERNAL_URL: `http://127.0.0.1:${port}`,
      AUTHSVC_DB_DRIVER: 'postgres',
      DATABASE_URL: TEST_DATABASE_URL ?? '',
      DB_NAMESPACE: namespace,
      AUTHSVC_DB_WS_PROXY: proxy.address,
      AUTHSVC_DB_WS_SECURE: 'false',
      AUTHSVC_JWT_SECRET: 'wrangler-dev-secret-with-at-least-32-chars',
      AUTHSVC_SMTP_ADMIN_EMAIL: 'auth@example.com',
      AUTHSVC_SMTP_HOST: '127.0.0.1',
      AUTHSVC_SMTP_PORT: String(mailbox.port),
      AUTHSVC_LOG_LEVEL: 'error',
    };
    const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspectorPort)];
    args.push('--persist-to', join(state, 'persist'), '--show-interactive-dev-session=false');
    for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
    child = spawn(process.execPath, [WRANGLER, ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: 'false',
        WRANGLER_LOG_PATH: join(state, 'logs'),
        // No account: wrangler dev runs locally and must not look for one in the developer's shell.
        CLOUDFLARE_API_TOKEN: '',
        CLOUDFLARE_ACCOUNT_ID: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    baseUrl = `http://127.0.0.1:${port}`;
    // Ready once it answers: wrangler bundles first, then starts workerd (no fixed time).
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${output}`);
      const res = await fetch(`${baseUrl}/health`).catch(() => undefined);
      if (res?.status === 200) break;
      await res?.arrayBuffer();
      if (Date.now() > deadline) throw new Error(`wrangler dev did not answer within 120 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child?.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    await Promise.all([proxy?.close(), mailbox?.close()]);
    if (state) rmSync(state, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`).finally(() => client.end());
  }, 60_000);

  test('serves the smoke conversation: signup, email over SMTP, verify, sign-in, refresh, logout', async () => {
    await runSmoke({
      baseUrl,
      lastMail: (email) => nextLinkAndCode(mailbox, email),
    });
    // wrangler.toml's [vars] reached the Worker beside the --var settings: the link goes back to its SITE_URL.
    const email = `wrangler-dev-${Date.now().toString(36)}@example.com`;
    const signup = await fetch(`${baseUrl}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'wrangler-dev-password-1' }),
    });
    expect(signup.status).toBe(200);
    const link = new URL(mailLink(await mailbox.next(email, 10_000)) ?? '');
    expect(link.origin + link.pathname).toBe(`${baseUrl}/verify`);
    expect(link.searchParams.get('redirect_to')).toBe('http://localhost:3000');
    expect(output).not.toMatch(/No such module|Uncaught/);
  }, 120_000);
});
