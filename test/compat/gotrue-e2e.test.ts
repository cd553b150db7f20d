// Issue 31, end to end: a database built as GoTrue's migrations leave it (v2.150.0 and v2.196.0,
// test/fixtures/gotrue-schema.ts), rows written the way GoTrue writes them, then authsvc's
// migrations and the real app over HTTP: sign-in by email and phone, GoTrue's refresh tokens,
// GET /user, the admin listing, pending links and codes, a TOTP factor.
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { type GoTrueRelease, gotrueSchemaSql, gotrueVersions } from '../fixtures/gotrue-schema.ts';
import { TEST_JWT_SECRET, type TestApp, buildTestApp } from '../helpers/app.ts';
import { openTestDb, uniqueNamespace } from '../helpers/db.ts';
import {
  exec,
  type GoTrueUser,
  insertGoTrueSession,
  insertGoTrueUser,
  insertLegacyChain,
  lit,
  signedToken,
  signingKey,
} from '../helpers/gotrue-rows.ts';
import { decodeBase32, totpAt } from '../helpers/totp.ts';

type Json = Record<string, any>;
const sha224 = (s: string) => createHash('sha224').update(s).digest('hex');
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const release of ['v2.150.0', 'v2.196.0'] as GoTrueRelease[]) {
  const newest = release === 'v2.196.0';

  describe(`authsvc on GoTrue ${release}'s database`, () => {
    let db: Database;
    let t: TestApp;
    let serviceKey: string;
    let alice: GoTrueUser;
    let bob: GoTrueUser;
    let carol: GoTrueUser;
    let dave: GoTrueUser;
    let erin: GoTrueUser;
    let frank: GoTrueUser;
    let legacy: string[];
    let signed: { sessionId: string; key: string } | undefined;
    const carolCode = '482913';
    const daveCode = '105762';
    const totpSecret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const totpFactor = crypto.randomUUID();

    beforeAll(async () => {
      db = await openTestDb({ migrate: false, namespace: uniqueNamespace() });
      const ns = `"${db.namespace}"`;
      await exec(db, gotrueSchemaSql(db.namespace, release));
      // What GoTrue wrote, before authsvc ever ran.
      alice = await insertGoTrueUser(db, { email: 'alice@example.com' });
      const aliceSession = await insertGoTrueSession(db, alice.id);
      legacy = await insertLegacyChain(db, alice.id, aliceSession, 3);
      if (newest) {
        const key = signingKey();
        signed = { key, sessionId: await insertGoTrueSession(db, alice.id, { hmacKey: key, counter: 3 }) };
      }
      bob = await insertGoTrueUser(db, { phone: '15551234567' });
      // Carol signed up and has not confirmed: the mailed link is sha224(email + code).
      carol = await insertGoTrueUser(db, { email: 'carol@example.com' });
      const sent = new Date(Date.now() - 60_000);
      await exec(
        db,
        `update ${ns}.users set email_confirmed_at = null, confirmation_token = ${lit(sha224(carol.email! + carolCode))},
        confirmation_sent_at = ${lit(sent)} where id = ${lit(carol.id)}`,
      );
      // Dave asked for a password reset: the code is in his mail.
      dave = await insertGoTrueUser(db, { email: 'dave@example.com' });
      await exec(
        db,
        `update ${ns}.users set recovery_token = ${lit(sha224(dave.email! + daveCode))},
        recovery_sent_at = ${lit(sent)} where id = ${lit(dave.id)}`,
      );
      if (newest) {
        // Since v2.151 GoTrue writes each pending token to one_time_tokens as well.
        await exec(
          db,
          `insert into ${ns}.one_time_tokens (id, user_id, token_type, token_hash, relates_to, created_at, updated_at) values
          (gen_random_uuid(), ${lit(carol.id)}, 'confirmation_token', ${lit(sha224(carol.email! + carolCode))}, ${lit(carol.email)}, ${lit(sent)}, ${lit(sent)}),
          (gen_random_uuid(), ${lit(dave.id)}, 'recovery_token', ${lit(sha224(dave.email! + daveCode))}, ${lit(dave.email)}, ${lit(sent)}, ${lit(sent)})`,
        );
      }
      // Frank has an email change (both addresses), a phone change and a reauthentication pending.
      frank = await insertGoTrueUser(db, { email: 'frank@example.com' });
      await exec(
        db,
        `update ${ns}.users set email_change = 'frank.new@example.com', email_change_token_new = ${lit(sha224('frank.new@example.com' + '111111'))},
        email_change_token_current = ${lit(sha224('frank@example.com' + '222222'))}, email_change_sent_at = ${lit(sent)},
        phone_change = '15550001111', phone_change_token = ${lit(sha224('15550001111' + '333333'))}, phone_change_sent_at = ${lit(sent)},
        reauthentication_token = ${lit(sha224('frank@example.com' + '444444'))}, reauthentication_sent_at = ${lit(sent)}
        where id = ${lit(frank.id)}`,
      );
      // Erin has a verified TOTP factor (secret stored plain, as with encryption off).
      erin = await insertGoTrueUser(db, { email: 'erin@example.com' });
      await exec(
        db,
        `insert into ${ns}.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
        values (${lit(totpFactor)}, ${lit(erin.id)}, 'authenticator', 'totp', 'verified', now() - interval '1 day', now() - interval '1 day', ${lit(totpSecret)})`,
      );
      if (newest) {
        await exec(
          db,
          `insert into ${ns}.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, phone)
          values (gen_random_uuid(), ${lit(erin.id)}, 'sms', 'phone', 'verified', now() - interval '1 day', now() - interval '1 day', '15559876543')`,
        );
      }

      expect(await migrate(db, loadMigrations())).toEqual(loadMigrations().map((m) => m.version));
      t = await buildTestApp(db, {
        AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
        AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10',
      });
      serviceKey = await new SignJWT({ role: 'service_role' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    });
    afterAll(async () => {
      await exec(db, `drop schema if exists "${db.namespace}" cascade`).catch(() => undefined);
      await db?.close();
    });

    test('password sign-in by email and by phone (stored without "+")', async () => {
      const byEmail = await t.request('POST', '/token?grant_type=password', {
        email: 'Alice@Example.com',
        password: alice.password,
      });
      expect(byEmail.status).toBe(200);
      expect(((await byEmail.json()) as Json).user).toMatchObject({ id: alice.id, email: 'alice@example.com' });
      const byPhone = await t.request('POST', '/token?grant_type=password', {
        phone: '+1 555 123 4567',
        password: bob.password,
      });
      expect(byPhone.status).toBe(200);
      const body = (await byPhone.json()) as Json;
      expect(body.user).toMatchObject({ id: bob.id, phone: '15551234567' });
      expect(body.user.identities.map((i: Json) => i.provider)).toEqual(['phone']);
      const wrong = await t.request('POST', '/token?grant_type=password', { email: alice.email, password: 'not-it' });
      expect(wrong.status).toBe(400);
    });

    test("GoTrue's legacy refresh token refreshes; GET /user then shows the identities", async () => {
      const res = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: legacy[2] });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.refresh_token).toMatch(/^[a-z2-7]{32}$/);
      const me = await t.request('GET', '/user', undefined, bearer(body.access_token));
      expect(me.status).toBe(200);
      const user = (await me.json()) as Json;
      expect(user).toMatchObject({
        id: alice.id,
        email: 'alice@example.com',
        app_metadata: { provider: 'email', providers: ['email'] },
      });
      expect(user.identities).toEqual([
        expect.objectContaining({ provider: 'email', identity_id: expect.any(String), user_id: alice.id }),
      ]);
      // An older token of the chain is reuse.
      const old = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: legacy[0] });
      expect(old.status).toBe(400);
    });

    // v2.150 never issued signed tokens (its sessions have no key).
    if (newest)
      test("GoTrue's signed refresh token refreshes", async () => {
        const res = await t.request('POST', '/token?grant_type=refresh_token', {
          refresh_token: signedToken(signed!.sessionId, 3, signed!.key),
        });
        expect(res.status).toBe(200);
        const next = (await res.json()) as Json;
        expect(
          (await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: next.refresh_token })).status,
        ).toBe(200);
      });

    test("the admin listing shows GoTrue's users in GoTrue's shape", async () => {
      const res = await t.request('GET', '/admin/users?per_page=50', undefined, bearer(serviceKey));
      expect(res.status).toBe(200);
      const users = ((await res.json()) as Json).users as Json[];
      expect(users.map((u) => u.id).sort()).toEqual([alice.id, bob.id, carol.id, dave.id, erin.id, frank.id].sort());
      expect(users.find((u) => u.id === bob.id)).toMatchObject({ phone: '15551234567', email: '' });
      expect(users.find((u) => u.id === carol.id)).toMatchObject({ email: 'carol@example.com' });
      expect(users.find((u) => u.id === carol.id)!.email_confirmed_at).toBeUndefined();
    });

    test('a pending signup link GoTrue mailed confirms the account (from users.* on v2.150, one_time_tokens since)', async () => {
      const res = await t.request('POST', '/verify', { type: 'signup', token_hash: sha224(carol.email! + carolCode) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.user).toMatchObject({ id: carol.id });
      expect(body.user.email_confirmed_at).toBeTruthy();
      // Used once.
      expect(
        (await t.request('POST', '/verify', { type: 'signup', token_hash: sha224(carol.email! + carolCode) })).status,
      ).toBe(403);
    });

    test('a pending recovery code GoTrue mailed signs in', async () => {
      const wrong = await t.request('POST', '/verify', { type: 'recovery', email: dave.email, token: '000000' });
      expect(wrong.status).toBe(403);
      const res = await t.request('POST', '/verify', { type: 'recovery', email: dave.email, token: daveCode });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).user.id).toBe(dave.id);
    });

    test("GoTrue's TOTP factor: sign-in is aal1 with the factor listed, a code takes it to aal2", async () => {
      const login = (await (
        await t.request('POST', '/token?grant_type=password', { email: erin.email, password: erin.password })
      ).json()) as Json;
      const factors = login.user.factors as Json[];
      expect(factors.map((f) => f.factor_type).sort()).toEqual(newest ? ['phone', 'totp'] : ['totp']);
      if (newest)
        expect(factors.find((f) => f.factor_type === 'phone')).toMatchObject({
          phone: '15559876543',
          status: 'verified',
        });
      const ch = await t.request('POST', `/factors/${totpFactor}/challenge`, {}, bearer(login.access_token));
      expect(ch.status).toBe(200);
      const code = totpAt(decodeBase32(totpSecret), Math.floor(Date.now() / 1000));
      const res = await t.request(
        'POST',
        `/factors/${totpFactor}/verify`,
        { challenge_id: ((await ch.json()) as Json).id, code },
        bearer(login.access_token),
      );
      expect(res.status).toBe(200);
      const aal2 = (await res.json()) as Json;
      const claims = JSON.parse(Buffer.from(aal2.access_token.split('.')[1], 'base64url').toString()) as Json;
      expect(claims.aal).toBe('aal2');
    });

    // v2.196's one_time_tokens already held GoTrue's rows: the backfill is for older databases only.
    if (!newest)
      test('every pending token of users.* got the one_time_tokens row GoTrue writes since v2.151', async () => {
        const rows = await exec(
          db,
          `select u.email as who, o.token_type as type, o.relates_to as rel, o.token_hash = (case o.token_type::text
          when 'confirmation_token' then u.confirmation_token when 'recovery_token' then u.recovery_token
          when 'email_change_token_new' then u.email_change_token_new when 'email_change_token_current' then u.email_change_token_current
          when 'phone_change_token' then u.phone_change_token else u.reauthentication_token end) as same
        from "${db.namespace}".one_time_tokens o join "${db.namespace}".users u on u.id = o.user_id
        where u.id = ${lit(frank.id)} order by 2`,
        );
        expect(rows).toEqual([
          { who: 'frank@example.com', type: 'reauthentication_token', rel: 'frank@example.com', same: true },
          { who: 'frank@example.com', type: 'email_change_token_new', rel: 'frank.new@example.com', same: true },
          { who: 'frank@example.com', type: 'email_change_token_current', rel: 'frank@example.com', same: true },
          { who: 'frank@example.com', type: 'phone_change_token', rel: '15550001111', same: true },
        ]);
      });

    test("GoTrue's schema_migrations rows are all still there", async () => {
      const rows = await exec(db, `select version from "${db.namespace}".schema_migrations`);
      expect(rows.map((r) => r.version)).toEqual(expect.arrayContaining(gotrueVersions(release)));
    });
  });
}
