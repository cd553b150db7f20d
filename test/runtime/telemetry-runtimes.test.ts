// Issue 16 under Bun and Deno (the command lines of `npm run start:bun` / `start:deno`): spans
// reach a local OTLP/HTTP receiver with their route attributes and child spans, and the
// Prometheus listener answers with the request and runtime metrics.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { freePort } from '../helpers/free-port.ts';
import { parsePrometheus, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { REPO_ROOT, cleanupProcesses, startServer } from '../helpers/server.ts';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  scripts: Record<string, string>;
};

function scriptCommand(script: string): string[] {
  const [bin, ...args] = (pkg.scripts[script] ?? '').split(/\s+/);
  if (!bin) throw new Error(`package.json has no script ${script}`);
  return [join(REPO_ROOT, 'node_modules/.bin', bin), ...args.map((a) => (a.endsWith('.ts') ? join(REPO_ROOT, a) : a))];
}

afterAll(async () => {
  await cleanupProcesses();
});

describe.each([
  { runtime: 'bun', command: scriptCommand('start:bun') },
  { runtime: 'deno', command: scriptCommand('start:deno') },
])('$runtime', ({ command }) => {
  test('traces to a local OTLP receiver and metrics on the Prometheus listener', async () => {
    const receiver = await startOtlpReceiver();
    const metricsPort = await freePort();
    const server = await startServer({
      command,
      env: {
        DATABASE_URL: 'memory://',
        AUTHSVC_MAILER_AUTOCONFIRM: 'true',
        AUTHSVC_TRACING_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        AUTHSVC_METRICS_ENABLED: 'true',
        AUTHSVC_METRICS_EXPORTER: 'prometheus',
        OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
        OTEL_EXPORTER_PROMETHEUS_PORT: String(metricsPort),
      },
    });
    try {
      const res = await fetch(`${server.url}/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'rt@example.com', password: 'Runtime-pw-1' }),
      });
      expect(res.status).toBe(200);
      const span = await receiver.waitFor(() => receiver.spans.find((s) => s.name === 'POST /signup'));
      expect(span.attributes).toMatchObject({
        'http.route': '/signup',
        'http.method': 'POST',
        'http.status_code': 200,
      });
      expect(span.resource).toMatchObject({ 'service.name': 'authsvc', 'auth.version': pkg.version });
      await receiver.waitFor(
        () => receiver.spans.some((s) => s.parentSpanId === span.spanId && s.name === 'password.hash') || undefined,
      );

      const scrape = parsePrometheus(await (await fetch(`http://127.0.0.1:${metricsPort}/`)).text());
      expect(scrape.get('auth_signups_total{auth_provider="email"}')).toBe(1);
      expect(
        scrape.get(
          'http_server_request_duration_count{http_request_method="POST",http_response_status_class="2xx",http_route="/signup"}',
        ),
      ).toBe(1);
      expect([...scrape.keys()].some((k) => k.startsWith('process_cpu_time_total'))).toBe(true);
    } finally {
      await server.stop();
      await receiver.close();
    }
  });
});
