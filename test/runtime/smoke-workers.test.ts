// The runtime smoke suite in workerd (through miniflare), on the Worker bundle wrangler deploys,
// against the local Postgres in a fresh schema: the neon driver reaches it through a
// WebSocket-to-TCP proxy (test/helpers/ws-tcp-proxy.ts), as it would reach Neon or wsproxy.
// Three copies of the Worker run side by side: one sends email over SMTP (worker-mailer on
// cloudflare:sockets) to a local mailbox, one through the Resend API to a local stand-in, and one
// reaches the database through a Hyperdrive binding (TCP from workerd) instead of a WebSocket.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import { type WorkerBuild, buildWorker, COMPATIBILITY_DATE } from '../../scripts/build-worker.ts';
import { TEST_DATABASE_URL, uniqueNamespace } from '../helpers/db.ts';
import { type FakeProvider, startFakeProvider } from '../helpers/fake-oauth.ts';
import { signingKey } from '../helpers/oauth-scenarios-oidc.ts';
import { runSmoke } from '../helpers/smoke.ts';
import { type Mailbox, nextLinkAndCode, startMailbox } from '../helpers/smtp.ts';
import { type WsTcpProxy, startWsTcpProxy } from '../helpers/ws-tcp-proxy.ts';

interface ResendCall {
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  body: Record<string, unknown>;
}

function startResendStandIn(): Promise<{ server: Server; url: string; calls: ResendCall[] }> {
  const calls: ResendCall[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/emails') {
        res.writeHead(404).end();
        return;
      }
      const idempotencyKey = req.headers['idempotency-key'];
      calls.push({
        authorization: req.headers.authorization,
        idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : undefined,
        body: JSON.parse(raw) as Record<string, unknown>,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: crypto.randomUUID() }));
    });
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () => {
      done({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls });
    }),
  );
}

