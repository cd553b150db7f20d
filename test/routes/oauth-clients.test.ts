// OAuth clients of authsvc's OAuth 2.1 server (routes/oauth-clients.ts): the admin API
// (/admin/oauth/clients through auth-js's admin.oauth.*: create, get, list, update, regenerate,
// delete, GoTrue's validation messages) and dynamic registration (/oauth/clients/register), with
// security review 2026-12-01's L2 (https-only client URIs) and the hourly registration cap. The
// flows the clients run are test/routes/oauth-server.test.ts.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { bearer, type RegisteredClient } from '../helpers/oauth-client.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

type Json = Record<string, any>;
const REDIRECT = 'https://client.example.com/callback';
const MCP_REDIRECT = 'http://127.0.0.1:33418/callback';

let db: Database;
let t: TestApp;

const OAUTH_ENV = {
  AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  AUTHSVC_JWT_ISSUER: 'http://localhost:9999',
  AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
  AUTHSVC_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
  AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
};

beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, OAUTH_ENV);
});
afterAll(async () => {
  await db?.close();
});

const adminToken = () => signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 });
const admin = async () => bearer(await adminToken());

async function adminClient(body: Json = {}): Promise<RegisteredClient & Json> {
  const res = await t.request(
    'POST',
    '/admin/oauth/clients',
    { redirect_uris: [REDIRECT], client_name: 'Third Party', ...body },
    await admin(),
  );
  expect(res.status).toBe(201);
  return (await res.json()) as RegisteredClient & Json;
}

async function signedInUser() {
  const u = await signUpConfirmed(t);
  return { ...u, token: u.session.access_token as string, id: u.session.user.id as string };
}

async function expectApiError(res: Response, status: number, code: string, msg: string) {
  expect({ status: res.status, body: await res.json() }).toEqual({
    status,
    body: { code: status, error_code: code, msg },
  });
}

