// Issue 31: WebAuthn MFA factors and passkeys GoTrue registered keep working. A database of
// GoTrue v2.196 (the first release with both: WebAuthn factors since 20240729123726, passkeys
// since 20260302000000) holds, as GoTrue writes them, a verified factor whose
// mfa_factors.web_authn_credential is go-webauthn's Credential JSON and a passkey row of
// webauthn_credentials (raw bytea credential id and COSE key, aaguid, sign count); the software
// authenticator that owns each key then signs in through HTTP: MFA verify to aal2, passkey sign-in.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { gotrueSchemaSql } from '../fixtures/gotrue-schema.ts';
import { type TestApp, buildTestApp } from '../helpers/app.ts';
import { openTestDb, uniqueNamespace } from '../helpers/db.ts';
import {
  exec,
  type GoTrueUser,
  type GoTrueWebauthnKey,
  insertGoTruePasskey,
  insertGoTrueUser,
  insertGoTrueWebauthnFactor,
  lit,
} from '../helpers/gotrue-rows.ts';
import { b64url, FLAG, newKey, SoftAuthenticator } from '../helpers/webauthn.ts';

type Json = Record<string, any>;
const ORIGIN = 'http://localhost:5173';
const YUBIKEY_AAGUID = 'cb69481e-8ff7-4039-93ec-0a2729a154a8';
const ICLOUD_AAGUID = 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd';
const V2024 = { 'x-supabase-api-version': '2024-01-01' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, ...V2024 });
const aaguidBytes = (u: string) => new Uint8Array(Buffer.from(u.replaceAll('-', ''), 'hex'));

/** A software authenticator holding a key GoTrue registered, at the sign count GoTrue stored. */
async function goTrueKey(aaguid: string, signCount: number, o: { backup?: boolean; user?: string } = {}) {
  const authenticator = new SoftAuthenticator(
    await newKey('ES256'),
    crypto.getRandomValues(new Uint8Array(32)),
    ORIGIN,
    aaguidBytes(aaguid),
  );
  authenticator.counter = signCount;
  // GoTrue's user handle: the user id's 36 characters as bytes (webAuthnUser.WebAuthnID).
  if (o.user) authenticator.userHandle = b64url(new TextEncoder().encode(o.user));
  const stored: GoTrueWebauthnKey = {
    id: authenticator.id,
    cose: authenticator.key.cose,
    aaguid,
    signCount,
    backupEligible: o.backup,
    backedUp: o.backup,
  };
  return { authenticator, stored };
}

