// The OAuth 2.1 / OIDC provider as certified client libraries expect it (issue 40), over HTTP:
// RFC 6749 §5.2 error bodies, client_secret_basic's form-encoding, RFC 7591 registration answers,
// revocation (RFC 7009), introspection (RFC 7662), redirect_uri at the exchange, `iss` (RFC 9207),
// userinfo's RFC 6750 answers and OIDC claims, Client ID Metadata Documents, and one-time refresh
// tokens for public clients. The end-to-end runs with openid-client and the MCP SDK are in
// compat/oauth-server-clients.test.ts.
import { createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { BASE_ENV, buildTestApp, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import {
  authorizationCode,
  authorizePath,
  bearer,
  consent,
  type RegisteredClient,
  startAuthorization,
  tokenRequest,
} from '../helpers/oauth-client.ts';

type Json = Record<string, any>;
const ISSUER = 'http://localhost:9999';
const REDIRECT = 'https://client.example.com/callback';
const MCP_REDIRECT = 'http://127.0.0.1:33418/callback';
const RESOURCE = 'https://mcp.example.com/mcp';
const DOC_HOST = 'https://client-docs.example.net';

let db: Database;
let t: TestApp;
let clockOffsetMs = 0;
/** What the fake metadata host answers, by path; and how often it was asked. */
const docs = new Map<string, { status?: number; body: string; headers?: Record<string, string> }>();
const docFetches: string[] = [];

const ENV = {
  AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  AUTHSVC_JWT_ISSUER: ISSUER,
  AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
  AUTHSVC_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
  AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
};

/** deps.fetch: the metadata host is answered here; everything else goes out as usual (nothing does). */
const fetchWithDocs = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = input instanceof Request ? input.url : String(input);
  if (url.startsWith(DOC_HOST)) {
    docFetches.push(url);
    const doc = docs.get(new URL(url).pathname);
    if (!doc) return new Response('not found', { status: 404 });
    return new Response(doc.body, {
      status: doc.status ?? 200,
      headers: { 'content-type': 'application/json', ...doc.headers },
    });
  }
  return globalThis.fetch(input, init);
}) as typeof fetch;

/** The metadata host is public; private.example.net resolves inside the network. */
const resolveHost = async (host: string) => (host === 'private.example.net' ? ['10.1.2.3'] : ['93.184.216.34']);

beforeAll(async () => {
  db = await openTestDb();
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'es-std', alg: 'ES256', key_ops: ['sign', 'verify'] };
  t = await buildTestApp(
    db,
    { ...ENV, AUTHSVC_JWT_KEYS: JSON.stringify([jwk]) },
    {
      now: () => new Date(Date.now() + clockOffsetMs),
      fetch: fetchWithDocs,
      resolveHost,
    },
  );
});
afterAll(async () => {
  await db?.close();
});

const admin = async () =>
  bearer(await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 }));

async function confidentialClient(body: Json = {}): Promise<RegisteredClient & Json> {
  const res = await t.request(
    'POST',
    '/admin/oauth/clients',
    { redirect_uris: [REDIRECT], client_name: 'RP', ...body },
    await admin(),
  );
  expect(res.status).toBe(201);
  return (await res.json()) as RegisteredClient & Json;
}

async function publicClient(): Promise<RegisteredClient & Json> {
  const res = await t.request('POST', '/oauth/clients/register', {
    redirect_uris: [MCP_REDIRECT],
    token_endpoint_auth_method: 'none',
    client_name: 'MCP',
  });
  expect(res.status).toBe(201);
  return (await res.json()) as RegisteredClient & Json;
}

async function signedInUser() {
  const u = await signUpConfirmed(t);
  return { ...u, token: u.session.access_token as string, id: u.session.user.id as string };
}

