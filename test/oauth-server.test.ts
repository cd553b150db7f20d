// authsvc as an OAuth 2.1 / OpenID Connect authorization server (issue 30): discovery, client
// management through auth-js's admin.oauth.*, dynamic registration, authorize → consent → token
// → userinfo → refresh → revoke over HTTP with a test client, the ID token, the MCP items
// (resource → aud, public clients, offline_access), and every refusal.
import { createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signJwt } from '../src/crypto/jwt.ts';
import type { Database } from '../src/db/database.ts';
import { buildTestApp, signUpConfirmed, type TestApp } from './helpers/app.ts';
import { openTestDb } from './helpers/db.ts';
import {
  authorizationCode, authorizePath, bearer, consent, pkce, type RegisteredClient, startAuthorization, tokenRequest,
} from './helpers/oauth-client.ts';
import { supabaseClientFor } from './helpers/supabase.ts';

type Json = Record<string, any>;
const ISSUER = 'http://localhost:9999';
const REDIRECT = 'https://client.example.com/callback';
const MCP_REDIRECT = 'http://127.0.0.1:33418/callback';
const RESOURCE = 'https://mcp.example.com/mcp';

let db: Database;
let t: TestApp;
/** Added to the real clock: moves the server past a code's lifetime without waiting. */
let clockOffsetMs = 0;

const OAUTH_ENV = {
  AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  AUTHSVC_JWT_ISSUER: ISSUER,
  AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
  AUTHSVC_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
  AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
};

beforeAll(async () => {
  db = await openTestDb();
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'es-1', alg: 'ES256', key_ops: ['sign', 'verify'] };
  t = await buildTestApp(db, { ...OAUTH_ENV, AUTHSVC_JWT_KEYS: JSON.stringify([jwk]) }, {
    now: () => new Date(Date.now() + clockOffsetMs),
  });
});
afterAll(async () => { await db?.close(); });

const adminToken = () => signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 });
const admin = async () => bearer(await adminToken());

async function adminClient(body: Json = {}): Promise<RegisteredClient & Json> {
  const res = await t.request('POST', '/admin/oauth/clients', { redirect_uris: [REDIRECT], client_name: 'Third Party', ...body }, await admin());
  expect(res.status).toBe(201);
  return await res.json() as RegisteredClient & Json;
}

async function publicClient(): Promise<RegisteredClient & Json> {
  const res = await t.request('POST', '/oauth/clients/register', {
    redirect_uris: [MCP_REDIRECT], token_endpoint_auth_method: 'none', client_name: 'MCP Inspector',
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  });
  expect(res.status).toBe(201);
  return await res.json() as RegisteredClient & Json;
}

async function signedInUser() {
  const u = await signUpConfirmed(t);
  return { ...u, token: u.session.access_token as string, id: u.session.user.id as string };
}

async function jwks() {
  return createLocalJWKSet(await (await t.request('GET', '/.well-known/jwks.json')).json() as { keys: Json[] });
}

async function expectOAuthError(res: Response, error: string, description: string) {
  expect({ status: res.status, body: await res.json() }).toEqual({ status: 400, body: { error, error_description: description } });
}

async function expectApiError(res: Response, status: number, code: string, msg: string) {
  expect({ status: res.status, body: await res.json() }).toEqual({ status, body: { code: status, error_code: code, msg } });
}

