// authsvc as an OAuth 2.1 / OpenID Connect authorization server (issue 30): discovery, client
// management through auth-js's admin.oauth.*, dynamic registration, authorize → consent → token
// → userinfo → refresh → revoke over HTTP with a test client, the ID token, the MCP items
// (resource → aud, public clients, offline_access), and every refusal.
import { createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import {
  authorizationCode,
  authorizePath,
  bearer,
  consent,
  pkce,
  type RegisteredClient,
  startAuthorization,
  tokenRequest,
} from '../helpers/oauth-client.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

type Json = Record<string, any>;
const ISSUER = 'http://localhost:9999';
const REDIRECT = 'https://client.example.com/callback';
const MCP_REDIRECT = 'http://127.0.0.1:33418/callback';
const RESOURCE = 'https://mcp.example.com/mcp';

let db: Database;
let t: TestApp;
/** The ES256 signing key of `t`, for a second app that accepts its tokens. */
let jwtKeys: string;
/** Added to the real clock: moves the server past a code's lifetime without waiting. */
let clockOffsetMs = 0;

const OAUTH_ENV = {
  AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  AUTHSVC_JWT_ISSUER: ISSUER,
  AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
  AUTHSVC_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
  AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
  // Passkey routes answer 404 before authentication while switched off.
  AUTHSVC_PASSKEY_ENABLED: 'true',
  AUTHSVC_WEBAUTHN_RP_ID: 'localhost',
  AUTHSVC_WEBAUTHN_RP_ORIGINS: 'http://localhost:3000',
};

beforeAll(async () => {
  db = await openTestDb();
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'es-1', alg: 'ES256', key_ops: ['sign', 'verify'] };
  jwtKeys = JSON.stringify([jwk]);
  t = await buildTestApp(
    db,
    { ...OAUTH_ENV, AUTHSVC_JWT_KEYS: jwtKeys },
    {
      now: () => new Date(Date.now() + clockOffsetMs),
    },
  );
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

async function publicClient(): Promise<RegisteredClient & Json> {
  const res = await t.request('POST', '/oauth/clients/register', {
    redirect_uris: [MCP_REDIRECT],
    token_endpoint_auth_method: 'none',
    client_name: 'MCP Inspector',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  expect(res.status).toBe(201);
  return (await res.json()) as RegisteredClient & Json;
}

async function signedInUser() {
  const u = await signUpConfirmed(t);
  return { ...u, token: u.session.access_token as string, id: u.session.user.id as string };
}

async function jwks() {
  return createLocalJWKSet((await (await t.request('GET', '/.well-known/jwks.json')).json()) as { keys: Json[] });
}

async function expectOAuthError(res: Response, error: string, description: string) {
  expect({ status: res.status, body: await res.json() }).toEqual({
    status: 400,
    body: { error, error_description: description },
  });
}

/** RFC 6750 §3.1: 401 invalid_token, with the Bearer challenge. */
async function expectInvalidToken(res: Response, description: string) {
  expect({ status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.json() }).toEqual({
    status: 401,
    challenge: `Bearer error="invalid_token", error_description="${description}"`,
    body: { error: 'invalid_token', error_description: description },
  });
}

async function expectApiError(res: Response, status: number, code: string, msg: string) {
  expect({ status: res.status, body: await res.json() }).toEqual({
    status,
    body: { code: status, error_code: code, msg },
  });
}

describe('discovery', () => {
  test('/.well-known/oauth-authorization-server is RFC 8414 metadata on JWT_ISSUER, cached 10 minutes', async () => {
    const res = await t.request('GET', '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const doc = (await res.json()) as Json;
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
    for (const k of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'registration_endpoint'])
      expect(doc[k].startsWith(`${doc.issuer}/`)).toBe(true);
    expect(await (await t.request('GET', '/.well-known/openid-configuration')).json()).toEqual(doc);
    // RFC 8414 §3.1 path insertion for an issuer served under /auth/v1, where MCP clients look first.
    const inserted = await t.request('GET', '/.well-known/oauth-authorization-server/auth/v1');
    expect(inserted.status).toBe(200);
    expect(await inserted.json()).toEqual(doc);
    // The JWKS it names publishes the key ID tokens are signed with.
    const keys = ((await (await t.request('GET', '/.well-known/jwks.json')).json()) as Json).keys as Json[];
    expect(keys.map((k) => k.kid)).toEqual(['es-1']);
    expect(keys[0]!.d).toBeUndefined();
  });

  test('switched on, a path the server does not have is a plain 404', async () => {
    await expectApiError(await t.request('GET', '/oauth/nope'), 404, 'not_found', 'Not Found');
    await expectApiError(
      await t.request('GET', '/admin/oauth/nope', undefined, await admin()),
      404,
      'not_found',
      'Not Found',
    );
  });

  test('without dynamic registration there is no registration_endpoint, and registering is 403', async () => {
    const off = await buildTestApp(db, { ...OAUTH_ENV, AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'false' });
    const doc = (await (await off.request('GET', '/.well-known/oauth-authorization-server')).json()) as Json;
    expect(doc.registration_endpoint).toBeUndefined();
    await expectApiError(
      await off.request('POST', '/oauth/clients/register', { redirect_uris: [REDIRECT] }),
      403,
      'oauth_dynamic_client_registration_disabled',
      'Dynamic client registration is not enabled',
    );
  });

  test('switched off: every route answers 404 feature_disabled (after the admin / user check where GoTrue has one)', async () => {
    const off = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const adminOff = bearer(
      await signJwt(off.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 }),
    );
    for (const [method, path] of [
      ['GET', '/.well-known/oauth-authorization-server'],
      ['GET', '/oauth/authorize?client_id=x'],
      ['POST', '/oauth/token'],
      ['POST', '/oauth/clients/register'],
    ] as const) {
      await expectApiError(await off.request(method, path), 404, 'feature_disabled', 'OAuth server is disabled');
    }
    expect((await off.request('GET', '/admin/oauth/clients')).status).toBe(401);
    await expectApiError(
      await off.request('GET', '/admin/oauth/clients', undefined, adminOff),
      404,
      'feature_disabled',
      'OAuth server is disabled',
    );
    expect((await off.request('GET', '/user/oauth/grants')).status).toBe(401);
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
      authorization_id: authorizationId,
      redirect_uri: REDIRECT,
      client: { id: client.client_id, name: 'Third Party' },
      user: { id: user.id, email: user.email },
      scope: 'openid email profile',
    });
    // …and approves: the client gets its code and state back.
    const approved = await t.request(
      'POST',
      `/oauth/authorizations/${authorizationId}/consent`,
      { action: 'approve' },
      bearer(user.token),
    );
    const redirect = new URL(((await approved.json()) as Json).redirect_url);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
    expect(redirect.searchParams.get('state')).toBe('st-1');
    const code = redirect.searchParams.get('code')!;

    // token: client_secret_basic, the verifier, the same redirect URI.
    const tokenRes = await tokenRequest(t, client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: p!.verifier,
      redirect_uri: REDIRECT,
    });
    expect(tokenRes.status).toBe(200);
    expect(tokenRes.headers.get('cache-control')).toBe('no-store');
    const tokens = (await tokenRes.json()) as Json;
    expect(Object.keys(tokens)).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'token_type']);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);

    // The access token is the project's JWT for the user, with client_id and scope.
    const keySet = await jwks();
    const { payload: at } = await jwtVerify(tokens.access_token, keySet, { issuer: ISSUER });
    expect(at).toMatchObject({
      sub: user.id,
      aud: 'authenticated',
      role: 'authenticated',
      client_id: client.client_id,
      scope: 'openid email profile',
    });
    expect((at.amr as Json[])[0]!.method).toBe('oauth_provider/authorization_code');

    // The ID token: signed with the asymmetric key, for the client, with nonce, at_hash, auth_time.
    const { payload: id, protectedHeader } = await jwtVerify(tokens.id_token, keySet, {
      issuer: ISSUER,
      audience: client.client_id,
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'es-1' });
    expect(id).toMatchObject({
      sub: user.id,
      nonce: 'n-1',
      email: user.email,
      email_verified: true,
      phone_number_verified: false,
      name: user.email,
      client_id: client.client_id,
    });
    expect(id.at_hash).toBe(
      createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url'),
    );
    expect(typeof id.auth_time).toBe('number');

    // userinfo: what the granted scopes allow.
    const info = (await (
      await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.access_token))
    ).json()) as Json;
    expect(info).toMatchObject({
      sub: user.id,
      email: user.email,
      email_verified: true,
      name: user.email,
      user_metadata: {},
    });
    expect(info.phone).toBeUndefined();
    // The same user's ordinary session token: sub only.
    expect(await (await t.request('GET', '/oauth/userinfo', undefined, bearer(user.token))).json()).toEqual({
      sub: user.id,
    });

    // refresh: rotation through the client; the new token keeps the client and scopes.
    const refreshed = await tokenRequest(t, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    const r = (await refreshed.json()) as Json;
    expect(Object.keys(r)).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(r.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(r.access_token)).toMatchObject({
      client_id: client.client_id,
      scope: 'openid email profile',
      session_id: at.session_id,
    });

    // The user's grants list names the client; revoking it ends the client's sessions.
    const grants = (await (
      await t.request('GET', '/user/oauth/grants', undefined, bearer(user.token))
    ).json()) as Json[];
    expect(grants).toEqual([
      {
        client: { id: client.client_id, name: 'Third Party' },
        scopes: ['openid', 'email', 'profile'],
        granted_at: expect.any(String),
      },
    ]);
    const revoked = await t.request(
      'DELETE',
      `/user/oauth/grants?client_id=${client.client_id}`,
      undefined,
      bearer(user.token),
    );
    expect(revoked.status).toBe(204);
    expect(await (await t.request('GET', '/user/oauth/grants', undefined, bearer(user.token))).json()).toEqual([]);
    await expectInvalidToken(
      await t.request('GET', '/oauth/userinfo', undefined, bearer(r.access_token)),
      'Session from session_id claim in JWT does not exist',
    );
    expect(
      (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: r.refresh_token })).status,
    ).toBe(400);
    // The user's own session is untouched.
    expect((await t.request('GET', '/user', undefined, bearer(user.token))).status).toBe(200);
    await expectApiError(
      await t.request('DELETE', `/user/oauth/grants?client_id=${client.client_id}`, undefined, bearer(user.token)),
      404,
      'oauth_consent_not_found',
      'No active grant found for this client',
    );
  });

  test('a second authorization for scopes already granted is approved without asking', async () => {
    const client = await adminClient();
    const user = await signedInUser();
    await authorizationCode(t, client, user.token, { scope: 'email profile' });
    const again = await startAuthorization(t, client, { scope: 'email', state: 's2' });
    const details = (await (
      await t.request('GET', `/oauth/authorizations/${again.authorizationId}`, undefined, bearer(user.token))
    ).json()) as Json;
    expect(Object.keys(details)).toEqual(['redirect_url']);
    const url = new URL(details.redirect_url);
    expect(url.searchParams.get('state')).toBe('s2');
    expect(url.searchParams.get('code')).toMatch(/^[0-9a-f-]{36}$/);
    // A scope beyond the grant asks again.
    const more = await startAuthorization(t, client, { scope: 'email phone' });
    const asked = (await (
      await t.request('GET', `/oauth/authorizations/${more.authorizationId}`, undefined, bearer(user.token))
    ).json()) as Json;
    expect(asked.scope).toBe('email phone');
  });

  test("the consent page and the user's grants through auth-js's oauth.*", async () => {
    const client = await adminClient();
    const user = await signedInUser();
    const sb = supabaseClientFor(t.app);
    expect((await sb.auth.signInWithPassword({ email: user.email, password: user.password })).error).toBeNull();
    const { authorizationId, pkce: p } = await startAuthorization(t, client, { scope: 'email', state: 'js' });
    const details = await sb.auth.oauth.getAuthorizationDetails(authorizationId);
    expect(details.error).toBeNull();
    expect(details.data).toMatchObject({
      authorization_id: authorizationId,
      client: { id: client.client_id, name: 'Third Party' },
      scope: 'email',
    });
    const approved = await sb.auth.oauth.approveAuthorization(authorizationId, { skipBrowserRedirect: true });
    const code = new URL(approved.data!.redirect_url).searchParams.get('code')!;
    expect(
      (await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })).status,
    ).toBe(200);
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
      grant_type: 'authorization_code',
      code,
      code_verifier: p.verifier,
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uri: REDIRECT,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).id_token).toBeUndefined();

    const started = await startAuthorization(t, client, { scope: 'email phone', state: 'deny-me' });
    const denied = await consent(t, started.authorizationId, user.token, 'deny');
    expect(Object.fromEntries(denied.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'User denied the request',
      state: 'deny-me',
      iss: ISSUER,
    });
  });
});