/** A client's tokens for a fresh user. */
async function tokensFor(client: RegisteredClient, scope = 'openid email', extra: Record<string, string> = {}) {
  const user = await signedInUser();
  const { code, pkce } = await authorizationCode(t, client, user.token, {
    scope,
    ...(extra.resource ? { resource: extra.resource } : {}),
  });
  const res = await tokenRequest(t, client, {
    grant_type: 'authorization_code',
    code,
    code_verifier: pkce.verifier,
    ...extra,
  });
  expect(res.status).toBe(200);
  return { user, tokens: (await res.json()) as Json };
}

async function oauthError(res: Response): Promise<Json> {
  return { status: res.status, cache: res.headers.get('cache-control'), body: await res.json() };
}

const form = (params: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(params).toString(),
});
const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;
/** RFC 6749 §2.3.1: form-encode, then Base64 — what openid-client sends (`-` as %2D). */
const strictBasic = (id: string, secret: string) => {
  const enc = (s: string) =>
    encodeURIComponent(s).replace(/[-_.!~*'()]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return basic(enc(id), enc(secret));
};

describe('1. /oauth/token answers RFC 6749 §5.2 errors', () => {
  test("a dead or reused refresh token is invalid_grant, not GoTrue's refresh_token_already_used; never cached", async () => {
    const client = await confidentialClient();
    const { tokens } = await tokensFor(client);
    const rotated = (await (
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    ).json()) as Json;
    await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: rotated.refresh_token });
    expect(
      await oauthError(
        await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
      ),
    ).toEqual({
      status: 400,
      cache: 'no-store',
      body: { error: 'invalid_grant', error_description: 'Invalid Refresh Token: Already Used' },
    });
    expect(
      await oauthError(await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: 'A'.repeat(32) })),
    ).toEqual({
      status: 400,
      cache: 'no-store',
      body: { error: 'invalid_grant', error_description: 'Invalid Refresh Token: Refresh Token Not Found' },
    });
    // authsvc's own /token keeps GoTrue's body.
    const own = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: 'A'.repeat(32) });
    expect({ status: own.status, body: await own.json() }).toEqual({
      status: 400,
      body: { code: 400, error_code: 'refresh_token_not_found', msg: 'Invalid Refresh Token: Refresh Token Not Found' },
    });
  });

  test('a wrong secret is invalid_client: 401 with a Basic challenge over Basic, 400 in the body', async () => {
    const client = await confidentialClient();
    const basicRes = await t.app.request('/oauth/token', {
      ...form({ grant_type: 'refresh_token', refresh_token: 'x' }),
      headers: { ...form({}).headers, authorization: basic(client.client_id, 'wrong') },
    });
    expect({ ...(await oauthError(basicRes)), challenge: basicRes.headers.get('www-authenticate') }).toEqual({
      status: 401,
      cache: 'no-store',
      challenge: 'Basic realm="OAuth", charset="UTF-8"',
      body: { error: 'invalid_client', error_description: 'invalid client credentials' },
    });
    const post = await confidentialClient({ token_endpoint_auth_method: 'client_secret_post' });
    const postRes = await t.app.request(
      '/oauth/token',
      form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: post.client_id, client_secret: 'wrong' }),
    );
    expect(await oauthError(postRes)).toEqual({
      status: 400,
      cache: 'no-store',
      body: { error: 'invalid_client', error_description: 'invalid client credentials' },
    });
  });

  test('invalid_target for a resource the grant is not for, invalid_scope for more than was granted, at the exchange and at refresh', async () => {
    const client = await publicClient();
    const user = await signedInUser();
    const { code, pkce } = await authorizationCode(t, client, user.token, {
      scope: 'openid email',
      resource: RESOURCE,
    });
    const base = { grant_type: 'authorization_code', code, code_verifier: pkce.verifier };
    expect(
      (await oauthError(await tokenRequest(t, client, { ...base, resource: 'https://other.example.com/mcp' }))).body
        .error,
    ).toBe('invalid_target');
    expect((await oauthError(await tokenRequest(t, client, { ...base, scope: 'openid phone' }))).body).toEqual({
      error: 'invalid_scope',
      error_description: 'scope exceeds what was authorized',
    });
    const tokens = (await (await tokenRequest(t, client, { ...base, resource: RESOURCE })).json()) as Json;
    expect(
      (
        await oauthError(
          await tokenRequest(t, client, {
            grant_type: 'refresh_token',
            refresh_token: tokens.refresh_token,
            resource: 'https://other.example.com/mcp',
          }),
        )
      ).body,
    ).toEqual({
      error: 'invalid_target',
      error_description: 'resource does not match the resource the grant was issued for',
    });
    expect(
      (
        await oauthError(
          await tokenRequest(t, client, {
            grant_type: 'refresh_token',
            refresh_token: tokens.refresh_token,
            scope: 'openid profile',
          }),
        )
      ).body,
    ).toEqual({ error: 'invalid_scope', error_description: "scope 'profile' was not granted" });
    // Neither refusal used the token up; a narrower scope is granted for this access token only.
    const narrowed = await tokenRequest(t, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'openid',
    });
    expect(narrowed.status).toBe(200);
    const body = (await narrowed.json()) as Json;
    expect(decodeJwt(body.access_token)).toMatchObject({ scope: 'openid', aud: RESOURCE, email: '' });
    const next = (await (
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: body.refresh_token })
    ).json()) as Json;
    expect(decodeJwt(next.access_token).scope).toBe('openid email');
  });

  test('a body that cannot be read, or a missing code, is invalid_request', async () => {
    const client = await publicClient();
    const bad = await t.app.request('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect((await oauthError(bad)).body.error).toBe('invalid_request');
    expect((await oauthError(await tokenRequest(t, client, { grant_type: 'authorization_code' }))).body).toEqual({
      error: 'invalid_request',
      error_description: 'code is required for authorization_code grant',
    });
  });
});

