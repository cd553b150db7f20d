import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_REQUEST_ID_HEADER: 'X-Request-Id', AUTHSVC_LOG_LEVEL: 'info' });
});
afterAll(async () => {
  await db?.close();
});

describe('error bodies', () => {
  test('legacy shape {code, error_code, msg} with x-sb-error-code', async () => {
    const res = await t.request('POST', '/token?grant_type=password', { email: 'nobody@example.com', password: 'x' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-sb-error-code')).toBe('invalid_credentials');
    expect(await res.json()).toEqual({
      code: 400,
      error_code: 'invalid_credentials',
      msg: 'Invalid login credentials',
    });
  });

  test('X-Supabase-Api-Version 2024-01-01 (or later) selects {code, message} and is echoed', async () => {
    for (const version of ['2024-01-01', '2025-06-30']) {
      const res = await t.request(
        'POST',
        '/token?grant_type=password',
        { email: 'nobody@example.com', password: 'x' },
        { 'X-Supabase-Api-Version': version },
      );
      expect(res.headers.get('x-supabase-api-version')).toBe('2024-01-01');
      expect(res.headers.get('x-sb-error-code')).toBe('invalid_credentials');
      expect(await res.json()).toEqual({ code: 'invalid_credentials', message: 'Invalid login credentials' });
    }
    const old = await t.request('POST', '/token?grant_type=password', {}, { 'X-Supabase-Api-Version': '2023-12-31' });
    expect(old.headers.get('x-supabase-api-version')).toBeNull();
    expect(await old.json()).toMatchObject({ code: 400, error_code: 'validation_failed' });
  });

  test('weak_password in the 2024 shape carries reasons but no x-sb-error-code', async () => {
    const res = await t.request(
      'POST',
      '/signup',
      { email: 'weak@example.com', password: '123' },
      { 'X-Supabase-Api-Version': '2024-01-01' },
    );
    expect(res.status).toBe(422);
    expect(res.headers.get('x-sb-error-code')).toBeNull();
    expect(await res.json()).toEqual({
      code: 'weak_password',
      message: 'Password should be at least 6 characters.',
      weak_password: { reasons: ['length'] },
    });
  });

  test('malformed or empty JSON → 400 bad_json; wrong field types → 400 bad_json', async () => {
    for (const body of ['{"email":', '', '[1,2]', '"text"']) {
      const res = await t.request('POST', '/signup', body, { 'content-type': 'application/json' });
      expect(res.status, body).toBe(400);
      const json = (await res.json()) as Record<string, unknown>;
      expect(json.error_code).toBe('bad_json');
      expect(String(json.msg)).toMatch(/^Could not parse request body as JSON: /);
    }
    const typed = await t.request('POST', '/signup', { email: 42, password: 'secret-pw-1' });
    expect(typed.status).toBe(400);
    expect(await typed.json()).toMatchObject({ error_code: 'bad_json' });
  });

  test('JSON keys match case-insensitively, as Go decodes them', async () => {
    const res = await t.request('POST', '/token?grant_type=password', { EMAIL: 'nobody@example.com', Password: 'x' });
    expect(await res.json()).toMatchObject({ error_code: 'invalid_credentials' });
  });

  test('a body over 1 MiB → 413 request_entity_too_large, nothing written', async () => {
    const big = JSON.stringify({
      email: 'big@example.com',
      password: 'secret-pw-1',
      data: { blob: 'x'.repeat(1024 * 1024) },
    });
    const res = await t.request('POST', '/signup', big, { 'content-type': 'application/json' });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      code: 413,
      error_code: 'request_entity_too_large',
      msg: 'Request body too large (max 1048576 bytes)',
    });
    const rows = await db.orm.select().from(db.t.users);
    expect(rows.find((r) => r.email === 'big@example.com')).toBeUndefined();
  });

  test('an unknown route answers a JSON 404', async () => {
    const res = await t.request('GET', '/no/such/route');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 404, error_code: 'not_found', msg: 'Not Found' });
  });

  test('an unexpected failure is 500 unexpected_failure with error_id; the cause is logged, not sent', async () => {
    const broken = await buildTestApp(
      db,
      { AUTHSVC_LOG_LEVEL: 'info' },
      {
        hasher: {
          hash: async () => {
            throw new Error('secret-internal-detail');
          },
          verify: async () => false,
        },
      },
    );
    const res = await broken.request(
      'POST',
      '/signup',
      { email: 'boom@example.com', password: 'secret-pw-1' },
      { 'x-request-id': 'req-123' },
    );
    expect(res.status).toBe(500);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      code: 500,
      error_code: 'unexpected_failure',
      msg: 'Unexpected failure, please check server logs for more information',
    });
    expect(typeof body.error_id).toBe('string');
    expect(JSON.stringify(body)).not.toContain('secret-internal-detail');
    expect(broken.logs.some((l) => l.includes('secret-internal-detail'))).toBe(true);
  });
});

describe('request handling', () => {
  test('request id comes from REQUEST_ID_HEADER and appears in every log line of the request', async () => {
    const before = t.logs.length;
    await t.request('GET', '/health', undefined, { 'X-Request-Id': 'abc-123' });
    const lines = t.logs.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l.request_id).toBe('abc-123');
    expect(lines.at(-1)).toMatchObject({ msg: 'request completed', method: 'GET', path: '/health', status: 200 });
  });

  test('a generated request id is used when the header is absent', async () => {
    const before = t.logs.length;
    await t.request('GET', '/health');
    const line = JSON.parse(t.logs.at(-1)!) as Record<string, string>;
    expect(t.logs.length).toBeGreaterThan(before);
    expect(line.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('CORS preflight is answered as GoTrue does, echoing the origin with credentials', async () => {
    const res = await t.request('OPTIONS', '/token', undefined, {
      origin: 'http://app.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'apikey, authorization, content-type, x-client-info, x-supabase-api-version',
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['apikey', 'authorization', 'content-type', 'x-client-info', 'x-supabase-api-version'])
      expect(allowed).toContain(h);
    const get = await t.request('GET', '/health', undefined, { origin: 'http://app.example' });
    expect(get.headers.get('access-control-expose-headers')).toContain('X-Total-Count');
  });

  test('an apikey header is accepted, and trailing slashes route the same', async () => {
    const res = await t.request('GET', '/settings/', undefined, { apikey: 'some-anon-key' });
    expect(res.status).toBe(200);
  });
});

describe('the /auth/v1 prefix supabase-js uses', () => {
  test('serves the same routes', async () => {
    const res = await t.request('GET', '/auth/v1/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: 'GoTrue' });
    const err = await t.request('POST', '/auth/v1/token?grant_type=password', {
      email: 'nobody@example.com',
      password: 'x',
    });
    expect(await err.json()).toMatchObject({ error_code: 'invalid_credentials' });
    expect((await t.request('GET', '/auth/v2/health')).status).toBe(404);
  });
});
