// Passkeys (issue 28) through the real app with real ceremonies: a signed-in user registers a
// discoverable credential of the software authenticator (test/helpers/webauthn.ts), then signs in
// with no session (options → assertion → aal1 session, AMR passkey); list, rename, delete, admin.
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { b64url, FLAG, newKey, SoftAuthenticator } from '../helpers/webauthn.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const ORIGIN = 'http://localhost:5173';
const ENV = {
  AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  AUTHSVC_PASSKEY_ENABLED: 'true',
  AUTHSVC_WEBAUTHN_RP_ID: 'localhost',
  AUTHSVC_WEBAUTHN_RP_DISPLAY_NAME: 'auth-js tests',
  AUTHSVC_WEBAUTHN_RP_ORIGINS: ORIGIN,
};
const V2024 = { 'x-supabase-api-version': '2024-01-01' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, ...V2024 });
const errorOf = async (res: Response) => ({ status: res.status, ...((await res.json()) as Json) });

async function app(env: Record<string, string> = {}) {
  let now = Date.now();
  const t = await buildTestApp(db, { ...ENV, ...env }, { now: () => new Date(now) });
  return Object.assign(t, {
    tick: (s: number) => {
      now += s * 1000;
    },
  });
}

async function register(t: TestApp, token: string, key: SoftAuthenticator, o = {}): Promise<Response> {
  const opts = (await (await t.request('POST', '/passkeys/registration/options', {}, bearer(token))).json()) as Json;
  return t.request(
    'POST',
    '/passkeys/registration/verify',
    { challenge_id: opts.challenge_id, credential: await key.register(opts.options, o) },
    bearer(token),
  );
}

async function signInOptions(t: TestApp): Promise<Json> {
  const res = await t.request('POST', '/passkeys/authentication/options', { gotrue_meta_security: {} }, V2024);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json() as Promise<Json>;
}

async function signIn(t: TestApp, key: SoftAuthenticator, o = {}): Promise<Response> {
  const opts = await signInOptions(t);
  return t.request(
    'POST',
    '/passkeys/authentication/verify',
    { challenge_id: opts.challenge_id, credential: await key.assert(opts.options, o) },
    V2024,
  );
}

async function userWithPasskey(t: TestApp) {
  const { session } = await signUpConfirmed(t, uniqueEmail('pk'));
  const key = await SoftAuthenticator.create(ORIGIN);
  const res = await register(t, session.access_token, key);
  expect(res.status, await res.clone().text()).toBe(200);
  return { session, key, passkey: (await res.json()) as Json };
}

