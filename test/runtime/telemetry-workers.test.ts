// Issue 16 on Workers: the bundle wrangler deploys, in workerd (miniflare), with TRACING_ENABLED
// exports each request's span over fetch (OTLP/HTTP, flushed in ctx.waitUntil) to a local
// receiver. Needs the Postgres server (TEST_DATABASE_URL), reached through the WebSocket proxy.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { Miniflare } from 'miniflare';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMPATIBILITY_DATE, buildWorker } from '../../scripts/build-worker.ts';
import { TEST_DATABASE_URL, uniqueNamespace } from '../helpers/db.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { REPO_ROOT } from '../helpers/server.ts';
import { type WsTcpProxy, startWsTcpProxy } from '../helpers/ws-tcp-proxy.ts';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const JWT_SECRET = 'workers-telemetry-secret-with-at-least-32-chars';
const PASSWORD = 'Workers-trace-pw-1';

describe.runIf(TEST_DATABASE_URL)('Workers: traces over fetch to a local OTLP receiver', () => {
  const namespace = uniqueNamespace();
  let outdir: string;
  let proxy: WsTcpProxy;
  let receivers: Record<'proto' | 'json', OtlpReceiver>;
  let mf: Miniflare;

  beforeAll(async () => {
    const dbUrl = new URL(TEST_DATABASE_URL ?? '');
    outdir = mkdtempSync(join(tmpdir(), 'authsvc-worker-otel-'));
    let build;
    [build, proxy, receivers] = await Promise.all([
      buildWorker(outdir),
      startWsTcpProxy({ allow: [`${dbUrl.hostname}:${dbUrl.port || '5432'}`] }),
      Promise.all([startOtlpReceiver(), startOtlpReceiver()]).then(([proto, json]) => ({ proto, json })),
    ]);
    const bindings = {
      AUTHSVC_SITE_URL: 'http://localhost:3000',
      AUTHSVC_API_EXTERNAL_URL: 'http://localhost:8787',
      AUTHSVC_DB_DRIVER: 'postgres',
      DATABASE_URL: TEST_DATABASE_URL ?? '',
      DB_NAMESPACE: namespace,
      AUTHSVC_DB_WS_PROXY: proxy.address,
      AUTHSVC_DB_WS_SECURE: 'false',
      AUTHSVC_JWT_SECRET: JWT_SECRET,
      AUTHSVC_SMTP_ADMIN_EMAIL: 'auth@example.com',
      AUTHSVC_SMTP_HOST: '127.0.0.1',
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_LOG_LEVEL: 'error',
      AUTHSVC_TRACING_ENABLED: 'true',
      OTEL_RESOURCE_ATTRIBUTES: 'cloud.provider=cloudflare',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k-123',
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
        { ...worker, name: 'proto', bindings: { ...bindings, OTEL_EXPORTER_OTLP_ENDPOINT: receivers.proto.url } },
        {
          ...worker,
          name: 'json',
          bindings: {
            ...bindings,
            OTEL_EXPORTER_OTLP_ENDPOINT: receivers.json.url,
            OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          },
        },
      ],
    });
    await mf.ready;
  }, 120_000);

  afterAll(async () => {
    await mf?.dispose();
    await Promise.all([proxy?.close(), receivers?.proto.close(), receivers?.json.close()]);
    if (outdir) rmSync(outdir, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`);
    await client.end();
  });

  test.each(['proto', 'json'] as const)(
    '%s: a span per request with the route, its parameters and the incoming traceparent',
    async (name) => {
      const w = await mf.getWorker(name);
      const receiver = receivers[name];
      const signup = await w.fetch('http://localhost/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `${name}@example.com`, password: PASSWORD }),
      });
      expect(signup.status).toBe(200);
      const session = (await signup.json()) as { access_token: string; refresh_token: string; user: { id: string } };
      const admin = await new SignJWT({ role: 'service_role' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(JWT_SECRET));
      const traceId = name === 'proto' ? '0af7651916cd43dd8448eb211c80319c' : '1bf7651916cd43dd8448eb211c80319d';
      const got = await w.fetch(`http://localhost/auth/v1/admin/users/${session.user.id}`, {
        headers: { authorization: `Bearer ${admin}`, traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      });
      expect(got.status).toBe(200);
      await got.text();

      const span = await receiver.waitFor(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === 2));
      expect(span).toMatchObject({
        name: 'GET /auth/v1/admin/users/{user_id}',
        kind: 2,
        parentSpanId: 'b7ad6b7169203331',
      });
      expect(span.attributes).toMatchObject({
        'http.method': 'GET',
        'http.route': '/auth/v1/admin/users/{user_id}',
        'http.route.params.user_id': session.user.id,
        'http.status_code': 200,
      });
      expect(span.resource).toMatchObject({
        'service.name': 'authsvc',
        'auth.version': VERSION,
        'cloud.provider': 'cloudflare',
      });
      // Child spans without async context (no nodejs_als): the statement that read the user, in
      // the same trace, and the sign-up's password hash and insert.
      const children = receiver.spans.filter((s) => s.parentSpanId === span.spanId);
      expect(children.map((s) => s.traceId)).toEqual(children.map(() => traceId));
      expect(children.find((s) => s.attributes['db.query.summary'] === 'SELECT users')).toMatchObject({
        kind: 3,
        name: 'authsvc_user_by_id',
      });
      const signupSpan = await receiver.waitFor(() => receiver.spans.find((s) => s.name === 'POST /signup'));
      expect(signupSpan.attributes['http.status_code']).toBe(200);
      const underSignup = receiver.spans.filter((s) => s.parentSpanId === signupSpan.spanId);
      expect(underSignup.map((s) => s.name)).toContain('password.hash');
      expect(underSignup.map((s) => s.attributes['db.query.summary'])).toEqual(
        expect.arrayContaining(['BEGIN', 'WITH users', 'COMMIT']),
      );
      expect(receiver.requests[0]).toMatchObject({
        path: '/v1/traces',
        contentType: name === 'json' ? 'application/json' : 'application/x-protobuf',
      });
      expect(receiver.requests[0]!.headers['x-collector-key']).toBe('k-123');
      for (const secret of [PASSWORD, JWT_SECRET, session.access_token, session.refresh_token, admin]) {
        for (const raw of receiver.raw) expect(raw.includes(secret)).toBe(false);
      }
    },
  );
});
