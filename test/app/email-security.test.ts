// Email-flow defects of the security review: the authorised-address list, magic links and
// resends under MAILER_AUTOCONFIRM, and an email change to an address registered meanwhile.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const bearer = (s: Json) => ({ authorization: `Bearer ${s.access_token}` });
const userRow = async (email: string) => (await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email)))[0];
const adminHeader = async (t: TestApp) => ({
  authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })}`,
});

describe('EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES', () => {
  const allowed = 'team@example.com';
  const env = { AUTHSVC_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: `${allowed},Second@Example.com` };

  test('email goes only to listed addresses (a +label and case ignored); others get 400 email_address_not_authorized and nothing is written', async () => {
    const t = await buildTestApp(db, env);
    const other = uniqueEmail('outsider');
    const refused = await t.request('POST', '/signup', { email: other, password: 'secret-pw-1' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      code: 400,
      error_code: 'email_address_not_authorized',
      msg: `Email address "${other}" cannot be used as it is not authorized`,
    });
    expect(await userRow(other)).toBeUndefined();
    expect(t.mails).toHaveLength(0);
    expect(
      (await t.request('POST', '/signup', { email: 'team+dev@example.com', password: 'secret-pw-1' })).status,
    ).toBe(200);
    expect((await t.request('POST', '/signup', { email: 'second@example.com', password: 'secret-pw-1' })).status).toBe(
      200,
    );
    expect(t.mails.map((m) => m.to)).toEqual(['team+dev@example.com', 'second@example.com']);
    expect((await t.request('POST', '/invite', { email: uniqueEmail('invitee') }, await adminHeader(t))).status).toBe(
      400,
    );
  });

  test('an email change needs the new address listed, and the current one under secure change', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto);
    const t = await buildTestApp(db, { AUTHSVC_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: 'team@example.com' });
    const res = await t.request('PUT', '/user', { email: 'team@example.com' }, bearer(u.session));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error_code: 'email_address_not_authorized',
      msg: `Email address "${u.email}" cannot be used as it is not authorized`,
    });
    expect((await userRow(u.email))!.emailChange ?? '').toBe('');
  });
});

describe('MAILER_AUTOCONFIRM and unconfirmed users', () => {
  test('/otp and /magiclink send an invited user a magic link (not 422 user_already_exists); following it confirms the address', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    for (const path of ['/otp', '/magiclink']) {
      const email = uniqueEmail('invited');
      expect((await t.request('POST', '/invite', { email }, await adminHeader(t))).status).toBe(200);
      const res = await t.request('POST', path, { email });
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual({});
      const link = t.mails.at(-1)!;
      expect(link).toMatchObject({ kind: 'magic_link', to: email });
      expect((await userRow(email))!.emailConfirmedAt).toBeNull();
      const v = await t.request('POST', '/verify', { type: 'magiclink', token_hash: link.tokenHash });
      expect(v.status).toBe(200);
      expect((await userRow(email))!.emailConfirmedAt).not.toBeNull();
    }
  });

  test('an unauthenticated POST /resend type=email_change only sends the codes again: the change stays pending', async () => {
    let now = new Date('2033-05-01T00:00:00Z');
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }, { now: () => now });
    const u = await signUpConfirmed(t);
    const next = uniqueEmail('pending');
    expect((await t.request('PUT', '/user', { email: next }, bearer(u.session))).status).toBe(200);
    now = new Date(now.getTime() + 901_000);
    const mailsBefore = t.mails.length;
    const res = await t.request('POST', '/resend', { type: 'email_change', email: u.email });
    expect(res.status).toBe(200);
    expect(t.mails.length).toBe(mailsBefore + 2);
    const row = (await userRow(u.email))!;
    expect(row.email).toBe(u.email);
    expect(row.emailChange).toBe(next);
    expect(await userRow(next)).toBeUndefined();
  });
});

describe('confirming an email change to an address registered meanwhile', () => {
  test('POST /verify answers 422 email_exists and changes nothing; GET /verify redirects with the error', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const u = await signUpConfirmed(auto);
    const t = await buildTestApp(db, { AUTHSVC_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false' });
    const next = uniqueEmail('contested');
    await t.request('PUT', '/user', { email: next }, bearer(u.session));
    const mail = t.mails.at(-1)!;
    // Someone registers the new address before the user confirms the change.
    await signUpConfirmed(auto, next);
    const res = await t.request('POST', '/verify', { type: 'email_change', email: next, token: mail.token });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      code: 422,
      error_code: 'email_exists',
      msg: 'A user with this email address has already been registered',
    });
    expect((await userRow(u.email))!.email).toBe(u.email);
    const link = await t.request('GET', `/verify?type=email_change&token=${mail.tokenHash}`);
    expect(link.status).toBe(303);
    expect(link.headers.get('location')).toContain('error_code=email_exists');
  });
});
