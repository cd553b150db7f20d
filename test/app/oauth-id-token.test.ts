// POST /token?grant_type=id_token (supabase-js signInWithIdToken): ID tokens of Google, Apple,
// Azure, Facebook and Keycloak checked against a local issuer's keys, audience, expiry, nonce and
// at_hash, with GoTrue's OAuth-style errors; linking to the signed-in user.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { type FakeProvider, routedFetch, startFakeProvider } from '../helpers/fake-oauth.ts';
import { atHash, type SigningKey, signingKey } from '../helpers/oauth-scenarios-oidc.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';
import { verifiedTotp } from '../helpers/totp-factor.ts';

type Json = Record<string, any>;
let db: Database;
let fake: FakeProvider;
let key: SigningKey;
let other: SigningKey;
const TENANT = '11111111-2222-3333-4444-555555555555';
const AZURE_ISS = `https://login.microsoftonline.com/${TENANT}/v2.0`;

beforeAll(async () => {
  db = await openTestDb();
  key = await signingKey('k1');
  other = await signingKey('k1'); // same kid, another key: a forgery
  fake = await startFakeProvider();
  const discovery = (issuer: string, jwks: string) => () => ({
    body: { issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: jwks },
  });
  fake.routes.set('GET /.well-known/openid-configuration', (req) => {
    const host = new URL(req.url!).host;
    if (host === 'accounts.google.com')
      return discovery('https://accounts.google.com', 'https://www.googleapis.com/oauth2/v3/certs')();
    if (host === 'appleid.apple.com')
      return discovery('https://appleid.apple.com', 'https://appleid.apple.com/auth/keys')();
    return discovery('https://www.facebook.com', 'https://www.facebook.com/.well-known/oauth/openid/jwks/')();
  });
  fake.routes.set(
    `GET /${TENANT}/v2.0/.well-known/openid-configuration`,
    discovery(AZURE_ISS, `https://login.microsoftonline.com/${TENANT}/discovery/v2.0/keys`),
  );
  fake.routes.set('GET /realms/acme/.well-known/openid-configuration', () => ({
    body: {
      issuer: `${fake.base}/realms/acme`,
      jwks_uri: `${fake.base}/realms/acme/certs`,
      authorization_endpoint: 'x',
      token_endpoint: 'y',
    },
  }));
  for (const path of [
    '/oauth2/v3/certs',
    '/auth/keys',
    '/.well-known/oauth/openid/jwks/',
    `/${TENANT}/discovery/v2.0/keys`,
    '/realms/acme/certs',
  ]) {
    fake.routes.set(`GET ${path}`, () => ({ body: { keys: [key.jwk] } }));
  }
});
afterAll(async () => {
  await fake?.close();
  await db?.close();
});

const HOSTS = [
  'accounts.google.com',
  'www.googleapis.com',
  'appleid.apple.com',
  'www.facebook.com',
  'login.microsoftonline.com',
];

async function app(env: Record<string, string> = {}, over: Parameters<typeof buildTestApp>[2] = {}): Promise<TestApp> {
  const providers: Record<string, string> = {};
  for (const p of ['google', 'azure', 'facebook', 'keycloak']) {
    const x = `GOTRUE_EXTERNAL_${p.toUpperCase()}`;
    Object.assign(providers, {
      [`${x}_ENABLED`]: 'true',
      [`${x}_CLIENT_ID`]: `${p}-web,${p}-ios`,
      [`${x}_SECRET`]: 's',
      [`${x}_REDIRECT_URI`]: 'https://auth.example.com/callback',
    });
  }
  providers.GOTRUE_EXTERNAL_KEYCLOAK_URL = `${fake.base}/realms/acme`;
  return buildTestApp(db, { ...providers, ...env }, { fetch: routedFetch(fake, HOSTS), ...over });
}

async function sha256Hex(s: string): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s)))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}

let n = 0;
function googleClaims(over: Record<string, unknown> = {}) {
  n += 1;
  return {
    iss: 'https://accounts.google.com',
    aud: 'google-ios',
    sub: `g-${Date.now()}-${n}`,
    email: uniqueEmail('g'),
    email_verified: true,
    name: 'Id Token',
    ...over,
  };
}

const grant = (t: TestApp, body: Json) => t.request('POST', '/token?grant_type=id_token', body);

