// Sign in with Apple with the client secret authsvc signs (EXTERNAL_APPLE_PRIVATE_KEY, _KEY_ID,
// _TEAM_ID, no EXTERNAL_APPLE_SECRET): a fake Apple on 127.0.0.1 (reached through deps.fetch, as
// Apple's host is fixed) verifies every secret it receives with the key's public half and checks
// each header field and claim; the secret is reused until 5 minutes before it expires.
import { exportJWK, exportPKCS8, generateKeyPair, jwtVerify, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { bearer, buildTestApp, serviceRoleHeaders, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { type FakeProvider, routedFetch, type SeenRequest, startFakeProvider } from '../helpers/fake-oauth.ts';
import { ENCRYPTION_ENV } from '../helpers/fake-refresh-providers.ts';

type Json = Record<string, any>;
const TEAM_ID = 'TEAM123456';
const KEY_ID = 'KEY9876543';
const CALLBACK = 'https://auth.example.com/callback';
const APPLE = 'https://appleid.apple.com';

let db: Database;
let fake: FakeProvider;
let pem: string;
let publicKey: CryptoKey;
let idTokenKey: CryptoKey;
let clock: Date;
/** Each token request's client secret, verified: header, claims, and how it was sent. */
let seen: { jwt: string; header: Json; claims: Json; basic: string }[];

async function idToken(): Promise<string> {
  const iat = Math.floor(clock.getTime() / 1000);
  return new SignJWT({ email: 'ap.ple@privaterelay.appleid.com', email_verified: 'true' })
    .setProtectedHeader({ alg: 'RS256', kid: 'apple-id-key' })
    .setIssuer(APPLE)
    .setAudience('apple-client')
    .setSubject('001234.apple-secret-test.0001')
    .setIssuedAt(iat)
    .setExpirationTime(iat + 600)
    .sign(idTokenKey);
}

async function tokenRoute(req: SeenRequest) {
  const jwt = req.form.secret!;
  const verified = await jwtVerify(jwt, publicKey, { algorithms: ['ES256'], currentDate: clock });
  const basic = atob(String(req.headers.authorization).replace(/^Basic /, ''));
  seen.push({ jwt, header: verified.protectedHeader, claims: verified.payload, basic });
  return {
    body: {
      access_token: 'apple-access',
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'apple-refresh',
      id_token: await idToken(),
    },
  };
}

beforeAll(async () => {
  db = await openTestDb();
  const ec = await generateKeyPair('ES256', { extractable: true });
  pem = await exportPKCS8(ec.privateKey);
  publicKey = ec.publicKey;
  const rsa = await generateKeyPair('RS256', { extractable: true });
  idTokenKey = rsa.privateKey;
  const jwk = { ...(await exportJWK(rsa.publicKey)), kid: 'apple-id-key', alg: 'RS256', use: 'sig' };
  fake = await startFakeProvider({
    'GET /.well-known/openid-configuration': () => ({
      body: {
        issuer: APPLE,
        authorization_endpoint: `${APPLE}/auth/authorize`,
        token_endpoint: `${APPLE}/auth/token`,
        jwks_uri: `${APPLE}/auth/keys`,
      },
    }),
    'GET /auth/keys': () => ({ body: { keys: [jwk] } }),
    'POST /auth/token': tokenRoute,
  });
});
afterAll(async () => {
  await fake?.close();
  await db?.close();
});
beforeEach(() => {
  seen = [];
  clock = new Date('2031-03-01T10:00:00Z');
});

const APPLE_ENV = {
  GOTRUE_EXTERNAL_APPLE_ENABLED: 'true',
  GOTRUE_EXTERNAL_APPLE_CLIENT_ID: 'apple-client,com.example.ios',
  GOTRUE_EXTERNAL_APPLE_REDIRECT_URI: CALLBACK,
  AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**',
  AUTHSVC_EXTERNAL_APPLE_KEY_ID: KEY_ID,
  AUTHSVC_EXTERNAL_APPLE_TEAM_ID: TEAM_ID,
};

const app = (env: Record<string, string> = {}) =>
  buildTestApp(
    db,
    { ...APPLE_ENV, AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: pem, ...env },
    { fetch: routedFetch(fake, ['appleid.apple.com']), now: () => clock },
  );

/** /authorize, then Apple's form_post to /callback: the session's fragment. */
async function signIn(t: TestApp): Promise<Json> {
  const started = await t.request('GET', '/authorize?provider=apple&redirect_to=https://app.example.com/done');
  const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
  const res = await t.request('POST', '/callback', new URLSearchParams({ code: 'apple-code', state }).toString(), {
    'content-type': 'application/x-www-form-urlencoded',
  });
  expect(res.status).toBe(302);
  const loc = new URL(res.headers.get('location')!);
  const fragment = Object.fromEntries(new URLSearchParams(loc.hash.slice(1)));
  expect(fragment.access_token, loc.href).toBeTruthy();
  return fragment;
}

describe('Apple client secret signed by authsvc', () => {
  test('an ES256 JWT: kid the key id, iss the team, sub the first client id, aud Apple, an hour long; sent as the secret and as client_secret', async () => {
    const t = await app();
    const f = await signIn(t);
    expect(f.provider_token).toBe('apple-access');
    expect(seen).toHaveLength(1);
    const [s] = seen;
    expect(s!.header).toEqual({ alg: 'ES256', kid: KEY_ID });
    const iat = Math.floor(clock.getTime() / 1000);
    expect(s!.claims).toEqual({ iss: TEAM_ID, sub: 'apple-client', aud: APPLE, iat, exp: iat + 3600 });
    // x/oauth2's first try: HTTP Basic with the client id; Apple's own form fields beside it.
    expect(s!.basic).toBe(`apple-client:${s!.jwt}`);
    const token = fake.requests.find((r) => r.path === '/auth/token')!;
    expect(token.form).toEqual({
      grant_type: 'authorization_code',
      code: 'apple-code',
      redirect_uri: CALLBACK,
      client_id: 'apple-client',
      secret: s!.jwt,
    });
  });

  test('one secret for every sign-in until 5 minutes before it expires, then a new one', async () => {
    const t = await app();
    await signIn(t);
    clock = new Date(clock.getTime() + 1000);
    await signIn(t);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.jwt).toBe(seen[0]!.jwt);
    const first = seen[0]!.claims;
    clock = new Date((first.exp - 301) * 1000);
    await signIn(t);
    expect(seen[2]!.jwt).toBe(seen[0]!.jwt);
    clock = new Date((first.exp - 300) * 1000);
    await signIn(t);
    expect(seen[3]!.jwt).not.toBe(seen[0]!.jwt);
    expect(seen[3]!.claims).toMatchObject({ iat: first.exp - 300, exp: first.exp - 300 + 3600 });
    clock = new Date(clock.getTime() + 60_000);
    await signIn(t);
    expect(seen[4]!.jwt).toBe(seen[3]!.jwt);
  });

  test('a set EXTERNAL_APPLE_SECRET is sent as it is (no secret is signed)', async () => {
    const sent: string[] = [];
    fake.routes.set('POST /auth/token', async (req) => {
      sent.push(req.form.secret!);
      return { body: { access_token: 'apple-access', token_type: 'Bearer', id_token: await idToken() } };
    });
    try {
      const t = await app({ GOTRUE_EXTERNAL_APPLE_SECRET: 'ready-made-secret' });
      await signIn(t);
      expect(sent).toEqual(['ready-made-secret']);
    } finally {
      fake.routes.set('POST /auth/token', tokenRoute);
    }
  });

  test("the refresh of a stored token (POST /user/identities/apple/token) sends the same signed secret, Apple's way", async () => {
    const t = await app({ ...ENCRYPTION_ENV, AUTHSVC_EXTERNAL_APPLE_STORE_TOKENS: 'true' });
    const f = await signIn(t);
    const res = await t.request('POST', '/user/identities/apple/token', undefined, bearer(f.access_token!));
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 200,
      body: { provider_token: 'apple-access', provider_expires_in: 3600 },
    });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.jwt).toBe(seen[0]!.jwt);
    expect(seen[1]!.basic).toBe(`apple-client:${seen[0]!.jwt}`);
    const sent = fake.requests.filter((r) => r.path === '/auth/token').at(-1)!;
    expect(sent.form).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'apple-refresh',
      client_id: 'apple-client',
      secret: seen[0]!.jwt,
    });
  });

  test('GET /admin/config masks the private key and shows the key id and team id', async () => {
    clock = new Date(); // the service-role token is signed at the real time
    const t = await app();
    const res = await t.request('GET', '/admin/config', undefined, await serviceRoleHeaders(t));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('PRIVATE KEY');
    expect(text).not.toContain(pem.split('\n')[1]!);
    const v = Object.fromEntries(((JSON.parse(text) as Json).variables as Json[]).map((x) => [x.name, x]));
    expect(v.EXTERNAL_APPLE_PRIVATE_KEY).toEqual({
      name: 'EXTERNAL_APPLE_PRIVATE_KEY',
      value: '********',
      secret: true,
      set: true,
    });
    expect(v.EXTERNAL_APPLE_KEY_ID).toMatchObject({ value: KEY_ID, secret: false });
    expect(v.EXTERNAL_APPLE_TEAM_ID).toMatchObject({ value: TEAM_ID, secret: false });
  });
});
