// WebAuthn MFA factors (issue 28) through the real app with real ceremonies: a software
// authenticator (test/helpers/webauthn.ts) registers a key at the first challenge and signs at
// later ones; the session becomes aal2 with AMR mfa/webauthn. Refused ceremonies and bad input
// answer 4xx and leave the factor as it was.
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { parseConfig } from '../../src/config/config.ts';
import { BASE_ENV, buildTestApp, signUpConfirmed, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { decodeBase32, totpAt } from '../helpers/totp.ts';
import { type Alg, b64url, FLAG, newKey, SoftAuthenticator } from '../helpers/webauthn.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const ORIGIN = 'http://localhost:5173';
const RP_ENV = {
  AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  AUTHSVC_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true',
  AUTHSVC_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true',
  AUTHSVC_WEBAUTHN_RP_ID: 'localhost',
  AUTHSVC_WEBAUTHN_RP_DISPLAY_NAME: 'auth-js tests',
  AUTHSVC_WEBAUTHN_RP_ORIGINS: `${ORIGIN},https://other.example`,
};
const V2024 = { 'x-supabase-api-version': '2024-01-01' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, ...V2024 });

async function app(env: Record<string, string> = {}) {
  let now = Date.now();
  const t = await buildTestApp(db, { ...RP_ENV, ...env }, { now: () => new Date(now) });
  return Object.assign(t, {
    tick: (s: number) => {
      now += s * 1000;
    },
    nowSeconds: () => now / 1000,
  });
}
type App = Awaited<ReturnType<typeof app>>;

const errorOf = async (res: Response) => ({ status: res.status, ...((await res.json()) as Json) });

async function enroll(t: TestApp, token: string, name = 'yubikey'): Promise<string> {
  const res = await t.request('POST', '/factors', { factor_type: 'webauthn', friendly_name: name }, bearer(token));
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as Json;
  expect(body).toEqual({ id: expect.any(String), type: 'webauthn', friendly_name: name });
  return body.id;
}

