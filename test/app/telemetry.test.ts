// Issue 16: traces and metrics from the real server process (node bin/authsvc.js) to a local
// OTLP/HTTP receiver and a Prometheus scrape. On Postgres when TEST_DATABASE_URL is set.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeTwilio, twilioEnv } from '../helpers/fake-twilio.ts';
import { freePort } from '../helpers/free-port.ts';
import { type OtlpReceiver, type ReceivedSpan, parsePrometheus, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { REPO_ROOT, type ServerProcess, cleanupProcesses, startServer } from '../helpers/server.ts';

const VERSION = (JSON.parse(readFileSync(`${REPO_ROOT}/package.json`, 'utf8')) as { version: string }).version;
const JWT_SECRET = 'telemetry-test-jwt-secret-0123456789abcdef';
const PASSWORD = 'Tr4ce-secret-pw!';
const COLLECTOR_SECRET = 'collector-api-key-6b1f';
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'memory://';

const RESEND_KEY = 're_telemetry_test_key_9f2c';
const NAMESPACE = `otel_${process.pid}`;

// On Postgres the server is not in local mode: it needs its settings, and mail goes to a local
// stand-in for Resend (the log transport is local mode's).
let mailSink: OtlpReceiver;
let baseEnv: Record<string, string>;
beforeAll(async () => {
  mailSink = await startOtlpReceiver();
  baseEnv = {
    DATABASE_URL,
    AUTHSVC_JWT_SECRET: JWT_SECRET,
    AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    REQUEST_ID_HEADER: 'X-Request-Id',
    AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '0',
    AUTHSVC_SITE_URL: 'http://localhost:3000',
    ...(process.env.TEST_DATABASE_URL
      ? {
          AUTHSVC_DB_NAMESPACE: NAMESPACE,
          AUTHSVC_DB_DRIVER: 'postgres',
          AUTHSVC_API_EXTERNAL_URL: 'http://localhost:9999',
          AUTHSVC_SMTP_ADMIN_EMAIL: 'admin@example.com',
          AUTHSVC_RESEND_API_KEY: RESEND_KEY,
          AUTHSVC_RESEND_BASE_URL: mailSink.url,
          AUTHSVC_RATE_LIMIT_HEADER: 'X-Forwarded-For',
        }
      : {}),
  };
});
afterAll(async () => {
  await cleanupProcesses();
  await mailSink?.close();
  if (process.env.TEST_DATABASE_URL) {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    await client.query(`drop schema if exists ${NAMESPACE} cascade`);
    await client.end();
  }
});

async function call(
  server: ServerProcess,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

const adminToken = () =>
  new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));

/** Sign-up, sign-in, a failed sign-in, a refresh and its replay (reuse detection), a recovery email. */
async function traffic(server: ServerProcess, email: string) {
  const signup = await call(server, 'POST', '/signup', { email, password: PASSWORD });
  expect(signup.status).toBe(200);
  const signin = await call(server, 'POST', '/token?grant_type=password', { email, password: PASSWORD });
  expect(signin.status).toBe(200);
  const failed = await call(server, 'POST', '/token?grant_type=password', { email, password: 'wrong-password-1' });
  expect(failed.status).toBe(400);
  const refreshToken = signin.json.refresh_token as string;
  const refreshed = await call(server, 'POST', '/token?grant_type=refresh_token', { refresh_token: refreshToken });
  expect(refreshed.status).toBe(200);
  const reused = await call(server, 'POST', '/token?grant_type=refresh_token', { refresh_token: refreshToken });
  expect(reused.json.error_code).toBe('refresh_token_already_used');
  const recover = await call(server, 'POST', '/recover', { email });
  expect(recover.status).toBe(200);
  // A second recovery email within SMTP_MAX_FREQUENCY: refused (429).
  const again = await call(server, 'POST', '/recover', { email });
  expect({ status: again.status, code: again.json.error_code }).toEqual({
    status: 429,
    code: 'over_email_send_rate_limit',
  });
  return {
    userId: (signup.json.user as { id: string } | undefined)?.id ?? (signup.json.id as string),
    secrets: [
      PASSWORD,
      'wrong-password-1',
      RESEND_KEY,
      JWT_SECRET,
      COLLECTOR_SECRET,
      refreshToken,
      signin.json.access_token as string,
      refreshed.json.refresh_token as string,
      refreshed.json.access_token as string,
    ],
  };
}

function expectNoSecret(texts: string[], secrets: string[]) {
  for (const s of secrets) {
    expect(s.length).toBeGreaterThan(8);
    for (const t of texts) expect(t.includes(s), `a secret appears in: ${t.slice(0, 200)}`).toBe(false);
  }
}

