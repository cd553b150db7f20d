// Access tokens: claims and signing (HS256 by default, JWT_KEYS for RS256/ES256/EdDSA), the JWKS
// endpoint, and how GET /user (requireAuth) rejects tokens.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import {
  type CryptoKey,
  type JWK,
  type JWTPayload,
  SignJWT,
  base64url,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  jwtVerify,
} from 'jose';
import type { Database } from '../../src/db/database.ts';
import { loadKeySet, signJwt } from '../../src/crypto/jwt.ts';
import { TEST_JWT_SECRET, type TestApp, buildTestApp, signUpConfirmed } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;

const AUTOCONFIRM = { AUTHSVC_MAILER_AUTOCONFIRM: 'true' };
const GOTRUE_CLAIMS = [
  'sub',
  'aud',
  'exp',
  'iat',
  'email',
  'phone',
  'app_metadata',
  'user_metadata',
  'role',
  'aal',
  'amr',
  'session_id',
  'is_anonymous',
];
const BAD_JWT_PREFIX = 'invalid JWT: unable to parse or verify signature';

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const secretKey = (s: string) => new TextEncoder().encode(s);
const getUser = (t: TestApp, headers: Record<string, string>) => t.request('GET', '/user', undefined, headers);
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

type AsymAlg = 'RS256' | 'ES256' | 'EdDSA';

/** A private JWK as an operator would put it in JWT_KEYS, plus its public CryptoKey. */
async function makeKey(
  alg: AsymAlg,
  kid: string,
  ops: string[] = ['sign'],
): Promise<{ jwk: JWK; publicKey: CryptoKey; privateKey: CryptoKey }> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg, kid, key_ops: ops };
  return { jwk, publicKey, privateKey };
}

async function signWith(
  key: CryptoKey | Uint8Array,
  header: { alg: string; kid?: string },
  claims: JWTPayload,
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ ...header, typ: 'JWT' }).sign(key);
}

async function expectBadJwt(res: Response): Promise<string> {
  const body = (await res.json()) as Json;
  expect({ status: res.status, code: body.error_code }).toEqual({ status: 403, code: 'bad_jwt' });
  expect(body.msg.startsWith(`${BAD_JWT_PREFIX}, `)).toBe(true);
  return body.msg as string;
}

