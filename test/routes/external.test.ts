// Sign-in with an external provider through the real app, with GitHub played by a local fake:
// /authorize (the exact redirect, the stored state), /callback (implicit flow), state forgery,
// replay and expiry, provider errors, automatic linking by verified email only, signup switches
// and bans. Invites, PKCE, supabase-js and manual linking: app/oauth-linking.test.ts.
import { eq } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { signUpConfirmed, uniqueEmail } from '../helpers/app.ts';
import { authorize, callback, fragmentOf, REDIRECT_URI, signIn, useGithubFake } from '../helpers/oauth-github.ts';

type Json = Record<string, any>;
const h = useGithubFake();

describe('GET /authorize', () => {
  test('redirects to the provider with client_id, redirect_uri, scopes, a flow_state id as state, and forwarded parameters', async () => {
    const t = await h.app();
    const loc = await authorize(
      t,
      'provider=GitHub&scopes=repo,gist&redirect_to=https://app.example.com/done&login=octo&state=forged&redirect_uri=https://evil.example',
    );
    expect(`${loc.origin}${loc.pathname}`).toBe(`${h.fake.base}/login/oauth/authorize`);
    const q = Object.fromEntries(loc.searchParams);
    expect(q).toEqual({
      client_id: 'gh-client',
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'user:email repo gist',
      state: expect.stringMatching(/^[0-9a-f-]{36}$/),
      login: 'octo',
      redirect_to: 'https://app.example.com/done',
    });
    // Go's url.Values.Encode: keys sorted, spaces as '+'.
    expect(loc.search).toBe(
      `?client_id=gh-client&login=octo&redirect_to=https%3A%2F%2Fapp.example.com%2Fdone&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=user%3Aemail+repo+gist&state=${q.state}`,
    );
    const [row] = await h.db.orm.select().from(h.db.t.flowState).where(eq(h.db.t.flowState.id, q.state!));
    expect(row).toMatchObject({
      providerType: 'github',
      authenticationMethod: 'oauth',
      referrer: 'https://app.example.com/done',
      codeChallenge: null,
      authCode: null,
      userId: null,
    });
  });

  test('unknown and disabled providers: 400 validation_failed, nothing stored', async () => {
    const t = await h.app();
    const unknown = await t.request('GET', '/authorize?provider=myspace');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({
      code: 400,
      error_code: 'validation_failed',
      msg: 'Unsupported provider: Provider myspace could not be found',
    });
    const off = await t.request('GET', '/authorize?provider=gitlab');
    expect(await off.json()).toEqual({
      code: 400,
      error_code: 'validation_failed',
      msg: 'Unsupported provider: provider is not enabled',
    });
    const missing = await t.request('GET', '/authorize');
    expect(missing.status).toBe(400);
  });

  test('a redirect_to off the allow list falls back to SITE_URL', async () => {
    const t = await h.app();
    const { location } = await signIn(t, 'provider=github&redirect_to=https://evil.example/steal');
    expect(`${location.origin}${location.pathname}`).toBe('http://localhost:3000/');
    expect(fragmentOf(location).access_token).toBeTruthy();
  });

  test('a bad PKCE pair is refused before anything is stored', async () => {
    const t = await h.app();
    const res = await t.request('GET', '/authorize?provider=github&code_challenge=short&code_challenge_method=s256');
    expect(res.status).toBe(400);
    expect((await res.json()).error_code).toBe('validation_failed');
  });
});