const admin = async (t: TestApp) => ({
  ...V2024,
  authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 })}`,
});

describe('passkeys: registration and sign-in', () => {
  test('registration options as GoTrue (resident key required, no publicKey wrapper); registering stores the credential', async () => {
    const t = await app();
    const { email, session } = await signUpConfirmed(t, uniqueEmail('pk'));
    const res = await t.request('POST', '/passkeys/registration/options', {}, bearer(session.access_token));
    expect(res.status).toBe(200);
    const opts = (await res.json()) as Json;
    expect(Object.keys(opts)).toEqual(['challenge_id', 'options', 'expires_at']);
    expect(opts.options).toMatchObject({
      rp: { name: 'auth-js tests', id: 'localhost' },
      user: { name: email, displayName: email, id: b64url(new TextEncoder().encode(session.user.id)) },
      timeout: 300000,
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      attestation: 'none',
    });
    expect(opts.options.pubKeyCredParams[0]).toEqual({ type: 'public-key', alg: -7 });
    const key = await SoftAuthenticator.create(ORIGIN);
    const ok = await t.request(
      'POST',
      '/passkeys/registration/verify',
      { challenge_id: opts.challenge_id, credential: await key.register(opts.options) },
      bearer(session.access_token),
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
    const body = (await ok.json()) as Json;
    expect(body).toEqual({ id: expect.any(String), friendly_name: 'Passkey', created_at: expect.any(String) });
    const row = (
      await db.orm.select().from(db.t.webauthnCredentials).where(eq(db.t.webauthnCredentials.id, body.id))
    )[0]!;
    expect(Buffer.from(row.credentialId).equals(Buffer.from(key.id))).toBe(true);
    expect(row).toMatchObject({
      userId: session.user.id,
      attestationType: 'none',
      signCount: 0,
      backupEligible: false,
      backedUp: false,
      transports: ['usb'],
    });
    // The next options exclude it; the challenge was spent.
    const again = (await (
      await t.request('POST', '/passkeys/registration/options', {}, bearer(session.access_token))
    ).json()) as Json;
    expect(again.options.excludeCredentials).toEqual([{ type: 'public-key', id: b64url(key.id) }]);
    expect(
      await errorOf(
        await t.request(
          'POST',
          '/passkeys/registration/verify',
          { challenge_id: opts.challenge_id, credential: await key.register(opts.options) },
          bearer(session.access_token),
        ),
      ),
    ).toMatchObject({
      status: 400,
      code: 'webauthn_challenge_not_found',
      message: 'Challenge not found or already used',
    });
  });

  test('sign-in: discoverable options, then an assertion gives an aal1 session with AMR passkey, sb-auth headers, and moves the counter', async () => {
    const t = await app();
    const { session, key, passkey } = await userWithPasskey(t);
    const opts = await signInOptions(t);
    expect(opts.options).toEqual({
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      timeout: 300000,
      rpId: 'localhost',
      userVerification: 'required',
    });
    const res = await t.request(
      'POST',
      '/passkeys/authentication/verify',
      { challenge_id: opts.challenge_id, credential: await key.assert(opts.options) },
      V2024,
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('sb-auth-user-id')).toBe(session.user.id);
    const body = (await res.json()) as Json;
    const claims = decodeJwt(body.access_token) as Json;
    expect(claims).toMatchObject({ sub: session.user.id, aal: 'aal1' });
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['passkey']);
    expect(body.user.id).toBe(session.user.id);
    const list = (await (await t.request('GET', '/passkeys', undefined, bearer(body.access_token))).json()) as Json[];
    expect(list).toEqual([
      { id: passkey.id, friendly_name: 'Passkey', created_at: passkey.created_at, last_used_at: expect.any(String) },
    ]);
    const row = (
      await db.orm.select().from(db.t.webauthnCredentials).where(eq(db.t.webauthnCredentials.id, passkey.id))
    )[0]!;
    expect(row.signCount).toBe(1);
    // The refresh token works.
    expect(
      (await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: body.refresh_token })).status,
    ).toBe(200);
  });

  test("refused sign-ins: wrong origin, wrong RP ID, another key's signature, unknown credential, missing or foreign user handle, counter going backwards, user not present, replayed and expired challenges", async () => {
    const t = await app();
    const { key } = await userWithPasskey(t);
    const other = await userWithPasskey(t);
    const failed = { status: 400, code: 'webauthn_verification_failed', message: 'Credential verification failed' };
    const cases = [
      { origin: 'https://evil.example' },
      { rpId: 'evil.example' },
      { signWith: await newKey() },
      { credentialId: new Uint8Array(32) },
      { userHandle: null },
      { userHandle: other.key.userHandle },
      { userHandle: b64url(new TextEncoder().encode('not-a-uuid')) },
      { flags: FLAG.UV },
    ];
    for (const o of cases)
      expect(await errorOf(await signIn(t, key, o)), JSON.stringify(Object.keys(o))).toMatchObject(failed);
    expect((await signIn(t, key, { counter: 10 })).status).toBe(200);
    for (const counter of [9, 10]) expect(await errorOf(await signIn(t, key, { counter }))).toMatchObject(failed);
    // Replay: the same assertion and challenge again.
    const opts = await signInOptions(t);
    const body = { challenge_id: opts.challenge_id, credential: await key.assert(opts.options, { counter: 11 }) };
    expect((await t.request('POST', '/passkeys/authentication/verify', body, V2024)).status).toBe(200);
    expect(await errorOf(await t.request('POST', '/passkeys/authentication/verify', body, V2024))).toMatchObject({
      status: 400,
      code: 'webauthn_challenge_not_found',
    });
    // Expired: WEBAUTHN_CHALLENGE_EXPIRY_DURATION (5 minutes).
    const late = await signInOptions(t);
    t.tick(301);
    expect(
      await errorOf(
        await t.request(
          'POST',
          '/passkeys/authentication/verify',
          { challenge_id: late.challenge_id, credential: await key.assert(late.options, { counter: 12 }) },
          V2024,
        ),
      ),
    ).toMatchObject({ status: 400, code: 'webauthn_challenge_expired', message: 'Challenge has expired' });
  });

  test('refused registrations: wrong origin, user not present; a credential id another user registered answers webauthn_credential_exists', async () => {
    const t = await app();
    const { key } = await userWithPasskey(t);
    const { session } = await signUpConfirmed(t, uniqueEmail('pk'));
    const mine = await SoftAuthenticator.create(ORIGIN);
    expect(
      await errorOf(await register(t, session.access_token, mine, { origin: 'https://evil.example' })),
    ).toMatchObject({ status: 400, code: 'webauthn_verification_failed' });
    expect(await errorOf(await register(t, session.access_token, mine, { flags: FLAG.UV | FLAG.AT }))).toMatchObject({
      status: 400,
      code: 'webauthn_verification_failed',
    });
    const clone = new SoftAuthenticator(await newKey(), key.id, ORIGIN);
    expect(await errorOf(await register(t, session.access_token, clone))).toMatchObject({
      status: 422,
      code: 'webauthn_credential_exists',
      message: 'This credential is already registered',
    });
    expect(
      await db.orm.select().from(db.t.webauthnCredentials).where(eq(db.t.webauthnCredentials.userId, session.user.id)),
    ).toEqual([]);
  });

  test("bad input: GoTrue's 400s for the body; truncated or mistyped credentials are 400, never 5xx", async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('pk'));
    const token = session.access_token;
    const url = '/passkeys/registration/verify';
    expect(await errorOf(await t.request('POST', url, {}, bearer(token)))).toMatchObject({
      status: 400,
      code: 'validation_failed',
      message: 'challenge_id is required',
    });
    expect(await errorOf(await t.request('POST', url, { challenge_id: 'x' }, bearer(token)))).toMatchObject({
      status: 400,
      message: 'credential is required',
    });
    expect(
      await errorOf(await t.request('POST', url, { challenge_id: 'x', credential: {} }, bearer(token))),
    ).toMatchObject({ status: 400, message: 'challenge_id must be a valid UUID' });
    expect(await errorOf(await t.request('POST', url, { challenge_id: 5 }, bearer(token)))).toMatchObject({
      status: 400,
      code: 'bad_json',
    });
    const key = await SoftAuthenticator.create(ORIGIN);
    for (const mangle of [
      (c: Json) => ({
        ...c,
        response: { ...c.response, attestationObject: c.response.attestationObject.slice(0, 30) },
      }),
      (c: Json) => ({ ...c, response: { ...c.response, clientDataJSON: 'e30' } }),
      (c: Json) => ({ ...c, response: 7 }),
      (c: Json) => ({ ...c, id: 'A'.repeat(3000), rawId: 'A'.repeat(3000) }),
      () => 'x'.repeat(500_000),
    ]) {
      const opts = (await (
        await t.request('POST', '/passkeys/registration/options', {}, bearer(token))
      ).json()) as Json;
      const res = await t.request(
        'POST',
        url,
        { challenge_id: opts.challenge_id, credential: mangle((await key.register(opts.options)) as Json) },
        bearer(token),
      );
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).code).toBe('webauthn_verification_failed');
    }
    const opts = await signInOptions(t);
    const res = await t.request(
      'POST',
      '/passkeys/authentication/verify',
      {
        challenge_id: opts.challenge_id,
        credential: {
          id: 'AA',
          rawId: 'AA',
          type: 'public-key',
          response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA', userHandle: 'AA' },
        },
      },
      V2024,
    );
    expect(await errorOf(res)).toMatchObject({ status: 400, code: 'webauthn_verification_failed' });
    // An id of 4n+1 base64url characters decodes to no whole byte.
    const o2 = await signInOptions(t);
    const odd = await t.request(
      'POST',
      '/passkeys/authentication/verify',
      {
        challenge_id: o2.challenge_id,
        credential: {
          id: 'AAAAA',
          rawId: 'AAAAA',
          type: 'public-key',
          response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA', userHandle: 'AAAAA' },
        },
      },
      V2024,
    );
    expect(await errorOf(odd)).toMatchObject({ status: 400, code: 'webauthn_verification_failed' });
  });
});

let phoneN = 0;
const uniquePhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++phoneN % 10)}`;