async function challenge(t: TestApp, token: string, factorId: string): Promise<Json> {
  // auth-js sends its params object as the body, rpId and rpOrigins included (ignored).
  const res = await t.request(
    'POST',
    `/factors/${factorId}/challenge`,
    { factorId, webauthn: { rpId: 'evil.example', rpOrigins: ['https://evil.example'] } },
    bearer(token),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json() as Promise<Json>;
}

function verify(
  t: TestApp,
  token: string,
  factorId: string,
  challengeId: string,
  type: string,
  credential: unknown,
): Promise<Response> {
  return t.request(
    'POST',
    `/factors/${factorId}/verify`,
    {
      challenge_id: challengeId,
      webauthn: { type, rpId: 'localhost', rpOrigins: [ORIGIN], credential_response: credential },
    },
    bearer(token),
  );
}

/** A user with a verified WebAuthn factor registered by `key`. */
async function userWithKey(t: App, alg: Alg = 'ES256') {
  const { session } = await signUpConfirmed(t, uniqueEmail('wa'));
  const factorId = await enroll(t, session.access_token);
  const key = await SoftAuthenticator.create(ORIGIN, alg);
  const ch = await challenge(t, session.access_token, factorId);
  const res = await verify(
    t,
    session.access_token,
    factorId,
    ch.id,
    'create',
    await key.register(ch.webauthn.credential_options.publicKey),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return { factorId, key, first: session, session: (await res.json()) as Json };
}

describe('WebAuthn factors: real ceremonies', () => {
  test("first challenge: GoTrue's creation options; registering a key verifies the factor and makes the session aal2 (mfa/webauthn)", async () => {
    const t = await app();
    const { email, session } = await signUpConfirmed(t, uniqueEmail('wa'));
    const factorId = await enroll(t, session.access_token);
    const ch = await challenge(t, session.access_token, factorId);
    expect(Object.keys(ch)).toEqual(['id', 'type', 'expires_at', 'webauthn']);
    expect(ch.type).toBe('webauthn');
    expect(ch.webauthn.type).toBe('create');
    const pk = ch.webauthn.credential_options.publicKey;
    expect(pk.rp).toEqual({ name: 'auth-js tests', id: 'localhost' });
    expect(pk.user).toEqual({ name: email, displayName: email, id: b64url(new TextEncoder().encode(session.user.id)) });
    expect(pk.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pk.pubKeyCredParams.map((p: Json) => p.alg)).toEqual([-7, -35, -36, -257, -258, -259, -37, -38, -39, -8]);
    expect(pk.timeout).toBe(300000);
    expect(pk.authenticatorSelection).toEqual({});

    const key = await SoftAuthenticator.create(ORIGIN);
    t.tick(5); // a later second than the sign-in: the AMR order (newest first) is then visible
    const res = await verify(t, session.access_token, factorId, ch.id, 'create', await key.register(pk));
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Json;
    const claims = decodeJwt(body.access_token) as Json;
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['mfa/webauthn', 'password']);
    expect(body.user.factors).toEqual([
      expect.objectContaining({
        id: factorId,
        status: 'verified',
        factor_type: 'webauthn',
        web_authn_aaguid: '00000000-0000-0000-0000-000000000000',
      }),
    ]);
    expect(body.user.factors[0].last_webauthn_challenge_data).toMatchObject({
      type: 'create',
      challenge: { challenge_id: ch.id },
    });
    expect(body.user.factors[0].web_authn_credential).toBeUndefined();

    // Stored as go-webauthn's Credential, so the factor moves to GoTrue and back.
    const row = (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, factorId)))[0]!;
    expect(row.webAuthnCredential).toMatchObject({
      id: Buffer.from(key.id).toString('base64'),
      attestationType: 'none',
      transport: ['usb'],
      flags: { userPresent: true, userVerified: true, backupEligible: false, backupState: false },
      authenticator: { signCount: 0, cloneWarning: false },
    });
    const session2 = (
      await db.orm
        .select()
        .from(db.t.sessions)
        .where(eq(db.t.sessions.id, String(claims.session_id)))
    )[0]!;
    expect(session2).toMatchObject({ aal: 'aal2', factorId });
    // The challenge was spent.
    expect(await db.orm.select().from(db.t.mfaChallenges).where(eq(db.t.mfaChallenges.id, ch.id))).toEqual([]);
  });

  test('later challenges: request options listing the key; a signed assertion upgrades a fresh aal1 session and moves the counter', async () => {
    const t = await app({ GOTRUE_MAILER_NOTIFICATIONS_MFA_FACTOR_ENROLLED_ENABLED: 'true' });
    const { factorId, key } = await userWithKey(t);
    const email = (
      await db.orm
        .select()
        .from(db.t.mfaFactors)
        .innerJoin(db.t.users, eq(db.t.users.id, db.t.mfaFactors.userId))
        .where(eq(db.t.mfaFactors.id, factorId))
    )[0]!.users.email!;
    // The registration enrolled the key: one notification (test/app/notifications.test.ts has the rest).
    const enrolled = () =>
      t.mails.filter((m) => m.kind === 'mfa_factor_enrolled_notification').map((m) => [m.to, m.factorType]);
    expect(enrolled()).toEqual([[email, 'webauthn']]);
    const signIn = (await (
      await t.request('POST', '/token?grant_type=password', { email, password: 'correct-horse-1' })
    ).json()) as Json;
    expect(decodeJwt(signIn.access_token).aal).toBe('aal1');
    const ch = await challenge(t, signIn.access_token, factorId);
    expect(ch.webauthn.type).toBe('request');
    t.tick(5);
    expect(ch.webauthn.credential_options.publicKey).toEqual({
      challenge: expect.any(String),
      timeout: 300000,
      rpId: 'localhost',
      allowCredentials: [{ type: 'public-key', id: b64url(key.id) }],
    });
    const res = await verify(
      t,
      signIn.access_token,
      factorId,
      ch.id,
      'request',
      await key.assert(ch.webauthn.credential_options.publicKey),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const claims = decodeJwt(((await res.json()) as Json).access_token) as Json;
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['mfa/webauthn', 'password']);
    const row = (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, factorId)))[0]!;
    expect((row.webAuthnCredential as Json).authenticator.signCount).toBe(1);
    expect(enrolled()).toHaveLength(1); // an assertion enrols nothing
  });

  for (const alg of ['RS256', 'EdDSA'] as const) {
    test(`${alg} keys register and sign`, async () => {
      const t = await app();
      const { factorId, key, session } = await userWithKey(t, alg);
      const ch = await challenge(t, session.access_token, factorId);
      const res = await verify(
        t,
        session.access_token,
        factorId,
        ch.id,
        'request',
        await key.assert(ch.webauthn.credential_options.publicKey),
      );
      expect(res.status, await res.clone().text()).toBe(200);
    });
  }
});