/** One statement on the test database, from the test's side (node-postgres). */
async function query<R extends Record<string, unknown>>(sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

function withPassword(url: string): string {
  const u = new URL(url);
  if (!u.password) u.password = 'unused';
  return u.toString();
}

describe.runIf(TEST_DATABASE_URL)('Workers: the bundle in workerd over neon-serverless', () => {
  const namespace = uniqueNamespace();
  let outdir: string;
  let build: WorkerBuild;
  let proxy: WsTcpProxy;
  let mailbox: Mailbox;
  let resend: Awaited<ReturnType<typeof startResendStandIn>>;
  let keycloak: FakeProvider;
  let mf: Miniflare;
  let baseUrl: string;

  beforeAll(async () => {
    const dbUrl = new URL(TEST_DATABASE_URL ?? '');
    outdir = mkdtempSync(join(tmpdir(), 'authsvc-worker-'));
    [build, proxy, mailbox, resend, keycloak] = await Promise.all([
      buildWorker(outdir),
      startWsTcpProxy({ allow: [`${dbUrl.hostname}:${dbUrl.port || '5432'}`] }),
      startMailbox(),
      startResendStandIn(),
      startFakeProvider(),
    ]);
    // A Keycloak realm whose discovery document and keys the Worker fetches to check ID tokens.
    const realm = `${keycloak.base}/realms/acme`;
    const realmKey = await signingKey('k1');
    keycloak.routes.set('GET /realms/acme/.well-known/openid-configuration', () => ({
      body: {
        issuer: realm,
        jwks_uri: `${realm}/certs`,
        authorization_endpoint: `${realm}/auth`,
        token_endpoint: `${realm}/token`,
      },
    }));
    keycloak.routes.set('GET /realms/acme/certs', () => ({ body: { keys: [realmKey.jwk] } }));
    const env = {
      AUTHSVC_SITE_URL: 'http://localhost:3000',
      AUTHSVC_API_EXTERNAL_URL: 'http://localhost:8787',
      AUTHSVC_DB_DRIVER: 'postgres',
      DATABASE_URL: TEST_DATABASE_URL ?? '',
      DB_NAMESPACE: namespace,
      AUTHSVC_DB_WS_PROXY: proxy.address,
      AUTHSVC_DB_WS_SECURE: 'false',
      AUTHSVC_JWT_SECRET: 'workers-smoke-secret-with-at-least-32-chars',
      AUTHSVC_SMTP_ADMIN_EMAIL: 'auth@example.com',
      AUTHSVC_LOG_LEVEL: 'error',
    };
    const worker = {
      modules: true,
      scriptPath: build.entry,
      modulesRoot: build.outdir,
      modulesRules: [{ type: 'Text' as const, include: ['**/*.sql'] }],
      compatibilityDate: COMPATIBILITY_DATE,
    };
    mf = new Miniflare({
      workers: [
        {
          ...worker,
          name: 'smtp',
          // As wrangler.toml: per-client limits on CF-Connecting-IP, buckets in Postgres (the default).
          bindings: {
            ...env,
            AUTHSVC_SMTP_HOST: '127.0.0.1',
            AUTHSVC_SMTP_PORT: String(mailbox.port),
            AUTHSVC_RATE_LIMIT_HEADER: 'CF-Connecting-IP',
          },
        },
        {
          ...worker,
          name: 'resend',
          bindings: {
            ...env,
            AUTHSVC_RESEND_API_KEY: 're_test_key',
            AUTHSVC_RESEND_BASE_URL: resend.url,
            // Rate limits in Durable Objects, keyed on X-Client-IP; anonymous sign-ins allow a burst of 2.
            AUTHSVC_RATE_LIMIT_STORE: 'durable_object',
            AUTHSVC_RATE_LIMIT_HEADER: 'X-Client-IP',
            AUTHSVC_RATE_LIMIT_ANONYMOUS_USERS: '2',
          },
          durableObjects: { RATE_LIMITER: 'RateLimiter' },
        },
        {
          ...worker,
          name: 'hyperdrive',
          // miniflare's Hyperdrive stand-in hands the Worker a TCP endpoint in front of this database.
          // It insists on a password in the URL; a server that trusts the user never asks for it.
          hyperdrives: { HYPERDRIVE: withPassword(TEST_DATABASE_URL ?? '') },
          bindings: {
            ...Object.fromEntries(
              Object.entries(env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('AUTHSVC_DB_WS_')),
            ),
            AUTHSVC_MAILER_AUTOCONFIRM: 'true',
            AUTHSVC_WORKERS_MAIL_LOG: 'true',
            // No RATE_LIMIT_HEADER: the adapter keys per-client limits on CF-Connecting-IP itself.
            AUTHSVC_RATE_LIMIT_ANONYMOUS_USERS: '2',
            AUTHSVC_EXTERNAL_KEYCLOAK_ENABLED: 'true',
            AUTHSVC_EXTERNAL_KEYCLOAK_CLIENT_ID: 'workers-app',
            AUTHSVC_EXTERNAL_KEYCLOAK_SECRET: 's',
            AUTHSVC_EXTERNAL_KEYCLOAK_REDIRECT_URI: 'http://localhost:8787/callback',
            AUTHSVC_EXTERNAL_KEYCLOAK_URL: `${keycloak.base}/realms/acme`,
          },
        },
      ],
    });
    baseUrl = (await mf.ready).origin;
  });

  afterAll(async () => {
    await mf?.dispose();
    await Promise.all([
      proxy?.close(),
      mailbox?.close(),
      keycloak?.close(),
      new Promise((done) => resend?.server.close(done)),
    ]);
    if (outdir) rmSync(outdir, { recursive: true, force: true });
    await query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`);
  });

  test('smoke: signup, email over SMTP, verify, sign-in, user, refresh, logout, error body', async () => {
    await runSmoke({
      baseUrl,
      lastMail: (email) => nextLinkAndCode(mailbox, email),
    });
    // Every request opened its own connection(s) through the proxy: one Pool per request.
    expect(proxy.connections).toBeGreaterThan(5);
    // The per-client buckets of /token and /signup went to Postgres.
    const keys = await query<{ key: string }>(`SELECT key FROM "${namespace}".rate_limits`);
    expect(keys.map((r) => r.key)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ip:token:/), expect.stringMatching(/^ip:signup:/)]),
    );
    // The audit trail names the client Cloudflare reported in CF-Connecting-IP.
    const ips = await query<{ ip_address: string }>(`SELECT DISTINCT ip_address FROM "${namespace}".audit_log_entries`);
    expect(ips.map((r) => r.ip_address)).toContain('127.0.0.1');
  });

  test('the bundled migrations were applied in workerd: exactly migrations/*.sql', async () => {
    const rows = await query<{ version: string }>(
      `SELECT version FROM "${namespace}".schema_migrations ORDER BY version`,
    );
    expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
  });

  test('Hyperdrive: the same driver over TCP signs up, signs in, refreshes and logs out', async () => {
    const worker = await mf.getWorker('hyperdrive');
    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      const res = await worker.fetch(`http://localhost${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
    };
    const email = `hyperdrive-${Date.now().toString(36)}@example.com`;
    const password = 'hyperdrive-password-1';
    const signup = await call('POST', '/signup', { email, password });
    expect(signup.status, JSON.stringify(signup.body)).toBe(200);
    expect(signup.body.access_token).toBeTruthy(); // MAILER_AUTOCONFIRM: a session at once
    const signIn = await call('POST', '/token?grant_type=password', { email, password });
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
    expect((await call('GET', '/user', undefined, signIn.body.access_token)).body.email).toBe(email);
    const refreshed = await call('POST', '/token?grant_type=refresh_token', {
      refresh_token: signIn.body.refresh_token,
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect((await call('POST', '/logout', undefined, refreshed.body.access_token)).status).toBe(204);
  });

  test('Durable Object rate limits: AUTHSVC_RATE_LIMIT_STORE=durable_object keeps the buckets out of Postgres', async () => {
    const worker = await mf.getWorker('resend');
    const anonymous = async (ip: string) => {
      const res = await worker.fetch('http://localhost/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-client-ip': ip },
        body: '{}',
      });
      await res.arrayBuffer();
      return res.status;
    };
    // Anonymous sign-ins are off (422) but still counted; the third is over the burst of 2.
    expect([await anonymous('198.51.100.7'), await anonymous('198.51.100.7'), await anonymous('198.51.100.7')]).toEqual(
      [422, 422, 429],
    );
    expect(await anonymous('198.51.100.8')).toBe(422);
    // The bucket is the object's: one more take on it (through the same namespace) finds it empty.
    const limiter = await mf.getDurableObjectNamespace('RATE_LIMITER', 'resend');
    const res = await limiter
      .get(limiter.idFromName('anonymous:198.51.100.7'))
      .fetch('https://rate-limiter.invalid/take', {
        method: 'POST',
        body: JSON.stringify({ capacity: 2, refillPerSecond: 2 / 3600, now: Date.now() }),
      });
    expect(await res.json()).toEqual({ allowed: false });
    const rows = await query<{ key: string }>(
      `SELECT key FROM "${namespace}".rate_limits WHERE key LIKE '%198.51.100.%'`,
    );
    expect(rows).toEqual([]);
  });

  test("one app per isolate: its OIDC cache outlives a request, so the realm's keys are fetched once for two sign-ins", async () => {
    // Discovery documents and JWKS are cached in the app createApp builds; an app built per
    // request would fetch both again for every ID token.
    const worker = await mf.getWorker('hyperdrive');
    const forger = await signingKey('k1'); // the realm's key id, another key: refused after the keys are read
    const idToken = await forger.sign({
      iss: `${keycloak.base}/realms/acme`,
      aud: 'workers-app',
      sub: 'kc-1',
      email: 'kc@example.com',
    });
    for (let i = 0; i < 2; i++) {
      const res = await worker.fetch('http://localhost/token?grant_type=id_token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider: 'keycloak', id_token: idToken }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid request', error_description: 'Bad ID token' });
    }
    expect(keycloak.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /realms/acme/.well-known/openid-configuration',
      'GET /realms/acme/certs',
    ]);
  });

  test('without RATE_LIMIT_HEADER, per-client limits key on CF-Connecting-IP (set by Cloudflare, not forgeable)', async () => {
    const worker = await mf.getWorker('hyperdrive');
    const anonymous = async (ip: string) => {
      const res = await worker.fetch('http://localhost/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'cf-connecting-ip': ip },
        body: '{}',
      });
      await res.arrayBuffer();
      return res.status;
    };
    // Anonymous sign-ins are off (422) but still counted; the third is over the burst of 2.
    expect([await anonymous('203.0.113.9'), await anonymous('203.0.113.9'), await anonymous('203.0.113.9')]).toEqual([
      422, 422, 429,
    ]);
    expect(await anonymous('203.0.113.10')).toBe(422);
  });

  test('Resend: the confirmation email is handed to the Resend API', async () => {
    const worker = await mf.getWorker('resend');
    const email = `resend-${Date.now().toString(36)}@example.com`;
    const res = await worker.fetch('http://localhost/signup', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'resend-password-1' }),
    });
    expect(res.status, await res.text()).toBe(200);
    const call = resend.calls.find((c) => Array.isArray(c.body.to) && c.body.to.includes(email));
    expect(call?.authorization).toBe('Bearer re_test_key');
    // Derived from the token (an HMAC keyed with the API key): a retried send is sent once.
    expect(call?.idempotencyKey).toMatch(/^authsvc-[0-9a-f]{48}$/);
    expect(call?.body.from).toBe('auth@example.com');
    expect(call?.body.subject).toBe('Confirm Your Signup');
    expect(String(call?.body.html)).toMatch(/http:\/\/localhost:8787\/verify\?token=[0-9a-f]+&amp;type=signup/);
  });
});