describe("WebAuthn factors and passkeys on GoTrue v2.196's database", () => {
  let db: Database;
  let t: TestApp;
  let mfaUser: GoTrueUser;
  let passkeyUser: GoTrueUser;
  let factorId: string;
  let passkeyId: string;
  let yubikey: SoftAuthenticator;
  let phone: SoftAuthenticator;
  let synced: SoftAuthenticator;
  const ns = () => `"${db.namespace}"`;

  beforeAll(async () => {
    db = await openTestDb({ migrate: false, namespace: uniqueNamespace() });
    await exec(db, gotrueSchemaSql(db.namespace, 'v2.196.0'));
    mfaUser = await insertGoTrueUser(db, { email: 'webauthn.mfa@example.com' });
    const mfaKey = await goTrueKey(YUBIKEY_AAGUID, 41);
    yubikey = mfaKey.authenticator;
    factorId = await insertGoTrueWebauthnFactor(db, mfaUser.id, mfaKey.stored);

    passkeyUser = await insertGoTrueUser(db, { email: 'passkey@example.com' });
    const pk = await goTrueKey(ICLOUD_AAGUID, 0, { backup: true, user: passkeyUser.id });
    phone = pk.authenticator;
    passkeyId = await insertGoTruePasskey(db, passkeyUser.id, pk.stored);
    // A synced passkey whose authenticator always counts 0 (as iCloud Keychain's do).
    const syncedUser = await insertGoTrueUser(db, { email: 'synced@example.com' });
    const sk = await goTrueKey(ICLOUD_AAGUID, 0, { backup: true, user: syncedUser.id });
    synced = sk.authenticator;
    await insertGoTruePasskey(db, syncedUser.id, sk.stored, 'Passwords');

    await migrate(db, loadMigrations());
    t = await buildTestApp(db, {
      AUTHSVC_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true',
      AUTHSVC_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true',
      AUTHSVC_PASSKEY_ENABLED: 'true',
      AUTHSVC_WEBAUTHN_RP_ID: 'localhost',
      AUTHSVC_WEBAUTHN_RP_DISPLAY_NAME: 'GoTrue app',
      AUTHSVC_WEBAUTHN_RP_ORIGINS: ORIGIN,
    });
  });
  afterAll(async () => {
    await exec(db, `drop schema if exists "${db.namespace}" cascade`).catch(() => undefined);
    await db?.close();
  });

  async function passwordSession(): Promise<Json> {
    const res = await t.request('POST', '/token?grant_type=password', {
      email: mfaUser.email,
      password: mfaUser.password,
    });
    expect(res.status).toBe(200);
    return res.json() as Promise<Json>;
  }

  async function webauthnChallenge(token: string): Promise<Json> {
    const res = await t.request('POST', `/factors/${factorId}/challenge`, {}, bearer(token));
    expect(res.status, await res.clone().text()).toBe(200);
    return res.json() as Promise<Json>;
  }

  const verify = (token: string, challengeId: string, credential: unknown) =>
    t.request(
      'POST',
      `/factors/${factorId}/verify`,
      {
        challenge_id: challengeId,
        webauthn: { type: 'request', credential_response: credential },
      },
      bearer(token),
    );

  test("the factor is listed; its challenge offers the key GoTrue stored; the key's assertion makes the session aal2", async () => {
    const login = await passwordSession();
    expect(login.user.factors).toEqual([
      expect.objectContaining({ id: factorId, factor_type: 'webauthn', status: 'verified', friendly_name: 'YubiKey' }),
    ]);
    const ch = await webauthnChallenge(login.access_token);
    expect(ch.webauthn.type).toBe('request');
    const pk = ch.webauthn.credential_options.publicKey;
    expect(pk.allowCredentials).toEqual([{ type: 'public-key', id: b64url(yubikey.id) }]);
    const res = await verify(login.access_token, ch.id, await yubikey.assert(pk));
    expect(res.status, await res.clone().text()).toBe(200);
    const claims = decodeJwt(((await res.json()) as Json).access_token);
    expect(claims.aal).toBe('aal2');
    expect(claims.amr).toEqual(expect.arrayContaining([expect.objectContaining({ method: 'mfa/webauthn' })]));
    // The stored credential keeps GoTrue's shape; only the sign count moved (42 now).
    const [row] = await exec(
      db,
      `select web_authn_credential as c, web_authn_aaguid::text as aaguid from ${ns()}.mfa_factors where id = ${lit(factorId)}`,
    );
    expect(row!.aaguid).toBe(YUBIKEY_AAGUID);
    const c = row!.c as Json;
    expect(c.authenticator).toMatchObject({
      signCount: 42,
      AAGUID: Buffer.from(aaguidBytes(YUBIKEY_AAGUID)).toString('base64'),
    });
    expect(c).toMatchObject({
      id: Buffer.from(yubikey.id).toString('base64'),
      attestationFormat: 'none',
      transport: ['usb', 'nfc'],
    });
    expect(Object.keys(c.attestation)).toContain('clientDataJSON');
  });

  test("GoTrue's stored sign count is honoured: an assertion counting below it (a cloned key) is refused", async () => {
    const login = await passwordSession();
    const ch = await webauthnChallenge(login.access_token);
    const res = await verify(
      login.access_token,
      ch.id,
      await yubikey.assert(ch.webauthn.credential_options.publicKey, { counter: 5 }),
    );
    expect(res.status).toBe(422);
    expect(((await res.json()) as Json).code).toBe('mfa_verification_failed');
  });

  test("another key's signature over the GoTrue credential id is refused", async () => {
    const login = await passwordSession();
    const ch = await webauthnChallenge(login.access_token);
    const res = await verify(
      login.access_token,
      ch.id,
      await yubikey.assert(ch.webauthn.credential_options.publicKey, { signWith: await newKey('ES256') }),
    );
    expect(res.status).toBe(422);
  });

  test('the passkey GoTrue stored signs in with no session: aal1, AMR passkey; its counter and last use are written in place', async () => {
    const opts = (await (await t.request('POST', '/passkeys/authentication/options', {}, V2024)).json()) as Json;
    const credential = await phone.assert(opts.options, { flags: FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS });
    const res = await t.request(
      'POST',
      '/passkeys/authentication/verify',
      { challenge_id: opts.challenge_id, credential },
      V2024,
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.user.id).toBe(passkeyUser.id);
    const claims = decodeJwt(body.access_token);
    expect(claims.aal).toBe('aal1');
    expect(claims.amr).toEqual([expect.objectContaining({ method: 'passkey' })]);
    const [row] = await exec(
      db,
      `select encode(credential_id, 'hex') as id, sign_count::int as n, transports, backed_up, aaguid::text as aaguid,
      last_used_at is not null as used from ${ns()}.webauthn_credentials where id = ${lit(passkeyId)}`,
    );
    expect(row).toEqual({
      id: Buffer.from(phone.id).toString('hex'),
      n: 1,
      transports: ['internal', 'hybrid'],
      backed_up: true,
      aaguid: ICLOUD_AAGUID,
      used: true,
    });
    const list = await t.request('GET', '/passkeys', undefined, bearer(body.access_token));
    expect(await list.json()).toEqual([expect.objectContaining({ id: passkeyId, friendly_name: 'iCloud Keychain' })]);
  });

  test('a synced passkey that always counts 0 signs in again and again', async () => {
    for (let i = 0; i < 2; i++) {
      const opts = (await (await t.request('POST', '/passkeys/authentication/options', {}, V2024)).json()) as Json;
      const credential = await synced.assert(opts.options, {
        flags: FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS,
        counter: 0,
      });
      const res = await t.request(
        'POST',
        '/passkeys/authentication/verify',
        { challenge_id: opts.challenge_id, credential },
        V2024,
      );
      expect(res.status, await res.clone().text()).toBe(200);
    }
  });

  test('ceremonies GoTrue began before the switch finish in authsvc (its SessionData JSON in the challenge rows)', async () => {
    const challenge = b64url(crypto.getRandomValues(new Uint8Array(32)));
    const expires = new Date(Date.now() + 240_000);
    // A passkey sign-in GoTrue's BeginDiscoverableLogin started (webauthn_challenges, no user yet).
    const passkeyChallenge = crypto.randomUUID();
    const sessionData = {
      challenge,
      rpId: 'localhost',
      user_id: null,
      expires: expires.toISOString(),
      userVerification: 'preferred',
    };
    await exec(
      db,
      `insert into ${ns()}.webauthn_challenges (id, user_id, challenge_type, session_data, created_at, expires_at)
      values (${lit(passkeyChallenge)}, NULL, 'authentication', ${lit(sessionData)}, now(), ${lit(expires)})`,
    );
    const credential = await phone.assert(
      { challenge, rpId: 'localhost' },
      { flags: FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS },
    );
    const signedIn = await t.request(
      'POST',
      '/passkeys/authentication/verify',
      { challenge_id: passkeyChallenge, credential },
      V2024,
    );
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
    expect(((await signedIn.json()) as Json).user.id).toBe(passkeyUser.id);

    // An MFA challenge GoTrue's challengeWebAuthnFactor wrote (mfa_challenges.web_authn_session_data).
    const login = await passwordSession();
    const mfaChallenge = crypto.randomUUID();
    const mfaData = {
      challenge,
      rpId: 'localhost',
      user_id: Buffer.from(mfaUser.id).toString('base64'),
      allowed_credentials: [Buffer.from(yubikey.id).toString('base64')],
      expires: expires.toISOString(),
      userVerification: '',
    };
    await exec(
      db,
      `insert into ${ns()}.mfa_challenges (id, factor_id, created_at, ip_address, web_authn_session_data)
      values (${lit(mfaChallenge)}, ${lit(factorId)}, now(), '192.0.2.7', ${lit(mfaData)})`,
    );
    const assertion = await yubikey.assert({ challenge, rpId: 'localhost' });
    const res = await t.request(
      'POST',
      `/factors/${factorId}/verify`,
      { challenge_id: mfaChallenge, webauthn: { type: 'request', credential_response: assertion } },
      { ...bearer(login.access_token), 'x-forwarded-for': '192.0.2.7' },
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(decodeJwt(((await res.json()) as Json).access_token).aal).toBe('aal2');
  });

  test('a passkey assertion naming another user than the one GoTrue stored the passkey for is refused', async () => {
    const opts = (await (await t.request('POST', '/passkeys/authentication/options', {}, V2024)).json()) as Json;
    const credential = await phone.assert(opts.options, {
      flags: FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS,
      userHandle: b64url(new TextEncoder().encode(mfaUser.id)),
    });
    const res = await t.request(
      'POST',
      '/passkeys/authentication/verify',
      { challenge_id: opts.challenge_id, credential },
      V2024,
    );
    expect(res.status).toBe(400);
  });
});