describe('WebAuthn factors: refused ceremonies answer 422 and change nothing', () => {
  const failed = { status: 422, code: 'mfa_verification_failed', message: 'WebAuthn verification failed' };

  test('registration: wrong origin, wrong RP ID, user not present, wrong ceremony type, replayed challenge', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('wa'));
    const token = session.access_token;
    const factorId = await enroll(t, token);
    const key = await SoftAuthenticator.create(ORIGIN);
    for (const o of [
      { origin: 'https://evil.example' },
      { rpId: 'evil.example' },
      { flags: FLAG.UV | FLAG.AT },
      { type: 'webauthn.get' },
    ]) {
      const ch = await challenge(t, token, factorId);
      const res = await verify(
        t,
        token,
        factorId,
        ch.id,
        'create',
        await key.register(ch.webauthn.credential_options.publicKey, o),
      );
      expect(await errorOf(res), JSON.stringify(o)).toMatchObject(failed);
      // A refused attempt spends the challenge too.
      expect(
        await errorOf(
          await verify(
            t,
            token,
            factorId,
            ch.id,
            'create',
            await key.register(ch.webauthn.credential_options.publicKey),
          ),
        ),
      ).toMatchObject({ status: 422, code: 'mfa_factor_not_found' });
    }
    // The challenge of another ceremony.
    const a = await challenge(t, token, factorId);
    const b = await challenge(t, token, factorId);
    expect(
      await errorOf(
        await verify(t, token, factorId, a.id, 'create', await key.register(b.webauthn.credential_options.publicKey)),
      ),
    ).toMatchObject(failed);
    const row = (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, factorId)))[0]!;
    expect(row).toMatchObject({ status: 'unverified', webAuthnCredential: null });
    // A good registration, then its replay.
    const ch = await challenge(t, token, factorId);
    const good = await key.register(ch.webauthn.credential_options.publicKey);
    expect((await verify(t, token, factorId, ch.id, 'create', good)).status).toBe(200);
  });

  test("assertion: another key's signature, unknown credential, counter going backwards, user not present, expired and replayed challenges", async () => {
    const t = await app();
    const { factorId, key, session } = await userWithKey(t);
    const token = session.access_token;
    const opts = async () => await challenge(t, token, factorId);
    const other = await newKey();
    let ch = await opts();
    expect(
      await errorOf(
        await verify(
          t,
          token,
          factorId,
          ch.id,
          'request',
          await key.assert(ch.webauthn.credential_options.publicKey, { signWith: other }),
        ),
      ),
    ).toMatchObject(failed);
    ch = await opts();
    expect(
      await errorOf(
        await verify(
          t,
          token,
          factorId,
          ch.id,
          'request',
          await key.assert(ch.webauthn.credential_options.publicKey, { credentialId: new Uint8Array(32) }),
        ),
      ),
    ).toMatchObject(failed);
    ch = await opts();
    expect(
      await errorOf(
        await verify(
          t,
          token,
          factorId,
          ch.id,
          'request',
          await key.assert(ch.webauthn.credential_options.publicKey, { flags: FLAG.UV }),
        ),
      ),
    ).toMatchObject(failed);
    ch = await opts();
    expect(
      await errorOf(
        await verify(
          t,
          token,
          factorId,
          ch.id,
          'request',
          await key.assert(ch.webauthn.credential_options.publicKey, { origin: 'https://evil.example' }),
        ),
      ),
    ).toMatchObject(failed);
    // A good assertion at counter 5, then one at 3 (a cloned key) and one at 5 again.
    ch = await opts();
    expect(
      (
        await verify(
          t,
          token,
          factorId,
          ch.id,
          'request',
          await key.assert(ch.webauthn.credential_options.publicKey, { counter: 5 }),
        )
      ).status,
    ).toBe(200);
    for (const counter of [3, 5]) {
      ch = await opts();
      expect(
        await errorOf(
          await verify(
            t,
            token,
            factorId,
            ch.id,
            'request',
            await key.assert(ch.webauthn.credential_options.publicKey, { counter }),
          ),
        ),
      ).toMatchObject(failed);
    }
    ch = await opts();
    const good = await key.assert(ch.webauthn.credential_options.publicKey, { counter: 6 });
    expect((await verify(t, token, factorId, ch.id, 'request', good)).status).toBe(200);
    // Replay of a used assertion and challenge.
    expect(await errorOf(await verify(t, token, factorId, ch.id, 'request', good))).toMatchObject({
      status: 422,
      code: 'mfa_factor_not_found',
    });
    // Expired: MFA_CHALLENGE_EXPIRY_DURATION (300 s) after the challenge.
    ch = await opts();
    t.tick(301);
    expect(
      await errorOf(
        await verify(
          t,
          token,
          factorId,
          ch.id,
          'request',
          await key.assert(ch.webauthn.credential_options.publicKey, { counter: 7 }),
        ),
      ),
    ).toMatchObject({ status: 422, code: 'mfa_challenge_expired' });
    const row = (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, factorId)))[0]!;
    expect((row.webAuthnCredential as Json).authenticator.signCount).toBe(6);
  });

  test("a credential id registered by another user's factor is refused", async () => {
    const t = await app();
    const { key } = await userWithKey(t);
    const { session } = await signUpConfirmed(t, uniqueEmail('wa'));
    const factorId = await enroll(t, session.access_token);
    const ch = await challenge(t, session.access_token, factorId);
    const copy = new SoftAuthenticator(await newKey(), key.id, ORIGIN);
    expect(
      await errorOf(
        await verify(
          t,
          session.access_token,
          factorId,
          ch.id,
          'create',
          await copy.register(ch.webauthn.credential_options.publicKey),
        ),
      ),
    ).toMatchObject(failed);
  });
});