describe('passkeys: soft-deleted users (security review 2026-12-01, M3)', () => {
  test('M3 (security review 2026-12-01): a soft-deleted user cannot sign in with a passkey; the soft delete removes the passkeys and clears the confirmations', async () => {
    const t = await app();
    const adm = await admin(t);
    const email = uniqueEmail('m3');
    const password = 'correct-horse-1';
    const created = await t.request(
      'POST',
      '/admin/users',
      { email, phone: uniquePhone(), password, email_confirm: true, phone_confirm: true },
      adm,
    );
    expect(created.status, await created.clone().text()).toBe(200);
    const userId = ((await created.json()) as Json).id as string;
    const session = (await (await t.request('POST', '/token?grant_type=password', { email, password })).json()) as Json;
    const key = await SoftAuthenticator.create(ORIGIN);
    expect((await register(t, session.access_token, key)).status).toBe(200);

    expect((await t.request('DELETE', `/admin/users/${userId}`, { should_soft_delete: true }, adm)).status).toBe(200);
    const before = (await (await t.request('GET', `/admin/users/${userId}`, undefined, adm)).json()) as Json;
    expect(
      await errorOf(await t.request('POST', '/token?grant_type=password', { email, password }, V2024)),
    ).toMatchObject({ status: 400, code: 'invalid_credentials' });
    // Refused as an unknown user is, with nothing to tell the two apart.
    expect(await errorOf(await signIn(t, key))).toMatchObject({
      status: 400,
      code: 'webauthn_verification_failed',
      message: 'Credential verification failed',
    });

    const after = (await (await t.request('GET', `/admin/users/${userId}`, undefined, adm)).json()) as Json;
    expect(after.deleted_at).toBeTruthy();
    expect(after.last_sign_in_at).toBe(before.last_sign_in_at);
    expect(after.email_confirmed_at).toBeUndefined();
    expect(after.phone_confirmed_at).toBeUndefined();
    expect(
      await db.orm.select().from(db.t.webauthnCredentials).where(eq(db.t.webauthnCredentials.userId, userId)),
    ).toEqual([]);
    expect(await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, userId))).toEqual([]);
    expect(await (await t.request('GET', `/admin/users/${userId}/passkeys`, undefined, adm)).json()).toEqual([]);
  });

  test('M3 (security review 2026-12-01): passkeys left by an earlier soft delete (made before they were removed) do not sign in', async () => {
    const t = await app();
    const { session, key } = await userWithPasskey(t);
    expect((await signIn(t, key)).status).toBe(200);
    await db.orm.update(db.t.users).set({ deletedAt: new Date() }).where(eq(db.t.users.id, session.user.id));
    const sessions = (await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, session.user.id)))
      .length;
    expect(await errorOf(await signIn(t, key))).toMatchObject({ status: 400, code: 'webauthn_verification_failed' });
    // No session was made, the counter did not move (the assertion was never checked).
    expect(await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, session.user.id))).toHaveLength(
      sessions,
    );
    expect(
      (
        await db.orm.select().from(db.t.webauthnCredentials).where(eq(db.t.webauthnCredentials.userId, session.user.id))
      )[0]!.signCount,
    ).toBe(1);
  });
});

