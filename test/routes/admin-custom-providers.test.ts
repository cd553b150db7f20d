// Custom OAuth/OIDC providers (issue 32): the admin API at /admin/custom-providers, sign-in with
// `custom:<id>` through /authorize and /callback against a local fake OIDC issuer with a JWKS, the
// id_token grant, and the SSRF guard on every provider URL (at creation and at every fetch), with
// CUSTOM_OAUTH_TRUSTED_HOSTS letting the local issuer through.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, TEST_JWT_SECRET, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { type FakeProvider, startFakeProvider } from '../helpers/fake-oauth.ts';
import { type SigningKey, signingKey } from '../helpers/oauth-scenarios-oidc.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

type Json = Record<string, any>;
let db: Database;
let idp: FakeProvider;
/** A second local server nobody trusts: it must never be reached. */
let internal: FakeProvider;
let key: SigningKey;
let admin: string;
let trusted: string;
/** What the fake's token endpoint puts in the next ID token. */
let nextClaims: Json = {};

const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64url');

beforeAll(async () => {
  db = await openTestDb();
  key = await signingKey('idp-1');
  idp = await startFakeProvider();
  internal = await startFakeProvider({ 'GET /secret': () => ({ body: { leaked: true } }) });
  trusted = new URL(idp.base).host;
  idp.routes.set('GET /.well-known/openid-configuration', () => ({
    body: {
      issuer: idp.base,
      authorization_endpoint: `${idp.base}/authorize`,
      token_endpoint: `${idp.base}/token`,
      userinfo_endpoint: `${idp.base}/userinfo`,
      jwks_uri: `${idp.base}/jwks`,
      scopes_supported: ['openid', 'email'],
    },
  }));
  idp.routes.set('GET /jwks', () => ({ body: { keys: [key.jwk] } }));
  idp.routes.set('POST /token', async () => ({
    body: {
      access_token: 'idp-access',
      token_type: 'Bearer',
      id_token: await key.sign({ iss: idp.base, aud: 'acme-web', ...nextClaims }),
    },
  }));
  idp.routes.set('GET /userinfo', () => ({
    body: { sub: 'oauth2-user', email: nextClaims.email, email_verified: true, name: 'From Userinfo', team: 'blue' },
  }));
  admin = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
});
afterAll(async () => {
  await idp?.close();
  await internal?.close();
  await db?.close();
});

/** Public names resolve to a public address, `*.corp.example` to a private one, anything else fails. */
const resolveHost = async (host: string) => {
  if (host.endsWith('.corp.example')) return ['10.20.30.40'];
  if (host.endsWith('.example.com')) return ['93.184.216.34'];
  if (host === 'mapped.example.net') return ['::ffff:192.168.1.9'];
  throw new Error('ENOTFOUND');
};

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  return buildTestApp(db, { AUTHSVC_CUSTOM_OAUTH_TRUSTED_HOSTS: trusted, ...env }, { resolveHost });
}

const auth = () => ({ authorization: `Bearer ${admin}` });
let n = 0;
const ident = () => `custom:acme-${Date.now().toString(36)}-${++n}`;

function oidcBody(over: Json = {}): Json {
  return {
    provider_type: 'oidc',
    identifier: ident(),
    name: 'Acme SSO',
    client_id: 'acme-web',
    client_secret: 'acme-secret',
    issuer: idp.base,
    scopes: ['profile', 'email'],
    acceptable_client_ids: ['acme-ios'],
    authorization_params: { prompt: 'login' },
    custom_claims_allowlist: ['team', 'missing'],
    ...over,
  };
}

async function create(t: TestApp, body: Json): Promise<Response> {
  return t.request('POST', '/admin/custom-providers', body, auth());
}