describe('WebAuthn factors: bad input never answers 5xx', () => {
  test("missing and malformed webauthn params: GoTrue's 400s; truncated CBOR, huge and mistyped fields: 4xx", async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('wa'));
    const token = session.access_token;
    const factorId = await enroll(t, token);
    const ch = await challenge(t, token, factorId);
    const url = `/factors/${factorId}/verify`;
    expect(await errorOf(await t.request('POST', url, { challenge_id: ch.id }, bearer(token)))).toMatchObject({
      status: 400,
      code: 'validation_failed',
      message: 'WebAuthn config required',
    });
    expect(
      await errorOf(await t.request('POST', url, { challenge_id: ch.id, webauthn: { type: 'x' } }, bearer(token))),
    ).toMatchObject({ status: 400, message: 'WebAuthn type must be create or request' });
    expect(
      await errorOf(await t.request('POST', url, { challenge_id: ch.id, webauthn: { type: 'create' } }, bearer(token))),
    ).toMatchObject({ status: 400, message: 'credential_response required' });
    expect(
      await errorOf(await t.request('POST', url, { challenge_id: ch.id, webauthn: 5 }, bearer(token))),
    ).toMatchObject({ status: 400, code: 'bad_json' });
    const key = await SoftAuthenticator.create(ORIGIN);
    const good = (await key.register(ch.webauthn.credential_options.publicKey)) as Json;
    const att = Buffer.from(good.response.attestationObject, 'base64url');
    const bad: unknown[] = [
      'not an object',
      42,
      [],
      {},
      { ...good, type: 'private-key' },
      { ...good, response: 'x' },
      { ...good, response: { ...good.response, attestationObject: b64url(att.subarray(0, att.length - 20)) } },
      { ...good, response: { ...good.response, attestationObject: b64url(att.subarray(0, 5)) } },
      { ...good, response: { ...good.response, clientDataJSON: b64url(new TextEncoder().encode('{"type":')) } },
      { ...good, response: { ...good.response, clientDataJSON: 'A'.repeat(100_000) } },
      { ...good, id: 'A'.repeat(5000), rawId: 'A'.repeat(5000) },
      { ...good, response: { ...good.response, attestationObject: '!!!' } },
      { ...good, response: { ...good.response, transports: 'usb' } },
    ];
    for (const credential of bad) {
      const c2 = await challenge(t, token, factorId);
      const res = await verify(t, token, factorId, c2.id, 'create', credential);
      expect(res.status, JSON.stringify(credential).slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    const row = (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, factorId)))[0]!;
    expect(row.status).toBe('unverified');
  });

  test("switches and relying party: enrol and verify disabled answer GoTrue's 422s; a missing RP setting is a 500 naming WebAuthn, and a start-up warning", async () => {
    const off = await app({
      AUTHSVC_MFA_WEB_AUTHN_ENROLL_ENABLED: 'false',
      AUTHSVC_MFA_WEB_AUTHN_VERIFY_ENABLED: 'false',
    });
    const { session } = await signUpConfirmed(off, uniqueEmail('wa'));
    expect(
      await errorOf(await off.request('POST', '/factors', { factor_type: 'webauthn' }, bearer(session.access_token))),
    ).toMatchObject({
      status: 422,
      code: 'mfa_webauthn_enroll_not_enabled',
      message: 'MFA enroll is disabled for WebAuthn',
    });

    const t = await app();
    const s2 = (await signUpConfirmed(t, uniqueEmail('wa'))).session;
    const factorId = await enroll(t, s2.access_token);
    const noVerify = await app({ AUTHSVC_MFA_WEB_AUTHN_VERIFY_ENABLED: 'false' });
    expect(
      await errorOf(await noVerify.request('POST', `/factors/${factorId}/challenge`, {}, bearer(s2.access_token))),
    ).toMatchObject({
      status: 422,
      code: 'mfa_webauthn_verify_not_enabled',
      message: 'MFA verification is disabled for WebAuthn',
    });
    // GoTrue's quirk: the verify endpoint answers with the enrol code.
    expect(
      await errorOf(
        await noVerify.request(
          'POST',
          `/factors/${factorId}/verify`,
          { challenge_id: crypto.randomUUID(), webauthn: {} },
          bearer(s2.access_token),
        ),
      ),
    ).toMatchObject({
      status: 422,
      code: 'mfa_webauthn_enroll_not_enabled',
      message: 'MFA verification is disabled for WebAuthn',
    });

    const noRp = await app({ AUTHSVC_WEBAUTHN_RP_ORIGINS: '' });
    expect(
      await errorOf(await noRp.request('POST', `/factors/${factorId}/challenge`, {}, bearer(s2.access_token))),
    ).toMatchObject({ status: 500, code: 'unexpected_failure', message: 'Failed to initialize WebAuthn' });
    const parsed = parseConfig(
      { ...BASE_ENV, ...RP_ENV, AUTHSVC_WEBAUTHN_RP_ORIGINS: '', AUTHSVC_WEBAUTHN_RP_ID: '' },
      { local: true },
    );
    expect(parsed.ok && parsed.warnings).toContain(
      'WebAuthn factors or passkeys are enabled but WEBAUTHN_RP_ID, WEBAUTHN_RP_ORIGINS are not set: their requests fail with 500 until they are.',
    );
    // An empty challenge body is GoTrue's bad_json.
    expect(
      await errorOf(await t.request('POST', `/factors/${factorId}/challenge`, undefined, bearer(s2.access_token))),
    ).toMatchObject({ status: 400, code: 'bad_json' });
  });
});