describe('grant_type=id_token', () => {
  test('supabase-js signInWithIdToken (Google, hashed nonce, any configured client id as audience): a session and a verified user', async () => {
    const t = await app();
    const claims = googleClaims({ nonce: await sha256Hex('raw-nonce') });
    const token = await key.sign(claims);
    const client = supabaseClientFor(t.app);
    const { data, error } = await client.auth.signInWithIdToken({ provider: 'google', token, nonce: 'raw-nonce' });
    expect(error).toBeNull();
    expect(data.user!.email).toBe(String(claims.email).toLowerCase());
    expect(data.user!.email_confirmed_at).toBeTruthy();
    expect(data.user!.app_metadata).toEqual({ provider: 'google', providers: ['google'] });
    expect(data.user!.identities![0]).toMatchObject({ provider: 'google', id: claims.sub });
    const again = await grant(t, { provider: 'google', id_token: await key.sign({ ...claims, nonce: undefined }) });
    expect((await again.json()).user.id).toBe(data.user!.id);
  });

  test("refusals: GoTrue's 400 {error, error_description}", async () => {
    const t = await app();
    const cases: [Json, string, string][] = [
      [{ provider: 'google' }, 'invalid request', 'id_token required'],
      [{ id_token: 'x' }, 'invalid request', 'provider or client_id and issuer required'],
      [
        { provider: 'google', id_token: await key.sign(googleClaims({ aud: 'someone-else' })) },
        'invalid request',
        'Unacceptable audience in id_token: [someone-else]',
      ],
      [
        { provider: 'google', id_token: await key.sign(googleClaims(), { expiresIn: '-1m' }) },
        'invalid request',
        'Bad ID token',
      ],
      [{ provider: 'google', id_token: await other.sign(googleClaims()) }, 'invalid request', 'Bad ID token'],
      [
        { provider: 'google', id_token: await key.sign(googleClaims({ iss: 'https://evil.example' })) },
        'invalid request',
        'Bad ID token',
      ],
      [
        { provider: 'google', id_token: await key.sign(googleClaims({ nonce: await sha256Hex('a') })), nonce: 'b' },
        'invalid nonce',
        'Nonces mismatch',
      ],
      [
        { provider: 'google', id_token: await key.sign(googleClaims()), nonce: 'b' },
        'invalid request',
        'Passed nonce and nonce in id_token should either both exist or not.',
      ],
      [
        {
          provider: 'google',
          id_token: await key.sign(googleClaims({ at_hash: await atHash('real') })),
          access_token: 'forged',
        },
        'invalid request',
        'Bad ID token',
      ],
    ];
    for (const [body, error, description] of cases) {
      const res = await grant(t, body);
      expect(res.status, description).toBe(400);
      expect(await res.json()).toEqual({ error, error_description: description });
    }
    const disabled = await grant(t, {
      provider: 'apple',
      id_token: await key.sign({ iss: 'https://appleid.apple.com', aud: 'x', sub: '1' }),
    });
    expect(await disabled.json()).toEqual({
      code: 400,
      error_code: 'provider_disabled',
      msg: 'Provider (issuer "https://appleid.apple.com") is not enabled',
    });
    const unknown = await grant(t, { client_id: 'x', issuer: 'https://idp.example', id_token: 'a.b.c' });
    expect((await unknown.json()).msg).toBe('Custom OIDC provider "" not allowed');
  });

  test('SKIP_NONCE_CHECK, Facebook Limited Login (nonce never checked), Azure by tenant issuer, Keycloak by issuer', async () => {
    const t = await app({ GOTRUE_EXTERNAL_GOOGLE_SKIP_NONCE_CHECK: 'true' });
    expect(
      (await grant(t, { provider: 'google', id_token: await key.sign(googleClaims({ nonce: 'whatever' })) })).status,
    ).toBe(200);

    const fb = await grant(t, {
      provider: 'facebook',
      id_token: await key.sign({
        iss: 'https://www.facebook.com',
        aud: 'facebook-web',
        sub: `fb-${n}`,
        email: uniqueEmail('fb'),
        nonce: 'n',
      }),
    });
    expect(fb.status).toBe(200);
    expect((await fb.json()).user.identities[0].identity_data.email_verified).toBe(true);

    // xms_edov false: Azure does not vouch for the address: a confirmation email, no session, and
    // the address is not the account's until confirmed (H2).
    const azEmail = uniqueEmail('az');
    const az = await grant(t, {
      issuer: AZURE_ISS,
      client_id: 'azure-web',
      id_token: await key.sign({ iss: AZURE_ISS, aud: 'azure-web', sub: `az-${n}`, email: azEmail, xms_edov: false }),
    });
    expect(az.status).toBe(422);
    expect((await az.json()).error_code).toBe('provider_email_needs_verification');
    expect(t.mails.at(-1)).toMatchObject({ kind: 'confirmation', to: azEmail });
    expect(await db.orm.select().from(db.t.users).where(eq(db.t.users.email, azEmail))).toHaveLength(0);
    const azOk = await grant(t, {
      issuer: AZURE_ISS,
      client_id: 'azure-web',
      id_token: await key.sign({
        iss: AZURE_ISS,
        aud: 'azure-web',
        sub: `az2-${n}`,
        email: uniqueEmail('az'),
        xms_edov: '1',
      }),
    });
    expect(azOk.status).toBe(200);
    const kc = await grant(t, {
      issuer: `${fake.base}/realms/acme`,
      client_id: 'keycloak-web',
      id_token: await key.sign({
        iss: `${fake.base}/realms/acme`,
        aud: 'keycloak-web',
        sub: `kc-${n}`,
        email: uniqueEmail('kc'),
        email_verified: true,
        preferred_username: 'kc',
      }),
    });
    expect(kc.status).toBe(200);
    expect((await kc.json()).user.identities[0].identity_data.preferred_username).toBe('kc');
  });

  test("link_identity: the ID token's identity joins the signed-in user", async () => {
    const t = await app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { session } = await signUpConfirmed(t);
    const noAuth = await grant(t, {
      provider: 'google',
      id_token: await key.sign(googleClaims()),
      link_identity: true,
    });
    expect(await noAuth.json()).toEqual({
      error: 'invalid request',
      error_description: 'Linking requires a valid user access token in Authorization',
    });
    const claims = googleClaims();
    const res = await t.request(
      'POST',
      '/token?grant_type=id_token',
      { provider: 'google', id_token: await key.sign(claims), link_identity: true },
      { authorization: `Bearer ${session.access_token}` },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.user.id).toBe(session.user.id);
    expect(body.user.identities.map((i: Json) => i.provider).sort()).toEqual(['email', 'google']);
    const rows = await db.orm
      .select()
      .from(db.t.identities)
      .where(eq(db.t.identities.providerId, String(claims.sub)));
    expect(rows.map((r) => r.userId)).toEqual([session.user.id]);
  });
});