describe('passkeys: user verification (PASSKEY_USER_VERIFICATION; security review 2026-12-01, section 5)', () => {
  const noUv = { register: FLAG.UP | FLAG.AT, assert: FLAG.UP };

  test('required by default: the options ask for it, and a registration or a sign-in without the UV flag is refused', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('uv'));
    const key = await SoftAuthenticator.create(ORIGIN);
    expect(await errorOf(await register(t, session.access_token, key, { flags: noUv.register }))).toMatchObject({
      status: 400,
      code: 'webauthn_verification_failed',
    });
    expect(
      await db.orm.select().from(db.t.webauthnCredentials).where(eq(db.t.webauthnCredentials.userId, session.user.id)),
    ).toEqual([]);
    expect((await register(t, session.access_token, key)).status).toBe(200);
    expect(await errorOf(await signIn(t, key, { flags: noUv.assert }))).toMatchObject({
      status: 400,
      code: 'webauthn_verification_failed',
    });
    expect((await signIn(t, key)).status).toBe(200);
  });

  test('preferred and discouraged: the options say so, and a passkey without user verification registers and signs in', async () => {
    for (const uv of ['preferred', 'discouraged']) {
      const t = await app({ AUTHSVC_PASSKEY_USER_VERIFICATION: uv });
      const { session } = await signUpConfirmed(t, uniqueEmail('uv'));
      const reg = (await (
        await t.request('POST', '/passkeys/registration/options', {}, bearer(session.access_token))
      ).json()) as Json;
      expect(reg.options.authenticatorSelection).toEqual({ residentKey: 'required', userVerification: uv });
      expect((await signInOptions(t)).options.userVerification).toBe(uv);
      const key = await SoftAuthenticator.create(ORIGIN);
      expect((await register(t, session.access_token, key, { flags: noUv.register })).status, uv).toBe(200);
      expect((await signIn(t, key, { flags: noUv.assert })).status, uv).toBe(200);
    }
    await expect(app({ AUTHSVC_PASSKEY_USER_VERIFICATION: 'sometimes' })).rejects.toThrow(/PASSKEY_USER_VERIFICATION/);
  });

  test('a WebAuthn MFA factor keeps "preferred" while passkeys require it: a key without user verification enrols and verifies', async () => {
    const t = await app({ AUTHSVC_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true', AUTHSVC_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true' });
    const { session } = await signUpConfirmed(t, uniqueEmail('uv-mfa'));
    const factor = (await (
      await t.request(
        'POST',
        '/factors',
        { factor_type: 'webauthn', friendly_name: 'key' },
        bearer(session.access_token),
      )
    ).json()) as Json;
    const step = async (token: string, type: string, answer: (o: Json) => Promise<unknown>) => {
      const ch = (await (await t.request('POST', `/factors/${factor.id}/challenge`, {}, bearer(token))).json()) as Json;
      // GoTrue's options name no level (the browser's default, "preferred"), and never "required".
      const pk = ch.webauthn.credential_options.publicKey as Json;
      expect([undefined, 'preferred']).toContain(pk.authenticatorSelection?.userVerification ?? pk.userVerification);
      const res = await t.request(
        'POST',
        `/factors/${factor.id}/verify`,
        {
          challenge_id: ch.id,
          webauthn: {
            type,
            rpId: 'localhost',
            rpOrigins: [ORIGIN],
            credential_response: await answer(ch.webauthn.credential_options.publicKey),
          },
        },
        bearer(token),
      );
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as Json;
    };
    const key = await SoftAuthenticator.create(ORIGIN);
    const aal2 = await step(session.access_token, 'create', (o) => key.register(o, { flags: noUv.register }));
    await step(aal2.access_token, 'request', (o) => key.assert(o, { flags: noUv.assert }));
  });
});