describe('WebAuthn factors: management', () => {
  test('admin list shows the factor; admin delete removes it and downgrades the sessions it upgraded', async () => {
    const t = await app();
    const { factorId, session } = await userWithKey(t);
    const admin = { authorization: `Bearer ${await serviceRole(t)}` };
    const list = (await (
      await t.request('GET', `/admin/users/${session.user.id}/factors`, undefined, admin)
    ).json()) as Json[];
    expect(list).toEqual([expect.objectContaining({ id: factorId, factor_type: 'webauthn', status: 'verified' })]);
    const del = await t.request('DELETE', `/admin/users/${session.user.id}/factors/${factorId}`, undefined, admin);
    expect(del.status).toBe(200);
    const claims = decodeJwt(session.access_token) as Json;
    const row = (
      await db.orm
        .select()
        .from(db.t.sessions)
        .where(eq(db.t.sessions.id, String(claims.session_id)))
    )[0]!;
    expect(row).toMatchObject({ aal: 'aal1', factorId: null });
  });
});

async function serviceRole(t: TestApp): Promise<string> {
  const { signJwt } = await import('../../src/crypto/jwt.ts');
  return signJwt(t.deps.keys, {
    role: 'service_role',
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 3600,
  });
}

/** A user with a verified TOTP factor: its password and aal2 session. */
async function userWithTotp(t: App) {
  const { email, password, session } = await signUpConfirmed(t, uniqueEmail('h2'));
  const factor = (await (
    await t.request('POST', '/factors', { factor_type: 'totp' }, bearer(session.access_token))
  ).json()) as Json;
  const ch = (await (
    await t.request('POST', `/factors/${factor.id}/challenge`, undefined, bearer(session.access_token))
  ).json()) as Json;
  const res = await t.request(
    'POST',
    `/factors/${factor.id}/verify`,
    { challenge_id: ch.id, code: totpAt(decodeBase32(factor.totp.secret), t.nowSeconds()) },
    bearer(session.access_token),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return { email, password, aal2: (await res.json()) as Json };
}

const signIn = async (t: TestApp, email: string, password: string): Promise<Json> =>
  (await t.request('POST', '/token?grant_type=password', { email, password })).json() as Promise<Json>;
const factorRows = (id: string) => db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, id));

