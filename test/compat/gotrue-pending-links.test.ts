// Issue 31: the links and codes GoTrue had mailed or texted before the switch — invite, email
// change (the current and the new address), phone change, reauthentication — written as GoTrue
// writes them (users.*_token = sha224(address + code), *_sent_at, and since v2.151 the
// one_time_tokens row), on a database of GoTrue v2.150 and of v2.196, verified through HTTP
// (GET and POST /verify, PUT /user with the nonce) until they expire, and not after.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { type GoTrueRelease, gotrueSchemaSql } from '../fixtures/gotrue-schema.ts';
import { type TestApp, buildTestApp } from '../helpers/app.ts';
import { openTestDb, uniqueNamespace } from '../helpers/db.ts';
import {
  exec,
  type GoTrueOttType,
  type GoTrueUser,
  gotrueTokenHash as h,
  insertGoTrueInvite,
  insertGoTrueOneTimeToken,
  insertGoTrueUser,
  lit,
} from '../helpers/gotrue-rows.ts';

type Json = Record<string, any>;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ago = (s: number) => new Date(Date.now() - s * 1000);
const fragmentOf = (res: Response) => new URLSearchParams(new URL(res.headers.get('location')!).hash.slice(1));

for (const release of ['v2.150.0', 'v2.196.0'] as GoTrueRelease[]) {
  // v2.150 wrote only users.*; since v2.151 GoTrue writes the one_time_tokens row as well (on
  // v2.150 authsvc's migration fills it in from users.*).
  const ott = release === 'v2.196.0';

  describe(`pending GoTrue links and codes on GoTrue ${release}'s database`, () => {
    let db: Database;
    let t: TestApp;
    const users: Record<string, GoTrueUser> = {};
    const ns = () => `"${db.namespace}"`;

    /** users.<column> and <column>_sent_at as GoTrue's sendX leaves them, plus its one_time_tokens row. */
    async function pending(
      u: GoTrueUser,
      type: GoTrueOttType,
      hash: string,
      relatesTo: string,
      sentAt: Date,
      extra = '',
    ) {
      const sentColumn =
        { reauthentication_token: 'reauthentication_sent_at', phone_change_token: 'phone_change_sent_at' }[
          type as string
        ] ?? 'email_change_sent_at';
      await exec(
        db,
        `update ${ns()}.users set ${type} = ${lit(hash)}, ${sentColumn} = ${lit(sentAt)}${extra} where id = ${lit(u.id)}`,
      );
      if (ott) await insertGoTrueOneTimeToken(db, { userId: u.id, type, tokenHash: hash, relatesTo, at: sentAt });
    }

    /** An email change GoTrue's PUT /user left pending under secure change: a code to each address. */
    async function emailChange(u: GoTrueUser, to: string, currentCode: string, newCode: string, sentAt: Date) {
      await pending(
        u,
        'email_change_token_current',
        h(u.email!, currentCode),
        u.email!,
        sentAt,
        `, email_change = ${lit(to)}, email_change_confirm_status = 0`,
      );
      await pending(u, 'email_change_token_new', h(to, newCode), to, sentAt);
    }

    beforeAll(async () => {
      db = await openTestDb({ migrate: false, namespace: uniqueNamespace() });
      await exec(db, gotrueSchemaSql(db.namespace, release));
      const fresh = ago(120);
      const stale = ago(2 * 86_400); // past MAILER_OTP_EXP (1 day)
      users.ivy = await insertGoTrueInvite(db, 'ivy@example.com', '614207', fresh, ott);
      users.ian = await insertGoTrueInvite(db, 'ian@example.com', '739120', fresh, ott);
      users.old = await insertGoTrueInvite(db, 'old.invite@example.com', '555000', stale, ott);

      users.jo = await insertGoTrueUser(db, { email: 'jo@example.com' });
      await emailChange(users.jo, 'jo.new@example.com', '200001', '200002', fresh);
      users.kai = await insertGoTrueUser(db, { email: 'kai@example.com' });
      await emailChange(users.kai, 'kai.new@example.com', '300001', '300002', fresh);
      users.lee = await insertGoTrueUser(db, { email: 'lee@example.com' });
      await emailChange(users.lee, 'lee.new@example.com', '400001', '400002', stale);

      // A phone change texted 20 s ago (SMS_OTP_EXP is 60 s), and one texted 5 minutes ago.
      users.max = await insertGoTrueUser(db, { phone: '15550002001' });
      await pending(
        users.max,
        'phone_change_token',
        h('15550002999', '510510'),
        '15550002999',
        ago(20),
        `, phone_change = '15550002999'`,
      );
      users.ned = await insertGoTrueUser(db, { phone: '15550003001' });
      await pending(
        users.ned,
        'phone_change_token',
        h('15550003999', '520520'),
        '15550003999',
        ago(300),
        `, phone_change = '15550003999'`,
      );

      // Reauthentication nonces (GoTrue's sendReauthenticationOtp: sha224(email + code)).
      users.ola = await insertGoTrueUser(db, { email: 'ola@example.com' });
      await pending(users.ola, 'reauthentication_token', h('ola@example.com', '610610'), 'ola@example.com', fresh);
      users.pat = await insertGoTrueUser(db, { email: 'pat@example.com' });
      await pending(users.pat, 'reauthentication_token', h('pat@example.com', '620620'), 'pat@example.com', stale);

      await migrate(db, loadMigrations());
      t = await buildTestApp(db, {
        AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
        AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
      });
    });
    afterAll(async () => {
      await exec(db, `drop schema if exists "${db.namespace}" cascade`).catch(() => undefined);
      await db?.close();
    });

    test('an invite link GoTrue mailed (GET /verify) signs the invited user in; used once', async () => {
      const link = `/verify?token=${h('ivy@example.com', '614207')}&type=invite&redirect_to=http://localhost:3000/welcome`;
      const res = await t.request('GET', link);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toMatch(/^http:\/\/localhost:3000\/welcome#/);
      const f = fragmentOf(res);
      expect(f.get('type')).toBe('invite');
      expect(decodeJwt(f.get('access_token')!).sub).toBe(users.ivy!.id);
      const again = await t.request('GET', link);
      expect(fragmentOf(again).get('error_code')).toBe('otp_expired');
    });

    test('an invite code GoTrue mailed (POST /verify with email and token) confirms the account', async () => {
      expect(
        (await t.request('POST', '/verify', { type: 'invite', email: 'ian@example.com', token: '000000' })).status,
      ).toBe(403);
      const res = await t.request('POST', '/verify', { type: 'invite', email: 'ian@example.com', token: '739120' });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.user).toMatchObject({ id: users.ian!.id, email: 'ian@example.com' });
      expect(body.user.email_confirmed_at).toBeTruthy();
    });

    test('an invite older than MAILER_OTP_EXP is refused, by link and by code', async () => {
      expect(
        (await t.request('POST', '/verify', { type: 'invite', token_hash: h('old.invite@example.com', '555000') }))
          .status,
      ).toBe(403);
      expect(
        (await t.request('POST', '/verify', { type: 'invite', email: 'old.invite@example.com', token: '555000' }))
          .status,
      ).toBe(403);
    });

    test("email change: the current address's code, then the new address's link (GET) moves the account", async () => {
      const half = await t.request('POST', '/verify', {
        type: 'email_change',
        email: 'jo@example.com',
        token: '200001',
      });
      expect(half.status).toBe(200);
      expect(((await half.json()) as Json).msg).toBe(
        'Confirmation link accepted. Please proceed to confirm link sent to the other email',
      );
      const res = await t.request('GET', `/verify?token=${h('jo.new@example.com', '200002')}&type=email_change`);
      expect(res.status).toBe(303);
      const f = fragmentOf(res);
      expect(f.get('type')).toBe('email_change');
      const me = (await (await t.request('GET', '/user', undefined, bearer(f.get('access_token')!))).json()) as Json;
      expect(me).toMatchObject({ id: users.jo!.id, email: 'jo.new@example.com' });
    });

    test("email change: the new address's code, then the current address's link (POST token_hash)", async () => {
      const half = await t.request('POST', '/verify', {
        type: 'email_change',
        email: 'kai.new@example.com',
        token: '300002',
      });
      expect(half.status).toBe(200);
      const res = await t.request('POST', '/verify', {
        type: 'email_change',
        token_hash: h('kai@example.com', '300001'),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).user).toMatchObject({ id: users.kai!.id, email: 'kai.new@example.com' });
    });

    test('an email change older than MAILER_OTP_EXP is refused and the address stays', async () => {
      expect(
        (await t.request('POST', '/verify', { type: 'email_change', email: 'lee@example.com', token: '400001' }))
          .status,
      ).toBe(403);
      expect(
        (await t.request('POST', '/verify', { type: 'email_change', token_hash: h('lee.new@example.com', '400002') }))
          .status,
      ).toBe(403);
      const [row] = await exec(db, `select email from ${ns()}.users where id = ${lit(users.lee!.id)}`);
      expect(row).toEqual({ email: 'lee@example.com' });
    });

    test('a phone change code GoTrue texted moves the number; one past SMS_OTP_EXP does not', async () => {
      expect(
        (await t.request('POST', '/verify', { type: 'phone_change', phone: '+15550002999', token: '000000' })).status,
      ).toBe(403);
      const res = await t.request('POST', '/verify', { type: 'phone_change', phone: '+15550002999', token: '510510' });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).user).toMatchObject({ id: users.max!.id, phone: '15550002999' });
      expect(
        (await t.request('POST', '/verify', { type: 'phone_change', phone: '+15550003999', token: '520520' })).status,
      ).toBe(403);
      const [row] = await exec(db, `select phone from ${ns()}.users where id = ${lit(users.ned!.id)}`);
      expect(row).toEqual({ phone: '15550003001' });
    });

    test('a reauthentication nonce GoTrue mailed lets PUT /user change the password; an expired one does not', async () => {
      const signIn = async (u: GoTrueUser, password: string) =>
        t.request('POST', '/token?grant_type=password', { email: u.email, password });
      const ola = (await (await signIn(users.ola!, users.ola!.password)).json()) as Json;
      expect(
        (await t.request('PUT', '/user', { password: 'a-new-password-1', nonce: '000000' }, bearer(ola.access_token)))
          .status,
      ).toBe(422);
      const ok = await t.request(
        'PUT',
        '/user',
        { password: 'a-new-password-1', nonce: '610610' },
        bearer(ola.access_token),
      );
      expect(ok.status).toBe(200);
      expect((await signIn(users.ola!, 'a-new-password-1')).status).toBe(200);

      const pat = (await (await signIn(users.pat!, users.pat!.password)).json()) as Json;
      const stale = await t.request(
        'PUT',
        '/user',
        { password: 'a-new-password-2', nonce: '620620' },
        bearer(pat.access_token),
      );
      expect(stale.status).toBe(422);
      expect(((await stale.json()) as Json).error_code).toBe('reauthentication_not_valid');
      expect((await signIn(users.pat!, users.pat!.password)).status).toBe(200);
    });

    // Last in this database: it spends the hour's budget of old-format misses.
    test('review 2026-12-01, section 5: wrong old-format link values from one client no longer make every genuine GoTrue link fail; the deployment-wide bound of 20 misses an hour holds across clients', async () => {
      const pinned = new Date();
      const app = await buildTestApp(
        db,
        { AUTHSVC_RATE_LIMIT_HEADER: 'X-Forwarded-For', AUTHSVC_LOG_LEVEL: 'warn' },
        { now: () => pinned },
      );
      const verify = (body: Json, ip?: string) =>
        app.request('POST', '/verify', body, ip ? { 'x-forwarded-for': ip } : {});
      const sentAt = ago(60);
      await insertGoTrueInvite(db, 'una@example.com', '811811', sentAt, true);
      await insertGoTrueInvite(db, 'vic@example.com', '822822', sentAt, true);
      const miss = (ip: string | undefined, i: number) =>
        verify({ type: 'invite', token_hash: h('una@example.com', String(100_000 + i)) }, ip);
      // The review's attack: 22 wrong values from one client.
      for (let i = 0; i < 22; i++) expect((await miss('198.51.100.7', i)).status).toBe(403);
      const genuine = await verify({ type: 'invite', token_hash: h('una@example.com', '811811') }, '203.0.113.5');
      expect(genuine.status, await genuine.clone().text()).toBe(200);
      expect(
        app.logs.some((l) => l.includes("old-format link refused: this client's hourly share of misses is spent")),
      ).toBe(true);
      expect(app.logs.some((l) => l.includes('the hourly budget of misses is spent'))).toBe(false);
      // Requests without the configured header share one client's share.
      for (let i = 0; i < 4; i++) expect((await miss(undefined, 50 + i)).status).toBe(403);
      // Many clients together still spend the hour's 20 misses (6 so far, 3 each from five more).
      for (let c = 0; c < 5; c++)
        for (let i = 0; i < 3; i++) expect((await miss(`192.0.2.${c + 1}`, 100 + c * 3 + i)).status).toBe(403);
      expect(app.logs.some((l) => l.includes('old-format link refused: the hourly budget of misses is spent'))).toBe(
        true,
      );
      expect(
        (await verify({ type: 'invite', token_hash: h('vic@example.com', '822822') }, '203.0.113.99')).status,
      ).toBe(403);
      // The code typed in is not a link value: it still works.
      const code = await verify({ type: 'invite', email: 'vic@example.com', token: '822822' }, '203.0.113.99');
      expect(code.status).toBe(200);
    });
  });
}