describe('2. client_secret_basic decodes the form-encoding; the discovery documents list what works', () => {
  test('an id and secret form-encoded before Base64 (RFC 6749 §2.3.1) authenticate, and so do raw ones', async () => {
    const client = await confidentialClient();
    // The id (a uuid) has dashes: the strict form differs from the raw one whatever the secret holds.
    expect(strictBasic(client.client_id, client.client_secret!)).not.toBe(
      basic(client.client_id, client.client_secret!),
    );
    for (const authorization of [
      strictBasic(client.client_id, client.client_secret!),
      basic(client.client_id, client.client_secret!),
    ]) {
      const { tokens } = await tokensFor(client);
      const res = await t.app.request('/oauth/token', {
        ...form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
        headers: { ...form({}).headers, authorization },
      });
      expect(res.status).toBe(200);
    }
  });

  test('both discovery documents list exactly the methods that work, and the new endpoints', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const doc = (await (await t.request('GET', path)).json()) as Json;
      expect(doc).toMatchObject({
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint: `${ISSUER}/oauth/revoke`,
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        introspection_endpoint: `${ISSUER}/oauth/introspect`,
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: true,
      });
    }
  });
});

describe('3. dynamic registration (RFC 7591)', () => {
  test('client_id_issued_at always; client_secret_expires_at 0 with a secret; RFC 7591 §3.2.2 error bodies', async () => {
    const before = Math.floor(Date.now() / 1000);
    const conf = await t.request('POST', '/oauth/clients/register', {
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const c = (await conf.json()) as Json;
    expect(conf.status).toBe(201);
    expect(conf.headers.get('cache-control')).toBe('no-store');
    expect(c.client_id_issued_at).toBeGreaterThanOrEqual(before - 1);
    expect(c).toMatchObject({ client_secret: expect.any(String), client_secret_expires_at: 0 });
    const pub = await publicClient();
    expect(pub.client_id_issued_at).toEqual(expect.any(Number));
    expect('client_secret_expires_at' in pub).toBe(false);
    const badUri = await t.request('POST', '/oauth/clients/register', {
      redirect_uris: ['http://evil.example.com/cb'],
    });
    expect({ status: badUri.status, body: await badUri.json() }).toEqual({
      status: 400,
      body: {
        error: 'invalid_redirect_uri',
        error_description: "invalid redirect_uri 'http://evil.example.com/cb': HTTP scheme only allowed for localhost",
      },
    });
    const badMeta = await t.request('POST', '/oauth/clients/register', {
      redirect_uris: [REDIRECT],
      grant_types: ['password'],
    });
    expect(await badMeta.json()).toEqual({
      error: 'invalid_client_metadata',
      error_description: "grant_types must only contain 'authorization_code' and/or 'refresh_token'",
    });
    const notJson = await t.request('POST', '/oauth/clients/register', '[1]');
    expect({ status: notJson.status, error: ((await notJson.json()) as Json).error }).toEqual({
      status: 400,
      error: 'invalid_client_metadata',
    });
    // The admin API keeps GoTrue's bodies.
    const adminBad = await t.request(
      'POST',
      '/admin/oauth/clients',
      { redirect_uris: ['http://evil.example.com/cb'] },
      await admin(),
    );
    expect(await adminBad.json()).toMatchObject({ error_code: 'validation_failed' });
  });
});

describe('4. revocation (RFC 7009)', () => {
  test("revoking a refresh token ends its grant's session: its refresh and access tokens stop at once", async () => {
    const client = await confidentialClient();
    const { tokens } = await tokensFor(client);
    const res = await t.app.request('/oauth/revoke', {
      ...form({ token: tokens.refresh_token, token_type_hint: 'refresh_token' }),
      headers: { ...form({}).headers, authorization: basic(client.client_id, client.client_secret!) },
    });
    expect({ status: res.status, cache: res.headers.get('cache-control'), body: await res.text() }).toEqual({
      status: 200,
      cache: 'no-store',
      body: '',
    });
    expect(
      (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status,
    ).toBe(400);
    expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.access_token))).status).toBe(401);
  });

  test("an access token, by a public client; unknown and other clients' tokens answer 200 and change nothing", async () => {
    const client = await publicClient();
    const other = await publicClient();
    const { tokens } = await tokensFor(client);
    const revoke = (c: RegisteredClient, token: string) =>
      t.app.request('/oauth/revoke', form({ token, client_id: c.client_id }));
    expect((await revoke(client, 'no-such-token')).status).toBe(200);
    expect((await revoke(other, tokens.access_token)).status).toBe(200);
    expect((await revoke(other, tokens.refresh_token)).status).toBe(200);
    expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.access_token))).status).toBe(200);
    expect((await revoke(client, tokens.access_token)).status).toBe(200);
    expect((await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.access_token))).status).toBe(401);
    expect(
      (await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status,
    ).toBe(400);
    // Without a token: invalid_request; without a client: invalid_client.
    expect((await oauthError(await revoke(client, ''))).body.error).toBe('invalid_request');
    expect((await oauthError(await t.app.request('/oauth/revoke', form({ token: 'x' })))).body.error).toBe(
      'invalid_client',
    );
  });
});

