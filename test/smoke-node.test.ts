// The runtime smoke suite on Node (the real server process, local mode, log mailer).
import { request } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ServerProcess, cleanupProcesses, startServer } from './helpers/server.ts';
import { runSmoke } from './helpers/smoke.ts';

let server: ServerProcess;
beforeAll(async () => { server = await startServer({ env: { DATABASE_URL: 'memory://' } }); });
afterAll(async () => { await cleanupProcesses(); });

test('smoke: signup, email, verify, sign-in, user, refresh, logout, error body', async () => {
  await runSmoke({
    baseUrl: server.url,
    async lastMail(email) {
      const line = await server.waitForLine((l) => l.includes('email (log transport') && l.includes(email), 10_000);
      const j = JSON.parse(line) as { link: string; code: string };
      return { link: j.link, code: j.code };
    },
  });
});

/** POSTs `body` to the real server, chunked (no Content-Length) or declared. */
function post(path: string, body: string, chunked: boolean): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = String(Buffer.byteLength(body));
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', (err) => (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err));
    for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.slice(i, i + 64 * 1024));
    req.end();
  });
}

test('request bodies over 1 MiB get 413 whether declared or chunked; small chunked bodies are read', async () => {
  const big = JSON.stringify({ email: 'big@example.com', password: 'secret-pw-1', data: { blob: 'x'.repeat(1024 * 1024) } });
  for (const chunked of [false, true]) {
    const res = await post('/signup', big, chunked);
    expect({ status: res.status, code: res.json.error_code }).toEqual({ status: 413, code: 'request_entity_too_large' });
  }
  const small = await post('/token?grant_type=password', JSON.stringify({ email: 'nobody@example.com', password: 'x' }), true);
  expect({ status: small.status, code: small.json.error_code }).toEqual({ status: 400, code: 'invalid_credentials' });
});

test('API_MAX_REQUEST_DURATION: a client that stalls mid-body gets 504 request_timeout instead of holding the request open', async () => {
  const { connect } = await import('node:net');
  const limited = await startServer({ env: { DATABASE_URL: 'memory://', AUTHSVC_API_MAX_REQUEST_DURATION: '1' } });
  const url = new URL(limited.url);
  const started = Date.now();
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => { text += d; if (text.includes('}')) { socket.destroy(); resolve(text); } });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    // A chunked body that starts and then never goes on.
    socket.write('POST /signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"ema\r\n');
  });
  const elapsed = Date.now() - started;
  expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 504 Gateway Timeout');
  expect(JSON.parse(answer.slice(answer.indexOf('{')))).toMatchObject({
    code: 504, error_code: 'request_timeout', msg: 'Processing this request timed out, please retry after a moment.',
  });
  // Answered at the limit, not at the socket's own timeouts (minutes).
  expect(elapsed).toBeLessThan(10_000);
});