describe('MCP: public clients, resource indicators, offline_access', () => {
  test('a dynamically registered public client gets tokens for the resource it names (aud), and refreshes them', async () => {
    const client = await publicClient();
    expect(client).toMatchObject({
      client_type: 'public',
      token_endpoint_auth_method: 'none',
      registration_type: 'dynamic',
    });
    expect(client.client_secret).toBeUndefined();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token, {
      scope: 'openid offline_access',
      resource: RESOURCE,
    });
    const res = await tokenRequest(t, client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: p.verifier,
      resource: RESOURCE,
      redirect_uri: MCP_REDIRECT,
    });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Json;
    const keySet = await jwks();
    // The MCP server checks its own URL as the audience.
    const { payload } = await jwtVerify(tokens.access_token, keySet, { issuer: ISSUER, audience: RESOURCE });
    expect(payload).toMatchObject({ client_id: client.client_id, scope: 'openid offline_access' });
    expect(tokens.refresh_token).toBeTruthy();
    const refreshed = (await (
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    ).json()) as Json;
    await jwtVerify(refreshed.access_token, keySet, { issuer: ISSUER, audience: RESOURCE });
    // The token still works at userinfo.
    expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(refreshed.access_token))).status).toBe(200);
  });

  test('the code is bound to its resource', async () => {
    const client = await publicClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token, { resource: RESOURCE });
    await expectOAuthError(
      await tokenRequest(t, client, {
        grant_type: 'authorization_code',
        code,
        code_verifier: p.verifier,
        resource: 'https://other.example.com/mcp',
      }),
      'invalid_target',
      'Authorization code resource does not match the resource parameter',
    );
  });

  test('dynamic registration is limited per IP (RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER, burst 30)', async () => {
    const limited = await buildTestApp(db, {
      ...OAUTH_ENV,
      AUTHSVC_RATE_LIMIT_HEADER: 'x-real-ip',
      AUTHSVC_RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER: '1',
    });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      statuses.push(
        (
          await limited.request(
            'POST',
            '/oauth/clients/register',
            { redirect_uris: [MCP_REDIRECT] },
            { 'x-real-ip': '203.0.113.9' },
          )
        ).status,
      );
    }
    expect(statuses.slice(0, 30).every((s) => s === 201)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});

