// The runtime smoke suite on Node (the real server process, local mode, log mailer).
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ServerProcess, cleanupProcesses, startServer } from '../helpers/server.ts';
import { runSmoke } from '../helpers/smoke.ts';

let server: ServerProcess;
beforeAll(async () => {
  server = await startServer({ env: { DATABASE_URL: 'memory://' } });
});
afterAll(async () => {
  await cleanupProcesses();
});

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
function post(
  path: string,
  body: string,
  chunked: boolean,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = String(Buffer.byteLength(body));
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', (err) =>
      (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET'
        ? undefined
        : reject(err),
    );
    for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.slice(i, i + 64 * 1024));
    req.end();
  });
}

test('request bodies over 1 MiB get 413 whether declared or chunked; small chunked bodies are read', async () => {
  const big = JSON.stringify({
    email: 'big@example.com',
    password: 'secret-pw-1',
    data: { blob: 'x'.repeat(1024 * 1024) },
  });
  for (const chunked of [false, true]) {
    const res = await post('/signup', big, chunked);
    expect({ status: res.status, code: res.json.error_code }).toEqual({
      status: 413,
      code: 'request_entity_too_large',
    });
  }
  const small = await post(
    '/token?grant_type=password',
    JSON.stringify({ email: 'nobody@example.com', password: 'x' }),
    true,
  );
  expect({ status: small.status, code: small.json.error_code }).toEqual({ status: 400, code: 'invalid_credentials' });
});

test('API_MAX_REQUEST_DURATION: a client that stalls mid-body gets 504 request_timeout instead of holding the request open', async () => {
  const limited = await startServer({ env: { DATABASE_URL: 'memory://', AUTHSVC_API_MAX_REQUEST_DURATION: '1' } });
  const url = new URL(limited.url);
  const started = Date.now();
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
      if (text.includes('}')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    // A chunked body that starts and then never goes on.
    socket.write(
      'POST /signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"ema\r\n',
    );
  });
  const elapsed = Date.now() - started;
  expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 504 Gateway Timeout');
  expect(JSON.parse(answer.slice(answer.indexOf('{')))).toMatchObject({
    code: 504,
    error_code: 'request_timeout',
    msg: 'Processing this request timed out, please retry after a moment.',
  });
  // Answered at the limit, not at the socket's own timeouts (minutes).
  expect(elapsed).toBeLessThan(10_000);
});

/**
 * Writes a request with a body of `size` bytes over a raw socket as fast as the socket takes it,
 * and returns everything the server answered before closing (the request asks it to). Nothing is
 * swallowed: a server that closes while the client is still writing (EPIPE, a reset) fails.
 */
function rawPost(path: string, size: number, chunked: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
    });
    socket.on('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`${err.code ?? err.message} after ${text.length} bytes of answer`)),
    );
    socket.on('close', () => resolve(text));
    const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`;
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`,
    );
    const piece = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        const n = Math.min(piece.length, size - sent);
        const data = chunked
          ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece.subarray(0, n), Buffer.from('\r\n')])
          : piece.subarray(0, n);
        sent += n;
        if (!socket.write(data)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (chunked) socket.write('0\r\n\r\n');
    };
    pump();
  });
}

test('a body over 1 MiB gets its 413 answer, and the server reads (and drops) up to 8 MiB more first so the client is not cut off mid-write (issue 13, item 5)', async () => {
  for (let i = 0; i < 5; i++) {
    for (const chunked of [true, false]) {
      const answer = await rawPost('/signup', 4 * 1024 * 1024, chunked).catch(
        (err: Error) => `${chunked ? 'chunked' : 'declared'}: ${err.message}`,
      );
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      expect(JSON.parse(answer.slice(answer.indexOf('{')))).toEqual({
        code: 413,
        error_code: 'request_entity_too_large',
        msg: 'Request body too large (max 1048576 bytes)',
      });
    }
  }
});
