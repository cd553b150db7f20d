// GET /health, /settings and the discovery documents (routes/health.ts).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_JWT_ISSUER: 'http://localhost:9999/auth/v1' });
});
afterAll(async () => {
  await db?.close();
});

describe('GET /health and /settings', () => {
  test('health', async () => {
    const res = await t.request('GET', '/health');
    expect(await res.json()).toEqual({
      version: '0.0.0-test',
      name: 'GoTrue',
      description: 'GoTrue is a user registration and authentication API',
    });
  });

  test('settings lists every provider and reflects the configuration', async () => {
    const s = await buildTestApp(db, {
      AUTHSVC_DISABLE_SIGNUP: 'true',
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
      GOTRUE_EXTERNAL_GITHUB_ENABLED: 'true',
      GOTRUE_EXTERNAL_GITHUB_CLIENT_ID: 'id',
      GOTRUE_EXTERNAL_GITHUB_SECRET: 'sec',
      GOTRUE_EXTERNAL_GITHUB_REDIRECT_URI: 'http://localhost:9999/callback',
    });
    const body = (await (await s.request('GET', '/settings')).json()) as Record<string, any>;
    const providers = [
      'apple',
      'azure',
      'bitbucket',
      'discord',
      'facebook',
      'figma',
      'github',
      'gitlab',
      'google',
      'keycloak',
      'linkedin',
      'notion',
      'spotify',
      'slack',
      'twitch',
      'twitter',
      'workos',
      'email',
      'phone',
      'anonymous_users',
    ];
    for (const p of providers) expect(typeof body.external[p], p).toBe('boolean');
    expect(body.external).toMatchObject({
      github: true,
      google: false,
      email: true,
      phone: false,
      anonymous_users: true,
    });
    expect(body).toMatchObject({
      disable_signup: true,
      autoconfirm: true,
      mailer_autoconfirm: true,
      phone_autoconfirm: false,
    });
    expect(JSON.stringify(body)).not.toContain('sec');
  });
});

describe('discovery documents', () => {
  test('/.well-known/openid-configuration is served with the OAuth server off, cacheable for ten minutes', async () => {
    const res = await t.request('GET', '/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: 'http://localhost:9999/auth/v1',
      jwks_uri: 'http://localhost:9999/auth/v1/.well-known/jwks.json',
    });
  });

  test('/.well-known/jwks.json with only an HS256 secret lists no keys (the secret is never published)', async () => {
    const res = await t.request('GET', '/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ keys: [] });
  });
});

describe('the probes: /health/live and /health/ready', () => {
  test('live: 200 {status: "live"}, not cached, also under /auth/v1', async () => {
    for (const path of ['/health/live', '/auth/v1/health/live']) {
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({ status: 'live' });
    }
  });

  test('ready: 200 {status: "ready"} on a migrated database, also under /auth/v1', async () => {
    for (const path of ['/health/ready', '/auth/v1/health/ready']) {
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({ status: 'ready' });
    }
  });

  test('ready: 503 migrations_pending naming each version this build has and the database lacks', async () => {
    const ahead = await buildTestApp(db, {}, { migrations: [...t.deps.migrations, '9998_later', '9999_latest'] });
    const res = await ahead.request('GET', '/health/ready');
    expect(res.status).toBe(503);
    expect(res.headers.get('x-sb-error-code')).toBe('migrations_pending');
    expect(await res.json()).toMatchObject({
      code: 503,
      error_code: 'migrations_pending',
      msg: 'Database migrations not applied: 9998_later, 9999_latest',
    });
    // GoTrue's /health does not ask the database, so it does not change.
    expect((await ahead.request('GET', '/health')).status).toBe(200);
  });
});