describe('M2 (security review 2026-12-01): ID-token linking needs aal2 while the user has a verified factor', () => {
  test('M2 (security review 2026-12-01): link_identity with the password-only (aal1) session of a user with verified TOTP: 401 insufficient_aal, nothing linked; with the aal2 session it links', async () => {
    const t = await app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email, password, session } = await signUpConfirmed(t);
    const { aal2 } = await verifiedTotp(t, session.access_token);
    const aal1 = (await (await t.request('POST', '/token?grant_type=password', { email, password })).json()) as Json;
    const claims = googleClaims();
    const link = async (token: string) =>
      t.request(
        'POST',
        '/token?grant_type=id_token',
        { provider: 'google', id_token: await key.sign(claims), link_identity: true },
        { authorization: `Bearer ${token}` },
      );
    const refused = await link(aal1.access_token);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      code: 401,
      error_code: 'insufficient_aal',
      msg: 'AAL2 session is required to link an identity when MFA is enabled.',
    });
    expect(
      await db.orm
        .select()
        .from(db.t.identities)
        .where(eq(db.t.identities.providerId, String(claims.sub))),
    ).toHaveLength(0);
    const ok = await link(aal2.access_token);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Json).user.identities.map((i: Json) => i.provider).sort()).toEqual([
      'email',
      'google',
    ]);
  });
});

