// External sign-in beyond the first visit, GitHub played by a local fake: invites, the PKCE flow
// and supabase-js (signInWithOAuth, exchangeCodeForSession, linkIdentity, unlinkIdentity,
// getUserIdentities), manual linking, /settings.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { decodeJwt, SignJWT } from 'jose';
import { describe, expect, test } from 'vitest';
import { signUpConfirmed, TEST_JWT_SECRET, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { authorize, callback, fragmentOf, signIn, useGithubFake } from '../helpers/oauth-github.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';
import { stepUp, verifiedTotp } from '../helpers/totp-factor.ts';

type Json = Record<string, any>;
const h = useGithubFake();

describe('invites', () => {
  async function invite(t: TestApp, email: string): Promise<string> {
    const admin = await new SignJWT({ role: 'service_role' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    expect((await t.request('POST', '/invite', { email }, { authorization: `Bearer ${admin}` })).status).toBe(200);
    return new URL(t.mails.at(-1)!.confirmationUrl).searchParams.get('token')!;
  }

  test('invite_token: the provider must vouch for the invited address; then the invite is accepted and confirmed', async () => {
    const t = await h.app();
    const email = uniqueEmail('invited');
    const token = await invite(t, email);
    // /authorize answers alike whatever the token (no oracle); the callback says it is not an invitation.
    const unknown = await t.request('GET', '/authorize?provider=github&invite_token=nope');
    expect(unknown.status).toBe(302);
    const notInvited = await signIn(t, 'provider=github&invite_token=nope');
    expect(Object.fromEntries(notInvited.location.searchParams)).toMatchObject({
      error_code: 'invite_not_found',
      error_description: 'Invite not found',
    });

    h.emails = [{ email: uniqueEmail('someone-else'), primary: true, verified: true }];
    const wrong = await signIn(t, `provider=github&invite_token=${token}`);
    expect(wrong.location.searchParams.get('error_description')).toBe(
      'Invited email does not match emails from external provider',
    );

    h.emails = [{ email, primary: true, verified: true }];
    const f = fragmentOf((await signIn(t, `provider=github&invite_token=${token}`)).location);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    expect(me.email).toBe(email);
    expect(me.email_confirmed_at).toBeTruthy();
    expect(me.app_metadata).toEqual({ provider: 'github', providers: ['github'] });
    const [row] = await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.id, me.id));
    expect(row!.encryptedPassword).toBeNull(); // the invite's placeholder password is gone
    const audit = await h.db.orm.select().from(h.db.t.auditLogEntries);
    expect(
      audit.some((a) => (a.payload as Json).action === 'invite_accepted' && (a.payload as Json).actor_id === me.id),
    ).toBe(true);
  });
  test('the invite token stays with authsvc: it is stored on the state, never forwarded to the provider (GoTrue forwards it)', async () => {
    const t = await h.app();
    const token = await invite(t, uniqueEmail('invited'));
    const loc = await authorize(t, `provider=github&invite_token=${token}&login=octo`);
    expect(loc.searchParams.has('invite_token')).toBe(false);
    expect(loc.href).not.toContain(token);
    expect(loc.searchParams.get('login')).toBe('octo');
    const [row] = await h.db.orm
      .select()
      .from(h.db.t.flowState)
      .where(eq(h.db.t.flowState.id, loc.searchParams.get('state')!));
    expect(row!.inviteToken).toBe(token);
  });
});

describe('PKCE flow and supabase-js', () => {
  test('signInWithOAuth (PKCE): ?code= at the redirect target, exchangeCodeForSession gives the session and provider_token, once', async () => {
    const t = await h.app();
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'pkce' } });
    const { data, error } = await client.auth.signInWithOAuth({
      provider: 'github',
      options: { redirectTo: 'https://app.example.com/done', skipBrowserRedirect: true, scopes: 'repo' },
    });
    expect(error).toBeNull();
    const started = new URL(data.url!);
    const res = await t.request('GET', `${started.pathname.replace(/^\/auth\/v1/, '')}${started.search}`);
    const loc = new URL(res.headers.get('location')!);
    expect(loc.searchParams.get('scope')).toBe('user:email repo');
    const cb = await callback(t, { code: 'abcd-code', state: loc.searchParams.get('state')! });
    expect(`${cb.location.origin}${cb.location.pathname}`).toBe('https://app.example.com/done');
    const code = cb.location.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    expect(cb.location.hash).toBe('');
    const replay = await callback(t, { code: 'abcd-code', state: loc.searchParams.get('state')! });
    expect(replay.location.searchParams.get('error_code')).toBe('flow_state_already_used');

    const exchanged = await client.auth.exchangeCodeForSession(code);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.session!.provider_token).toBe(`gho_token_${h.n}`);
    expect(exchanged.data.user!.app_metadata.provider).toBe('github');
    const again = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: 'x'.repeat(43) });
    expect(again.status).toBe(404);
  });

  test('signInWithOAuth (implicit): the fragment session works with setSession and getUser', async () => {
    const t = await h.app();
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'implicit' } });
    const { data } = await client.auth.signInWithOAuth({ provider: 'github', options: { skipBrowserRedirect: true } });
    const started = new URL(data.url!);
    const res = await t.request('GET', `${started.pathname.replace(/^\/auth\/v1/, '')}${started.search}`);
    const state = new URL(res.headers.get('location')!).searchParams.get('state')!;
    const f = fragmentOf((await callback(t, { code: 'abcd-code', state })).location);
    const set = await client.auth.setSession({ access_token: f.access_token!, refresh_token: f.refresh_token! });
    expect(set.error).toBeNull();
    const got = await client.auth.getUser();
    expect(got.data.user!.email).toBe(h.emails[0]!.email.toLowerCase());
  });
});