describe('passkeys: management and gates', () => {
  test('rename (404 for unknown or malformed ids, name rules), delete (204), admin list and delete', async () => {
    const t = await app();
    const { session, passkey } = await userWithPasskey(t);
    const token = session.access_token;
    const renamed = await t.request(
      'PATCH',
      `/passkeys/${passkey.id}`,
      { friendly_name: 'Work laptop' },
      bearer(token),
    );
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ id: passkey.id, friendly_name: 'Work laptop' });
    const notFound = { status: 404, code: 'validation_failed', message: 'Passkey not found' };
    expect(
      await errorOf(
        await t.request('PATCH', `/passkeys/${crypto.randomUUID()}`, { friendly_name: 'x' }, bearer(token)),
      ),
    ).toMatchObject(notFound);
    expect(
      await errorOf(await t.request('PATCH', '/passkeys/nope', { friendly_name: 'x' }, bearer(token))),
    ).toMatchObject(notFound);
    expect(
      await errorOf(await t.request('PATCH', `/passkeys/${passkey.id}`, { friendly_name: '' }, bearer(token))),
    ).toMatchObject({ status: 400, message: 'friendly_name is required' });
    expect(
      await errorOf(
        await t.request('PATCH', `/passkeys/${passkey.id}`, { friendly_name: 'é'.repeat(61) }, bearer(token)),
      ),
    ).toMatchObject({ status: 400, message: 'friendly_name must be 120 characters or less' });
    // Another user's passkey is not found either.
    const stranger = (await signUpConfirmed(t, uniqueEmail('pk'))).session.access_token;
    expect(
      await errorOf(await t.request('DELETE', `/passkeys/${passkey.id}`, undefined, bearer(stranger))),
    ).toMatchObject(notFound);

    const adm = await admin(t);
    const list = (await (
      await t.request('GET', `/admin/users/${session.user.id}/passkeys`, undefined, adm)
    ).json()) as Json[];
    expect(list).toEqual([expect.objectContaining({ id: passkey.id, friendly_name: 'Work laptop' })]);
    const del = await t.request('DELETE', `/passkeys/${passkey.id}`, undefined, bearer(token));
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect(await (await t.request('GET', `/admin/users/${session.user.id}/passkeys`, undefined, adm)).json()).toEqual(
      [],
    );
    const second = await userWithPasskey(t);
    expect(
      (
        await t.request(
          'DELETE',
          `/admin/users/${second.session.user.id}/passkeys/${second.passkey.id}`,
          undefined,
          adm,
        )
      ).status,
    ).toBe(204);
    expect(
      await errorOf(
        await t.request(
          'DELETE',
          `/admin/users/${second.session.user.id}/passkeys/${second.passkey.id}`,
          undefined,
          adm,
        ),
      ),
    ).toMatchObject(notFound);
    expect(
      await errorOf(await t.request('GET', `/admin/users/${crypto.randomUUID()}/passkeys`, undefined, adm)),
    ).toMatchObject({ status: 404, code: 'user_not_found' });
  });

  test('limits: PASSKEY_MAX_PASSKEYS_PER_USER; with a verified MFA factor an aal1 session may not register or delete', async () => {
    const t = await app({ AUTHSVC_PASSKEY_MAX_PASSKEYS_PER_USER: '1' });
    const { session } = await userWithPasskey(t);
    expect(
      await errorOf(await t.request('POST', '/passkeys/registration/options', {}, bearer(session.access_token))),
    ).toMatchObject({ status: 422, code: 'too_many_passkeys', message: 'Maximum number of passkeys reached' });
    await db.orm.insert(db.t.mfaFactors).values({
      id: crypto.randomUUID(),
      userId: session.user.id,
      factorType: 'totp',
      status: 'verified',
      createdAt: new Date(),
      updatedAt: new Date(),
      friendlyName: 'x',
    });
    expect(
      await errorOf(
        await t.request('DELETE', `/passkeys/${crypto.randomUUID()}`, undefined, bearer(session.access_token)),
      ),
    ).toMatchObject({
      status: 403,
      code: 'insufficient_aal',
      message: 'AAL2 session is required to manage passkeys when MFA is enabled',
    });
  });

  test('PASSKEY_ENABLED off: every /passkeys route is 404 passkey_disabled before authentication; /settings mirrors the switch', async () => {
    const off = await app({ AUTHSVC_PASSKEY_ENABLED: 'false' });
    for (const [method, path] of [
      ['POST', '/passkeys/authentication/options'],
      ['GET', '/passkeys'],
      ['PATCH', '/passkeys/x'],
      ['POST', '/passkeys/registration/verify'],
    ] as const) {
      expect(await errorOf(await off.request(method, path, undefined, V2024))).toMatchObject({
        status: 404,
        code: 'passkey_disabled',
        message: 'Passkeys are disabled',
      });
    }
    expect(((await (await off.request('GET', '/settings')).json()) as Json).passkeys_enabled).toBe(false);
    const on = await app();
    expect(((await (await on.request('GET', '/settings')).json()) as Json).passkeys_enabled).toBe(true);
    expect(await errorOf(await on.request('GET', '/passkeys', undefined, V2024))).toMatchObject({
      status: 401,
      code: 'no_authorization',
    });
  });
});
