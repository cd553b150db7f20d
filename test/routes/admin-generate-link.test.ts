// POST /admin/generate_link: every type through raw requests and through supabase-js'
// auth.admin.generateLink; the link and the code both go through the real /verify.
import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, TEST_JWT_SECRET, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const sha224 = (s: string) => createHash('sha224').update(s).digest('hex');

async function roleToken(role: string): Promise<string> {
  return new SignJWT({ role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

async function generate(t: TestApp, body: unknown, role = 'service_role'): Promise<{ status: number; body: Json }> {
  const res = await t.request('POST', '/admin/generate_link', body, {
    authorization: `Bearer ${await roleToken(role)}`,
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function generateOk(t: TestApp, body: Json): Promise<Json> {
  const r = await generate(t, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Follows an action link the way a browser would: GET /verify, a 303 with the result in the fragment. */
async function follow(t: TestApp, link: string): Promise<{ location: URL; fragment: URLSearchParams }> {
  const u = new URL(link);
  const res = await t.request('GET', `${u.pathname}${u.search}`);
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get('location')!);
  return { location, fragment: new URLSearchParams(location.hash.slice(1)) };
}

async function expectSessionLink(t: TestApp, link: string, type: string): Promise<URLSearchParams> {
  const { fragment } = await follow(t, link);
  expect(fragment.get('error_code')).toBeNull();
  expect(fragment.get('type')).toBe(type);
  expect(fragment.get('access_token')).toBeTruthy();
  expect(fragment.get('refresh_token')).toBeTruthy();
  // A link works once.
  const again = await follow(t, link);
  expect(again.fragment.get('error_code')).toBe('otp_expired');
  expect(again.fragment.get('access_token')).toBeNull();
  return fragment;
}

async function verifyCode(t: TestApp, body: Json): Promise<Json> {
  const res = await t.request('POST', '/verify', body);
  const json = (await res.json()) as Json;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

async function userRow(email: string) {
  const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
  return row;
}

async function passwordLogin(t: TestApp, email: string, password: string): Promise<Response> {
  return t.request('POST', '/token?grant_type=password', { email, password });
}

/**
 * The link carries hashed_token: 256 random bits, never GoTrue's sha224(address + code), which
 * anyone knowing the address computes from a guess of the code (review 2026-11-25, H1).
 */
function expectTokenShape(body: Json, hashedWith: string, linkType: string) {
  expect(body.email_otp).toMatch(/^\d{6}$/);
  expect(body.hashed_token).toMatch(/^[0-9a-f]{64}$/);
  expect(body.hashed_token).not.toBe(sha224(hashedWith + body.email_otp));
  const link = new URL(body.action_link);
  expect(link.origin + link.pathname).toBe('http://localhost:9999/verify');
  expect(link.searchParams.get('token')).toBe(body.hashed_token);
  expect(link.searchParams.get('type')).toBe(linkType);
}

describe('POST /admin/generate_link', () => {
  test('signup: creates the user, flattens it into the response; the link confirms once, no email sent', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail('gl-signup');
    const body = await generateOk(t, { type: 'signup', email, password: 'secret-pw-1', data: { plan: 'pro' } });
    expect(body).toMatchObject({
      email,
      aud: 'authenticated',
      role: 'authenticated',
      verification_type: 'signup',
      redirect_to: 'http://localhost:3000',
      app_metadata: { provider: 'email', providers: ['email'] },
      user_metadata: { plan: 'pro' },
      is_anonymous: false,
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.confirmation_sent_at).toBeTruthy();
    expect(body.email_confirmed_at).toBeUndefined();
    expect(body.identities).toHaveLength(1);
    expect(body.identities[0]).toMatchObject({ provider: 'email', user_id: body.id });
    // As GoTrue: user_metadata is the data sent, exactly; the identity carries the address claims.
    expect(body.user_metadata).toEqual({ plan: 'pro' });
    expect(body.identities[0].identity_data).toEqual({
      sub: body.id,
      email,
      email_verified: false,
      phone_verified: false,
    });
    expect(body.action_link).toBe(
      `http://localhost:9999/verify?token=${body.hashed_token}&type=signup&redirect_to=http://localhost:3000`,
    );
    expectTokenShape(body, email, 'signup');
    // Unconfirmed until the link is followed.
    const early = await passwordLogin(t, email, 'secret-pw-1');
    expect(await early.json()).toMatchObject({ error_code: 'email_not_confirmed' });
    await expectSessionLink(t, body.action_link, 'signup');
    expect((await userRow(email))!.emailConfirmedAt).toBeTruthy();
    expect((await passwordLogin(t, email, 'secret-pw-1')).status).toBe(200);
    // Confirmed now: another signup link is refused.
    const dup = await generate(t, { type: 'signup', email, password: 'secret-pw-1' });
    expect(dup.status).toBe(422);
    expect(dup.body).toMatchObject({
      error_code: 'email_exists',
      msg: 'A user with this email address has already been registered',
    });
    expect(t.mails).toHaveLength(0);
  });

  test('signup: the code verifies with POST /verify; an unconfirmed user gets a fresh token and merged data', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail('gl-signup-code');
    const first = await generateOk(t, { type: 'signup', email, password: 'secret-pw-1', data: { a: 1, b: 2 } });
    const second = await generateOk(t, {
      type: 'signup',
      email,
      password: 'ignored-password-2',
      data: { b: null, c: 3 },
    });
    expect(second.id).toBe(first.id);
    expect(second.user_metadata).toMatchObject({ a: 1, c: 3 });
    expect(second.user_metadata).not.toHaveProperty('b');
    // The second token replaced the first.
    const stale = await t.request('POST', '/verify', { type: 'signup', email, token: first.email_otp });
    expect(stale.status).toBe(403);
    const session = await verifyCode(t, { type: 'signup', email, token: second.email_otp });
    expect(session).toMatchObject({ token_type: 'bearer', type: 'signup', user: { email } });
    // The password of the second request was ignored (GoTrue): the first one signs in.
    expect((await passwordLogin(t, email, 'secret-pw-1')).status).toBe(200);
    expect(t.mails).toHaveLength(0);
  });

  test('signup: password required and strength-checked', async () => {
    const t = await buildTestApp(db, { AUTHSVC_PASSWORD_MIN_LENGTH: '10' });
    const missing = await generate(t, { type: 'signup', email: uniqueEmail() });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error_code: 'validation_failed', msg: 'Signup requires a valid password' });
    const weak = await generate(t, { type: 'signup', email: uniqueEmail(), password: 'short' });
    expect(weak.status).toBe(422);
    expect(weak.body).toMatchObject({ error_code: 'weak_password', weak_password: { reasons: ['length'] } });
  });

  test('invite: sets invited_at; the link and the code each accept the invitation', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail('gl-invite');
    const body = await generateOk(t, { type: 'invite', email, data: { team: 'red' } });
    expect(body).toMatchObject({ email, verification_type: 'invite', user_metadata: { team: 'red' } });
    expect(body.invited_at).toBeTruthy();
    expectTokenShape(body, email, 'invite');
    await expectSessionLink(t, body.action_link, 'invite');
    expect((await userRow(email))!.emailConfirmedAt).toBeTruthy();
    const again = await generate(t, { type: 'invite', email });
    expect(again.status).toBe(422);
    expect(again.body).toMatchObject({ error_code: 'email_exists' });

    const other = uniqueEmail('gl-invite-code');
    const byCode = await generateOk(t, { type: 'invite', email: other });
    expect(await verifyCode(t, { type: 'invite', email: other, token: byCode.email_otp })).toMatchObject({
      type: 'invite',
      user: { email: other },
    });
    expect(t.mails).toHaveLength(0);
  });

  test('magiclink for an existing user: recovery token, type magiclink; link and code sign in', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email } = await signUpConfirmed(t, uniqueEmail('gl-magic'));
    const body = await generateOk(t, { type: 'magiclink', email });
    expect(body.verification_type).toBe('magiclink');
    expect(body.recovery_sent_at).toBeTruthy();
    expectTokenShape(body, email, 'magiclink');
    await expectSessionLink(t, body.action_link, 'magiclink');
    const byCode = await generateOk(t, { type: 'magiclink', email });
    expect(await verifyCode(t, { type: 'magiclink', email, token: byCode.email_otp })).toMatchObject({
      type: 'magiclink',
      user: { email },
    });
    expect(t.mails).toHaveLength(0);
  });

  test('magiclink for an unknown address becomes a signup (random password, verification_type signup)', async () => {
    // The production hasher: the stored hash's cost is asserted.
    const t = await buildTestApp(
      db,
      { AUTHSVC_PASSWORD_REQUIRED_CHARACTERS: '0123456789:!@#' },
      { hasher: createNodeHasher() },
    );
    const email = uniqueEmail('gl-magic-new');
    const body = await generateOk(t, { type: 'magiclink', email, data: { via: 'magic' } });
    expect(body).toMatchObject({ email, verification_type: 'signup', user_metadata: { via: 'magic' } });
    expectTokenShape(body, email, 'signup');
    expect((await userRow(email))!.encryptedPassword).toMatch(/^\$2[aby]\$10\$/);
    await expectSessionLink(t, body.action_link, 'signup');

    const other = uniqueEmail('gl-magic-new-code');
    const byCode = await generateOk(t, { type: 'magiclink', email: other });
    expect(byCode.verification_type).toBe('signup');
    expect(await verifyCode(t, { type: 'signup', email: other, token: byCode.email_otp })).toMatchObject({
      type: 'signup',
    });
    expect(t.mails).toHaveLength(0);
  });

  test('recovery: link and code sign in; no frequency limit; unknown address 404', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email } = await signUpConfirmed(t, uniqueEmail('gl-recovery'));
    const body = await generateOk(t, { type: 'recovery', email });
    expect(body.verification_type).toBe('recovery');
    expectTokenShape(body, email, 'recovery');
    // At once again: generate_link has no SMTP_MAX_FREQUENCY (POST /recover would answer 429 now).
    const second = await generateOk(t, { type: 'recovery', email });
    expect(second.hashed_token).not.toBe(body.hashed_token);
    await expectSessionLink(t, second.action_link, 'recovery');
    const byCode = await generateOk(t, { type: 'recovery', email });
    expect(await verifyCode(t, { type: 'recovery', email, token: byCode.email_otp })).toMatchObject({
      type: 'recovery',
    });

    const unknown = await generate(t, { type: 'recovery', email: uniqueEmail('nobody') });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({
      code: 404,
      error_code: 'user_not_found',
      msg: 'User with this email not found',
    });
    expect(t.mails).toHaveLength(0);
  });

  test("redirect_to: the body value when allowed, else the request's, else SITE_URL; the link carries it", async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**',
    });
    const { email } = await signUpConfirmed(t, uniqueEmail('gl-redirect'));
    const allowed = await generateOk(t, { type: 'recovery', email, redirect_to: 'https://app.example.com/reset?x=1' });
    expect(allowed.redirect_to).toBe('https://app.example.com/reset?x=1');
    expect(new URL(allowed.action_link).searchParams.get('redirect_to')).toBe('https://app.example.com/reset?x=1');
    const { location } = await follow(t, allowed.action_link);
    expect(location.origin + location.pathname).toBe('https://app.example.com/reset');
    const refused = await generateOk(t, { type: 'recovery', email, redirect_to: 'https://evil.example.org/' });
    expect(refused.redirect_to).toBe('http://localhost:3000');
    const res = await t.request(
      'POST',
      '/admin/generate_link?redirect_to=https://app.example.com/q',
      { type: 'recovery', email },
      { authorization: `Bearer ${await roleToken('service_role')}` },
    );
    expect(((await res.json()) as Json).redirect_to).toBe('https://app.example.com/q');
  });

  describe('email change', () => {
    test('email_change_new without secure change: the code is hashed with the new address; link and code switch the address', async () => {
      const t = await buildTestApp(db, {
        AUTHSVC_MAILER_AUTOCONFIRM: 'true',
        AUTHSVC_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false',
      });
      const { email } = await signUpConfirmed(t, uniqueEmail('gl-ec'));
      const newEmail = uniqueEmail('gl-ec-new');
      const body = await generateOk(t, { type: 'email_change_new', email, new_email: newEmail });
      expect(body).toMatchObject({ email, new_email: newEmail, verification_type: 'email_change_new' });
      expect(body.email_change_sent_at).toBeTruthy();
      expectTokenShape(body, newEmail, 'email_change');
      const [row] = await db.orm
        .select()
        .from(db.t.oneTimeTokens)
        .where(
          and(eq(db.t.oneTimeTokens.tokenType, 'email_change_token_new'), eq(db.t.oneTimeTokens.relatesTo, newEmail)),
        );
      // Stored: the code's hash with the new address (GoTrue hashes it with the current one) and
      // only the SHA-256 of the link's token.
      expect(row!.tokenHash).toBe(sha224(newEmail + body.email_otp));
      expect(row!.linkHash).toBe(createHash('sha256').update(body.hashed_token).digest('hex'));
      expect(body.hashed_token).not.toBe(sha224(email + body.email_otp));
      const fragment = await expectSessionLink(t, body.action_link, 'email_change');
      const me = await t.request('GET', '/user', undefined, {
        authorization: `Bearer ${fragment.get('access_token')}`,
      });
      expect(((await me.json()) as Json).email).toBe(newEmail);
      expect(await userRow(email)).toBeUndefined();

      const newer = uniqueEmail('gl-ec-newer');
      const byCode = await generateOk(t, { type: 'email_change_new', email: newEmail, new_email: newer });
      expect(await verifyCode(t, { type: 'email_change', email: newer, token: byCode.email_otp })).toMatchObject({
        type: 'email_change',
        user: { email: newer },
      });

      const current = await generate(t, { type: 'email_change_current', email: newer, new_email: uniqueEmail() });
      expect(current.status).toBe(400);
      expect(current.body).toMatchObject({
        error_code: 'validation_failed',
        msg: 'Enable secure email change to generate link for current email',
      });
      expect(t.mails).toHaveLength(0);
    });

    test('secure change: both halves generated for one change; the current link and the new code complete it', async () => {
      const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'false' });
      const email = uniqueEmail('gl-ecs');
      const invited = await generateOk(t, { type: 'invite', email });
      await verifyCode(t, { type: 'invite', email, token: invited.email_otp });
      const newEmail = uniqueEmail('gl-ecs-new');
      const cur = await generateOk(t, { type: 'email_change_current', email, new_email: newEmail });
      expectTokenShape(cur, email, 'email_change');
      const nu = await generateOk(t, { type: 'email_change_new', email, new_email: newEmail });
      expectTokenShape(nu, newEmail, 'email_change');
      // First half: the current address's link answers the message, no session.
      const half = await follow(t, cur.action_link);
      expect(half.fragment.get('message')).toBe(
        'Confirmation link accepted. Please proceed to confirm link sent to the other email',
      );
      expect(half.fragment.get('access_token')).toBeNull();
      // Second half: the new address's code, with the new address.
      const done = await verifyCode(t, { type: 'email_change', email: newEmail, token: nu.email_otp });
      expect(done.user.email).toBe(newEmail);
      expect(t.mails).toHaveLength(0);
    });

    test('secure change by codes: the current code with the current address, then the new link', async () => {
      const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
      const { email } = await signUpConfirmed(t, uniqueEmail('gl-ecs2'));
      const newEmail = uniqueEmail('gl-ecs2-new');
      const nu = await generateOk(t, { type: 'email_change_new', email, new_email: newEmail });
      const cur = await generateOk(t, { type: 'email_change_current', email, new_email: newEmail });
      // Under autoconfirm verify applies a change at the first confirmation: the current code suffices.
      const res = await verifyCode(t, { type: 'email_change', email, token: cur.email_otp });
      expect(res.user.email).toBe(newEmail);
      // The change is done; the other half is gone with it.
      const { fragment } = await follow(t, nu.action_link);
      expect(fragment.get('error_code')).toBe('otp_expired');
    });

    test('a half for another address is dropped when a new change is generated', async () => {
      const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'false' });
      const email = uniqueEmail('gl-ecs3');
      const inv = await generateOk(t, { type: 'invite', email });
      await verifyCode(t, { type: 'invite', email, token: inv.email_otp });
      const first = await generateOk(t, { type: 'email_change_new', email, new_email: uniqueEmail('gl-a') });
      const other = uniqueEmail('gl-b');
      await generateOk(t, { type: 'email_change_current', email, new_email: other });
      const stale = await t.request('POST', '/verify', { type: 'email_change', token_hash: first.hashed_token });
      expect(stale.status).toBe(403);
      expect((await userRow(email))!.emailChange).toBe(other);
    });

    test('errors: unknown user 404, new_email missing 400 or taken 422', async () => {
      const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
      const { email } = await signUpConfirmed(t, uniqueEmail('gl-ece'));
      const { email: taken } = await signUpConfirmed(t, uniqueEmail('gl-ece-taken'));
      const unknown = await generate(t, {
        type: 'email_change_new',
        email: uniqueEmail('nobody'),
        new_email: uniqueEmail(),
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ error_code: 'user_not_found' });
      const missing = await generate(t, { type: 'email_change_new', email });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ error_code: 'validation_failed', msg: 'An email address is required' });
      const dup = await generate(t, { type: 'email_change_current', email, new_email: taken.toUpperCase() });
      expect(dup.status).toBe(422);
      expect(dup.body).toMatchObject({ error_code: 'email_exists' });
      expect((await userRow(email))!.emailChange ?? '').toBe('');
    });
  });

  test('request errors: bad type, bad email, non-admin 403, no token 401', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const badType = await generate(t, { type: 'phone_change', email: uniqueEmail() });
    expect(badType.status).toBe(400);
    expect(badType.body).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Invalid email action link type requested: phone_change',
    });
    const noEmail = await generate(t, { type: 'signup', password: 'secret-pw-1' });
    expect(noEmail.status).toBe(400);
    expect(noEmail.body).toMatchObject({ error_code: 'validation_failed', msg: 'An email address is required' });
    const badEmail = await generate(t, { type: 'invite', email: 'not-an-email' });
    expect(badEmail.status).toBe(400);
    const { session } = await signUpConfirmed(t);
    const asUser = await t.request(
      'POST',
      '/admin/generate_link',
      { type: 'invite', email: uniqueEmail() },
      { authorization: `Bearer ${session.access_token}` },
    );
    expect(asUser.status).toBe(403);
    expect(await asUser.json()).toMatchObject({ error_code: 'not_admin' });
    expect((await t.request('POST', '/admin/generate_link', { type: 'invite', email: uniqueEmail() })).status).toBe(
      401,
    );
    const admin = await generate(t, { type: 'invite', email: uniqueEmail() }, 'supabase_admin');
    expect(admin.status).toBe(200);
  });
});