describe('GET /callback, implicit flow', () => {
  test('exchanges the code (Basic client auth), reads /user and /user/emails, creates a confirmed user and redirects with the session', async () => {
    const t = await h.app();
    const { status, location, state } = await signIn(t);
    expect(status).toBe(302);
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example.com/done');
    const f = fragmentOf(location);
    // The spec's fragment names the provider too (GoTrue's does not).
    expect(Object.keys(f).sort()).toEqual([
      'access_token',
      'expires_at',
      'expires_in',
      'provider',
      'provider_token',
      'refresh_token',
      'sb',
      'token_type',
    ]);
    expect(f.provider).toBe('github');
    expect(f.provider_token).toBe(`gho_token_${h.n}`);
    expect(f.token_type).toBe('bearer');

    const [tokenReq, userReq, emailsReq] = h.fake.requests;
    expect(tokenReq).toMatchObject({ method: 'POST', path: '/login/oauth/access_token' });
    expect(tokenReq!.headers.authorization).toBe(`Basic ${btoa('gh-client:gh-secret')}`);
    expect(tokenReq!.form).toEqual({ grant_type: 'authorization_code', code: 'abcd-code', redirect_uri: REDIRECT_URI });
    expect(userReq).toMatchObject({ method: 'GET', path: '/api/v3/user' });
    expect(userReq!.headers.authorization).toBe(`Bearer gho_token_${h.n}`);
    expect(emailsReq!.path).toBe('/api/v3/user/emails');

    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    const email = h.emails[0]!.email.toLowerCase();
    expect(me.email).toBe(email);
    expect(me.email_confirmed_at).toBeTruthy();
    expect(me.app_metadata).toEqual({ provider: 'github', providers: ['github'] });
    const identityData = {
      iss: `${h.fake.base}/api/v3`,
      sub: String(h.user.id),
      name: h.user.name,
      preferred_username: h.user.login,
      avatar_url: h.user.avatar_url,
      full_name: h.user.name,
      provider_id: String(h.user.id),
      user_name: h.user.login,
      email: h.emails[0]!.email,
      email_verified: true,
      phone_verified: false,
    };
    expect(me.user_metadata).toEqual(identityData);
    expect(me.identities).toHaveLength(1);
    expect(me.identities[0]).toMatchObject({
      provider: 'github',
      id: String(h.user.id),
      identity_data: identityData,
      email,
    });
    const claims = JSON.parse(atob(f.access_token!.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')));
    expect(claims.amr).toEqual([{ method: 'oauth', timestamp: expect.any(Number) }]);

    // The state is gone: a replay gets nothing.
    const again = await callback(t, { code: 'abcd-code', state });
    expect(again.status).toBe(303);
    expect(`${again.location.origin}${again.location.pathname}`).toBe('http://localhost:3000/');
    expect(Object.fromEntries(again.location.searchParams)).toEqual({
      error: 'invalid_request',
      error_code: 'bad_oauth_state',
      error_description: 'OAuth state not found or expired',
    });
  });

  test('a second sign-in finds the identity and refreshes its data; the user is the same', async () => {
    const t = await h.app();
    const first = fragmentOf((await signIn(t)).location);
    h.user = { ...h.user, name: 'Renamed Cat' };
    const second = fragmentOf((await signIn(t)).location);
    const u1 = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${first.access_token}` })
    ).json()) as Json;
    const u2 = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${second.access_token}` })
    ).json()) as Json;
    expect(u2.id).toBe(u1.id);
    expect(u2.user_metadata.name).toBe('Renamed Cat');
    expect(u2.identities[0].identity_data.name).toBe('Renamed Cat');
  });

  test('two callbacks racing with one state: one session, the other is refused', async () => {
    const t = await h.app();
    const state = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get(
      'state',
    )!;
    const both = await Promise.all([
      callback(t, { code: 'abcd-code', state }),
      callback(t, { code: 'abcd-code', state }),
    ]);
    const sessions = both.filter((r) => fragmentOf(r.location).access_token);
    expect(sessions).toHaveLength(1);
    const other = both.find((r) => !fragmentOf(r.location).access_token)!;
    expect(other.location.searchParams.get('error_code')).toBe('bad_oauth_state');
    const rows = await h.db.orm
      .select()
      .from(h.db.t.sessions)
      .where(
        eq(
          h.db.t.sessions.userId,
          (
            await h.db.orm
              .select()
              .from(h.db.t.identities)
              .where(eq(h.db.t.identities.providerId, String(h.user.id)))
          )[0]!.userId,
        ),
      );
    expect(rows).toHaveLength(1);
  });

  test('forged, malformed, missing and expired states go back to SITE_URL with the reason', async () => {
    const t = await h.app();
    const forged = await callback(t, { code: 'x', state: crypto.randomUUID() });
    expect(forged.status).toBe(303);
    expect(forged.location.searchParams.get('error_code')).toBe('bad_oauth_state');
    const malformed = await callback(t, { code: 'x', state: 'not-a-uuid' });
    expect(malformed.location.searchParams.get('error_description')).toBe('OAuth state parameter is invalid');
    const missing = await callback(t, { code: 'x' });
    expect(Object.fromEntries(missing.location.searchParams)).toEqual({
      error: 'invalid_request',
      error_code: 'bad_oauth_callback',
      error_description: 'OAuth state parameter missing',
    });

    const state = (await authorize(t, 'provider=github')).searchParams.get('state')!;
    await h.db.orm
      .update(h.db.t.flowState)
      .set({ createdAt: new Date(Date.now() - 301_000) })
      .where(eq(h.db.t.flowState.id, state));
    const expired = await callback(t, { code: 'x', state });
    expect(expired.location.searchParams.get('error_description')).toBe('OAuth state has expired');
    expect(h.fake.requests).toHaveLength(0);
  });

  test('the provider refusing, the token exchange failing and a missing email come back to the redirect target', async () => {
    const t = await h.app();
    const state1 = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get(
      'state',
    )!;
    const refused = await callback(t, {
      error: 'access_denied',
      error_description: 'The user has denied your application access.',
      state: state1,
    });
    expect(refused.status).toBe(302);
    expect(`${refused.location.origin}${refused.location.pathname}`).toBe('https://app.example.com/done');
    expect(Object.fromEntries(refused.location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The user has denied your application access.',
    });
    expect(fragmentOf(refused.location)).toEqual({
      error: 'access_denied',
      error_description: 'The user has denied your application access.',
      sb: '',
    });

    h.tokenAnswer = { status: 401, body: { error: 'bad_verification_code' } };
    const failed = await signIn(t);
    expect(Object.fromEntries(failed.location.searchParams)).toEqual({
      error: 'server_error',
      error_code: 'unexpected_failure',
      error_description: 'Unable to exchange external code: abcd',
    });
    // Basic first, then the credentials in the form (x/oauth2's auto-detection), then give up.
    expect(h.fake.requests.map((r) => [r.headers.authorization ?? 'none', r.form.client_secret ?? 'none'])).toEqual([
      [`Basic ${btoa('gh-client:gh-secret')}`, 'none'],
      ['none', 'gh-secret'],
    ]);
    expect(failed.location.href).not.toContain('gh-secret');

    h.tokenAnswer = { status: 200, body: { access_token: 'gho_x', token_type: 'bearer' } };
    h.emails = [];
    const noEmail = await signIn(t);
    expect(noEmail.location.searchParams.get('error_description')).toBe(
      'Error getting user email from external provider',
    );
    const missingCode = await callback(t, {
      state: (await authorize(t, 'provider=github')).searchParams.get('state')!,
    });
    expect(missingCode.location.searchParams.get('error_code')).toBe('bad_oauth_callback');
  });

  test('EMAIL_OPTIONAL: a provider account without email signs in, with no email on the user', async () => {
    const t = await h.app({ GOTRUE_EXTERNAL_GITHUB_EMAIL_OPTIONAL: 'true' });
    h.emails = [];
    const f = fragmentOf((await signIn(t)).location);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    expect(me.email).toBe('');
    expect(me.identities[0].identity_data.email_verified).toBe(false);
  });

  test('DISABLE_SIGNUP and banned users: access_denied', async () => {
    const closed = await h.app({ AUTHSVC_DISABLE_SIGNUP: 'true' });
    const r = await signIn(closed);
    expect(Object.fromEntries(r.location.searchParams)).toEqual({
      error: 'access_denied',
      error_code: 'signup_disabled',
      error_description: 'Signups not allowed for this instance',
    });

    const t = await h.app();
    const f = fragmentOf((await signIn(t)).location);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    await h.db.orm
      .update(h.db.t.users)
      .set({ bannedUntil: new Date(Date.now() + 3600_000) })
      .where(eq(h.db.t.users.id, me.id));
    const banned = await signIn(t);
    expect(banned.location.searchParams.get('error_code')).toBe('user_banned');
    expect(banned.location.searchParams.get('error')).toBe('access_denied');
  });
});