describe('discovery', () => {
  test('/.well-known/oauth-authorization-server is RFC 8414 metadata on JWT_ISSUER, cached 10 minutes', async () => {
    const res = await t.request('GET', '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const doc = await res.json() as Json;
    expect(doc).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth/authorize`,
      token_endpoint: `${ISSUER}/oauth/token`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      userinfo_endpoint: `${ISSUER}/oauth/userinfo`,
      registration_endpoint: `${ISSUER}/oauth/clients/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      id_token_signing_alg_values_supported: ['ES256'],
    });
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['openid', 'offline_access']));
    // RFC 8414 §2: every endpoint an absolute https/http URL on the issuer; OIDC discovery is the same document.
    for (const k of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'registration_endpoint']) expect(doc[k].startsWith(`${doc.issuer}/`)).toBe(true);
    expect(await (await t.request('GET', '/.well-known/openid-configuration')).json()).toEqual(doc);
    // RFC 8414 §3.1 path insertion for an issuer served under /auth/v1, where MCP clients look first.
    const inserted = await t.request('GET', '/.well-known/oauth-authorization-server/auth/v1');
    expect(inserted.status).toBe(200);
    expect(await inserted.json()).toEqual(doc);
    // The JWKS it names publishes the key ID tokens are signed with.
    const keys = (await (await t.request('GET', '/.well-known/jwks.json')).json() as Json).keys as Json[];
    expect(keys.map((k) => k.kid)).toEqual(['es-1']);
    expect(keys[0]!.d).toBeUndefined();
  });

  test('switched on, a path the server does not have is a plain 404', async () => {
    await expectApiError(await t.request('GET', '/oauth/nope'), 404, 'not_found', 'Not Found');
    await expectApiError(await t.request('GET', '/admin/oauth/nope', undefined, await admin()), 404, 'not_found', 'Not Found');
  });

  test('without dynamic registration there is no registration_endpoint, and registering is 403', async () => {
    const off = await buildTestApp(db, { ...OAUTH_ENV, AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'false' });
    const doc = await (await off.request('GET', '/.well-known/oauth-authorization-server')).json() as Json;
    expect(doc.registration_endpoint).toBeUndefined();
    await expectApiError(await off.request('POST', '/oauth/clients/register', { redirect_uris: [REDIRECT] }), 403,
      'oauth_dynamic_client_registration_disabled', 'Dynamic client registration is not enabled');
  });

  test('switched off: every route answers 404 feature_disabled (after the admin / user check where GoTrue has one)', async () => {
    const off = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const adminOff = bearer(await signJwt(off.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 }));
    for (const [method, path] of [['GET', '/.well-known/oauth-authorization-server'], ['GET', '/oauth/authorize?client_id=x'], ['POST', '/oauth/token'], ['POST', '/oauth/clients/register']] as const) {
      await expectApiError(await off.request(method, path), 404, 'feature_disabled', 'OAuth server is disabled');
    }
    expect((await off.request('GET', '/admin/oauth/clients')).status).toBe(401);
    await expectApiError(await off.request('GET', '/admin/oauth/clients', undefined, adminOff), 404, 'feature_disabled', 'OAuth server is disabled');
    expect((await off.request('GET', '/user/oauth/grants')).status).toBe(401);
  });
});