describe('5. introspection (RFC 7662)', () => {
  test('a live access or refresh token: active, scope, client_id, sub, aud, exp, iat, iss, token_type', async () => {
    const rs = await confidentialClient({ client_name: 'Resource server' });
    const ask = (token: string, hint?: string) =>
      t.app.request('/oauth/introspect', {
        ...form({ token, ...(hint ? { token_type_hint: hint } : {}) }),
        headers: { ...form({}).headers, authorization: strictBasic(rs.client_id, rs.client_secret!) },
      });
    const client = await publicClient();
    const { user, tokens } = await tokensFor(client, 'openid email', { resource: RESOURCE });
    const at = decodeJwt(tokens.access_token);
    const res = await ask(tokens.access_token);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      active: true,
      scope: 'openid email',
      client_id: client.client_id,
      sub: user.id,
      aud: RESOURCE,
      exp: at.exp,
      iat: at.iat,
      iss: ISSUER,
      token_type: 'Bearer',
    });
    expect(await (await ask(tokens.refresh_token, 'refresh_token')).json()).toEqual({
      active: true,
      scope: 'openid email',
      client_id: client.client_id,
      sub: user.id,
      aud: RESOURCE,
      iat: expect.any(Number),
      iss: ISSUER,
      token_type: 'refresh_token',
    });
  });

  test('active: false for expired, revoked, ended-session and foreign tokens; only confidential clients may ask', async () => {
    const rs = await confidentialClient({
      client_name: 'Resource server',
      token_endpoint_auth_method: 'client_secret_post',
    });
    const ask = async (token: string) =>
      (
        await t.app.request(
          '/oauth/introspect',
          form({ token, client_id: rs.client_id, client_secret: rs.client_secret! }),
        )
      ).json();
    const client = await publicClient();
    const { user, tokens } = await tokensFor(client);
    // Foreign: junk, the user's own session, an ID token, another server's JWT.
    expect(await ask('junk')).toEqual({ active: false });
    expect(await ask(user.token)).toEqual({ active: false });
    expect(await ask(tokens.id_token)).toEqual({ active: false });
    const { privateKey } = await generateKeyPair('ES256');
    const { SignJWT } = await import('jose');
    expect(
      await ask(
        await new SignJWT({ sub: user.id, session_id: crypto.randomUUID() })
          .setProtectedHeader({ alg: 'ES256' })
          .sign(privateKey),
      ),
    ).toEqual({ active: false });
    // Expired (the clock past exp).
    clockOffsetMs = 3601_000;
    try {
      expect(await ask(tokens.access_token)).toEqual({ active: false });
    } finally {
      clockOffsetMs = 0;
    }
    // Rotated out (revoked), then the session ended (the user revokes the grant).
    const rotated = (await (
      await tokenRequest(t, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    ).json()) as Json;
    expect(await ask(tokens.refresh_token)).toEqual({ active: false });
    expect(((await ask(rotated.refresh_token)) as Json).active).toBe(true);
    expect(
      (await t.request('DELETE', `/user/oauth/grants?client_id=${client.client_id}`, undefined, bearer(user.token)))
        .status,
    ).toBe(204);
    expect(await ask(rotated.refresh_token)).toEqual({ active: false });
    expect(await ask(rotated.access_token)).toEqual({ active: false });
    // A public client cannot prove who it is.
    const refused = await t.app.request(
      '/oauth/introspect',
      form({ token: rotated.access_token, client_id: client.client_id }),
    );
    expect(await oauthError(refused)).toEqual({
      status: 401,
      cache: 'no-store',
      body: { error: 'invalid_client', error_description: 'token introspection requires a confidential client' },
    });
  });
});