describe('refusals', () => {
  test('authorize: JSON errors until the client and exact redirect URI are known', async () => {
    const client = await adminClient();
    await expectApiError(
      await t.app.request('/oauth/authorize?redirect_uri=x'),
      400,
      'validation_failed',
      'client_id is required',
    );
    await expectApiError(
      await t.app.request(`/oauth/authorize?client_id=${client.client_id}`),
      400,
      'validation_failed',
      'redirect_uri is required',
    );
    await expectApiError(
      await t.app.request(`/oauth/authorize?client_id=nope&redirect_uri=${REDIRECT}`),
      400,
      'oauth_client_not_found',
      'invalid client_id format',
    );
    await expectApiError(
      await t.app.request(`/oauth/authorize?client_id=${crypto.randomUUID()}&redirect_uri=${REDIRECT}`),
      400,
      'oauth_client_not_found',
      'invalid client_id',
    );
    // A foreign or merely similar redirect URI is never redirected to.
    for (const foreign of [
      'https://evil.example.com/callback',
      `${REDIRECT}/`,
      `${REDIRECT}?x=1`,
      REDIRECT.toUpperCase(),
    ]) {
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
      expect(Object.fromEntries(loc.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: description,
        state: 'a',
        iss: ISSUER,
      });
    }
    expect((await db.orm.select().from(db.t.oauthAuthorizations)).length).toBe(before);
  });

  test('token: wrong verifier, missing verifier, foreign redirect URI, other client, expired code', async () => {
    const client = await adminClient();
    const other = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    await expectOAuthError(
      await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: pkce().verifier }),
      'invalid_grant',
      'PKCE verification failed: code challenge does not match previously saved code verifier',
    );
    await expectOAuthError(
      await tokenRequest(t, client, { grant_type: 'authorization_code', code }),
      'invalid_grant',
      'PKCE verification failed: code_verifier is required when PKCE challenge is present',
    );
    await expectOAuthError(
      await tokenRequest(t, client, {
        grant_type: 'authorization_code',
        code,
        code_verifier: p.verifier,
        redirect_uri: 'https://evil.example.com/cb',
      }),
      'invalid_grant',
      'Invalid redirect_uri',
    );
    await expectOAuthError(
      await tokenRequest(t, other, { grant_type: 'authorization_code', code, code_verifier: p.verifier }),
      'invalid_grant',
      'Authorization code was not issued for this client',
    );
    // The refusals did not use the code up.
    expect(
      (await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })).status,
    ).toBe(200);

    const late = await authorizationCode(t, client, user.token);
    clockOffsetMs = 601_000;
    try {
      await expectOAuthError(
        await tokenRequest(t, client, {
          grant_type: 'authorization_code',
          code: late.code,
          code_verifier: late.pkce.verifier,
        }),
        'invalid_grant',
        'Authorization code has expired',
      );
    } finally {
      clockOffsetMs = 0;
    }
  });

  test('token: a reused code is refused and ends the session it issued', async () => {
    const client = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token, { scope: 'openid email' });
    const first = (await (
      await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })
    ).json()) as Json;
    expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(first.access_token))).status).toBe(200);
    await expectOAuthError(
      await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier }),
      'invalid_grant',
      'Invalid authorization code',
    );
    await expectInvalidToken(
      await t.request('GET', '/oauth/userinfo', undefined, bearer(first.access_token)),
      'Session from session_id claim in JWT does not exist',
    );
    expect(
      (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: first.refresh_token })).status,
    ).toBe(400);
    await expectOAuthError(
      await tokenRequest(t, client, {
        grant_type: 'authorization_code',
        code: crypto.randomUUID(),
        code_verifier: p.verifier,
      }),
      'invalid_grant',
      'Invalid authorization code',
    );
  });

  test('two concurrent exchanges of one code: one gets tokens, the other is refused and ends that session', async () => {
    const client = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    const both = await Promise.all(
      [1, 2].map(() => tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
    const sessions = (await db.orm.select().from(db.t.sessions)).filter((s) => s.oauthClientId === client.client_id);
    expect(sessions).toEqual([]);
  });

  test('client authentication: RFC 6749 invalid_client, 401 with a Basic challenge when Basic was tried', async () => {
    const client = await adminClient();
    const pub = await publicClient();
    const params = { grant_type: 'authorization_code', code: 'x' };
    const invalidClient = async (res: Response, description: string, basic: boolean) => {
      expect({
        status: res.status,
        challenge: res.headers.get('www-authenticate'),
        cache: res.headers.get('cache-control'),
        body: await res.json(),
      }).toEqual({
        status: basic ? 401 : 400,
        challenge: basic ? 'Basic realm="OAuth", charset="UTF-8"' : null,
        cache: 'no-store',
        body: { error: 'invalid_client', error_description: description },
      });
    };
    await invalidClient(await tokenRequest(t, client, params, { secret: 'wrong' }), 'invalid client credentials', true);
    await invalidClient(
      await tokenRequest(t, client, params, { method: 'client_secret_post' }),
      "invalid authentication method: client is registered for 'client_secret_basic' but 'client_secret_post' was used",
      false,
    );
    await invalidClient(
      await tokenRequest(t, client, params, { method: 'none' }),
      "invalid authentication method: client is registered for 'client_secret_basic' but 'none' was used",
      false,
    );
    await invalidClient(
      await tokenRequest(t, pub, params, { method: 'client_secret_post', secret: 's' }),
      "invalid authentication method: client is registered for 'none' but 'client_secret_post' was used",
      false,
    );
    await invalidClient(
      await t.app.request('/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code',
      }),
      'Invalid client credentials: client_id is required',
      false,
    );
    await invalidClient(
      await t.app.request('/oauth/token', { method: 'POST', headers: { authorization: 'Basic %%%' }, body: '' }),
      'Invalid client credentials: invalid basic auth encoding',
      true,
    );
    await invalidClient(
      await tokenRequest(t, { ...pub, client_id: crypto.randomUUID() }, params),
      'Invalid client credentials',
      false,
    );
    await invalidClient(
      await tokenRequest(t, { ...pub, client_id: 'not-a-uuid' }, params),
      'Invalid client credentials',
      false,
    );
    await expectOAuthError(await tokenRequest(t, pub, {}), 'invalid_request', 'grant_type is required');
    await expectOAuthError(
      await tokenRequest(t, pub, { grant_type: 'password' }),
      'unsupported_grant_type',
      'Unsupported grant type: password',
    );
    const codeOnly = await adminClient({ grant_types: ['authorization_code'] });
    await expectOAuthError(
      await tokenRequest(t, codeOnly, { grant_type: 'refresh_token', refresh_token: 'x' }),
      'unauthorized_client',
      'Client is not allowed to use grant type: refresh_token',
    );
    await expectOAuthError(
      await tokenRequest(t, pub, { grant_type: 'authorization_code' }),
      'invalid_request',
      'code is required for authorization_code grant',
    );
  });

  test('refresh: an OAuth session only through its own client; reuse revokes the family', async () => {
    const client = await adminClient();
    const other = await adminClient();
    const user = await signedInUser();
    const { code, pkce: p } = await authorizationCode(t, client, user.token);
    const tokens = (await (
      await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: p.verifier })
    ).json()) as Json;
    // At authsvc's own /token, GoTrue's refusal; at /oauth/token the grant is not this client's: invalid_grant.
    await expectOAuthError(
      await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: tokens.refresh_token }),
      'invalid_client',
      'Client authentication required for OAuth session',
    );
    await expectOAuthError(
      await tokenRequest(t, other, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
      'invalid_grant',
      'Refresh token was not issued to this client',
    );
    await expectOAuthError(
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: user.session.refresh_token }),
      'invalid_grant',
      'Refresh token was not issued to this client',
    );
    // None of the refusals rotated the token: the right client still can, once.
    const next = (await (
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    ).json()) as Json;
    expect(next.refresh_token).toBeTruthy();
    const newer = (await (
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: next.refresh_token })
    ).json()) as Json;
    // An older token, past the reuse window's immediate-predecessor rule: the family is revoked.
    await expectOAuthError(
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
      'invalid_grant',
      'Invalid Refresh Token: Already Used',
    );
    expect(
      (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: newer.refresh_token })).status,
    ).toBe(400);
  });

  test('consent: another user, a foreign Origin, a bad action, a decided request', async () => {
    const client = await adminClient();
    const owner = await signedInUser();
    const stranger = await signedInUser();
    const { authorizationId } = await startAuthorization(t, client);
    await expectApiError(
      await t.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, {
        ...bearer(owner.token),
        origin: 'https://evil.example.com',
      }),
      400,
      'validation_failed',
      'unauthorized request origin',
    );
    expect(
      (await t.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, bearer(owner.token))).status,
    ).toBe(200);
    await expectApiError(
      await t.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, bearer(stranger.token)),
      404,
      'oauth_authorization_not_found',
      'authorization not found',
    );
    await expectApiError(
      await t.request(
        'POST',
        `/oauth/authorizations/${authorizationId}/consent`,
        { action: 'approve' },
        bearer(stranger.token),
      ),
      404,
      'oauth_authorization_not_found',
      'authorization not found',
    );
    // A cookie or no token is not enough.
    expect(
      (await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' })).status,
    ).toBe(401);
    await expectApiError(
      await t.request(
        'POST',
        `/oauth/authorizations/${authorizationId}/consent`,
        { action: 'maybe' },
        bearer(owner.token),
      ),
      400,
      'validation_failed',
      "action must be 'approve' or 'deny'",
    );
    await expectApiError(
      await t.request('POST', `/oauth/authorizations/${authorizationId}/consent`, '{', bearer(owner.token)),
      400,
      'bad_json',
      'invalid JSON body',
    );
    expect(
      (
        await t.request(
          'POST',
          `/oauth/authorizations/${authorizationId}/consent`,
          { action: 'approve' },
          { ...bearer(owner.token), origin: 'http://localhost:3000' },
        )
      ).status,
    ).toBe(200);
    await expectApiError(
      await t.request(
        'POST',
        `/oauth/authorizations/${authorizationId}/consent`,
        { action: 'deny' },
        bearer(owner.token),
      ),
      400,
      'validation_failed',
      'authorization request is no longer pending',
    );
    await expectApiError(
      await t.request('GET', '/oauth/authorizations/nope', undefined, bearer(owner.token)),
      404,
      'oauth_authorization_not_found',
      'authorization not found',
    );
  });

  test('security review 2026-12-01, section 5: under a non-loopback SITE_URL the consent API refuses a loopback Origin (http://localhost:1) unless URI_ALLOW_LIST names it', async () => {
    const site = await buildTestApp(db, {
      ...OAUTH_ENV,
      AUTHSVC_SITE_URL: 'https://app.example.org',
      AUTHSVC_URI_ALLOW_LIST: 'http://localhost:5173',
    });
    const res = await site.request(
      'POST',
      '/admin/oauth/clients',
      { redirect_uris: [REDIRECT] },
      bearer(await signJwt(site.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })),
    );
    const client = (await res.json()) as RegisteredClient;
    const user = (await signUpConfirmed(site)).session.access_token as string;
    const { authorizationId } = await startAuthorization(site, client);
    for (const origin of ['http://localhost:1', 'http://127.0.0.1:9999', 'http://[::1]:3000']) {
      await expectApiError(
        await site.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, { ...bearer(user), origin }),
        400,
        'validation_failed',
        'unauthorized request origin',
      );
      await expectApiError(
        await site.request(
          'POST',
          `/oauth/authorizations/${authorizationId}/consent`,
          { action: 'approve' },
          { ...bearer(user), origin },
        ),
        400,
        'validation_failed',
        'unauthorized request origin',
      );
    }
    // The site's own origin and a listed loopback one are the app's.
    expect(
      (
        await site.request('GET', `/oauth/authorizations/${authorizationId}`, undefined, {
          ...bearer(user),
          origin: 'https://app.example.org',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await site.request(
          'POST',
          `/oauth/authorizations/${authorizationId}/consent`,
          { action: 'approve' },
          { ...bearer(user), origin: 'http://localhost:5173' },
        )
      ).status,
    ).toBe(200);
  });

  test('an ID token needs an asymmetric key: with HS256 the openid exchange is 500 and the code stays usable', async () => {
    const hs = await buildTestApp(db, OAUTH_ENV);
    const res = await hs.request(
      'POST',
      '/admin/oauth/clients',
      { redirect_uris: [REDIRECT] },
      bearer(await signJwt(hs.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })),
    );
    const client = (await res.json()) as RegisteredClient;
    const u = await signUpConfirmed(hs);
    const { code, pkce: p } = await authorizationCode(hs, client, u.session.access_token, { scope: 'openid email' });
    const failed = await tokenRequest(hs, client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: p.verifier,
    });
    expect({ status: failed.status, body: await failed.json() }).toEqual({
      status: 500,
      body: { error: 'server_error', error_description: 'Error generating ID token' },
    });
    const hsSessions = await db.orm.select().from(db.t.sessions);
    expect(hsSessions.filter((s) => s.oauthClientId === client.client_id)).toEqual([]);
    const [row] = (await db.orm.select().from(db.t.oauthAuthorizations)).filter((a) => a.authorizationCode === code);
    expect({ status: row!.status, sessionId: row!.sessionId }).toEqual({ status: 'approved', sessionId: null });
  });
});