describe('admin client management through auth-js admin.oauth.*', () => {
  test('create (secret shown once, stored hashed), get, list, update, regenerate, delete', async () => {
    const sb = supabaseClientFor(t.app, await adminToken(), { headers: { Authorization: `Bearer ${await adminToken()}` } });
    const created = await sb.auth.admin.oauth.createClient({ client_name: 'CRM', redirect_uris: [REDIRECT], client_uri: 'https://crm.example.com' });
    expect(created.error).toBeNull();
    const c = created.data!;
    expect(Object.keys(c)).toEqual(['client_id', 'client_secret', 'client_type', 'redirect_uris', 'token_endpoint_auth_method', 'grant_types',
      'response_types', 'client_name', 'client_uri', 'registration_type', 'created_at', 'updated_at']);
    expect(c).toMatchObject({ client_type: 'confidential', token_endpoint_auth_method: 'client_secret_basic', registration_type: 'manual',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] });
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

    const updated = await sb.auth.admin.oauth.updateClient(c.client_id, { client_name: 'CRM 2', token_endpoint_auth_method: 'client_secret_post' });
    expect(updated.data).toMatchObject({ client_name: 'CRM 2', token_endpoint_auth_method: 'client_secret_post' });

    const regenerated = await sb.auth.admin.oauth.regenerateClientSecret(c.client_id);
    expect(regenerated.data!.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(regenerated.data!.client_secret).not.toBe(c.client_secret);

    expect((await sb.auth.admin.oauth.deleteClient(c.client_id)).error).toBeNull();
    const gone = await t.request('GET', `/admin/oauth/clients/${c.client_id}`, undefined, await admin());
    await expectApiError(gone, 404, 'oauth_client_not_found', 'OAuth client not found');
  });

  test('validation answers GoTrue\'s messages', async () => {
    const h = await admin();
    await expectApiError(await t.request('POST', '/admin/oauth/clients', {}, h), 400, 'validation_failed', '400: redirect_uris is required');
    await expectApiError(await t.request('POST', '/admin/oauth/clients', { redirect_uris: ['http://evil.example.com/cb'] }, h), 400, 'validation_failed',
      "400: invalid redirect_uri 'http://evil.example.com/cb': HTTP scheme only allowed for localhost");
    await expectApiError(await t.request('POST', '/admin/oauth/clients', { redirect_uris: ['javascript://x/alert'] }, h), 400, 'validation_failed',
      "400: invalid redirect_uri 'javascript://x/alert': scheme 'javascript' is not allowed for security reasons");
    await expectApiError(await t.request('POST', '/admin/oauth/clients', { redirect_uris: ['https://a.example.com/cb#x'] }, h), 400, 'validation_failed',
      "400: invalid redirect_uri 'https://a.example.com/cb#x': fragment not allowed in redirect URI");
    await expectApiError(await t.request('POST', '/admin/oauth/clients', { redirect_uris: [REDIRECT], client_type: 'public', token_endpoint_auth_method: 'client_secret_basic' }, h), 400, 'validation_failed',
      "400: client_type 'public' is inconsistent with token_endpoint_auth_method 'client_secret_basic' (expected client_type 'confidential')");
    await expectApiError(await t.request('POST', '/admin/oauth/clients', '{', h), 400, 'bad_json', 'Invalid JSON body');
    await expectApiError(await t.request('GET', '/admin/oauth/clients/not-a-uuid', undefined, h), 400, 'validation_failed', 'invalid client_id format');
    const pub = await adminClient({ client_type: 'public' });
    expect(pub.client_secret).toBeUndefined();
    await expectApiError(await t.request('POST', `/admin/oauth/clients/${pub.client_id}/regenerate_secret`, undefined, h), 400, 'validation_failed', 'Cannot regenerate secret for public client');
    await expectApiError(await t.request('PUT', `/admin/oauth/clients/${pub.client_id}`, {}, h), 400, 'validation_failed', 'No fields provided for update');
    await expectApiError(await t.request('PUT', `/admin/oauth/clients/${pub.client_id}`, { token_endpoint_auth_method: 'client_secret_post' }, h), 400, 'validation_failed',
      "token_endpoint_auth_method 'client_secret_post' is not valid for client_type 'public'; valid methods: [none]");
    // Nothing half-written: the refused creations left no rows.
    const names = (await db.orm.select().from(db.t.oauthClients)).filter((r) => r.redirectUris.includes('evil') || r.redirectUris.includes('#'));
    expect(names).toEqual([]);
  });

  test('a user token is not an admin token', async () => {
    const u = await signedInUser();
    await expectApiError(await t.request('GET', '/admin/oauth/clients', undefined, bearer(u.token)), 403, 'not_admin', 'User not allowed');
  });
});