describe('automatic linking', () => {
  test('a verified provider email joins the existing account of that address', async () => {
    const t = await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email, session } = await signUpConfirmed(t);
    h.emails = [{ email: email.toUpperCase(), primary: true, verified: true }];
    const f = fragmentOf((await signIn(t)).location);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    expect(me.id).toBe(session.user.id);
    expect(me.app_metadata.providers).toEqual(['email', 'github']);
    expect(me.identities.map((i: Json) => i.provider)).toEqual(['email', 'github']);
    const audit = await h.db.orm.select().from(h.db.t.auditLogEntries);
    expect(
      audit.some((a) => (a.payload as Json).action === 'identity_linked' && (a.payload as Json).actor_id === me.id),
    ).toBe(true);
  });

  test('an unverified provider email never links: the owner is untouched and no session is issued', async () => {
    const t = await h.app();
    const owner = await signUpConfirmed(await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' }));
    h.emails = [{ email: owner.email, primary: true, verified: false }];
    const r = await signIn(t);
    expect(Object.fromEntries(r.location.searchParams)).toEqual({
      error: 'access_denied',
      error_code: 'provider_email_needs_verification',
      error_description: 'Unverified email with github. Verify the email with github in order to sign in',
    });
    expect(r.location.hash).not.toContain('access_token');
    const identities = await h.db.orm
      .select()
      .from(h.db.t.identities)
      .where(eq(h.db.t.identities.userId, owner.session.user.id));
    expect(identities.map((i) => i.provider)).toEqual(['email']);
  });

  test('MAILER_AUTOCONFIRM never turns an unverified provider email into a link: the newcomer gets a separate account without that address', async () => {
    const t = await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const owner = await signUpConfirmed(t);
    h.emails = [{ email: owner.email, primary: true, verified: false }];
    const f = fragmentOf((await signIn(t)).location);
    // Autoconfirm still confirms the new account, so it signs in.
    expect(f.access_token).toBeTruthy();
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    expect(me.id).not.toBe(owner.session.user.id);
    expect(me.email).toBe('');
    expect(me.identities.map((i: Json) => i.provider)).toEqual(['github']);
    const ownerIdentities = await h.db.orm
      .select()
      .from(h.db.t.identities)
      .where(eq(h.db.t.identities.userId, owner.session.user.id));
    expect(ownerIdentities.map((i) => i.provider)).toEqual(['email']);
  });

  test("an unverified email nobody holds: a confirmation email and no session; the address becomes the account's only once confirmed (H2)", async () => {
    const t = await h.app();
    const address = uniqueEmail('unverified');
    h.emails = [{ email: address, primary: true, verified: false }];
    const r = await signIn(t);
    expect(Object.fromEntries(r.location.searchParams)).toMatchObject({
      error: 'access_denied',
      error_code: 'provider_email_needs_verification',
      error_description: 'Unverified email with github. A confirmation email has been sent to your github email',
    });
    const mail = t.mails.at(-1)!;
    expect(mail).toMatchObject({ kind: 'confirmation', to: address });
    // Not users.email: a pending address (GoTrue's email_change column), with a confirmation token for it.
    expect(await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.email, address))).toHaveLength(0);
    const [identity] = await h.db.orm
      .select()
      .from(h.db.t.identities)
      .where(eq(h.db.t.identities.providerId, String(h.user.id)));
    const [user] = await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.id, identity!.userId));
    expect(user).toMatchObject({ email: null, emailChange: address, emailConfirmedAt: null });
    expect(user!.confirmationToken).toMatch(/^[0-9a-f]{56}$/);

    // The mailbox owner confirms (here by the code, as verifyOtp({ email, token, type: 'email' }) does).
    const confirmed = await t.request('POST', '/verify', { type: 'email', email: address, token: mail.token });
    expect(confirmed.status).toBe(200);
    const body = (await confirmed.json()) as Json;
    expect(body.user).toMatchObject({ id: user!.id, email: address });
    expect(body.user.email_confirmed_at).toBeTruthy();
    expect(body.user.identities.map((i: Json) => i.provider)).toEqual(['github']);
    // From then on GitHub signs in to that account.
    const f = fragmentOf((await signIn(t)).location);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    expect(me).toMatchObject({ id: user!.id, email: address });
  });

  test('a pending provider address someone signs up and confirms first stays theirs: the old confirmation then answers 422 email_exists', async () => {
    const t = await h.app({ AUTHSVC_SMTP_MAX_FREQUENCY: '0' });
    const address = uniqueEmail('raced');
    h.emails = [{ email: address, primary: true, verified: false }];
    await signIn(t);
    const pending = t.mails.at(-1)!;
    expect((await t.request('POST', '/signup', { email: address, password: 'owner-pass-12' })).status).toBe(200);
    const own = t.mails.at(-1)!;
    expect((await t.request('POST', '/verify', { type: 'signup', token_hash: own.tokenHash })).status).toBe(200);
    const late = await t.request('POST', '/verify', { type: 'signup', token_hash: pending.tokenHash });
    expect(late.status).toBe(422);
    expect(await late.json()).toMatchObject({ error_code: 'email_exists' });
    const holders = await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.email, address));
    expect(holders).toHaveLength(1);
    expect(
      await h.db.orm.select().from(h.db.t.identities).where(eq(h.db.t.identities.userId, holders[0]!.id)),
    ).toHaveLength(1);
  });

  test('an unconfirmed password signup of the address loses its password when the verified provider identity arrives', async () => {
    const t = await h.app();
    const address = uniqueEmail('squat');
    expect((await t.request('POST', '/signup', { email: address, password: 'attacker-pw-1' })).status).toBe(200);
    h.emails = [{ email: address, primary: true, verified: true }];
    const f = fragmentOf((await signIn(t)).location);
    expect(f.access_token).toBeTruthy();
    const [user] = await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.email, address));
    expect(user!.encryptedPassword).toBeNull();
    expect(user!.emailConfirmedAt).not.toBeNull();
    const ids = await h.db.orm.select().from(h.db.t.identities).where(eq(h.db.t.identities.userId, user!.id));
    expect(ids.map((i) => i.provider)).toEqual(['github']);
    const login = await t.request('POST', '/token?grant_type=password', { email: address, password: 'attacker-pw-1' });
    expect(login.status).toBe(400);
  });
});