describe('HS256 access tokens (default)', () => {
  test("the synchronous HS256 signer produces jose's exact bytes (JWT_SECRET and a JWT_KEYS oct signer with kid)", async () => {
    const claims = {
      sub: '6f1c1d1e-0000-4000-8000-000000000001',
      aud: 'authenticated',
      exp: 2_000_000_000,
      iat: 1_999_996_400,
      email: 'zoë@example.com',
      user_metadata: { name: 'Łukasz 🙂', nested: { list: [1, 'two', null] } },
      amr: [{ method: 'password', timestamp: 1 }],
    };
    const fromSecret = await loadKeySet({ secret: 'a-secret-of-at-least-32-characters!!' });
    expect(await signJwt(fromSecret, claims)).toBe(
      await signWith(secretKey('a-secret-of-at-least-32-characters!!'), { alg: 'HS256' }, claims),
    );
    const k = base64url.encode(secretKey('another-secret-of-32-characters-or-more'));
    const fromJwk = await loadKeySet({
      keys: [{ kty: 'oct', k, kid: 'hs-1', alg: 'HS256', key_ops: ['sign', 'verify'] } as JsonWebKey],
    });
    const token = await signJwt(fromJwk, claims);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT', kid: 'hs-1' });
    expect(token).toBe(
      await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: 'hs-1' })
        .sign(secretKey('another-secret-of-32-characters-or-more')),
    );
    // A wrong secret does not verify: the signature really is the HMAC.
    await expect(jwtVerify(token, secretKey('another-secret-of-32-characters-or-morf'))).rejects.toThrow();
  });

  test("are signed with JWT_SECRET and carry GoTrue's claims in order; JWT_AUD and JWT_DEFAULT_GROUP_NAME apply", async () => {
    const t = await buildTestApp(db, {
      ...AUTOCONFIRM,
      AUTHSVC_JWT_AUD: 'my-audience',
      AUTHSVC_JWT_DEFAULT_GROUP_NAME: 'member',
    });
    const { email, session } = await signUpConfirmed(t);
    expect(decodeProtectedHeader(session.access_token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const { payload } = await jwtVerify(session.access_token, secretKey(TEST_JWT_SECRET), { algorithms: ['HS256'] });
    expect(Object.keys(payload)).toEqual(GOTRUE_CLAIMS);
    expect(payload).toMatchObject({
      sub: session.user.id,
      aud: 'my-audience',
      role: 'member',
      email,
      phone: '',
      aal: 'aal1',
      is_anonymous: false,
      app_metadata: { provider: 'email', providers: ['email'] },
    });
    expect(typeof payload.aud).toBe('string');
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(session.user).toMatchObject({ aud: 'my-audience', role: 'member' });

    // The same user signs in with a password on the same audience; GET /user accepts the token.
    const login = await t.request('POST', '/token?grant_type=password', { email, password: 'correct-horse-1' });
    const body = (await login.json()) as Json;
    expect(decodeJwt(body.access_token)).toMatchObject({ aud: 'my-audience', role: 'member' });
    const me = await getUser(t, bearer(body.access_token));
    expect(me.status).toBe(200);
    expect(((await me.json()) as Json).id).toBe(session.user.id);
  });

  test('JWT_ISSUER puts iss first; JWT_KEY_ID puts kid in the header', async () => {
    const t = await buildTestApp(db, {
      ...AUTOCONFIRM,
      AUTHSVC_JWT_ISSUER: 'https://auth.example.com/auth/v1',
      AUTHSVC_JWT_KEY_ID: 'hs-1',
    });
    const { session } = await signUpConfirmed(t);
    expect(decodeProtectedHeader(session.access_token)).toEqual({ alg: 'HS256', typ: 'JWT', kid: 'hs-1' });
    const claims = decodeJwt(session.access_token);
    expect(Object.keys(claims)).toEqual(['iss', ...GOTRUE_CLAIMS]);
    expect(claims.iss).toBe('https://auth.example.com/auth/v1');
    expect((await getUser(t, bearer(session.access_token))).status).toBe(200);
  });

  test('without JWT_ISSUER there is no iss claim; aud and role default to authenticated', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { session } = await signUpConfirmed(t);
    const claims = decodeJwt(session.access_token);
    expect(Object.keys(claims)).toEqual(GOTRUE_CLAIMS);
    expect(claims.aud).toBe('authenticated');
    expect(claims.role).toBe('authenticated');
    expect((await getUser(t, bearer(session.access_token))).status).toBe(200);
  });

  test('GET /.well-known/jwks.json lists no keys', async () => {
    const t = await buildTestApp(db);
    const res = await t.request('GET', '/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    expect(await res.json()).toEqual({ keys: [] });
  });
});