describe('the authorization code flow', () => {
  test('register → authorize → consent → token → userinfo → refresh → grants → revoke', async () => {
    const client = await adminClient();
    const user = await signedInUser();

    // authorize: a pending request, the browser sent to the app's consent page.
    const { path, pkce: p } = authorizePath(client, { scope: 'openid email profile', state: 'st-1', nonce: 'n-1' });
    const res = await t.app.request(path);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://localhost:3000/oauth/consent');
    const authorizationId = location.searchParams.get('authorization_id')!;
    expect(authorizationId).toMatch(/^[A-Za-z0-9]{32}$/);

    // The consent page reads the request with the user's token…
    const details = await t.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, bearer(user.token));
    expect(await details.json()).toEqual({
      authorization_id: authorizationId, redirect_uri: REDIRECT, client: { id: client.client_id, name: 'Third Party' },
      user: { id: user.id, email: user.email }, scope: 'openid email profile',
    });
    // …and approves: the client gets its code and state back.
    const approved = await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' }, bearer(user.token));
    const redirect = new URL((await approved.json() as Json).redirect_url);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
    expect(redirect.searchParams.get('state')).toBe('st-1');
    const code = redirect.searchParams.get('code')!;

    // token: client_secret_basic, the verifier, the same redirect URI.
    const tokenRes = await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p!.verifier, redirect_uri: REDIRECT });
    expect(tokenRes.status).toBe(200);
    expect(tokenRes.headers.get('cache-control')).toBe('no-store');
    const tokens = await tokenRes.json() as Json;
    expect(Object.keys(tokens)).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'token_type']);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);

    // The access token is the project's JWT for the user, with client_id and scope.
    const keySet = await jwks();
    const { payload: at } = await jwtVerify(tokens.access_token, keySet, { issuer: ISSUER });
    expect(at).toMatchObject({ sub: user.id, aud: 'authenticated', role: 'authenticated', client_id: client.client_id, scope: 'openid email profile' });
    expect((at.amr as Json[])[0]!.method).toBe('oauth_provider/authorization_code');

    // The ID token: signed with the asymmetric key, for the client, with nonce, at_hash, auth_time.
    const { payload: id, protectedHeader } = await jwtVerify(tokens.id_token, keySet, { issuer: ISSUER, audience: client.client_id });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'es-1' });
    expect(id).toMatchObject({ sub: user.id, nonce: 'n-1', email: user.email, email_verified: true, phone_number_verified: false, name: user.email, client_id: client.client_id });
    expect(id.at_hash).toBe(createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url'));
    expect(typeof id.auth_time).toBe('number');

    // userinfo: what the granted scopes allow.
    const info = await (await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.access_token))).json() as Json;
    expect(info).toMatchObject({ sub: user.id, email: user.email, email_verified: true, name: user.email, user_metadata: {} });
    expect(info.phone).toBeUndefined();
    // The same user's ordinary session token: sub only.
    expect(await (await t.request('GET', '/oauth/userinfo', undefined, bearer(user.token))).json()).toEqual({ sub: user.id });

    // refresh: rotation through the client; the new token keeps the client and scopes.
    const refreshed = await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refreshed.status).toBe(200);
    const r = await refreshed.json() as Json;
    expect(Object.keys(r)).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(r.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(r.access_token)).toMatchObject({ client_id: client.client_id, scope: 'openid email profile', session_id: at.session_id });

    // The user's grants list names the client; revoking it ends the client's sessions.
    const grants = await (await t.request('GET', '/user/oauth/grants', undefined, bearer(user.token))).json() as Json[];
    expect(grants).toEqual([{ client: { id: client.client_id, name: 'Third Party' }, scopes: ['openid', 'email', 'profile'], granted_at: expect.any(String) }]);
    const revoked = await t.request('DELETE', `/user/oauth/grants?client_id=${client.client_id}`, undefined, bearer(user.token));
    expect(revoked.status).toBe(204);
    expect(await (await t.request('GET', '/user/oauth/grants', undefined, bearer(user.token))).json()).toEqual([]);
    await expectApiError(await t.request('GET', '/oauth/userinfo', undefined, bearer(r.access_token)), 403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
    expect((await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: r.refresh_token })).status).toBe(400);
    // The user's own session is untouched.
    expect((await t.request('GET', '/user', undefined, bearer(user.token))).status).toBe(200);
    await expectApiError(await t.request('DELETE', `/user/oauth/grants?client_id=${client.client_id}`, undefined, bearer(user.token)), 404, 'oauth_consent_not_found', 'No active grant found for this client');
  });

  test('a second authorization for scopes already granted is approved without asking', async () => {
    const client = await adminClient();
    const user = await signedInUser();
    await authorizationCode(t, client, user.token, { scope: 'email profile' });
    const again = await startAuthorization(t, client, { scope: 'email', state: 's2' });
    const details = await (await t.request('GET', `/oauth/authorizations/${again.authorizationId}`, undefined, bearer(user.token))).json() as Json;
    expect(Object.keys(details)).toEqual(['redirect_url']);
    const url = new URL(details.redirect_url);
    expect(url.searchParams.get('state')).toBe('s2');
    expect(url.searchParams.get('code')).toMatch(/^[0-9a-f-]{36}$/);
    // A scope beyond the grant asks again.
    const more = await startAuthorization(t, client, { scope: 'email phone' });
    const asked = await (await t.request('GET', `/oauth/authorizations/${more.authorizationId}`, undefined, bearer(user.token))).json() as Json;
    expect(asked.scope).toBe('email phone');
  });

  test('the consent page and the user\'s grants through auth-js\'s oauth.*', async () => {
    const client = await adminClient();
    const user = await signedInUser();
    const sb = supabaseClientFor(t.app);
    expect((await sb.auth.signInWithPassword({ email: user.email, password: user.password })).error).toBeNull();
    const { authorizationId, pkce: p } = await startAuthorization(t, client, { scope: 'email', state: 'js' });
    const details = await sb.auth.oauth.getAuthorizationDetails(authorizationId);
    expect(details.error).toBeNull();
    expect(details.data).toMatchObject({ authorization_id: authorizationId, client: { id: client.client_id, name: 'Third Party' }, scope: 'email' });
    const approved = await sb.auth.oauth.approveAuthorization(authorizationId, { skipBrowserRedirect: true });
    const code = new URL(approved.data!.redirect_url).searchParams.get('code')!;
    expect((await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })).status).toBe(200);
    const grants = await sb.auth.oauth.listGrants();
    expect(grants.data!.map((g) => g.client.id)).toEqual([client.client_id]);
    expect((await sb.auth.oauth.revokeGrant({ clientId: client.client_id })).error).toBeNull();
    expect((await sb.auth.oauth.listGrants()).data).toEqual([]);
  });

  test('client_secret_post, JSON token requests, and denial', async () => {
    const client = await adminClient({ token_endpoint_auth_method: 'client_secret_post' });
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    const res = await t.request('POST', '/oauth/token', {
      grant_type: 'authorization_code', code, code_verifier: p.verifier, client_id: client.client_id, client_secret: client.client_secret,
    });
    expect(res.status).toBe(200);
    expect((await res.json() as Json).id_token).toBeUndefined();

    const started = await startAuthorization(t, client, { scope: 'email phone', state: 'deny-me' });
    const denied = await consent(t, started.authorizationId, user.token, 'deny');
    expect(Object.fromEntries(denied.searchParams)).toEqual({ error: 'access_denied', error_description: 'User denied the request', state: 'deny-me' });
  });
});