describe('6. redirect_uri at the exchange, and iss in the authorization response', () => {
  test("the exchange must repeat the authorization request's redirect_uri", async () => {
    const client = await confidentialClient({ redirect_uris: [REDIRECT, 'https://client.example.com/other'] });
    const user = await signedInUser();
    const { code, pkce } = await authorizationCode(t, client, user.token);
    const base = { grant_type: 'authorization_code', code, code_verifier: pkce.verifier };
    expect((await oauthError(await tokenRequest(t, client, { ...base, redirect_uri: '' }))).body).toEqual({
      error: 'invalid_request',
      error_description: 'redirect_uri is required for authorization_code grant',
    });
    expect(
      (await oauthError(await tokenRequest(t, client, { ...base, redirect_uri: 'https://client.example.com/other' })))
        .body,
    ).toEqual({ error: 'invalid_grant', error_description: 'Invalid redirect_uri' });
    expect((await tokenRequest(t, client, { ...base, redirect_uri: REDIRECT })).status).toBe(200);
  });

  test('iss names the issuer in code, denial and error redirects (RFC 9207)', async () => {
    const client = await confidentialClient();
    const user = await signedInUser();
    const { redirect } = await authorizationCode(t, client, user.token, { state: 's1' });
    expect(redirect.searchParams.get('iss')).toBe(ISSUER);
    const started = await startAuthorization(t, client, { state: 's2' });
    expect((await consent(t, started.authorizationId, user.token, 'deny')).searchParams.get('iss')).toBe(ISSUER);
    const bad = await t.app.request(authorizePath(client, { scope: 'nope' }).path);
    expect(new URL(bad.headers.get('location')!).searchParams.get('iss')).toBe(ISSUER);
  });
});