describe("H1 (security review 2026-12-01): a token issued to an OAuth client is not the user's session at authsvc", () => {
  /** A public MCP-style client's tokens for `scope`, approved by the user, for the resource RESOURCE unless told. */
  async function clientTokens(userToken: string, scope: string, resource: string | null = RESOURCE) {
    const client = await publicClient();
    const { code, pkce: p } = await authorizationCode(t, client, userToken, {
      scope,
      ...(resource ? { resource } : {}),
    });
    const res = await tokenRequest(t, client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: p.verifier,
      redirect_uri: MCP_REDIRECT,
      ...(resource ? { resource } : {}),
    });
    expect(res.status).toBe(200);
    return { client, tokens: (await res.json()) as Json };
  }

  const refusedAsClient = {
    status: 403,
    body: {
      code: 403,
      error_code: 'oauth_client_token_not_allowed',
      msg: 'A token issued to an OAuth client cannot be used at this endpoint',
    },
  };

  test("H1: the client's access token (and its refresh) is refused by every account, MFA, passkey, identity, consent and grants route", async () => {
    const user = await signedInUser();
    const { client, tokens } = await clientTokens(user.token, 'openid email');
    const refreshed = (await (
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    ).json()) as Json;
    // Another client's pending authorization: approving it with client 1's token was a scope escalation.
    const other = await publicClient();
    const { authorizationId } = await startAuthorization(t, other, { scope: 'openid email profile phone' });
    const routes: [string, string, unknown?][] = [
      ['GET', '/user'],
      ['PUT', '/user', { password: 'client-chose-this-1' }],
      ['PUT', '/user', { data: { pwned: true } }],
      ['GET', '/reauthenticate'],
      ['POST', '/logout?scope=others'],
      ['POST', '/logout'],
      ['GET', '/sessions'],
      ['DELETE', `/sessions/${crypto.randomUUID()}`],
      ['POST', '/factors', { factor_type: 'totp' }],
      ['GET', '/factors/recovery-codes'],
      ['POST', '/factors/recovery-codes'],
      ['POST', `/factors/${crypto.randomUUID()}/challenge`, {}],
      ['DELETE', `/factors/${crypto.randomUUID()}`],
      ['POST', '/passkeys/registration/options', {}],
      ['GET', '/passkeys'],
      ['GET', '/user/identities/authorize?provider=github&skip_http_redirect=true'],
      ['DELETE', `/user/identities/${crypto.randomUUID()}`],
      ['POST', '/user/identities/google/token'],
      ['GET', `/oauth/authorizations/${authorizationId}`],
      ['POST', `/oauth/authorizations/${authorizationId}/consent`, { action: 'approve' }],
      ['GET', '/user/oauth/grants'],
      ['DELETE', `/user/oauth/grants?client_id=${client.client_id}`],
      ['POST', '/token?grant_type=id_token', { provider: 'google', id_token: 'x', link_identity: true }],
      ['GET', '/auth/v1/user'],
    ];
    for (const token of [tokens.access_token as string, refreshed.access_token as string]) {
      for (const [method, path, body] of routes) {
        const res = await t.request(method, path, body, bearer(token));
        expect({ route: `${method} ${path}`, status: res.status, body: await res.json() }).toEqual({
          route: `${method} ${path}`,
          ...refusedAsClient,
        });
      }
    }
    // Nothing was changed or approved: the password still signs in, the other client has no grant.
    expect(
      (await t.request('POST', '/token?grant_type=password', { email: user.email, password: user.password })).status,
    ).toBe(200);
    const grants = (await (
      await t.request('GET', '/user/oauth/grants', undefined, bearer(user.token))
    ).json()) as Json[];
    expect(grants.map((g) => g.client.id)).toEqual([client.client_id]);
    expect(grants[0]!.scopes).toEqual(['openid', 'email']);
    // It stays valid for what it was issued: userinfo here, and the resource server (its aud).
    expect(await (await t.request('GET', '/oauth/userinfo', undefined, bearer(refreshed.access_token))).json()).toEqual(
      { sub: user.id, email: user.email, email_verified: true },
    );
    await jwtVerify(refreshed.access_token, await jwks(), { issuer: ISSUER, audience: RESOURCE });
  });

  test("H1: without a resource (aud = the user's audience) the client's token is refused just the same", async () => {
    const user = await signedInUser();
    const { tokens } = await clientTokens(user.token, 'openid', null);
    expect(decodeJwt(tokens.access_token).aud).toBe('authenticated');
    const res = await t.request('PUT', '/user', { password: 'client-chose-this-1' }, bearer(tokens.access_token));
    expect({ status: res.status, body: await res.json() }).toEqual(refusedAsClient);
    expect(
      (await t.request('POST', '/token?grant_type=password', { email: user.email, password: 'client-chose-this-1' }))
        .status,
    ).toBe(400);
  });

  test("H1: an admin-role user's OAuth token is not an admin token, nor a captcha exemption", async () => {
    const user = await signedInUser();
    await t.request('PUT', `/admin/users/${user.id}`, { role: 'service_role' }, await admin());
    const { tokens } = await clientTokens(user.token, 'email');
    expect(decodeJwt(tokens.access_token).role).toBe('service_role');
    const res = await t.request('GET', '/admin/users', undefined, bearer(tokens.access_token));
    expect({ status: res.status, body: await res.json() }).toEqual(refusedAsClient);
    // GoTrue skips the captcha for an admin's token; never for a client's (the provider is never reached here).
    const captcha = await buildTestApp(db, {
      ...OAUTH_ENV,
      AUTHSVC_JWT_KEYS: jwtKeys,
      AUTHSVC_SECURITY_CAPTCHA_ENABLED: 'true',
      AUTHSVC_SECURITY_CAPTCHA_PROVIDER: 'turnstile',
      AUTHSVC_SECURITY_CAPTCHA_SECRET: 's',
      AUTHSVC_SECURITY_CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
    });
    const signup = (h: Record<string, string>) =>
      captcha.request(
        'POST',
        '/signup',
        { email: `cap-${crypto.randomUUID()}@example.com`, password: 'correct-horse-1' },
        h,
      );
    const asClient = await signup(bearer(tokens.access_token));
    expect({ status: asClient.status, code: ((await asClient.json()) as Json).error_code }).toEqual({
      status: 400,
      code: 'captcha_failed',
    });
    expect((await signup(await admin())).status).toBe(200);
  });

  test('H1: an ID token is never a bearer token: marked typ "ID", refused by user, userinfo and admin authentication', async () => {
    const user = await signedInUser();
    const { tokens } = await clientTokens(user.token, 'openid email');
    const claims = decodeJwt(tokens.id_token);
    expect(claims).toMatchObject({ typ: 'ID', sub: user.id, email: user.email });
    expect(claims.session_id).toBeUndefined();
    const asBearer = {
      status: 403,
      body: { code: 403, error_code: 'bad_jwt', msg: 'invalid token: an ID token is not an access token' },
    };
    for (const [method, path, body] of [
      ['GET', '/user'],
      ['PUT', '/user', { password: 'id-token-chose-this-1' }],
      ['POST', '/factors', { factor_type: 'totp' }],
    ] as const) {
      const res = await t.request(method, path, body, bearer(tokens.id_token));
      expect({ route: path, status: res.status, body: await res.json() }).toEqual({ route: path, ...asBearer });
    }
    // userinfo answers RFC 6750's way (issue 40).
    await expectInvalidToken(
      await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.id_token)),
      'invalid token: an ID token is not an access token',
    );
    // Signed before the mark (no typ): client_id and no session say what it is.
    const { typ: _typ, ...unmarked } = claims;
    const old = await signJwt(t.deps.keys, { ...unmarked, role: 'service_role' });
    for (const path of ['/user', '/admin/users']) {
      const res = await t.request('GET', path, undefined, bearer(old));
      expect({ route: path, status: res.status, body: await res.json() }).toEqual({ route: path, ...asBearer });
    }
    await expectInvalidToken(
      await t.request('GET', '/oauth/userinfo', undefined, bearer(old)),
      'invalid token: an ID token is not an access token',
    );
    // After the grant is revoked, it was a password-changing credential; now it is nothing.
    expect(
      (await t.request('POST', '/token?grant_type=password', { email: user.email, password: 'id-token-chose-this-1' }))
        .status,
    ).toBe(400);
  });

  test('H1: the access token carries email, phone and the metadata only as its scopes grant them', async () => {
    const user = await signedInUser();
    await t.request(
      'PUT',
      `/admin/users/${user.id}`,
      { user_metadata: { full_name: 'Ada' }, app_metadata: { tenant: 't1' } },
      await admin(),
    );
    const emailOnly = decodeJwt((await clientTokens(user.token, 'email')).tokens.access_token);
    expect(emailOnly).toMatchObject({ email: user.email, phone: '', scope: 'email' });
    expect(emailOnly.user_metadata).toBeUndefined();
    expect(emailOnly.app_metadata).toBeUndefined();
    const profile = decodeJwt((await clientTokens(user.token, 'openid profile')).tokens.access_token);
    expect(profile).toMatchObject({
      email: '',
      phone: '',
      user_metadata: { full_name: 'Ada' },
      app_metadata: { tenant: 't1', provider: 'email' },
    });
    // The user's own session token keeps GoTrue's claims.
    const own = (await (
      await t.request('POST', '/token?grant_type=password', { email: user.email, password: user.password })
    ).json()) as Json;
    expect(decodeJwt(own.access_token)).toMatchObject({
      email: user.email,
      user_metadata: { full_name: 'Ada' },
      app_metadata: { tenant: 't1' },
    });
  });

  test('H1: revoking the grant ends every session and token of that grant at once', async () => {
    const user = await signedInUser();
    const { client, tokens } = await clientTokens(user.token, 'openid email');
    const second = await authorizationCode(t, client, user.token, { scope: 'openid email', resource: RESOURCE });
    const more = (await (
      await tokenRequest(t, client, {
        grant_type: 'authorization_code',
        code: second.code,
        code_verifier: second.pkce.verifier,
        redirect_uri: MCP_REDIRECT,
        resource: RESOURCE,
      })
    ).json()) as Json;
    expect(
      (await t.request('DELETE', `/user/oauth/grants?client_id=${client.client_id}`, undefined, bearer(user.token)))
        .status,
    ).toBe(204);
    for (const bundle of [tokens, more]) {
      expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(bundle.access_token))).status).toBe(401);
      expect(
        (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: bundle.refresh_token })).status,
      ).toBe(400);
    }
    const left = (await db.orm.select().from(db.t.sessions)).filter((s) => s.oauthClientId === client.client_id);
    expect(left).toEqual([]);
  });
});