describe('manual linking', () => {
  test('off by default: 404 manual_linking_disabled', async () => {
    const t = await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { session } = await signUpConfirmed(t);
    const res = await t.request('GET', '/user/identities/authorize?provider=github', undefined, {
      authorization: `Bearer ${session.access_token}`,
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      code: 404,
      error_code: 'manual_linking_disabled',
      msg: 'Manual linking is disabled',
    });
  });

  test('linkIdentity (PKCE), getUserIdentities and unlinkIdentity through supabase-js: the link is made at the code exchange', async () => {
    const t = await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true' });
    const { email, password } = await signUpConfirmed(t);
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'pkce' } });
    const signedIn = await client.auth.signInWithPassword({ email, password });
    expect(signedIn.error).toBeNull();
    h.emails = [{ email: uniqueEmail('other'), primary: true, verified: true }];
    const linked = await client.auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
    expect(linked.error).toBeNull();
    // supabase-js asked GET /user/identities/authorize?skip_http_redirect=true: the URL is the provider's.
    const loc = new URL(linked.data.url!);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${h.fake.base}/login/oauth/authorize`);
    // The app's fetch is cross-origin: the browser never holds the state cookie; PKCE carries it.
    t.cookies.clear();
    const cb = await callback(t, { code: 'abcd-code', state: loc.searchParams.get('state')! });
    const code = cb.location.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    // Nothing is linked until the client holding the verifier trades the code.
    expect(
      await h.db.orm
        .select()
        .from(h.db.t.identities)
        .where(eq(h.db.t.identities.providerId, String(h.user.id))),
    ).toHaveLength(0);
    const exchanged = await client.auth.exchangeCodeForSession(code);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user!.id).toBe(signedIn.data.user!.id);
    expect(exchanged.data.session!.provider_token).toBe(`gho_token_${h.n}`);

    const ids = await client.auth.getUserIdentities();
    expect(ids.data!.identities.map((i) => i.provider).sort()).toEqual(['email', 'github']);
    const me = await client.auth.getUser();
    expect(me.data.user!.email).toBe(email);

    // Linking the same GitHub account again: already linked, said at the exchange.
    const again = await client.auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
    const loc2 = new URL(again.data.url!);
    const cb2 = await callback(t, { code: 'abcd-code', state: loc2.searchParams.get('state')! });
    const refusedLink = await client.auth.exchangeCodeForSession(cb2.location.searchParams.get('code')!);
    expect(refusedLink.error).toMatchObject({
      status: 422,
      code: 'identity_already_exists',
      message: 'Identity is already linked',
    });

    const github = ids.data!.identities.find((i) => i.provider === 'github')!;
    expect((await client.auth.unlinkIdentity(github)).error).toBeNull();
    const after = await client.auth.getUserIdentities();
    expect(after.data!.identities.map((i) => i.provider)).toEqual(['email']);
    const last = after.data!.identities[0]!;
    const refused = await client.auth.unlinkIdentity(last);
    expect(refused.error?.code).toBe('single_identity_not_deletable');
  });
});

describe('manual linking, more', () => {
  const linkingEnv = {
    AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true',
    AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  };

  test('an anonymous user links GitHub (supabase-js linkIdentity): the same user gets the verified provider email, confirmed, no longer anonymous', async () => {
    const t = await h.app(linkingEnv);
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'pkce' } });
    const anon = await client.auth.signInAnonymously();
    expect(anon.error).toBeNull();
    const linked = await client.auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
    expect(linked.error).toBeNull();
    const cb = await callback(t, { code: 'abcd-code', state: new URL(linked.data.url!).searchParams.get('state')! });
    expect(cb.location.searchParams.get('error_description')).toBeNull();
    const exchanged = await client.auth.exchangeCodeForSession(cb.location.searchParams.get('code')!);
    expect(exchanged.error).toBeNull();
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${exchanged.data.session!.access_token}` })
    ).json()) as Json;
    expect(me.id).toBe(anon.data.user!.id);
    expect(me.email).toBe(h.emails[0]!.email.toLowerCase());
    expect(me.email_confirmed_at).toBeTruthy();
    expect(me.is_anonymous).toBe(false);
    expect(me.identities.map((i: Json) => i.provider)).toEqual(['github']);
    expect(me.app_metadata).toMatchObject({ provider: 'github', providers: ['github'] });
  });

  test('an identity another user holds: 422 identity_already_exists "Identity is already linked to another user"; nothing moves', async () => {
    const t = await h.app(linkingEnv);
    const holder = fragmentOf((await signIn(t)).location);
    const { session } = await signUpConfirmed(t);
    const res = await t.request(
      'GET',
      '/user/identities/authorize?provider=github&skip_http_redirect=true',
      undefined,
      { authorization: `Bearer ${session.access_token}` },
    );
    expect(res.status).toBe(200);
    const cb = await callback(t, {
      code: 'abcd-code',
      state: new URL(((await res.json()) as Json).url).searchParams.get('state')!,
    });
    // GoTrue's error map has no entry for 422: server_error.
    expect(Object.fromEntries(cb.location.searchParams)).toEqual({
      error: 'server_error',
      error_code: 'identity_already_exists',
      error_description: 'Identity is already linked to another user',
    });
    const rows = await h.db.orm
      .select()
      .from(h.db.t.identities)
      .where(eq(h.db.t.identities.providerId, String(h.user.id)));
    const holderUser = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${holder.access_token}` })
    ).json()) as Json;
    expect(rows.map((r) => r.userId)).toEqual([holderUser.id]);
  });

  test('GET /user/identities/authorize without skip_http_redirect: 302 to the provider, the state naming the user as linking target', async () => {
    const t = await h.app(linkingEnv);
    const { session } = await signUpConfirmed(t);
    const res = await t.request('GET', '/user/identities/authorize?provider=github', undefined, {
      authorization: `Bearer ${session.access_token}`,
    });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location')!);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${h.fake.base}/login/oauth/authorize`);
    const [row] = await h.db.orm
      .select()
      .from(h.db.t.flowState)
      .where(eq(h.db.t.flowState.id, loc.searchParams.get('state')!));
    expect(row!.linkingTargetId).toBe(session.user.id);
  });
});