describe.each(['RS256', 'ES256', 'EdDSA'] as const)('JWT_KEYS with an %s signing key', (alg) => {
  test('signs with that key and kid, publishes only the public half, and verifies its tokens', async () => {
    const signer = await makeKey(alg, `${alg.toLowerCase()}-current`);
    const previous = await makeKey(alg, `${alg.toLowerCase()}-previous`, ['verify']);
    const t = await buildTestApp(db, { ...AUTOCONFIRM, AUTHSVC_JWT_KEYS: JSON.stringify([signer.jwk, previous.jwk]) });
    const { session } = await signUpConfirmed(t);

    expect(decodeProtectedHeader(session.access_token)).toEqual({ alg, kid: signer.jwk.kid, typ: 'JWT' });
    const { payload } = await jwtVerify(session.access_token, signer.publicKey, { algorithms: [alg] });
    expect(Object.keys(payload)).toEqual(GOTRUE_CLAIMS);
    expect(payload.sub).toBe(session.user.id);
    expect((await getUser(t, bearer(session.access_token))).status).toBe(200);

    const res = await t.request('GET', '/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const { keys } = (await res.json()) as { keys: Json[] };
    expect(keys.map((k) => k.kid)).toEqual([signer.jwk.kid, previous.jwk.kid]);
    for (const [i, k] of keys.entries()) {
      const src = [signer.jwk, previous.jwk][i]!;
      for (const priv of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(k).not.toHaveProperty(priv);
      expect(k).toMatchObject({ kty: src.kty, alg, use: 'sig', key_ops: ['verify'] });
      if (src.kty === 'RSA') expect(k).toMatchObject({ n: src.n, e: src.e });
      else expect(k).toMatchObject({ crv: src.crv, x: src.x, ...(src.y ? { y: src.y } : {}) });
    }

    // kid picks the key: a token from the previous (verify-only) key is still accepted.
    const claims = decodeJwt(session.access_token);
    const old = await signWith(previous.privateKey, { alg, kid: previous.jwk.kid! }, claims);
    expect((await getUser(t, bearer(old))).status).toBe(200);
    // The same token relabelled with the current key's kid fails the signature check.
    const relabelled = await signWith(previous.privateKey, { alg, kid: signer.jwk.kid! }, claims);
    await expectBadJwt(await getUser(t, bearer(relabelled)));
  });
});

describe('verification on GET /user', () => {
  let hs: TestApp;
  let rs: TestApp;
  let hsSession: Json;
  let rsSession: Json;
  let rsSigner: Awaited<ReturnType<typeof makeKey>>;

  beforeAll(async () => {
    hs = await buildTestApp(db, AUTOCONFIRM);
    hsSession = (await signUpConfirmed(hs)).session;
    rsSigner = await makeKey('RS256', 'rs-main');
    rs = await buildTestApp(db, { ...AUTOCONFIRM, AUTHSVC_JWT_KEYS: JSON.stringify([rsSigner.jwk]) });
    rsSession = (await signUpConfirmed(rs)).session;
  });

  test('the issued tokens are accepted (control)', async () => {
    expect((await getUser(hs, bearer(hsSession.access_token))).status).toBe(200);
    expect((await getUser(rs, bearer(rsSession.access_token))).status).toBe(200);
  });

  test('rejects alg "none"', async () => {
    for (const [app, session] of [
      [hs, hsSession],
      [rs, rsSession],
    ] as const) {
      const claims = decodeJwt(session.access_token);
      const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
      const none = `${header}.${base64url.encode(JSON.stringify(claims))}.`;
      expect(await expectBadJwt(await getUser(app, bearer(none)))).toBe(
        `${BAD_JWT_PREFIX}, token signature is invalid: signing method none is invalid`,
      );
      const noneWithSig = `${none}${session.access_token.split('.')[2]}`;
      await expectBadJwt(await getUser(app, bearer(noneWithSig)));
      // No alg, or one golang-jwt does not know: GoTrue's parser calls the token unverifiable.
      const sig = session.access_token.split('.').slice(1).join('.');
      for (const [h, why] of [
        [{ typ: 'JWT' }, 'unspecified'],
        [{ alg: 7 }, 'unspecified'],
        [{ alg: 'XY256' }, 'unavailable'],
      ] as const) {
        const odd = `${base64url.encode(JSON.stringify(h))}.${sig}`;
        expect(await expectBadJwt(await getUser(app, bearer(odd)))).toBe(
          `${BAD_JWT_PREFIX}, token is unverifiable: signing method (alg) is ${why}`,
        );
      }
    }
  });

  test('rejects an asymmetric token with an unknown kid, or with no kid', async () => {
    const claims = decodeJwt(rsSession.access_token);
    const stranger = await makeKey('RS256', 'stranger');
    await expectBadJwt(
      await getUser(rs, bearer(await signWith(stranger.privateKey, { alg: 'RS256', kid: 'stranger' }, claims))),
    );
    // Even the configured key's signature is refused under a kid nobody configured.
    await expectBadJwt(
      await getUser(rs, bearer(await signWith(rsSigner.privateKey, { alg: 'RS256', kid: 'unknown' }, claims))),
    );
    await expectBadJwt(await getUser(rs, bearer(await signWith(stranger.privateKey, { alg: 'RS256' }, claims))));
    // An algorithm that is not configured at all.
    const ec = await makeKey('ES256', 'rs-main');
    await expectBadJwt(
      await getUser(rs, bearer(await signWith(ec.privateKey, { alg: 'ES256', kid: 'rs-main' }, claims))),
    );
  });

  test('rejects HS256 tokens when only asymmetric keys are configured (even signed with JWT_SECRET)', async () => {
    const claims = decodeJwt(rsSession.access_token);
    // BASE_ENV still sets JWT_SECRET; with JWT_KEYS it must not be a way in.
    const forged = await signWith(secretKey(TEST_JWT_SECRET), { alg: 'HS256' }, claims);
    const msg = await expectBadJwt(await getUser(rs, bearer(forged)));
    expect(msg).toContain('HS256');
    const withKid = await signWith(secretKey(TEST_JWT_SECRET), { alg: 'HS256', kid: 'rs-main' }, claims);
    await expectBadJwt(await getUser(rs, bearer(withKid)));
  });

  test('an oct key in JWT_KEYS keeps HS256 tokens verifiable but is never published', async () => {
    const signer = await makeKey('ES256', 'es-main');
    const oct: JWK = {
      kty: 'oct',
      k: base64url.encode('legacy-secret-with-at-least-32-characters'),
      alg: 'HS256',
      kid: 'legacy',
      key_ops: ['verify'],
    };
    const t = await buildTestApp(db, { ...AUTOCONFIRM, AUTHSVC_JWT_KEYS: JSON.stringify([oct, signer.jwk]) });
    const { session } = await signUpConfirmed(t);
    expect(decodeProtectedHeader(session.access_token).alg).toBe('ES256');
    const jwks = (await (await t.request('GET', '/.well-known/jwks.json')).json()) as { keys: Json[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(['es-main']);
    const claims = decodeJwt(session.access_token);
    const legacy = await signWith(
      secretKey('legacy-secret-with-at-least-32-characters'),
      { alg: 'HS256', kid: 'legacy' },
      claims,
    );
    expect((await getUser(t, bearer(legacy))).status).toBe(200);
    const wrong = await signWith(secretKey(TEST_JWT_SECRET), { alg: 'HS256', kid: 'legacy' }, claims);
    await expectBadJwt(await getUser(t, bearer(wrong)));
  });

  test('rejects a token signed with another secret', async () => {
    const claims = decodeJwt(hsSession.access_token);
    const forged = await signWith(secretKey('another-secret-with-at-least-32-characters'), { alg: 'HS256' }, claims);
    await expectBadJwt(await getUser(hs, bearer(forged)));
    // A tampered payload under the genuine signature.
    const [h, , s] = hsSession.access_token.split('.');
    const tampered = `${h}.${base64url.encode(JSON.stringify({ ...claims, role: 'service_role' }))}.${s}`;
    await expectBadJwt(await getUser(hs, bearer(tampered)));
  });

  test('rejects an expired token', async () => {
    const claims = decodeJwt(hsSession.access_token);
    const nowS = Math.floor(Date.now() / 1000);
    const expired = await signWith(
      secretKey(TEST_JWT_SECRET),
      { alg: 'HS256' },
      { ...claims, iat: nowS - 7200, exp: nowS - 3600 },
    );
    const msg = await expectBadJwt(await getUser(hs, bearer(expired)));
    expect(msg).toMatch(/expired/);
  });

  test('rejects garbage', async () => {
    await expectBadJwt(await getUser(hs, bearer('not.a.jwt')));
    await expectBadJwt(await getUser(hs, bearer('abc')));
  });

  test('a missing or malformed Authorization header is 401 no_authorization', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: '' },
      { Authorization: 'Bearer' },
      { Authorization: 'Bearer ' },
      { Authorization: `Basic ${hsSession.access_token}` },
      { Authorization: `Bearer  ${hsSession.access_token}` },
      { Authorization: `Bearer ${hsSession.access_token} extra` },
    ]) {
      const res = await getUser(hs, headers);
      const body = (await res.json()) as Json;
      expect({ status: res.status, code: body.error_code, msg: body.msg }).toEqual({
        status: 401,
        code: 'no_authorization',
        msg: 'This endpoint requires a valid Bearer token',
      });
    }
    // The scheme is case-insensitive.
    expect((await getUser(hs, { Authorization: `bearer ${hsSession.access_token}` })).status).toBe(200);
  });

  test('a token whose session was deleted by logout is 403 session_not_found', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { session } = await signUpConfirmed(t);
    expect((await t.request('POST', '/logout', undefined, bearer(session.access_token))).status).toBe(204);
    const res = await getUser(t, bearer(session.access_token));
    const body = (await res.json()) as Json;
    expect({ status: res.status, code: body.error_code }).toEqual({ status: 403, code: 'session_not_found' });
  });

  test('a token of a deleted user is 403 user_not_found', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { session } = await signUpConfirmed(t);
    await db.orm.delete(db.t.users).where(eq(db.t.users.id, session.user.id));
    const res = await getUser(t, bearer(session.access_token));
    const body = (await res.json()) as Json;
    expect({ status: res.status, code: body.error_code }).toEqual({ status: 403, code: 'user_not_found' });
  });
});