describe('MCP: public clients, resource indicators, offline_access', () => {
  test('a dynamically registered public client gets tokens for the resource it names (aud), and refreshes them', async () => {
    const client = await publicClient();
    expect(client).toMatchObject({ client_type: 'public', token_endpoint_auth_method: 'none', registration_type: 'dynamic' });
    expect(client.client_secret).toBeUndefined();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token, { scope: 'openid offline_access', resource: RESOURCE });
    const res = await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier, resource: RESOURCE, redirect_uri: MCP_REDIRECT });
    expect(res.status).toBe(200);
    const tokens = await res.json() as Json;
    const keySet = await jwks();
    // The MCP server checks its own URL as the audience.
    const { payload } = await jwtVerify(tokens.access_token, keySet, { issuer: ISSUER, audience: RESOURCE });
    expect(payload).toMatchObject({ client_id: client.client_id, scope: 'openid offline_access' });
    expect(tokens.refresh_token).toBeTruthy();
    const refreshed = await (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).json() as Json;
    await jwtVerify(refreshed.access_token, keySet, { issuer: ISSUER, audience: RESOURCE });
    // The token still works at userinfo.
    expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(refreshed.access_token))).status).toBe(200);
  });

  test('the code is bound to its resource', async () => {
    const client = await publicClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token, { resource: RESOURCE });
    await expectOAuthError(await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier, resource: 'https://other.example.com/mcp' }),
      'invalid_grant', 'Authorization code resource does not match the resource parameter');
  });

  test('dynamic registration is limited per IP (RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER, burst 30)', async () => {
    const limited = await buildTestApp(db, { ...OAUTH_ENV, AUTHSVC_RATE_LIMIT_HEADER: 'x-real-ip', AUTHSVC_RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER: '1' });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      statuses.push((await limited.request('POST', '/oauth/clients/register', { redirect_uris: [MCP_REDIRECT] }, { 'x-real-ip': '203.0.113.9' })).status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 201)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});