describe('H2 (security review 2026-12-01): abandoned WebAuthn enrolments', () => {
  test("H2 (security review 2026-12-01): an aal1 session can neither challenge nor verify the owner's abandoned WebAuthn enrolment; the owner's aal2 session still finishes it", async () => {
    const t = await app();
    // The owner: TOTP verified (aal2), then starts a security key and cancels the browser's prompt.
    const { email, password, aal2 } = await userWithTotp(t);
    const factorId = await enroll(t, aal2.access_token, 'my key');
    const owners = await challenge(t, aal2.access_token, factorId);
    expect(owners.webauthn.type).toBe('create');
    // The attacker: the password only (aal1).
    const attacker = (await signIn(t, email, password)).access_token;
    expect(decodeJwt(attacker).aal).toBe('aal1');
    expect(
      await errorOf(
        await t.request(
          'POST',
          '/factors',
          { factor_type: 'webauthn', friendly_name: 'attacker key' },
          bearer(attacker),
        ),
      ),
    ).toEqual({ status: 403, code: 'insufficient_aal', message: 'AAL2 required to enroll a new factor' });
    expect(await errorOf(await t.request('POST', `/factors/${factorId}/challenge`, {}, bearer(attacker)))).toEqual({
      status: 403,
      code: 'insufficient_aal',
      message: 'AAL2 required to challenge an unverified factor',
    });
    // Nor with the owner's challenge (had it leaked), answered by the attacker's authenticator.
    const theirs = await SoftAuthenticator.create(ORIGIN);
    expect(
      await errorOf(
        await verify(
          t,
          attacker,
          factorId,
          owners.id,
          'create',
          await theirs.register(owners.webauthn.credential_options.publicKey),
        ),
      ),
    ).toEqual({ status: 403, code: 'insufficient_aal', message: 'AAL2 required to verify an unverified factor' });
    expect(
      await errorOf(await t.request('PUT', '/user', { password: 'attacker-owns-it-9' }, bearer(attacker))),
    ).toMatchObject({ status: 401, code: 'insufficient_aal' });
    expect((await factorRows(factorId))[0]).toMatchObject({ status: 'unverified', webAuthnCredential: null });
    // GoTrue's flow for a further factor is unchanged: at aal2 the owner registers the key.
    const mine = await SoftAuthenticator.create(ORIGIN);
    const ok = await verify(
      t,
      aal2.access_token,
      factorId,
      owners.id,
      'create',
      await mine.register(owners.webauthn.credential_options.publicKey),
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
    const amr = (decodeJwt(((await ok.json()) as Json).access_token).amr as Json[]).map((a) => a.method).sort();
    expect(amr).toEqual(['mfa/webauthn', 'password', 'totp']);
  });

  test('H2 (security review 2026-12-01): a cancelled register() leaves nothing: the unverified WebAuthn factor goes when its challenge expires', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('h2cancel'));
    const token = session.access_token;
    const admin = { authorization: `Bearer ${await serviceRole(t)}` };
    // auth-js's mfa.webauthn.register(): enrol, challenge, then the browser's prompt (cancelled).
    const cancelled = await enroll(t, token, 'cancelled');
    const stale = await challenge(t, token, cancelled);
    // While the challenge lives the enrolment can be finished: another one is, a little later.
    const finished = await enroll(t, token, 'finished');
    t.tick(200);
    const live = await challenge(t, token, finished);
    t.tick(101);
    // The cancelled one: its challenge expired, so the factor answers as a missing one, at verify
    // and at challenge, and is gone (from the admin list too).
    const key = await SoftAuthenticator.create(ORIGIN);
    expect(
      await errorOf(
        await verify(
          t,
          token,
          cancelled,
          stale.id,
          'create',
          await key.register(stale.webauthn.credential_options.publicKey),
        ),
      ),
    ).toEqual({ status: 404, code: 'mfa_factor_not_found', message: 'Factor not found' });
    expect(await errorOf(await t.request('POST', `/factors/${cancelled}/challenge`, {}, bearer(token)))).toMatchObject({
      status: 404,
      code: 'mfa_factor_not_found',
    });
    expect(await factorRows(cancelled)).toEqual([]);
    const listed = (await (
      await t.request('GET', `/admin/users/${session.user.id}/factors`, undefined, admin)
    ).json()) as Json[];
    expect(listed.map((f) => f.id)).toEqual([finished]);
    const ok = await verify(
      t,
      token,
      finished,
      live.id,
      'create',
      await key.register(live.webauthn.credential_options.publicKey),
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
  });

  test('H2 (security review 2026-12-01): an unverified WebAuthn factor never challenged goes after MFA_FACTOR_EXPIRY_DURATION, at the next challenge', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('h2never'));
    const factorId = await enroll(t, session.access_token);
    t.tick(301);
    expect(
      await errorOf(await t.request('POST', `/factors/${factorId}/challenge`, {}, bearer(session.access_token))),
    ).toMatchObject({ status: 404, code: 'mfa_factor_not_found' });
    expect(await factorRows(factorId)).toEqual([]);
  });
});