describe('traces (and pushed metrics) over OTLP/HTTP, http/protobuf', () => {
  let receiver: OtlpReceiver;
  let server: ServerProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startServer({
      env: {
        ...baseEnv,
        AUTHSVC_TRACING_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${COLLECTOR_SECRET}`,
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=auth',
        AUTHSVC_DEBUG: 'true',
        AUTHSVC_LOG_LEVEL: 'debug',
        AUTHSVC_METRICS_ENABLED: 'true',
        OTEL_METRIC_EXPORT_INTERVAL: '500', // metrics pushed as OTLP http/protobuf too
      },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  test('a span per request with the parametrised route, its parameters, the request id, the incoming traceparent; child spans; no secrets', async () => {
    const { userId, secrets } = await traffic(server, 'traced@example.com');
    const admin = await adminToken();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const got = await call(server, 'GET', `/admin/users/${userId}`, undefined, {
      authorization: `Bearer ${admin}`,
      traceparent: `00-${traceId}-${parentId}-01`,
      'x-request-id': 'req-telemetry-1',
    });
    expect(got.status).toBe(200);
    const prefixed = await call(server, 'GET', `/auth/v1/admin/users/${userId}`, undefined, {
      authorization: `Bearer ${admin}`,
    });
    expect(prefixed.status).toBe(200);

    const span = await receiver.waitFor(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === 2));
    expect(span.name).toBe('GET /admin/users/{user_id}');
    expect(span.parentSpanId).toBe(parentId);
    expect(span.attributes).toMatchObject({
      'http.method': 'GET',
      'http.request.method': 'GET',
      'http.route': '/admin/users/{user_id}',
      'http.route.params.user_id': userId,
      'http.status_code': 200,
      'http.response.status_code': 200,
      request_id: 'req-telemetry-1',
    });
    expect(span.resource).toMatchObject({
      'service.name': 'authsvc',
      'auth.version': VERSION,
      'deployment.environment': 'test',
      team: 'auth',
    });

    const v1 = await receiver.waitFor(() =>
      receiver.spans.find((s) => s.attributes['http.route'] === '/auth/v1/admin/users/{user_id}'),
    );
    expect(v1.attributes['http.route.params.user_id']).toBe(userId);

    // Statements are children of the request span, named by operation and table only.
    const children = await receiver.waitFor(() => {
      const c = receiver.spans.filter((s) => s.parentSpanId === span.spanId);
      return c.length > 0 ? c : undefined;
    });
    // (On Postgres the user is read by a prepared statement: its name is the span's.)
    const statement = children.find((s) => s.attributes['db.query.summary'] === 'SELECT users');
    expect(statement?.name).toMatch(/^(SELECT users|authsvc_[a-z_]+)$/);
    expect(statement?.kind).toBe(3);
    expect(statement?.attributes).toMatchObject({
      'db.operation.name': 'SELECT',
      'db.collection.name': 'users',
      'db.system.name': 'postgresql',
    });

    // A password sign-in shows where its time went: the hash check and its statements.
    const signIns = receiver.spans.filter((s) => s.name === 'POST /token' && s.attributes['http.status_code'] === 200);
    expect(signIns.length).toBeGreaterThan(0);
    const under = (parent: ReceivedSpan) =>
      receiver.spans.filter((s) => s.parentSpanId === parent.spanId).map((s) => s.name);
    await receiver.waitFor(() => signIns.some((p) => under(p).includes('password.verify')) || undefined);
    const signupSpan = receiver.spans.find((s) => s.name === 'POST /signup')!;
    await receiver.waitFor(() => under(signupSpan).includes('password.hash') || undefined);
    const signupStatements = receiver.spans
      .filter((s) => s.parentSpanId === signupSpan.spanId)
      .map((s) => s.attributes['db.query.summary']);
    expect(signupStatements.some((n) => n === 'INSERT users' || n === 'WITH users')).toBe(true);

    // The collector got our header; nothing secret in any span name, attribute or log line.
    await receiver.waitFor(() => receiver.requests.some((r) => r.path === '/v1/metrics') || undefined);
    expect(
      receiver.requests.every(
        (r) => r.headers.authorization === `Bearer ${COLLECTOR_SECRET}` && r.contentType === 'application/x-protobuf',
      ),
    ).toBe(true);
    const spanTexts = receiver.spans.flatMap((s) => [
      s.name,
      ...Object.entries(s.attributes).map(([k, v]) => `${k}=${String(v)}`),
    ]);
    expectNoSecret([...spanTexts, ...receiver.raw, server.output()], [...secrets, admin]);
    expect(server.output()).toContain('otel: '); // DEBUG=true: the SDK's diagnostics go through our logger
  });

  test('concurrent requests: every child span hangs under its own request span, in its trace', async () => {
    // The parent travels with each request's deps, not in an async context: interleaved requests
    // (plain statements, and refreshes inside transactions) must not pick up each other's spans.
    const admin = await adminToken();
    const email = 'concurrent@example.com';
    const signup = await call(server, 'POST', '/signup', { email, password: PASSWORD });
    expect(signup.status).toBe(200);
    const userId = (signup.json.user as { id: string }).id;
    const sessions = await Promise.all(
      Array.from({ length: 6 }, () =>
        call(server, 'POST', '/token?grant_type=password', { email, password: PASSWORD }),
      ),
    );
    const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
    const reads = Array.from({ length: 16 }, (_, i) => `${hex(0xa11ce, 8)}${hex(i + 1, 24)}`);
    const refreshes = sessions.map((_, i) => `${hex(0xb0b, 8)}${hex(i + 1, 24)}`);
    const signups = Array.from({ length: 6 }, (_, i) => `${hex(0xc0de, 8)}${hex(i + 1, 24)}`);
    const answers = await Promise.all([
      ...reads.map((traceId) =>
        call(server, 'GET', `/admin/users/${userId}`, undefined, {
          authorization: `Bearer ${admin}`,
          traceparent: `00-${traceId}-${hex(7, 16)}-01`,
        }),
      ),
      ...refreshes.map((traceId, i) =>
        call(
          server,
          'POST',
          '/token?grant_type=refresh_token',
          { refresh_token: sessions[i]!.json.refresh_token },
          {
            traceparent: `00-${traceId}-${hex(7, 16)}-01`,
          },
        ),
      ),
      ...signups.map((traceId, i) =>
        call(
          server,
          'POST',
          '/signup',
          { email: `concurrent-${i}@example.com`, password: PASSWORD },
          {
            traceparent: `00-${traceId}-${hex(7, 16)}-01`,
          },
        ),
      ),
    ]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));

    for (const traceId of [...reads, ...refreshes, ...signups]) {
      const root = await receiver.waitFor(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === 2));
      const inTrace = await receiver.waitFor(() => {
        const spans = receiver.spans.filter((s) => s.traceId === traceId && s !== root);
        return spans.length > 0 ? spans : undefined;
      });
      // Every other span of the trace is a direct child of the request span...
      expect(inTrace.map((s) => s.parentSpanId)).toEqual(inTrace.map(() => root.spanId));
      // ...and the request span's children are all in its trace.
      const children = receiver.spans.filter((s) => s.parentSpanId === root.spanId);
      expect(children.map((s) => s.traceId)).toEqual(children.map(() => traceId));
      const summaries = children.map((s) => s.attributes['db.query.summary']);
      if (reads.includes(traceId)) expect(summaries).toContain('SELECT users');
      else if (refreshes.includes(traceId)) expect(summaries).toContain('WITH refresh_tokens');
      else {
        // A sign-up's statements run in a transaction (on Postgres, on a connection of its own:
        // BEGIN and COMMIT are statements there; PGlite opens its transactions itself).
        expect([...summaries, ...children.map((s) => s.name)]).toEqual(
          expect.arrayContaining(['password.hash', 'WITH users']),
        );
        if (process.env.TEST_DATABASE_URL) expect(summaries).toEqual(expect.arrayContaining(['BEGIN', 'COMMIT']));
      }
    }
  });
});

describe('sampling and the per-signal OTLP variables', () => {
  test('OTEL_TRACES_SAMPLER=parentbased_traceidratio at 0: only requests whose caller sampled them; traces to their own endpoint', async () => {
    const general = await startOtlpReceiver();
    const traces = await startOtlpReceiver();
    const server = await startServer({
      env: {
        ...baseEnv,
        AUTHSVC_TRACING_ENABLED: 'true',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: general.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-general=g',
        // The signal's own variables win, and its endpoint is used as given (no /v1/traces added).
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${traces.url}/collector/traces`,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-traces=t',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
    try {
      const sampledTrace = '5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e';
      const unsampledTrace = '0dd0dd0dd0dd0dd0dd0dd0dd0dd0dd01';
      expect(
        (await call(server, 'GET', '/settings', undefined, { traceparent: `00-${sampledTrace}-00f067aa0ba902b7-01` }))
          .status,
      ).toBe(200);
      expect(
        (await call(server, 'GET', '/settings', undefined, { traceparent: `00-${unsampledTrace}-00f067aa0ba902b7-00` }))
          .status,
      ).toBe(200);
      expect(
        (await call(server, 'POST', '/signup', { email: 'sampled-out@example.com', password: PASSWORD })).status,
      ).toBe(200);
      const span = await traces.waitFor(() => traces.spans.find((s) => s.traceId === sampledTrace));
      expect(span).toMatchObject({ name: 'GET /settings', kind: 2, parentSpanId: '00f067aa0ba902b7' });
      // Give anything else time to arrive: the ratio-0 root and the unsampled parent record nothing.
      await new Promise((r) => setTimeout(r, 1000));
      expect(traces.spans.map((s) => s.traceId)).toEqual([sampledTrace]);
      expect(traces.requests.length).toBeGreaterThan(0);
      for (const r of traces.requests) {
        expect({
          path: r.path,
          type: r.contentType,
          traces: r.headers['x-traces'],
          general: r.headers['x-general'],
        }).toEqual({ path: '/collector/traces', type: 'application/json', traces: 't', general: 'g' });
      }
      expect(general.requests).toEqual([]);
    } finally {
      await server.stop();
      await general.close();
      await traces.close();
    }
  });
});

describe('the batch processor and the exporter settings', () => {
  test('OTEL_EXPORTER_OTLP_COMPRESSION=gzip: bodies are gzipped; beyond OTEL_BSP_MAX_QUEUE_SIZE spans are dropped and the log says how many', async () => {
    // A collector that takes a second to answer: while the first batch is out, the queue (2) fills.
    const slow = await startOtlpReceiver({ delayMs: 1000 });
    const server = await startServer({
      env: {
        ...baseEnv,
        AUTHSVC_TRACING_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: slow.url,
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        OTEL_BSP_MAX_QUEUE_SIZE: '2',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
    });
    try {
      for (let i = 0; i < 2; i++) expect((await call(server, 'GET', '/settings')).status).toBe(200);
      await slow.waitFor(() => slow.requests.length > 0 || undefined);
      await Promise.all(
        Array.from({ length: 20 }, async () => expect((await call(server, 'GET', '/settings')).status).toBe(200)),
      );
      // The count is logged when the next span finds room in the queue again.
      await new Promise((r) => setTimeout(r, 2500));
      expect((await call(server, 'GET', '/settings')).status).toBe(200);
      const line = await slow.waitFor(() =>
        server.lines.find((l) => /Dropped \d+ spans because maxQueueSize reached/.test(l)),
      );
      expect(Number(/Dropped (\d+) spans/.exec(line)![1])).toBeGreaterThanOrEqual(10);
      expect(slow.requests[0]!.headers['content-encoding']).toBe('gzip');
      expect(slow.spans.filter((s) => s.name === 'GET /settings').length).toBeGreaterThanOrEqual(2);
    } finally {
      await server.stop();
      await slow.close();
    }
  });
});

describe('OTLP http/json: traces and pushed metrics', () => {
  test('spans and metrics arrive as OTLP/JSON', async () => {
    const receiver = await startOtlpReceiver();
    const server = await startServer({
      env: {
        ...baseEnv,
        AUTHSVC_TRACING_ENABLED: 'true',
        AUTHSVC_METRICS_ENABLED: 'true',
        AUTHSVC_METRICS_EXPORTER: 'opentelemetry',
        OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_METRIC_EXPORT_INTERVAL: '500',
        OTEL_SERVICE_NAME: 'auth-json',
      },
    });
    try {
      await traffic(server, 'json@example.com');
      const span = await receiver.waitFor(() => receiver.spans.find((s) => s.name === 'POST /signup'));
      expect(span.attributes).toMatchObject({ 'http.route': '/signup', 'http.status_code': 200 });
      expect(span.resource).toMatchObject({ 'service.name': 'auth-json', 'auth.version': VERSION });
      await receiver.waitFor(
        () =>
          [
            'http.server.request.duration',
            'auth.signups',
            'auth.signins',
            'auth.refresh_token.reuse_detections',
            'process.cpu.time',
          ].every((n) => receiver.metricNames.has(n)) || undefined,
      );
      expect(receiver.requests.some((r) => r.path === '/v1/metrics' && r.contentType.includes('json'))).toBe(true);
    } finally {
      await server.stop();
      await receiver.close();
    }
  });
});

async function scrape(port: number): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${port}/`);
  expect(res.status).toBe(200);
  return parsePrometheus(await res.text());
}

describe('Prometheus exporter on its own listener', () => {
  test('counters move by the expected amounts after a sign-up, sign-ins, a refresh, a reuse detection and SMS sends', async () => {
    const port = await freePort();
    const twilio = await startFakeTwilio();
    const server = await startServer({
      env: {
        ...baseEnv,
        ...twilioEnv(twilio.base),
        AUTHSVC_METRICS_ENABLED: 'true',
        AUTHSVC_METRICS_EXPORTER: 'prometheus',
        OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
        OTEL_EXPORTER_PROMETHEUS_PORT: String(port),
      },
    });
    try {
      const before = await scrape(port);
      await traffic(server, 'prom@example.com');
      // One text Twilio takes, one it refuses (the send fails: 500 sms_send_failed).
      expect((await call(server, 'POST', '/otp', { phone: '15550001111' })).status).toBe(200);
      twilio.answer = { status: 400, body: { code: 21211, message: 'Invalid To number' } };
      const refused = await call(server, 'POST', '/otp', { phone: '15550002222' });
      expect(refused.json.error_code).toBe('sms_send_failed');
      expect(twilio.texts.map((t) => t.to)).toEqual(['15550001111', '15550002222']);
      const after = await scrape(port);
      const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
      expect({
        signups: delta('auth_signups_total{auth_provider="email"}'),
        signinOk: delta('auth_signins_total{auth_method="password",auth_outcome="success"}'),
        signinFailed: delta('auth_signins_total{auth_method="password",auth_outcome="failure"}'),
        refreshOk: delta('auth_refreshes_total{auth_outcome="success"}'),
        refreshFailed: delta('auth_refreshes_total{auth_outcome="failure"}'),
        reuse: delta('auth_refresh_token_reuse_detections_total'),
        emails: delta('auth_emails_total{auth_outcome="sent"}'),
        refusals: delta('auth_rate_limit_refusals_total{error_code="over_email_send_rate_limit"}'),
        smsSent: delta('auth_sms_total{auth_outcome="sent"}'),
        smsFailed: delta('auth_sms_total{auth_outcome="failed"}'),
      }).toEqual({
        signups: 1,
        signinOk: 1,
        signinFailed: 1,
        refreshOk: 1,
        refreshFailed: 1,
        reuse: 1,
        emails: 1,
        refusals: 1,
        smsSent: 1,
        smsFailed: 1,
      });
      const tokenCount = [...after]
        .filter(([k]) => k.startsWith('http_server_request_duration_count{') && k.includes('http_route="/token"'))
        .reduce((n, [, v]) => n + v, 0);
      expect(tokenCount).toBe(4);
      expect(
        after.get(
          'http_server_request_duration_count{http_request_method="POST",http_response_status_class="2xx",http_route="/signup"}',
        ),
      ).toBe(1);
      const names = [...after.keys()].map((k) => k.replace(/\{.*/, ''));
      for (const n of [
        'nodejs_eventloop_delay_p99',
        'v8js_memory_heap_used',
        'v8js_gc_duration_count',
        'process_cpu_time_total',
        'process_memory_usage',
      ]) {
        expect(names, n).toContain(n);
      }
      if (process.env.TEST_DATABASE_URL) {
        expect(names).toContain('db_client_connection_count');
        expect(names).toContain('db_client_connection_pending_requests');
      }
    } finally {
      await server.stop();
      await twilio.close();
    }
  });
});

describe('disabled (the default)', () => {
  test('no metrics listener, no export, no SDK module loaded', async () => {
    const receiver = await startOtlpReceiver();
    const port = await freePort();
    const server = await startServer({
      env: {
        ...baseEnv,
        OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
        OTEL_EXPORTER_PROMETHEUS_PORT: String(port),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        NODE_OPTIONS: `--import ${REPO_ROOT}/test/helpers/record-modules.mjs`,
      },
    });
    try {
      await traffic(server, 'quiet@example.com');
      const refused = await new Promise<boolean>((done) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          done(false);
        });
        s.once('error', () => done(true));
      });
      expect(refused).toBe(true);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.requests).toEqual([]);
      const loaded = server.stderr
        .filter((l) => l.startsWith('module-loaded '))
        .map((l) => l.slice('module-loaded '.length));
      expect(loaded.length).toBeGreaterThan(5);
      const sdk = loaded.filter(
        (u) =>
          /telemetry-node|@opentelemetry\/(sdk|exporter|resources|core|context)/.test(u) ||
          (u.startsWith('file:') &&
            /class BatchSpanProcessorBase|class PrometheusExporter|class MeterProvider\b/.test(
              readFileSync(new URL(u), 'utf8'),
            )),
      );
      expect(sdk).toEqual([]);
    } finally {
      await server.stop();
      await receiver.close();
    }
  });
});