describe('7. /oauth/userinfo as RFC 6750 and OIDC Core §5.4 say', () => {
  test('401 with a Bearer challenge for a missing, expired, revoked or ended-session token', async () => {
    const missing = await t.request('GET', '/oauth/userinfo');
    expect({
      status: missing.status,
      challenge: missing.headers.get('www-authenticate'),
      body: await missing.json(),
    }).toEqual({
      status: 401,
      challenge: 'Bearer',
      body: { error: 'invalid_token', error_description: 'a bearer token is required' },
    });
    const client = await publicClient();
    const { user, tokens } = await tokensFor(client);
    clockOffsetMs = 3601_000;
    let expired: Response;
    try {
      expired = await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.access_token));
    } finally {
      clockOffsetMs = 0;
    }
    expect({
      status: expired.status,
      challenge: expired.headers.get('www-authenticate')?.startsWith('Bearer error="invalid_token"'),
    }).toEqual({ status: 401, challenge: true });
    expect(
      (await t.request('DELETE', `/user/oauth/grants?client_id=${client.client_id}`, undefined, bearer(user.token)))
        .status,
    ).toBe(204);
    const ended = await t.request('GET', '/oauth/userinfo', undefined, bearer(tokens.access_token));
    expect({ status: ended.status, error: ((await ended.json()) as Json).error }).toEqual({
      status: 401,
      error: 'invalid_token',
    });
  });

  test('403 insufficient_scope without openid; the claims each scope grants', async () => {
    const client = await publicClient();
    const noOpenid = (await tokensFor(client, 'email')).tokens;
    const res = await t.request('GET', '/oauth/userinfo', undefined, bearer(noOpenid.access_token));
    expect({ status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.json() }).toEqual({
      status: 403,
      challenge: 'Bearer error="insufficient_scope", scope="openid"',
      body: { error: 'insufficient_scope', error_description: "the token's scope does not include openid" },
    });
    const user = await signedInUser();
    await t.request(
      'PUT',
      `/admin/users/${user.id}`,
      {
        phone: '15551230001',
        phone_confirm: true,
        user_metadata: {
          given_name: 'Ada',
          family_name: 'Lovelace',
          locale: 'en-GB',
          avatar_url: 'https://img.example/a.png',
        },
      },
      await admin(),
    );
    const { code, pkce } = await authorizationCode(t, client, user.token, { scope: 'openid email profile phone' });
    const all = (await (
      await tokenRequest(t, client, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier })
    ).json()) as Json;
    expect(await (await t.request('GET', '/oauth/userinfo', undefined, bearer(all.access_token))).json()).toEqual({
      sub: user.id,
      email: user.email,
      email_verified: true,
      name: user.email,
      given_name: 'Ada',
      family_name: 'Lovelace',
      locale: 'en-GB',
      picture: 'https://img.example/a.png',
      updated_at: expect.any(Number),
      user_metadata: expect.objectContaining({
        given_name: 'Ada',
        family_name: 'Lovelace',
        locale: 'en-GB',
        avatar_url: 'https://img.example/a.png',
      }),
      phone_number: '15551230001',
      phone: '15551230001',
      phone_number_verified: true,
      phone_verified: true,
    });
    const { code: c2, pkce: p2 } = await authorizationCode(t, client, user.token, { scope: 'openid' });
    const bare = (await (
      await tokenRequest(t, client, { grant_type: 'authorization_code', code: c2, code_verifier: p2.verifier })
    ).json()) as Json;
    expect(await (await t.request('GET', '/oauth/userinfo', undefined, bearer(bare.access_token))).json()).toEqual({
      sub: user.id,
    });
  });
});

