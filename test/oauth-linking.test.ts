// External sign-in beyond the first visit, GitHub played by a local fake: invites, the PKCE flow
// and supabase-js (signInWithOAuth, exchangeCodeForSession, linkIdentity, unlinkIdentity,
// getUserIdentities), manual linking, /settings.
import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { describe, expect, test } from 'vitest';
import { signUpConfirmed, TEST_JWT_SECRET, type TestApp, uniqueEmail } from './helpers/app.ts';
import { authorize, callback, fragmentOf, signIn, useGithubFake } from './helpers/oauth-github.ts';
import { supabaseClientFor } from './helpers/supabase.ts';

type Json = Record<string, any>;
const h = useGithubFake();

describe('invites', () => {
  async function invite(t: TestApp, email: string): Promise<string> {
    const admin = await new SignJWT({ role: 'service_role' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(TEST_JWT_SECRET));
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
    expect(Object.fromEntries(notInvited.location.searchParams)).toMatchObject({ error_code: 'invite_not_found', error_description: 'Invite not found' });

    h.emails = [{ email: uniqueEmail('someone-else'), primary: true, verified: true }];
    const wrong = await signIn(t, `provider=github&invite_token=${token}`);
    expect(wrong.location.searchParams.get('error_description')).toBe('Invited email does not match emails from external provider');

    h.emails = [{ email, primary: true, verified: true }];
    const f = fragmentOf((await signIn(t, `provider=github&invite_token=${token}`)).location);
    const me = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })).json() as Json;
    expect(me.email).toBe(email);
    expect(me.email_confirmed_at).toBeTruthy();
    expect(me.app_metadata).toEqual({ provider: 'github', providers: ['github'] });
    const [row] = await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.id, me.id));
    expect(row!.encryptedPassword).toBeNull(); // the invite's placeholder password is gone
    const audit = await h.db.orm.select().from(h.db.t.auditLogEntries);
    expect(audit.some((a) => (a.payload as Json).action === 'invite_accepted' && (a.payload as Json).actor_id === me.id)).toBe(true);
  });
  test('the invite token stays with authsvc: it is stored on the state, never forwarded to the provider (GoTrue forwards it)', async () => {
    const t = await h.app();
    const token = await invite(t, uniqueEmail('invited'));
    const loc = await authorize(t, `provider=github&invite_token=${token}&login=octo`);
    expect(loc.searchParams.has('invite_token')).toBe(false);
    expect(loc.href).not.toContain(token);
    expect(loc.searchParams.get('login')).toBe('octo');
    const [row] = await h.db.orm.select().from(h.db.t.flowState).where(eq(h.db.t.flowState.id, loc.searchParams.get('state')!));
    expect(row!.inviteToken).toBe(token);
  });
});

describe('PKCE flow and supabase-js', () => {
  test('signInWithOAuth (PKCE): ?code= at the redirect target, exchangeCodeForSession gives the session and provider_token, once', async () => {
    const t = await h.app();
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'pkce' } });
    const { data, error } = await client.auth.signInWithOAuth({ provider: 'github', options: { redirectTo: 'https://app.example.com/done', skipBrowserRedirect: true, scopes: 'repo' } });
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
    const res = await t.request('GET', '/user/identities/authorize?provider=github', undefined, { authorization: `Bearer ${session.access_token}` });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 404, error_code: 'manual_linking_disabled', msg: 'Manual linking is disabled' });
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
    expect((await h.db.orm.select().from(h.db.t.identities).where(eq(h.db.t.identities.providerId, String(h.user.id))))).toHaveLength(0);
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
    expect(refusedLink.error).toMatchObject({ status: 422, code: 'identity_already_exists', message: 'Identity is already linked' });

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
  const linkingEnv = { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true', AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' };

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
    const me = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${exchanged.data.session!.access_token}` })).json() as Json;
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
    const res = await t.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', undefined, { authorization: `Bearer ${session.access_token}` });
    expect(res.status).toBe(200);
    const cb = await callback(t, { code: 'abcd-code', state: new URL((await res.json() as Json).url).searchParams.get('state')! });
    // GoTrue's error map has no entry for 422: server_error.
    expect(Object.fromEntries(cb.location.searchParams)).toEqual({
      error: 'server_error', error_code: 'identity_already_exists', error_description: 'Identity is already linked to another user',
    });
    const rows = await h.db.orm.select().from(h.db.t.identities).where(eq(h.db.t.identities.providerId, String(h.user.id)));
    const holderUser = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${holder.access_token}` })).json() as Json;
    expect(rows.map((r) => r.userId)).toEqual([holderUser.id]);
  });

  test('GET /user/identities/authorize without skip_http_redirect: 302 to the provider, the state naming the user as linking target', async () => {
    const t = await h.app(linkingEnv);
    const { session } = await signUpConfirmed(t);
    const res = await t.request('GET', '/user/identities/authorize?provider=github', undefined, { authorization: `Bearer ${session.access_token}` });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location')!);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${h.fake.base}/login/oauth/authorize`);
    const [row] = await h.db.orm.select().from(h.db.t.flowState).where(eq(h.db.t.flowState.id, loc.searchParams.get('state')!));
    expect(row!.linkingTargetId).toBe(session.user.id);
  });
});

describe('settings', () => {
  test('/settings reports enabled providers', async () => {
    const t = await h.app();
    const s = await (await t.request('GET', '/settings')).json() as Json;
    expect(s.external.github).toBe(true);
    expect(s.external.google).toBe(false);
  });
});