describe('supabase-js auth.admin.generateLink', () => {
  async function adminClient(t: TestApp) {
    return supabaseClientFor(t.app, await roleToken('service_role'));
  }

  test('every type: properties and user come back split; the links verify', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'false',
      AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**',
    });
    const admin = (await adminClient(t)).auth.admin;

    const signupEmail = uniqueEmail('js-signup');
    const signup = await admin.generateLink({
      type: 'signup',
      email: signupEmail,
      password: 'secret-pw-1',
      options: { data: { from: 'js' }, redirectTo: 'https://app.example.com/welcome' },
    });
    expect(signup.error).toBeNull();
    expect(signup.data.user).toMatchObject({ email: signupEmail, user_metadata: { from: 'js' } });
    expect(signup.data.properties).toMatchObject({
      verification_type: 'signup',
      redirect_to: 'https://app.example.com/welcome',
    });
    expect(signup.data.user).not.toHaveProperty('action_link');
    const signedUp = await expectSessionLink(t, signup.data.properties!.action_link, 'signup');
    expect(signedUp.get('access_token')).toBeTruthy();

    const inviteEmail = uniqueEmail('js-invite');
    const invite = await admin.generateLink({ type: 'invite', email: inviteEmail });
    expect(invite.error).toBeNull();
    expect(invite.data.user?.invited_at).toBeTruthy();
    await verifyCode(t, { type: 'invite', email: inviteEmail, token: invite.data.properties!.email_otp });

    const magic = await admin.generateLink({ type: 'magiclink', email: signupEmail });
    expect(magic.error).toBeNull();
    expect(magic.data.properties?.verification_type).toBe('magiclink');
    await expectSessionLink(t, magic.data.properties!.action_link, 'magiclink');

    const recovery = await admin.generateLink({ type: 'recovery', email: signupEmail });
    expect(recovery.error).toBeNull();
    await verifyCode(t, { type: 'recovery', email: signupEmail, token: recovery.data.properties!.email_otp });

    const newEmail = uniqueEmail('js-new');
    const cur = await admin.generateLink({ type: 'email_change_current', email: signupEmail, newEmail });
    expect(cur.error).toBeNull();
    expect(cur.data.user?.new_email).toBe(newEmail);
    const nu = await admin.generateLink({ type: 'email_change_new', email: signupEmail, newEmail });
    expect(nu.error).toBeNull();
    expect(nu.data.properties?.hashed_token).toMatch(/^[0-9a-f]{64}$/);
    expect(nu.data.properties?.hashed_token).not.toBe(sha224(newEmail + nu.data.properties!.email_otp));
    const half = await t.request('POST', '/verify', {
      type: 'email_change',
      email: signupEmail,
      token: cur.data.properties!.email_otp,
    });
    expect(await half.json()).toMatchObject({ code: '200' });
    await expectSessionLink(t, nu.data.properties!.action_link, 'email_change');
    expect(await userRow(newEmail)).toBeTruthy();
    expect(t.mails).toHaveLength(0);
  });

  test('errors come back as AuthApiError', async () => {
    const t = await buildTestApp(db);
    const admin = (await adminClient(t)).auth.admin;
    const r = await admin.generateLink({ type: 'recovery', email: uniqueEmail('js-nobody') });
    expect(r.data).toEqual({ properties: null, user: null });
    expect(r.error).toMatchObject({ status: 404, code: 'user_not_found', message: 'User with this email not found' });
  });
});