describe('grant_type=id_token, issuers, audiences and keys', () => {
  const APPLE = {
    GOTRUE_EXTERNAL_APPLE_ENABLED: 'true',
    GOTRUE_EXTERNAL_APPLE_CLIENT_ID: 'apple-web',
    GOTRUE_EXTERNAL_APPLE_SECRET: 's',
    GOTRUE_EXTERNAL_APPLE_REDIRECT_URI: 'https://auth.example.com/callback',
  };

  test('Google tokens naming their issuer without the scheme (accounts.google.com) are accepted, as go-oidc does; no other spelling is', async () => {
    const t = await app();
    const claims = googleClaims({ iss: 'accounts.google.com' });
    const ok = await grant(t, { provider: 'google', id_token: await key.sign(claims) });
    expect(ok.status).toBe(200);
    expect((await ok.json()).user.identities[0].identity_data.iss).toBe('accounts.google.com');
    for (const iss of ['http://accounts.google.com', 'accounts.google.com/', 'google.com']) {
      const res = await grant(t, { provider: 'google', id_token: await key.sign(googleClaims({ iss })) });
      expect(await res.json(), iss).toEqual({ error: 'invalid request', error_description: 'Bad ID token' });
    }
  });

  test("EXTERNAL_IOS_BUNDLE_ID is one more audience of Apple ID tokens (GoTrue), and of no other provider's", async () => {
    const appleToken = async () =>
      key.sign({
        iss: 'https://appleid.apple.com',
        aud: 'com.example.ios',
        sub: `apple-${Date.now()}-${++n}`,
        email: uniqueEmail('apple'),
      });
    const without = await app(APPLE);
    expect(await (await grant(without, { provider: 'apple', id_token: await appleToken() })).json()).toEqual({
      error: 'invalid request',
      error_description: 'Unacceptable audience in id_token: [com.example.ios]',
    });
    const t = await app({ ...APPLE, GOTRUE_EXTERNAL_IOS_BUNDLE_ID: 'com.example.ios' });
    const ok = await grant(t, { provider: 'apple', id_token: await appleToken() });
    expect(ok.status).toBe(200);
    expect((await ok.json()).user.app_metadata.provider).toBe('apple');
    const google = await grant(t, {
      provider: 'google',
      id_token: await key.sign(googleClaims({ aud: 'com.example.ios' })),
    });
    expect(await google.json()).toEqual({
      error: 'invalid request',
      error_description: 'Unacceptable audience in id_token: [com.example.ios]',
    });
  });

  test('the JWKS: one fetch for concurrent first uses, and for unknown key ids one refetch a minute at most', async () => {
    let shift = 0;
    const t = await app({}, { now: () => new Date(Date.now() + shift) });
    const count = (url: string) => fake.requests.filter((r) => r.url === url).length;
    const certs = () => count('https://www.googleapis.com/oauth2/v3/certs');
    const discovery = () => count('https://accounts.google.com/.well-known/openid-configuration');
    const [certs0, discovery0] = [certs(), discovery()];
    const first = await Promise.all(
      Array.from({ length: 5 }, async () => grant(t, { provider: 'google', id_token: await key.sign(googleClaims()) })),
    );
    expect(first.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect([certs() - certs0, discovery() - discovery0]).toEqual([1, 1]);

    for (let i = 0; i < 5; i++) {
      const res = await grant(t, { provider: 'google', id_token: await key.sign(googleClaims(), { kid: 'rotated' }) });
      expect(await res.json()).toEqual({ error: 'invalid request', error_description: 'Bad ID token' });
    }
    expect(certs() - certs0).toBe(2);
    shift = 61_000;
    await grant(t, { provider: 'google', id_token: await key.sign(googleClaims(), { kid: 'rotated' }) });
    expect(certs() - certs0).toBe(3);
    expect(discovery() - discovery0).toBe(1);
  });

  test('link_identity for an anonymous user: the same user gets the verified Google email, confirmed, no longer anonymous', async () => {
    const t = await app({ AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    const anon = (await (await t.request('POST', '/signup', {})).json()) as Json;
    expect(anon.user.is_anonymous).toBe(true);
    const claims = googleClaims();
    const res = await t.request(
      'POST',
      '/token?grant_type=id_token',
      { provider: 'google', id_token: await key.sign(claims), link_identity: true },
      { authorization: `Bearer ${anon.access_token}` },
    );
    expect(res.status).toBe(200);
    const { user } = (await res.json()) as Json;
    expect(user.id).toBe(anon.user.id);
    expect(user.email).toBe(String(claims.email).toLowerCase());
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.is_anonymous).toBe(false);
    expect(user.identities.map((i: Json) => i.provider)).toEqual(['google']);
  });
});