async function createOk(t: TestApp, body: Json): Promise<Json> {
  const res = await create(t, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

const s256 = (v: string) => createHash('sha256').update(v).digest('base64url');

describe('admin API', () => {
  test('create, get, list, update and delete an OIDC provider; the secret never comes back', async () => {
    const t = await app();
    const body = oidcBody();
    const created = await createOk(t, body);
    expect(created).toMatchObject({
      provider_type: 'oidc',
      identifier: body.identifier,
      name: 'Acme SSO',
      client_id: 'acme-web',
      acceptable_client_ids: ['acme-ios'],
      scopes: ['openid', 'profile', 'email'],
      pkce_enabled: true,
      enabled: true,
      email_optional: false,
      skip_nonce_check: false,
      issuer: idp.base,
      authorization_params: { prompt: 'login' },
      custom_claims_allowlist: ['team', 'missing'],
      discovery_document: {
        issuer: idp.base,
        token_endpoint: `${idp.base}/token`,
        jwks_uri: `${idp.base}/jwks`,
        scopes_supported: ['openid', 'email'],
      },
    });
    expect(JSON.stringify(created)).not.toContain('acme-secret');
    const got = await t.request('GET', `/admin/custom-providers/${body.identifier}`, undefined, auth());
    expect(got.status).toBe(200);
    expect((await got.json()).id).toBe(created.id);
    const list = (await (await t.request('GET', '/admin/custom-providers', undefined, auth())).json()) as Json;
    expect(list.providers.map((p: Json) => p.identifier)).toContain(body.identifier);
    const oauth2Only = (await (
      await t.request('GET', '/admin/custom-providers?type=oauth2', undefined, auth())
    ).json()) as Json;
    expect(oauth2Only.providers.map((p: Json) => p.identifier)).not.toContain(body.identifier);
    const bad = await t.request('GET', '/admin/custom-providers?type=saml', undefined, auth());
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: "type must be either 'oauth2' or 'oidc'",
    });

    const updated = await t.request(
      'PUT',
      `/admin/custom-providers/${body.identifier}`,
      { name: 'Acme 2', scopes: ['email'], enabled: false },
      auth(),
    );
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({
      name: 'Acme 2',
      scopes: ['openid', 'email'],
      enabled: false,
      client_id: 'acme-web',
    });

    const del = await t.request('DELETE', `/admin/custom-providers/${body.identifier}`, undefined, auth());
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    const gone = await t.request('GET', `/admin/custom-providers/${body.identifier}`, undefined, auth());
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({
      error_code: 'custom_provider_not_found',
      msg: 'Custom OAuth provider not found',
    });
  });

  test('supabase-js auth.admin.customProviders: create, list by type, get, update, delete', async () => {
    const t = await app();
    const api = supabaseClientFor(t.app, admin).auth.admin;
    const body = oidcBody();
    const created = await api.customProviders.createProvider(body as never);
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ identifier: body.identifier, provider_type: 'oidc' });
    const listed = await api.customProviders.listProviders({ type: 'oidc' });
    expect(listed.error).toBeNull();
    expect(listed.data!.providers.map((p: Json) => p.identifier)).toContain(body.identifier);
    const got = await api.customProviders.getProvider(body.identifier);
    expect(got.data).toMatchObject({ name: 'Acme SSO' });
    const updated = await api.customProviders.updateProvider(body.identifier, { name: 'Renamed' } as never);
    expect(updated.data).toMatchObject({ name: 'Renamed' });
    const deleted = await api.customProviders.deleteProvider(body.identifier);
    expect(deleted.error).toBeNull();
    expect((await api.customProviders.getProvider(body.identifier)).error).toMatchObject({
      status: 404,
      code: 'custom_provider_not_found',
    });
  });

  test("GoTrue's checks: prefix, reserved parameters, protected targets, duplicates, quota; admin only; the feature gate", async () => {
    const t = await app({ AUTHSVC_CUSTOM_OAUTH_MAX_PROVIDERS: '100000' });
    const msg = async (res: Response) => ({ status: res.status, ...((await res.json()) as Json) });
    expect(await msg(await t.request('GET', '/admin/custom-providers/acme', undefined, auth()))).toMatchObject({
      status: 400,
      msg: "identifier must start with 'custom:' prefix, e.g. 'custom:acme'",
    });
    expect(await msg(await create(t, oidcBody({ provider_type: 'saml' })))).toMatchObject({
      status: 400,
      msg: "provider_type must be either 'oauth2' or 'oidc'",
    });
    expect(await msg(await create(t, oidcBody({ issuer: undefined })))).toMatchObject({
      status: 400,
      msg: 'issuer is required for OIDC providers',
    });
    expect(
      await msg(await create(t, oidcBody({ authorization_params: { redirect_uri: 'https://evil.example.com' } }))),
    ).toMatchObject({ status: 400, msg: 'Cannot override reserved OAuth parameter: redirect_uri' });
    expect(await msg(await create(t, oidcBody({ authorization_params: { prompt: 1 } })))).toMatchObject({
      status: 400,
      msg: 'Authorization parameter "prompt" must be a string',
    });
    expect(await msg(await create(t, oidcBody({ attribute_mapping: { role: 'groups' } })))).toMatchObject({
      status: 400,
      msg: 'Cannot map to protected system field: role',
    });
    expect(await msg(await create(t, oidcBody({ identifier: 'custom:Upper Case' })))).toMatchObject({
      status: 400,
      error_code: 'validation_failed',
    });
    const body = oidcBody();
    await createOk(t, body);
    expect(await msg(await create(t, { ...body }))).toMatchObject({
      status: 400,
      error_code: 'conflict',
      msg: 'A custom OAuth provider with this identifier already exists',
    });

    const count = ((await (await t.request('GET', '/admin/custom-providers', undefined, auth())).json()) as Json)
      .providers.length;
    const capped = await app({ AUTHSVC_CUSTOM_OAUTH_MAX_PROVIDERS: String(count) });
    expect(await msg(await create(capped, oidcBody()))).toMatchObject({
      status: 400,
      error_code: 'over_custom_provider_quota',
    });

    const user = await t.request('GET', '/admin/custom-providers', undefined, {
      authorization: `Bearer ${await new SignJWT({ role: 'authenticated' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(TEST_JWT_SECRET))}`,
    });
    expect(user.status).toBe(403);
    const off = await app({ AUTHSVC_CUSTOM_OAUTH_ENABLED: 'false' });
    expect(await msg(await off.request('GET', '/admin/custom-providers', undefined, auth()))).toMatchObject({
      status: 404,
      error_code: 'feature_disabled',
      msg: 'Custom OAuth providers are disabled',
    });
  });

  test('the client secret is stored encrypted under the row id when DB encryption is on', async () => {
    const t = await app({
      AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
      AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1',
      AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: ENCRYPTION_KEY,
      AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${ENCRYPTION_KEY}`,
    });
    const created = await createOk(t, oidcBody({ client_secret: 'very-secret-value' }));
    const [row] = await db.orm
      .select()
      .from(db.t.customOAuthProviders)
      .where(eq(db.t.customOAuthProviders.id, created.id));
    expect(row!.clientSecret).not.toContain('very-secret-value');
    expect(JSON.parse(row!.clientSecret)).toMatchObject({ key_id: 'k1', alg: 'aes-gcm-hkdf' });
    // The token endpoint still receives the secret in clear (HTTP Basic).
    nextClaims = { sub: `enc-${n}`, email: uniqueEmail('enc'), email_verified: true };
    const location = await signIn(t, created.identifier);
    expect(location).toContain('#access_token=');
    const tokenCall = idp.requests.filter((r) => r.path === '/token').at(-1)!;
    expect(Buffer.from(String(tokenCall.headers.authorization).slice(6), 'base64').toString()).toBe(
      'acme-web:very-secret-value',
    );
  });
});

describe('SSRF guard', () => {
  const refused = async (t: TestApp, over: Json, message: string) => {
    const res = await create(t, oidcBody(over));
    expect(res.status, JSON.stringify(over)).toBe(400);
    expect(await res.json()).toMatchObject({ error_code: 'validation_failed', msg: message });
  };

  test('at creation: https only, no localhost, no private, loopback, link-local or mapped addresses, the name must resolve', async () => {
    const t = await app();
    await refused(t, { issuer: 'http://idp.example.com' }, 'URL must use HTTPS');
    await refused(t, { issuer: 'https://localhost/realm' }, 'URL cannot point to localhost or loopback addresses');
    await refused(t, { issuer: 'https://app.localhost' }, 'URL cannot point to localhost or loopback addresses');
    await refused(t, { issuer: 'https://10.0.0.5' }, 'URL cannot resolve to private network addresses');
    await refused(t, { issuer: 'https://[::1]:8443' }, 'URL cannot point to localhost or loopback addresses');
    await refused(t, { issuer: 'https://[fd00::1]' }, 'URL cannot resolve to private network addresses');
    await refused(t, { issuer: 'https://169.254.169.254/latest' }, 'URL cannot resolve to link-local addresses');
    // The URL parser's canonical form of 127.0.0.1, and another loopback address.
    await refused(t, { issuer: 'https://2130706433' }, 'URL cannot point to localhost or loopback addresses');
    await refused(t, { issuer: 'https://127.1.2.3' }, 'URL cannot resolve to loopback addresses');
    await refused(t, { issuer: 'https://sso.corp.example' }, 'URL cannot resolve to private network addresses');
    await refused(t, { issuer: 'https://mapped.example.net' }, 'URL cannot resolve to private network addresses');
    await refused(t, { issuer: 'https://nowhere.invalid' }, 'Unable to resolve hostname');
    await refused(t, { discovery_url: `${internal.base}/secret` }, 'URL must use HTTPS');
    await refused(
      t,
      {
        provider_type: 'oauth2',
        issuer: undefined,
        authorization_url: 'https://idp.example.com/a',
        token_url: 'https://idp.example.com/t',
        userinfo_url: 'https://192.168.0.10/me',
      },
      'URL cannot resolve to private network addresses',
    );
    // Trust is per host:port: the trusted host on another port is not trusted.
    const otherPort = `http://127.0.0.1:${Number(new URL(idp.base).port) + 1}`;
    await refused(t, { issuer: otherPort }, 'URL must use HTTPS');
    expect(internal.requests).toEqual([]);
    const untrusting = await app({ AUTHSVC_CUSTOM_OAUTH_TRUSTED_HOSTS: '' });
    await refused(untrusting, {}, 'URL must use HTTPS');
  });

  test('at every fetch: a discovery document naming an untrusted private endpoint, or a redirect to one, reaches nothing', async () => {
    const t = await app();
    const body = oidcBody();
    await createOk(t, body);
    const original = idp.routes.get('GET /.well-known/openid-configuration')!;
    idp.routes.set('GET /.well-known/openid-configuration', () => ({
      body: {
        issuer: idp.base,
        authorization_endpoint: `${idp.base}/authorize`,
        token_endpoint: `${internal.base}/secret`,
        jwks_uri: `${idp.base}/jwks`,
      },
    }));
    t.deps.oauthCache?.custom.forget(`${idp.base}/.well-known/openid-configuration`);
    try {
      const res = await t.request('GET', `/authorize?provider=${body.identifier}`);
      expect(res.status).toBe(302);
      const state = new URL(res.headers.get('location')!).searchParams.get('state')!;
      const cb = await t.request('GET', `/callback?state=${state}&code=abc`);
      expect(cb.status).toBe(302);
      expect(cb.headers.get('location')).toContain('error=server_error');
      expect(internal.requests).toEqual([]);
    } finally {
      idp.routes.set('GET /.well-known/openid-configuration', original);
    }

    // An OAuth 2 provider whose userinfo endpoint redirects into the private network.
    const o2 = await createOk(t, {
      provider_type: 'oauth2',
      identifier: ident(),
      name: 'Redirecting',
      client_id: 'acme-web',
      client_secret: 's',
      pkce_enabled: false,
      authorization_url: `${idp.base}/authorize`,
      token_url: `${idp.base}/token`,
      userinfo_url: `${idp.base}/hop`,
    });
    idp.routes.set('GET /hop', () => ({ status: 302, body: '', headers: { location: `${internal.base}/secret` } }));
    const location = await signIn(t, o2.identifier, false);
    expect(location).toContain('error=server_error');
    expect(internal.requests).toEqual([]);
  });
});