describe('8. Client ID Metadata Documents', () => {
  const DOC_URL = `${DOC_HOST}/oauth/client.json`;
  const document = (over: Json = {}) =>
    JSON.stringify({
      client_id: DOC_URL,
      client_name: 'Docs Client',
      client_uri: 'https://client-docs.example.net',
      redirect_uris: [MCP_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      ...over,
    });
  const asClient = (url = DOC_URL): RegisteredClient => ({
    client_id: url,
    token_endpoint_auth_method: 'none',
    redirect_uris: [MCP_REDIRECT],
  });

  test('an https client_id is fetched once per its caching lifetime, used as a public client, and is the client_id everywhere', async () => {
    docs.set('/oauth/client.json', { body: document(), headers: { 'cache-control': 'max-age=300' } });
    docFetches.length = 0;
    const user = await signedInUser();
    const started = await startAuthorization(t, asClient(), { scope: 'openid email' });
    const details = (await (
      await t.request('GET', `/oauth/authorizations/${started.authorizationId}`, undefined, bearer(user.token))
    ).json()) as Json;
    expect(details.client).toEqual({ id: DOC_URL, name: 'Docs Client', uri: 'https://client-docs.example.net' });
    const redirect = await consent(t, started.authorizationId, user.token);
    const res = await tokenRequest(t, asClient(), {
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code')!,
      code_verifier: started.pkce.verifier,
    });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Json;
    const keys = createLocalJWKSet(
      (await (await t.request('GET', '/.well-known/jwks.json')).json()) as { keys: Json[] },
    );
    expect((await jwtVerify(tokens.access_token, keys)).payload.client_id).toBe(DOC_URL);
    expect((await jwtVerify(tokens.id_token, keys, { audience: DOC_URL })).payload.client_id).toBe(DOC_URL);
    const grants = (await (
      await t.request('GET', '/user/oauth/grants', undefined, bearer(user.token))
    ).json()) as Json[];
    expect(grants.map((g) => g.client.id)).toEqual([DOC_URL]);
    // Within max-age the row is used; past it the document is fetched again (and its new name kept).
    await startAuthorization(t, asClient());
    expect(docFetches).toEqual([DOC_URL]);
    docs.set('/oauth/client.json', { body: document({ client_name: 'Docs Client 2' }) });
    clockOffsetMs = 301_000;
    try {
      const again = await startAuthorization(t, asClient());
      const d2 = (await (
        await t.request(
          'GET',
          `/oauth/authorizations/${again.authorizationId}`,
          undefined,
          bearer((await signedInUser()).token),
        )
      ).json()) as Json;
      expect(d2.client.name).toBe('Docs Client 2');
    } finally {
      clockOffsetMs = 0;
    }
    expect(docFetches).toEqual([DOC_URL, DOC_URL]);
    expect(
      (
        await t.request(
          'DELETE',
          `/user/oauth/grants?client_id=${encodeURIComponent(DOC_URL)}`,
          undefined,
          bearer(user.token),
        )
      ).status,
    ).toBe(204);
  });

  test('refused: another client_id inside, a secret, a redirect URI it does not list, too large, a private address, not found', async () => {
    const refusedWith = async (
      path: string,
      body: string | undefined,
      why: string,
      headers: Record<string, string> = {},
    ) => {
      if (body !== undefined) docs.set(path, { body, headers });
      const res = await t.app.request(authorizePath(asClient(`${DOC_HOST}${path}`)).path);
      expect({ path, status: res.status, body: await res.json() }).toEqual({
        path,
        status: 400,
        body: { code: 400, error_code: 'oauth_client_not_found', msg: `client metadata document refused: ${why}` },
      });
    };
    await refusedWith(
      '/a.json',
      document({ client_id: `${DOC_HOST}/b.json` }),
      'its client_id is not the URL it was fetched from',
    );
    await refusedWith(
      '/c.json',
      document({ client_id: `${DOC_HOST}/c.json`, client_secret: 's' }),
      'it must not carry a client_secret',
    );
    await refusedWith(
      '/d.json',
      document({ client_id: `${DOC_HOST}/d.json`, token_endpoint_auth_method: 'client_secret_basic' }),
      "token_endpoint_auth_method 'client_secret_basic' is not supported (only 'none')",
    );
    await refusedWith(
      '/e.json',
      document({ client_id: `${DOC_HOST}/e.json`, redirect_uris: ['http://evil.example.com/cb'] }),
      "invalid redirect_uri 'http://evil.example.com/cb': HTTP scheme only allowed for localhost",
    );
    await refusedWith(
      '/f.json',
      JSON.stringify({ client_id: `${DOC_HOST}/f.json`, redirect_uris: [MCP_REDIRECT], pad: 'x'.repeat(70_000) }),
      'it is larger than 65536 bytes',
    );
    await refusedWith('/missing.json', undefined, 'HTTP 404');
    await refusedWith('/h.json', '{', 'it is not JSON');
    // A registered document, asked for with a redirect URI it does not list: JSON, never a redirect.
    docs.set('/g.json', { body: document({ client_id: `${DOC_HOST}/g.json` }) });
    const wrong = await t.app.request(
      authorizePath(asClient(`${DOC_HOST}/g.json`), { redirectUri: 'http://127.0.0.1:1/steal' }).path,
    );
    expect({ status: wrong.status, body: await wrong.json() }).toEqual({
      status: 400,
      body: { code: 400, error_code: 'validation_failed', msg: 'invalid redirect_uri' },
    });
    // The outbound-request guard: a host resolving to a private address is never fetched.
    docFetches.length = 0;
    const priv = await t.app.request(authorizePath(asClient('https://private.example.net/client.json')).path);
    expect(((await priv.json()) as Json).msg).toBe(
      'client metadata document refused: URL cannot resolve to private network addresses',
    );
    expect(docFetches).toEqual([]);
  });

  test('switched off, an https client_id is an unknown client; on by default in local mode only', async () => {
    const off = await buildTestApp(
      db,
      { ...ENV, AUTHSVC_OAUTH_SERVER_CLIENT_ID_METADATA_DOCUMENTS: 'false' },
      { fetch: fetchWithDocs, resolveHost },
    );
    const res = await off.app.request(authorizePath(asClient()).path);
    expect(await res.json()).toEqual({
      code: 400,
      error_code: 'oauth_client_not_found',
      msg: 'invalid client_id format',
    });
    expect(
      ((await (await off.request('GET', '/.well-known/oauth-authorization-server')).json()) as Json)
        .client_id_metadata_document_supported,
    ).toBeUndefined();
    const server = parseConfig({
      ...BASE_ENV,
      DATABASE_URL: 'postgres://x@localhost/db',
      AUTHSVC_SMTP_HOST: 'smtp.example.com',
      ...ENV,
    });
    expect(server.ok && server.config.oauthServer.clientIdMetadataDocuments).toBe(false);
    expect(t.deps.config.oauthServer.clientIdMetadataDocuments).toBe(true);
  });
});

describe('9. refresh tokens of public clients are one-time (OAuth 2.1 §4.3.1)', () => {
  test('a rotated-out token is invalid_grant at once for a public client, inside SECURITY_REFRESH_TOKEN_REUSE_INTERVAL', async () => {
    expect(t.deps.config.security.refreshTokenReuseInterval).toBeGreaterThan(0);
    const pub = await publicClient();
    const { tokens } = await tokensFor(pub);
    expect(
      (await tokenRequest(t, pub, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status,
    ).toBe(200);
    expect(
      (
        await oauthError(
          await tokenRequest(t, pub, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
        )
      ).body,
    ).toEqual({ error: 'invalid_grant', error_description: 'Invalid Refresh Token: Already Used' });
    // A confidential client keeps the reuse window (its retry gets the same child back), as authsvc's own sessions do.
    const conf = await confidentialClient();
    const c = (await tokensFor(conf)).tokens;
    const first = (await (
      await tokenRequest(t, conf, { grant_type: 'refresh_token', refresh_token: c.refresh_token })
    ).json()) as Json;
    const retry = (await (
      await tokenRequest(t, conf, { grant_type: 'refresh_token', refresh_token: c.refresh_token })
    ).json()) as Json;
    expect(retry.refresh_token).toBe(first.refresh_token);
  });
});