describe('admin client management through auth-js admin.oauth.*', () => {
  test('create (secret shown once, stored hashed), get, list, update, regenerate, delete', async () => {
    const sb = supabaseClientFor(t.app, await adminToken(), {
      headers: { Authorization: `Bearer ${await adminToken()}` },
    });
    const created = await sb.auth.admin.oauth.createClient({
      client_name: 'CRM',
      redirect_uris: [REDIRECT],
      client_uri: 'https://crm.example.com',
    });
    expect(created.error).toBeNull();
    const c = created.data!;
    expect(Object.keys(c)).toEqual([
      'client_id',
      'client_id_issued_at',
      'client_secret',
      'client_secret_expires_at',
      'client_type',
      'redirect_uris',
      'token_endpoint_auth_method',
      'grant_types',
      'response_types',
      'client_name',
      'client_uri',
      'registration_type',
      'created_at',
      'updated_at',
    ]);
    expect(c).toMatchObject({
      client_type: 'confidential',
      token_endpoint_auth_method: 'client_secret_basic',
      registration_type: 'manual',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(c.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Stored as GoTrue stores it: base64url(SHA-256(secret)), never the secret.
    const row = await db.orm.select().from(db.t.oauthClients);
    const stored = row.find((r) => r.id === c.client_id)!;
    expect(stored.clientSecretHash).toBe(createHash('sha256').update(c.client_secret!).digest('base64url'));

    const got = await sb.auth.admin.oauth.getClient(c.client_id);
    expect(got.data).toMatchObject({ client_id: c.client_id, client_name: 'CRM' });
    expect((got.data as Json).client_secret).toBeUndefined();

    const listed = await sb.auth.admin.oauth.listClients();
    expect(listed.error).toBeNull();
    expect(listed.data!.clients.map((x) => x.client_id)).toContain(c.client_id);

    const updated = await sb.auth.admin.oauth.updateClient(c.client_id, {
      client_name: 'CRM 2',
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(updated.data).toMatchObject({ client_name: 'CRM 2', token_endpoint_auth_method: 'client_secret_post' });

    const regenerated = await sb.auth.admin.oauth.regenerateClientSecret(c.client_id);
    expect(regenerated.data!.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(regenerated.data!.client_secret).not.toBe(c.client_secret);

    expect((await sb.auth.admin.oauth.deleteClient(c.client_id)).error).toBeNull();
    const gone = await t.request('GET', `/admin/oauth/clients/${c.client_id}`, undefined, await admin());
    await expectApiError(gone, 404, 'oauth_client_not_found', 'OAuth client not found');
  });

  test("validation answers GoTrue's messages", async () => {
    const h = await admin();
    await expectApiError(
      await t.request('POST', '/admin/oauth/clients', {}, h),
      400,
      'validation_failed',
      '400: redirect_uris is required',
    );
    await expectApiError(
      await t.request('POST', '/admin/oauth/clients', { redirect_uris: ['http://evil.example.com/cb'] }, h),
      400,
      'validation_failed',
      "400: invalid redirect_uri 'http://evil.example.com/cb': HTTP scheme only allowed for localhost",
    );
    await expectApiError(
      await t.request('POST', '/admin/oauth/clients', { redirect_uris: ['javascript://x/alert'] }, h),
      400,
      'validation_failed',
      "400: invalid redirect_uri 'javascript://x/alert': scheme 'javascript' is not allowed for security reasons",
    );
    await expectApiError(
      await t.request('POST', '/admin/oauth/clients', { redirect_uris: ['https://a.example.com/cb#x'] }, h),
      400,
      'validation_failed',
      "400: invalid redirect_uri 'https://a.example.com/cb#x': fragment not allowed in redirect URI",
    );
    await expectApiError(
      await t.request(
        'POST',
        '/admin/oauth/clients',
        { redirect_uris: [REDIRECT], client_type: 'public', token_endpoint_auth_method: 'client_secret_basic' },
        h,
      ),
      400,
      'validation_failed',
      "400: client_type 'public' is inconsistent with token_endpoint_auth_method 'client_secret_basic' (expected client_type 'confidential')",
    );
    await expectApiError(await t.request('POST', '/admin/oauth/clients', '{', h), 400, 'bad_json', 'Invalid JSON body');
    await expectApiError(
      await t.request('GET', '/admin/oauth/clients/not-a-uuid', undefined, h),
      400,
      'validation_failed',
      'invalid client_id format',
    );
    const pub = await adminClient({ client_type: 'public' });
    expect(pub.client_secret).toBeUndefined();
    await expectApiError(
      await t.request('POST', `/admin/oauth/clients/${pub.client_id}/regenerate_secret`, undefined, h),
      400,
      'validation_failed',
      'Cannot regenerate secret for public client',
    );
    await expectApiError(
      await t.request('PUT', `/admin/oauth/clients/${pub.client_id}`, {}, h),
      400,
      'validation_failed',
      'No fields provided for update',
    );
    await expectApiError(
      await t.request(
        'PUT',
        `/admin/oauth/clients/${pub.client_id}`,
        { token_endpoint_auth_method: 'client_secret_post' },
        h,
      ),
      400,
      'validation_failed',
      "token_endpoint_auth_method 'client_secret_post' is not valid for client_type 'public'; valid methods: [none]",
    );
    // Nothing half-written: the refused creations left no rows.
    const names = (await db.orm.select().from(db.t.oauthClients)).filter(
      (r) => r.redirectUris.includes('evil') || r.redirectUris.includes('#'),
    );
    expect(names).toEqual([]);
  });

  test('a user token is not an admin token', async () => {
    const u = await signedInUser();
    await expectApiError(
      await t.request('GET', '/admin/oauth/clients', undefined, bearer(u.token)),
      403,
      'not_admin',
      'User not allowed',
    );
  });
});

describe('L2 (security review 2026-12-01): client_uri, logo_uri, policy_uri and tos_uri are https only', () => {
  const refusedUri = (name: string, admin: boolean) => ({
    code: 400,
    error_code: 'validation_failed',
    msg: `${admin ? '' : '400: '}${name} must be an https URL (http only on localhost)`,
  });

  test('L2: dynamic registration refuses javascript:, data:, plain http and relative URLs', async () => {
    for (const [name, value] of [
      ['client_uri', 'javascript:alert(document.domain)'],
      ['logo_uri', 'javascript:alert(1)'],
      ['client_uri', 'data:text/html,<script>alert(1)</script>'],
      ['policy_uri', 'http://evil.example.com/policy'],
      ['tos_uri', '//evil.example.com/tos'],
      ['logo_uri', '/logo.png'],
      ['client_uri', 'vbscript:x'],
    ] as const) {
      const res = await t.request('POST', '/oauth/clients/register', {
        client_name: 'x',
        redirect_uris: ['https://a.example/cb'],
        [name]: value,
      });
      expect({ value, status: res.status, body: await res.json() }).toEqual({
        value,
        status: 400,
        body: {
          error: 'invalid_client_metadata',
          error_description: `${name} must be an https URL (http only on localhost)`,
        },
      });
    }
    const ok = await t.request('POST', '/oauth/clients/register', {
      client_name: 'x',
      redirect_uris: ['https://a.example/cb'],
      client_uri: 'https://a.example',
      logo_uri: 'http://localhost:8080/logo.png',
      policy_uri: 'https://a.example/policy',
      tos_uri: 'https://a.example/tos',
    });
    expect(ok.status).toBe(201);
  });

  test('L2: the admin API refuses them at registration and update', async () => {
    const h = await admin();
    const created = await t.request(
      'POST',
      '/admin/oauth/clients',
      { redirect_uris: [REDIRECT], logo_uri: 'javascript:alert(1)' },
      h,
    );
    expect({ status: created.status, body: await created.json() }).toEqual({
      status: 400,
      body: refusedUri('logo_uri', false),
    });
    const client = await adminClient();
    const updated = await t.request(
      'PUT',
      `/admin/oauth/clients/${client.client_id}`,
      { client_uri: 'data:text/html,x' },
      h,
    );
    expect({ status: updated.status, body: await updated.json() }).toEqual({
      status: 400,
      body: refusedUri('client_uri', true),
    });
    const row = (await db.orm.select().from(db.t.oauthClients)).find((c) => c.id === client.client_id);
    expect(row!.clientUri).toBeNull();
  });
});

test('observation (security review 2026-12-01): dynamic registration has a deployment-wide hourly cap that holds without RATE_LIMIT_HEADER', async () => {
  const own = await openTestDb();
  try {
    const capped = await buildTestApp(own, {
      ...OAUTH_ENV,
      AUTHSVC_OAUTH_SERVER_DYNAMIC_REGISTRATION_HOURLY_LIMIT: '3',
    });
    const register = (ip: string) =>
      capped.request('POST', '/oauth/clients/register', { redirect_uris: [MCP_REDIRECT] }, { 'x-forwarded-for': ip });
    const statuses = await Promise.all(
      ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.5'].map(register),
    );
    expect(statuses.map((r) => r.status).sort()).toEqual([201, 201, 201, 429, 429]);
    const refused = statuses.find((r) => r.status === 429)!;
    expect(await refused.json()).toEqual({
      code: 429,
      error_code: 'over_request_rate_limit',
      msg: 'Dynamic client registration limit reached, try again later',
    });
    expect((await own.orm.select().from(own.t.oauthClients)).length).toBe(3);
    // Admin registrations are not counted or capped; an hour later there is room again.
    const h = bearer(
      await signJwt(capped.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 }),
    );
    expect((await capped.request('POST', '/admin/oauth/clients', { redirect_uris: [REDIRECT] }, h)).status).toBe(201);
    const later = await buildTestApp(
      own,
      { ...OAUTH_ENV, AUTHSVC_OAUTH_SERVER_DYNAMIC_REGISTRATION_HOURLY_LIMIT: '3' },
      { now: () => new Date(Date.now() + 3601_000) },
    );
    expect((await later.request('POST', '/oauth/clients/register', { redirect_uris: [MCP_REDIRECT] })).status).toBe(
      201,
    );
  } finally {
    await own.close();
  }
});