/** /authorize then /callback in one browser; the final Location. */
async function signIn(t: TestApp, identifier: string, expectPkce = true, query = ''): Promise<string> {
  const res = await t.request('GET', `/authorize?provider=${identifier}${query}`);
  expect(res.status, await res.clone().text()).toBe(302);
  const to = new URL(res.headers.get('location')!);
  if (expectPkce) expect(to.searchParams.get('code_challenge_method')).toBe('S256');
  const cb = await t.request('GET', `/callback?state=${to.searchParams.get('state')}&code=the-code`);
  expect(cb.status).toBe(302);
  return cb.headers.get('location')!;
}

describe('sign-in with custom:<id>', () => {
  test("OIDC: /authorize sends GoTrue's request with PKCE; the callback verifies the ID token and signs the user in", async () => {
    const t = await app();
    const body = oidcBody({ attribute_mapping: { nickname: 'name' } });
    await createOk(t, body);
    const email = uniqueEmail('oidc');
    nextClaims = { sub: `oidc-${n}`, email, email_verified: true, name: 'Ada Acme', team: 'red', secret_claim: 'x' };
    const res = await t.request(
      'GET',
      `/authorize?provider=${body.identifier}&redirect_to=http://localhost:3000/welcome`,
    );
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(`${idp.base}/authorize`);
    const q = Object.fromEntries(to.searchParams);
    expect(q).toMatchObject({
      client_id: 'acme-web',
      response_type: 'code',
      redirect_uri: 'http://localhost:9999/callback',
      scope: 'openid profile email',
      prompt: 'login',
      code_challenge_method: 'S256',
    });

    const cb = await t.request('GET', `/callback?state=${q.state}&code=the-code`);
    expect(cb.status).toBe(302);
    const done = new URL(cb.headers.get('location')!);
    expect(done.pathname).toBe('/welcome');
    const fragment = new URLSearchParams(done.hash.slice(1));
    expect(fragment.get('provider')).toBe(body.identifier);
    const tokenCall = idp.requests.filter((r) => r.path === '/token').at(-1)!;
    expect(tokenCall.form).toMatchObject({
      grant_type: 'authorization_code',
      code: 'the-code',
      redirect_uri: 'http://localhost:9999/callback',
    });
    expect(s256(tokenCall.form.code_verifier!)).toBe(q.code_challenge);

    const user = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${fragment.get('access_token')}` })
    ).json()) as Json;
    expect(user.email).toBe(email);
    expect(user.app_metadata).toMatchObject({ provider: body.identifier, providers: [body.identifier] });
    const identity = user.identities[0];
    expect(identity).toMatchObject({ provider: body.identifier, id: nextClaims.sub });
    // Allow-listed claims only, and GoTrue's attribute mapping between claims.
    expect(identity.identity_data.custom_claims).toEqual({ team: 'red' });
    expect(identity.identity_data).toMatchObject({ name: 'Ada Acme', nickname: 'Ada Acme', email_verified: true });
    expect(JSON.stringify(identity.identity_data)).not.toContain('secret_claim');

    // The verifier is used once: the state cannot be replayed.
    const replay = await t.request('GET', `/callback?state=${q.state}&code=the-code`);
    expect(replay.headers.get('location')).toContain('error');
  });

  test('an ID token for another audience, or signed by another key, signs nobody in', async () => {
    const t = await app();
    const body = oidcBody();
    await createOk(t, body);
    nextClaims = { sub: 'wrong-aud', email: uniqueEmail('aud'), aud: 'someone-else' };
    expect(await signIn(t, body.identifier)).toContain('error=server_error');
    const forger = await signingKey('idp-1');
    const tokenRoute = idp.routes.get('POST /token')!;
    idp.routes.set('POST /token', async () => ({
      body: {
        access_token: 'a',
        id_token: await forger.sign({ iss: idp.base, aud: 'acme-web', sub: 'forged', email: uniqueEmail('f') }),
      },
    }));
    try {
      expect(await signIn(t, body.identifier)).toContain('error=server_error');
    } finally {
      idp.routes.set('POST /token', tokenRoute);
    }
    const rows = await db.orm.select().from(db.t.identities).where(eq(db.t.identities.providerId, 'forged'));
    expect(rows).toEqual([]);
  });

  test('OAuth 2 kind: explicit endpoints, the user from userinfo, no PKCE when switched off', async () => {
    const t = await app();
    const created = await createOk(t, {
      provider_type: 'oauth2',
      identifier: ident(),
      name: 'Plain OAuth',
      client_id: 'acme-web',
      client_secret: 's',
      pkce_enabled: false,
      scopes: ['read'],
      authorization_url: `${idp.base}/authorize`,
      token_url: `${idp.base}/token`,
      userinfo_url: `${idp.base}/userinfo`,
      custom_claims_allowlist: ['team'],
    });
    nextClaims = { email: uniqueEmail('o2') };
    const res = await t.request('GET', `/authorize?provider=${created.identifier}&scopes=read%20write`);
    const to = new URL(res.headers.get('location')!);
    expect(to.searchParams.get('scope')).toBe('read write');
    expect(to.searchParams.has('code_challenge')).toBe(false);
    const cb = await t.request('GET', `/callback?state=${to.searchParams.get('state')}&code=c2`);
    const fragment = new URLSearchParams(new URL(cb.headers.get('location')!).hash.slice(1));
    const user = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${fragment.get('access_token')}` })
    ).json()) as Json;
    expect(user.email).toBe(nextClaims.email);
    expect(user.identities[0].identity_data).toMatchObject({
      sub: 'oauth2-user',
      name: 'From Userinfo',
      custom_claims: { team: 'blue' },
    });
    expect(idp.requests.filter((r) => r.path === '/userinfo').at(-1)!.headers.authorization).toBe('Bearer idp-access');
  });

  test('unknown, disabled and switched-off providers answer GoTrue\'s "Unsupported provider"', async () => {
    const t = await app();
    const unknown = await t.request('GET', '/authorize?provider=custom:nope');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Unsupported provider: custom provider custom:nope not found',
    });
    const body = oidcBody({ enabled: false });
    await createOk(t, body);
    const disabled = await t.request('GET', `/authorize?provider=${body.identifier}`);
    expect(await disabled.json()).toMatchObject({
      msg: `Unsupported provider: custom provider ${body.identifier} is disabled`,
    });
    const off = await app({ AUTHSVC_CUSTOM_OAUTH_ENABLED: 'false' });
    expect(await (await off.request('GET', `/authorize?provider=${body.identifier}`)).json()).toMatchObject({
      msg: 'Unsupported provider: custom OAuth providers are disabled',
    });
  });
});