describe('refusals', () => {
  test('authorize: JSON errors until the client and exact redirect URI are known', async () => {
    const client = await adminClient();
    await expectApiError(await t.app.request('/oauth/authorize?redirect_uri=x'), 400, 'validation_failed', 'client_id is required');
    await expectApiError(await t.app.request(`/oauth/authorize?client_id=${client.client_id}`), 400, 'validation_failed', 'redirect_uri is required');
    await expectApiError(await t.app.request(`/oauth/authorize?client_id=nope&redirect_uri=${REDIRECT}`), 400, 'oauth_client_not_found', 'invalid client_id format');
    await expectApiError(await t.app.request(`/oauth/authorize?client_id=${crypto.randomUUID()}&redirect_uri=${REDIRECT}`), 400, 'oauth_client_not_found', 'invalid client_id');
    // A foreign or merely similar redirect URI is never redirected to.
    for (const foreign of ['https://evil.example.com/callback', `${REDIRECT}/`, `${REDIRECT}?x=1`, REDIRECT.toUpperCase()]) {
      const { path } = authorizePath(client, { redirectUri: foreign });
      const res = await t.app.request(path);
      expect(res.headers.get('location')).toBeNull();
      await expectApiError(res, 400, 'validation_failed', 'invalid redirect_uri');
    }
  });

  test('authorize: no PKCE, plain PKCE, unknown scope, bad resource → invalid_request back to the client', async () => {
    const client = await adminClient();
    const cases: [Parameters<typeof authorizePath>[1], string][] = [
      [{ pkce: null, state: 'a' }, 'PKCE flow requires both code_challenge and code_challenge_method'],
      [{ method: 'plain', state: 'a' }, "code_challenge_method must be 'S256'"],
      [{ scope: 'email admin', state: 'a' }, 'unsupported scope: admin'],
      [{ resource: 'mcp-server', state: 'a' }, 'resource must be an absolute URI'],
      [{ resource: 'https://mcp.example.com/#x', state: 'a' }, 'resource must not include a fragment component'],
      [{ extra: { response_type: 'token' }, state: 'a' }, 'only response_type=code is supported'],
    ];
    const before = (await db.orm.select().from(db.t.oauthAuthorizations)).length;
    for (const [opts, description] of cases) {
      const res = await t.app.request(authorizePath(client, opts).path);
      expect(res.status).toBe(302);
      const loc = new URL(res.headers.get('location')!);
      expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(loc.searchParams)).toEqual({ error: 'invalid_request', error_description: description, state: 'a' });
    }
    expect((await db.orm.select().from(db.t.oauthAuthorizations)).length).toBe(before);
  });

  test('token: wrong verifier, missing verifier, foreign redirect URI, other client, expired code', async () => {
    const client = await adminClient();
    const other = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    await expectOAuthError(await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: pkce().verifier }),
      'invalid_grant', 'PKCE verification failed: code challenge does not match previously saved code verifier');
    await expectOAuthError(await tokenRequest(t, client, { grant_type: 'authorization_code', code }),
      'invalid_grant', 'PKCE verification failed: code_verifier is required when PKCE challenge is present');
    await expectOAuthError(await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier, redirect_uri: 'https://evil.example.com/cb' }),
      'invalid_grant', 'Invalid redirect_uri');
    await expectOAuthError(await tokenRequest(t, other, { grant_type: 'authorization_code', code, code_verifier: p.verifier }),
      'invalid_grant', 'Authorization code was not issued for this client');
    // The refusals did not use the code up.
    expect((await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })).status).toBe(200);

    const late = await authorizationCode(t, client, user.token);
    clockOffsetMs = 601_000;
    try {
      await expectOAuthError(await tokenRequest(t, client, { grant_type: 'authorization_code', code: late.code, code_verifier: late.pkce.verifier }),
        'invalid_grant', 'Authorization code has expired');
    } finally {
      clockOffsetMs = 0;
    }
  });

  test('token: a reused code is refused and ends the session it issued', async () => {
    const client = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    const first = await (await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })).json() as Json;
    expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(first.access_token))).status).toBe(200);
    await expectOAuthError(await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier }), 'invalid_grant', 'Invalid authorization code');
    await expectApiError(await t.request('GET', '/oauth/userinfo', undefined, bearer(first.access_token)), 403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
    expect((await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: first.refresh_token })).status).toBe(400);
    await expectOAuthError(await tokenRequest(t, client, { grant_type: 'authorization_code', code: crypto.randomUUID(), code_verifier: p.verifier }), 'invalid_grant', 'Invalid authorization code');
  });

  test('two concurrent exchanges of one code: one gets tokens, the other is refused and ends that session', async () => {
    const client = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    const both = await Promise.all([1, 2].map(() => tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
    const sessions = (await db.orm.select().from(db.t.sessions)).filter((s) => s.oauthClientId === client.client_id);
    expect(sessions).toEqual([]);
  });

  test('client authentication', async () => {
    const client = await adminClient();
    const pub = await publicClient();
    const params = { grant_type: 'authorization_code', code: 'x' };
    await expectApiError(await tokenRequest(t, client, params, { secret: 'wrong' }), 400, 'invalid_credentials', 'invalid client credentials');
    await expectApiError(await tokenRequest(t, client, params, { method: 'client_secret_post' }), 400, 'invalid_credentials',
      "invalid authentication method: client is registered for 'client_secret_basic' but 'client_secret_post' was used");
    await expectApiError(await tokenRequest(t, client, params, { method: 'none' }), 400, 'invalid_credentials',
      "invalid authentication method: client is registered for 'client_secret_basic' but 'none' was used");
    await expectApiError(await tokenRequest(t, pub, params, { method: 'client_secret_post', secret: 's' }), 400, 'invalid_credentials',
      "invalid authentication method: client is registered for 'none' but 'client_secret_post' was used");
    await expectApiError(await t.app.request('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' }),
      400, 'invalid_credentials', 'Invalid client credentials: client_id is required');
    await expectApiError(await t.app.request('/oauth/token', { method: 'POST', headers: { authorization: 'Basic %%%' }, body: '' }),
      400, 'invalid_credentials', 'Invalid client credentials: invalid basic auth encoding');
    await expectApiError(await tokenRequest(t, { ...pub, client_id: crypto.randomUUID() }, params), 400, 'invalid_credentials', 'Invalid client credentials');
    await expectOAuthError(await tokenRequest(t, pub, {}), 'invalid_request', 'grant_type is required');
    await expectOAuthError(await tokenRequest(t, pub, { grant_type: 'password' }), 'unsupported_grant_type', 'Client is not allowed to use grant type: password');
    await expectOAuthError(await tokenRequest(t, pub, { grant_type: 'authorization_code' }), 'invalid_request', 'code is required for authorization_code grant');
  });

  test('refresh: an OAuth session only through its own client; reuse revokes the family', async () => {
    const client = await adminClient();
    const other = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    const tokens = await (await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })).json() as Json;
    await expectOAuthError(await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: tokens.refresh_token }),
      'invalid_client', 'Client authentication required for OAuth session');
    await expectOAuthError(await tokenRequest(t, other, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
      'invalid_client', "Client does not match the session's OAuth client");
    await expectOAuthError(await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: user.session.refresh_token }),
      'invalid_client', 'Client authentication not allowed for non-OAuth session');
    // None of the refusals rotated the token: the right client still can, once.
    const next = await (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).json() as Json;
    expect(next.refresh_token).toBeTruthy();
    const newer = await (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: next.refresh_token })).json() as Json;
    // An older token, past the reuse window's immediate-predecessor rule: the family is revoked.
    await expectApiError(await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }), 400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
    expect((await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: newer.refresh_token })).status).toBe(400);
  });

  test('consent: another user, a foreign Origin, a bad action, a decided request', async () => {
    const client = await adminClient();
    const owner = await signedInUser();
    const stranger = await signedInUser();
    const { authorizationId } = await startAuthorization(t, client);
    await expectApiError(await t.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, { ...bearer(owner.token), origin: 'https://evil.example.com' }),
      400, 'validation_failed', 'unauthorized request origin');
    expect((await t.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, bearer(owner.token))).status).toBe(200);
    await expectApiError(await t.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, bearer(stranger.token)), 404, 'oauth_authorization_not_found', 'authorization not found');
    await expectApiError(await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' }, bearer(stranger.token)), 404, 'oauth_authorization_not_found', 'authorization not found');
    // A cookie or no token is not enough.
    expect((await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' })).status).toBe(401);
    await expectApiError(await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'maybe' }, bearer(owner.token)), 400, 'validation_failed', "action must be 'approve' or 'deny'");
    await expectApiError(await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, '{', bearer(owner.token)), 400, 'bad_json', 'invalid JSON body');
    expect((await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' }, { ...bearer(owner.token), origin: 'http://localhost:3000' })).status).toBe(200);
    await expectApiError(await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'deny' }, bearer(owner.token)), 400, 'validation_failed', 'authorization request is no longer pending');
    await expectApiError(await t.request('GET', '/oauth/authorizations/nope', undefined, bearer(owner.token)), 404, 'oauth_authorization_not_found', 'authorization not found');
  });

  test('security review 2026-12-01, section 5: under a non-loopback SITE_URL the consent API refuses a loopback Origin (http://localhost:1) unless URI_ALLOW_LIST names it', async () => {
    const site = await buildTestApp(db, { ...OAUTH_ENV, AUTHSVC_SITE_URL: 'https://app.example.org', AUTHSVC_URI_ALLOW_LIST: 'http://localhost:5173' });
    const res = await site.request('POST', '/admin/oauth/clients', { redirect_uris: [REDIRECT] },
      bearer(await signJwt(site.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })));
    const client = await res.json() as RegisteredClient;
    const user = (await signUpConfirmed(site)).session.access_token as string;
    const { authorizationId } = await startAuthorization(site, client);
    for (const origin of ['http://localhost:1', 'http://127.0.0.1:9999', 'http://[::1]:3000']) {
      await expectApiError(await site.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, { ...bearer(user), origin }), 400, 'validation_failed', 'unauthorized request origin');
      await expectApiError(await site.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' }, { ...bearer(user), origin }), 400, 'validation_failed', 'unauthorized request origin');
    }
    // The site's own origin and a listed loopback one are the app's.
    expect((await site.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, { ...bearer(user), origin: 'https://app.example.org' })).status).toBe(200);
    expect((await site.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' }, { ...bearer(user), origin: 'http://localhost:5173' })).status).toBe(200);
  });

  test('an ID token needs an asymmetric key: with HS256 the openid exchange is 500 and the code stays usable', async () => {
    const hs = await buildTestApp(db, OAUTH_ENV);
    const res = await hs.request('POST', '/admin/oauth/clients', { redirect_uris: [REDIRECT] },
      bearer(await signJwt(hs.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })));
    const client = await res.json() as RegisteredClient;
    const u = await signUpConfirmed(hs);
    const { code, pkce: p } = await authorizationCode(hs, client, u.session.access_token, { scope: 'openid email' });
    const failed = await tokenRequest(hs, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier });
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as Json).msg).toBe('Error generating ID token');
    const hsSessions = await db.orm.select().from(db.t.sessions);
    expect(hsSessions.filter((s) => s.oauthClientId === client.client_id)).toEqual([]);
    const [row] = (await db.orm.select().from(db.t.oauthAuthorizations)).filter((a) => a.authorizationCode === code);
    expect({ status: row!.status, sessionId: row!.sessionId }).toEqual({ status: 'approved', sessionId: null });

  });
});