describe('L1 (security review 2026-12-01): NUL and unpaired surrogates at the OAuth endpoints', () => {
  test('L1: a form body of POST /oauth/token with NUL (in a value or a name) is 400 invalid_request, not 500', async () => {
    const client = await publicClient();
    for (const body of [
      `grant_type=authorization_code&client_id=${client.client_id}&code=a%00b&code_verifier=x`,
      `grant_type=refresh_token&client_id=${client.client_id}&refresh_token=abc%00defghijklmnop`,
      `grant_type=authorization_code&client_id=${client.client_id}&code%00=1`,
    ]) {
      const res = await t.app.request('/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 400,
        body: {
          error: 'invalid_request',
          error_description: 'Form values must not contain NUL characters or unpaired UTF-16 surrogates',
        },
      });
    }
  });

  test('L1: /oauth/authorizations/%00 and its consent are 400 validation_failed, not 500', async () => {
    const user = await signedInUser();
    for (const [method, path] of [
      ['GET', '/oauth/authorizations/%00'],
      ['POST', '/oauth/authorizations/%00/consent'],
    ] as const) {
      const res = await t.request(
        method,
        path,
        method === 'POST' ? { action: 'approve' } : undefined,
        bearer(user.token),
      );
      expect({ status: res.status, code: ((await res.json()) as Json).error_code }).toEqual({
        status: 400,
        code: 'validation_failed',
      });
    }
  });
});