describe('POST /token?grant_type=id_token with provider custom:<id>', () => {
  test('accepts the client id and acceptable_client_ids as audience; checks the nonce', async () => {
    const t = await app();
    const body = oidcBody();
    await createOk(t, body);
    const email = uniqueEmail('idt');
    const token = await key.sign({ iss: idp.base, aud: 'acme-ios', sub: `idt-${n}`, email, email_verified: true });
    const res = await t.request('POST', '/token?grant_type=id_token', { provider: body.identifier, id_token: token });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await res.json()).user).toMatchObject({ email, app_metadata: { provider: body.identifier } });

    const wrong = await t.request('POST', '/token?grant_type=id_token', {
      provider: body.identifier,
      id_token: await key.sign({ iss: idp.base, aud: 'other', sub: 'x' }),
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      error: 'invalid request',
      error_description: 'Unacceptable audience in id_token: [other]',
    });
    const nonce = await t.request('POST', '/token?grant_type=id_token', {
      provider: body.identifier,
      id_token: await key.sign({ iss: idp.base, aud: 'acme-web', sub: 'y', nonce: 'abc' }),
    });
    expect(await nonce.json()).toMatchObject({
      error_description: 'Passed nonce and nonce in id_token should either both exist or not.',
    });
  });

  test("GoTrue's refusals: unknown, disabled, OAuth 2 kind, feature off", async () => {
    const t = await app();
    const grant = (app: TestApp, provider: string) =>
      app.request('POST', '/token?grant_type=id_token', { provider, id_token: 'x.y.z' });
    expect(await (await grant(t, 'custom:nope')).json()).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Custom provider "custom:nope" not found',
    });
    const disabled = oidcBody({ enabled: false });
    await createOk(t, disabled);
    expect(await (await grant(t, disabled.identifier)).json()).toMatchObject({
      error_code: 'provider_disabled',
      msg: `Custom provider "${disabled.identifier}" is disabled`,
    });
    const o2 = await createOk(t, {
      provider_type: 'oauth2',
      identifier: ident(),
      name: 'O2',
      client_id: 'c',
      client_secret: 's',
      authorization_url: `${idp.base}/authorize`,
      token_url: `${idp.base}/token`,
      userinfo_url: `${idp.base}/userinfo`,
    });
    expect(await (await grant(t, o2.identifier)).json()).toMatchObject({
      error_code: 'validation_failed',
      msg: `Provider "${o2.identifier}" is not an OIDC provider`,
    });
    const off = await app({ AUTHSVC_CUSTOM_OAUTH_ENABLED: 'false' });
    expect(await (await grant(off, o2.identifier)).json()).toMatchObject({
      msg: 'Custom OAuth providers are disabled',
    });
  });
});