describe('settings', () => {
  test('/settings reports enabled providers', async () => {
    const t = await h.app();
    const s = (await (await t.request('GET', '/settings')).json()) as Json;
    expect(s.external.github).toBe(true);
    expect(s.external.google).toBe(false);
  });
});

describe('M2 (security review 2026-12-01): linking and unlinking identities need aal2 while the user has a verified factor', () => {
  const env = { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true' };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const startLink = (t: TestApp, token: string) =>
    t.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', undefined, bearer(token));
  const stateOf = async (res: Response) => new URL(((await res.json()) as Json).url).searchParams.get('state')!;
  const password = async (t: TestApp, email: string, pw: string) =>
    (await (await t.request('POST', '/token?grant_type=password', { email, password: pw })).json()) as Json;
  const githubRows = () =>
    h.db.orm
      .select()
      .from(h.db.t.identities)
      .where(eq(h.db.t.identities.providerId, String(h.user.id)));
  const aalError = (what: string) => ({
    code: 401,
    error_code: 'insufficient_aal',
    msg: `AAL2 session is required to ${what} when MFA is enabled.`,
  });

  test('M2 (security review 2026-12-01): with the password only (aal1) of an owner with verified TOTP, GET /user/identities/authorize and DELETE /user/identities/{id} answer 401 insufficient_aal and the address stays; at aal2 both work', async () => {
    const t = await h.app(env);
    const { email, password: pw, session } = await signUpConfirmed(t);
    const { aal2 } = await verifiedTotp(t, session.access_token);
    // The owner, at aal2, links a GitHub account of theirs (implicit flow, this browser).
    const own = await startLink(t, aal2.access_token);
    expect(own.status).toBe(200);
    const linked = await callback(t, { code: 'abcd-code', state: await stateOf(own) });
    expect(linked.location.searchParams.get('error_code')).toBeNull();
    const me = (await (await t.request('GET', '/user', undefined, bearer(aal2.access_token))).json()) as Json;
    expect(me.identities.map((i: Json) => i.provider).sort()).toEqual(['email', 'github']);

    // The attacker signs in with the password: aal1.
    const attacker = await password(t, email, pw);
    expect(decodeJwt(attacker.access_token).aal).toBe('aal1');
    const put = await t.request('PUT', '/user', { email: uniqueEmail('mallory') }, bearer(attacker.access_token));
    expect(await put.json()).toEqual(aalError('update email or password'));
    const link = await startLink(t, attacker.access_token);
    expect(link.status).toBe(401);
    expect(await link.json()).toEqual(aalError('link an identity'));
    const flows = await h.db.orm.select().from(h.db.t.flowState).where(eq(h.db.t.flowState.linkingTargetId, me.id));
    expect(flows).toHaveLength(0);
    const emailIdentity = me.identities.find((i: Json) => i.provider === 'email');
    const unlink = await t.request(
      'DELETE',
      `/user/identities/${emailIdentity.identity_id}`,
      undefined,
      bearer(attacker.access_token),
    );
    expect(unlink.status).toBe(401);
    expect(await unlink.json()).toEqual(aalError('unlink an identity'));
    const after = (await (await t.request('GET', '/user', undefined, bearer(aal2.access_token))).json()) as Json;
    expect(after.email).toBe(email);
    expect(after.identities.map((i: Json) => i.provider).sort()).toEqual(['email', 'github']);

    // The owner at aal2 unlinks GitHub: as before.
    const github = after.identities.find((i: Json) => i.provider === 'github');
    expect(
      (await t.request('DELETE', `/user/identities/${github.identity_id}`, undefined, bearer(aal2.access_token)))
        .status,
    ).toBe(200);
  });

  test('M2 (security review 2026-12-01): a link started at aal2 is refused when it completes after the session was downgraded (a factor removed, another left): at the callback (implicit) and at the code exchange (PKCE)', async () => {
    let now = Date.now();
    const t = await h.app(env, { now: () => new Date(now) });
    const { email, password: pw, session } = await signUpConfirmed(t);
    const a = await verifiedTotp(t, session.access_token);
    const implicit = await startLink(t, a.aal2.access_token);
    expect(implicit.status).toBe(200);
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const pkce = await t.request(
      'GET',
      `/user/identities/authorize?provider=github&skip_http_redirect=true&code_challenge=${challenge}&code_challenge_method=s256`,
      undefined,
      bearer(a.aal2.access_token),
    );
    expect(pkce.status).toBe(200);
    // Another session steps up with factor A, verifies a second factor B, and removes A: the
    // linking session, upgraded by A, is aal1 again while B is verified.
    now += 30_000;
    const other = await stepUp(t, (await password(t, email, pw)).access_token, a.factorId, a.key);
    now += 30_000;
    const b = await verifiedTotp(t, other.access_token);
    expect((await t.request('DELETE', `/factors/${a.factorId}`, undefined, bearer(b.aal2.access_token))).status).toBe(
      200,
    );

    const refused = await callback(t, { code: 'abcd-code', state: await stateOf(implicit) });
    expect(Object.fromEntries(refused.location.searchParams)).toEqual({
      error: 'unauthorized_client',
      error_code: 'insufficient_aal',
      error_description: 'AAL2 session is required to link an identity when MFA is enabled.',
    });
    expect(refused.location.hash).not.toContain('access_token');
    const code = (await callback(t, { code: 'abcd-code', state: await stateOf(pkce) })).location.searchParams.get(
      'code',
    )!;
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    const exchanged = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: verifier });
    expect(exchanged.status).toBe(401);
    expect(await exchanged.json()).toEqual(aalError('link an identity'));
    expect(await githubRows()).toHaveLength(0);
  });

  test('M2 (security review 2026-12-01): a link whose session is gone when it completes links nothing: ended by the verification of a first factor, or signed out', async () => {
    const t = await h.app(env);
    const { email, password: pw, session: first } = await signUpConfirmed(t);
    // Started while the user has no factor: allowed then.
    const implicit = await startLink(t, first.access_token);
    expect(implicit.status).toBe(200);
    const implicitState = await stateOf(implicit);
    // The owner verifies a first factor in another session: aal1 sessions end (GoTrue's rule).
    await verifiedTotp(t, (await password(t, email, pw)).access_token);
    const refused = await callback(t, { code: 'abcd-code', state: implicitState });
    expect(refused.location.searchParams.get('error_code')).toBe('session_not_found');
    expect(refused.location.hash).not.toContain('access_token');

    // Without MFA: a session signed out since.
    const other = await signUpConfirmed(t);
    const started = await startLink(t, other.session.access_token);
    const state = await stateOf(started);
    expect((await t.request('POST', '/logout?scope=local', undefined, bearer(other.session.access_token))).status).toBe(
      204,
    );
    const gone = await callback(t, { code: 'abcd-code', state });
    expect(gone.location.searchParams.get('error_code')).toBe('session_not_found');
    expect(await githubRows()).toHaveLength(0);
  });
});