describe('refused ceremonies are logged (docs/mfa.md)', () => {
  test('the reason is logged at warn, with the user and factor; neither the challenge nor the credential id', async () => {
    const t = await app({ AUTHSVC_LOG_LEVEL: 'warn' });
    const { session } = await signUpConfirmed(t, uniqueEmail('walog'));
    const token = session.access_token;
    const factorId = await enroll(t, token);
    const key = await SoftAuthenticator.create(ORIGIN);
    const a = await challenge(t, token, factorId);
    const b = await challenge(t, token, factorId);
    // The answer to another ceremony's challenge: the library's message quotes both challenges.
    expect(
      (await verify(t, token, factorId, a.id, 'create', await key.register(b.webauthn.credential_options.publicKey)))
        .status,
    ).toBe(422);
    const c = await challenge(t, token, factorId);
    expect(
      (
        await verify(
          t,
          token,
          factorId,
          c.id,
          'create',
          await key.register(c.webauthn.credential_options.publicKey, { origin: 'https://evil.example' }),
        )
      ).status,
    ).toBe(422);
    const lines = t.logs.map((l) => JSON.parse(l) as Json).filter((l) => l.msg === 'WebAuthn verification refused');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        user_id: session.user.id,
        factor_id: factorId,
        ceremony: 'create',
        reason: expect.stringMatching(/^registration refused: Unexpected registration response challenge/),
      }),
      expect.objectContaining({
        level: 'warn',
        ceremony: 'create',
        reason: expect.stringMatching(/origin "https:\/\/evil.example"/),
      }),
    ]);
    const text = t.logs.join('\n');
    for (const secret of [
      a.webauthn.credential_options.publicKey.challenge,
      b.webauthn.credential_options.publicKey.challenge,
      b64url(key.id),
    ]) {
      expect(text).not.toContain(secret);
    }
  });
});