describe("JWT_SECRET beside JWT_KEYS (GoTrue's parseJWTClaims)", () => {
  // The reproduction of issue 13: a project that added signing keys keeps its anon and
  // service_role keys, signed HS256 with JWT_SECRET and no kid.
  const SECRET = '37c304f8-51aa-419a-a1af-06154e63707a';
  const KEYS = [
    {
      kty: 'oct',
      k: 'Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo',
      kid: '12580317-221c-49b6-894a-f4473b8afe39',
      key_ops: ['sign', 'verify'],
      alg: 'HS256',
    },
  ];
  const admin = (t: TestApp, token: string) => t.request('GET', '/admin/users', undefined, bearer(token));
  const exp = () => Math.floor(Date.now() / 1000) + 600;

  test('a kid-less HS256 service_role token signed with JWT_SECRET is accepted; the JWT_KEYS key signs and verifies by kid', async () => {
    const t = await buildTestApp(db, {
      ...AUTOCONFIRM,
      AUTHSVC_JWT_SECRET: SECRET,
      AUTHSVC_JWT_KEYS: JSON.stringify(KEYS),
    });
    const serviceRole = await signWith(
      secretKey(SECRET),
      { alg: 'HS256' },
      { role: 'service_role', iss: 'supabase', exp: exp() },
    );
    expect((await admin(t, serviceRole)).status).toBe(200);
    // An unknown kid on an HS256 token falls back to JWT_SECRET too.
    expect(
      (
        await admin(
          t,
          await signWith(secretKey(SECRET), { alg: 'HS256', kid: 'unknown' }, { role: 'service_role', exp: exp() }),
        )
      ).status,
    ).toBe(200);
    // The oct key of JWT_KEYS is not a way to verify kid-less tokens, and JWT_SECRET does not verify under its kid.
    const octBytes = base64url.decode(KEYS[0]!.k);
    await expectBadJwt(
      await admin(t, await signWith(octBytes, { alg: 'HS256' }, { role: 'service_role', exp: exp() })),
    );
    await expectBadJwt(
      await admin(
        t,
        await signWith(secretKey(SECRET), { alg: 'HS256', kid: KEYS[0]!.kid }, { role: 'service_role', exp: exp() }),
      ),
    );
    // Issued tokens carry the JWT_KEYS kid and work.
    const { session } = await signUpConfirmed(t);
    expect(decodeProtectedHeader(session.access_token)).toMatchObject({ alg: 'HS256', kid: KEYS[0]!.kid });
    expect((await getUser(t, bearer(session.access_token))).status).toBe(200);
  });

  test('with only asymmetric JWT_KEYS, HS256 is not an accepted algorithm (as GoTrue) unless JWT_VALID_METHODS lists it', async () => {
    const signer = await makeKey('ES256', 'es-1');
    const only = await buildTestApp(db, { AUTHSVC_JWT_SECRET: SECRET, AUTHSVC_JWT_KEYS: JSON.stringify([signer.jwk]) });
    const token = await signWith(secretKey(SECRET), { alg: 'HS256' }, { role: 'service_role', exp: exp() });
    // golang-jwt v5's words, as GoTrue answers them.
    expect(await expectBadJwt(await admin(only, token))).toBe(
      `${BAD_JWT_PREFIX}, token signature is invalid: signing method HS256 is invalid`,
    );
    const listed = await buildTestApp(db, {
      AUTHSVC_JWT_SECRET: SECRET,
      AUTHSVC_JWT_KEYS: JSON.stringify([signer.jwk]),
      AUTHSVC_JWT_VALID_METHODS: 'ES256,HS256',
    });
    expect((await admin(listed, token)).status).toBe(200);
    // An unknown kid on an asymmetric token is refused by name.
    const stranger = await makeKey('ES256', 'stranger');
    expect(
      await expectBadJwt(
        await admin(
          listed,
          await signWith(stranger.privateKey, { alg: 'ES256', kid: 'stranger' }, { role: 'service_role', exp: exp() }),
        ),
      ),
    ).toContain('unrecognized JWT kid stranger for algorithm ES256');
  });
});
