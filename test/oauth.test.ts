// Sign-in with an external provider through the real app, with GitHub played by a local fake:
// /authorize (the exact redirect, the stored state), /callback (implicit and PKCE), state
// forgery, replay and expiry, provider errors, automatic linking by verified email only,
// signup switches, bans, manual linking and unlinking, and supabase-js end to end.
import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { buildTestApp, signUpConfirmed, TEST_JWT_SECRET, type TestApp, uniqueEmail } from './helpers/app.ts';
import { openTestDb } from './helpers/db.ts';
import { type FakeProvider, startFakeProvider } from './helpers/fake-oauth.ts';
import { supabaseClientFor } from './helpers/supabase.ts';

type Json = Record<string, any>;
let db: Database;
let gh: FakeProvider;
const REDIRECT_URI = 'https://auth.example.com/callback';

/** What the fake GitHub answers for the next sign-in. */
let ghUser: Json;
let ghEmails: Json[];
let tokenAnswer: { status: number; body: unknown };

beforeAll(async () => {
  db = await openTestDb();
  gh = await startFakeProvider({
    'POST /login/oauth/access_token': () => tokenAnswer,
    'GET /api/v3/user': () => ({ body: ghUser }),
    'GET /api/v3/user/emails': () => ({ body: ghEmails }),
  });
});
afterAll(async () => {
  await gh?.close();
  await db?.close();
});

let n = 0;
beforeEach(() => {
  n += 1;
  ghUser = { id: 90_000 + n + Math.floor(Math.random() * 1e6), login: `octo${n}`, name: `Octo Cat ${n}`, avatar_url: `https://avatars.example.com/${n}` };
  ghEmails = [{ email: uniqueEmail('gh'), primary: true, verified: true }];
  tokenAnswer = { status: 200, body: { access_token: `gho_token_${n}`, token_type: 'bearer', scope: 'user:email' } };
  gh.requests.length = 0;
});

const ENV = {
  GOTRUE_EXTERNAL_GITHUB_ENABLED: 'true',
  GOTRUE_EXTERNAL_GITHUB_CLIENT_ID: 'gh-client',
  GOTRUE_EXTERNAL_GITHUB_SECRET: 'gh-secret',
  GOTRUE_EXTERNAL_GITHUB_REDIRECT_URI: REDIRECT_URI,
  AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**',
};

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  return buildTestApp(db, { ...ENV, GOTRUE_EXTERNAL_GITHUB_URL: gh.base, ...env });
}

async function authorize(t: TestApp, query: string): Promise<URL> {
  const res = await t.request('GET', `/authorize?${query}`);
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

async function callback(t: TestApp, params: Record<string, string>): Promise<{ status: number; location: URL }> {
  const res = await t.request('GET', `/callback?${new URLSearchParams(params)}`);
  return { status: res.status, location: new URL(res.headers.get('location')!) };
}

async function signIn(t: TestApp, query = 'provider=github&redirect_to=https://app.example.com/done') {
  const state = (await authorize(t, query)).searchParams.get('state')!;
  return { state, ...(await callback(t, { code: 'abcd-code', state })) };
}

const fragmentOf = (u: URL) => Object.fromEntries(new URLSearchParams(u.hash.slice(1)));

describe('GET /authorize', () => {
  test('redirects to the provider with client_id, redirect_uri, scopes, a flow_state id as state, and forwarded parameters', async () => {
    const t = await app();
    const loc = await authorize(t, 'provider=GitHub&scopes=repo,gist&redirect_to=https://app.example.com/done&login=octo&state=forged&redirect_uri=https://evil.example');
    expect(`${loc.origin}${loc.pathname}`).toBe(`${gh.base}/login/oauth/authorize`);
    const q = Object.fromEntries(loc.searchParams);
    expect(q).toEqual({
      client_id: 'gh-client', redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'user:email repo gist',
      state: expect.stringMatching(/^[0-9a-f-]{36}$/), login: 'octo', redirect_to: 'https://app.example.com/done',
    });
    // Go's url.Values.Encode: keys sorted, spaces as '+'.
    expect(loc.search).toBe(`?client_id=gh-client&login=octo&redirect_to=https%3A%2F%2Fapp.example.com%2Fdone&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=user%3Aemail+repo+gist&state=${q.state}`);
    const [row] = await db.orm.select().from(db.t.flowState).where(eq(db.t.flowState.id, q.state!));
    expect(row).toMatchObject({ providerType: 'github', authenticationMethod: 'oauth', referrer: 'https://app.example.com/done', codeChallenge: null, authCode: null, userId: null });
  });

  test('unknown and disabled providers: 400 validation_failed, nothing stored', async () => {
    const t = await app();
    const unknown = await t.request('GET', '/authorize?provider=myspace');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ code: 400, error_code: 'validation_failed', msg: 'Unsupported provider: Provider myspace could not be found' });
    const off = await t.request('GET', '/authorize?provider=gitlab');
    expect(await off.json()).toEqual({ code: 400, error_code: 'validation_failed', msg: 'Unsupported provider: provider is not enabled' });
    const missing = await t.request('GET', '/authorize');
    expect(missing.status).toBe(400);
  });

  test('a redirect_to off the allow list falls back to SITE_URL', async () => {
    const t = await app();
    const { location } = await signIn(t, 'provider=github&redirect_to=https://evil.example/steal');
    expect(`${location.origin}${location.pathname}`).toBe('http://localhost:3000/');
    expect(fragmentOf(location).access_token).toBeTruthy();
  });

  test('a bad PKCE pair is refused before anything is stored', async () => {
    const t = await app();
    const res = await t.request('GET', '/authorize?provider=github&code_challenge=short&code_challenge_method=s256');
    expect(res.status).toBe(400);
    expect((await res.json()).error_code).toBe('validation_failed');
  });
});

describe('GET /callback, implicit flow', () => {
  test('exchanges the code (Basic client auth), reads /user and /user/emails, creates a confirmed user and redirects with the session', async () => {
    const t = await app();
    const { status, location, state } = await signIn(t);
    expect(status).toBe(302);
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example.com/done');
    const f = fragmentOf(location);
    expect(Object.keys(f).sort()).toEqual(['access_token', 'expires_at', 'expires_in', 'provider_token', 'refresh_token', 'sb', 'token_type']);
    expect(f.provider_token).toBe(`gho_token_${n}`);
    expect(f.token_type).toBe('bearer');

    const [tokenReq, userReq, emailsReq] = gh.requests;
    expect(tokenReq).toMatchObject({ method: 'POST', path: '/login/oauth/access_token' });
    expect(tokenReq!.headers.authorization).toBe(`Basic ${btoa('gh-client:gh-secret')}`);
    expect(tokenReq!.form).toEqual({ grant_type: 'authorization_code', code: 'abcd-code', redirect_uri: REDIRECT_URI });
    expect(userReq).toMatchObject({ method: 'GET', path: '/api/v3/user' });
    expect(userReq!.headers.authorization).toBe(`Bearer gho_token_${n}`);
    expect(emailsReq!.path).toBe('/api/v3/user/emails');

    const me = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })).json() as Json;
    const email = ghEmails[0]!.email.toLowerCase();
    expect(me.email).toBe(email);
    expect(me.email_confirmed_at).toBeTruthy();
    expect(me.app_metadata).toEqual({ provider: 'github', providers: ['github'] });
    const identityData = {
      iss: `${gh.base}/api/v3`, sub: String(ghUser.id), name: ghUser.name, preferred_username: ghUser.login,
      avatar_url: ghUser.avatar_url, full_name: ghUser.name, provider_id: String(ghUser.id), user_name: ghUser.login,
      email: ghEmails[0]!.email, email_verified: true, phone_verified: false,
    };
    expect(me.user_metadata).toEqual(identityData);
    expect(me.identities).toHaveLength(1);
    expect(me.identities[0]).toMatchObject({ provider: 'github', id: String(ghUser.id), identity_data: identityData, email });
    const claims = JSON.parse(atob(f.access_token!.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')));
    expect(claims.amr).toEqual([{ method: 'oauth', timestamp: expect.any(Number) }]);

    // The state is gone: a replay gets nothing.
    const again = await callback(t, { code: 'abcd-code', state });
    expect(again.status).toBe(303);
    expect(`${again.location.origin}${again.location.pathname}`).toBe('http://localhost:3000/');
    expect(Object.fromEntries(again.location.searchParams)).toEqual({ error: 'invalid_request', error_code: 'bad_oauth_state', error_description: 'OAuth state not found or expired' });
  });

  test('a second sign-in finds the identity and refreshes its data; the user is the same', async () => {
    const t = await app();
    const first = fragmentOf((await signIn(t)).location);
    ghUser = { ...ghUser, name: 'Renamed Cat' };
    const second = fragmentOf((await signIn(t)).location);
    const u1 = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${first.access_token}` })).json() as Json;
    const u2 = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${second.access_token}` })).json() as Json;
    expect(u2.id).toBe(u1.id);
    expect(u2.user_metadata.name).toBe('Renamed Cat');
    expect(u2.identities[0].identity_data.name).toBe('Renamed Cat');
  });

  test('two callbacks racing with one state: one session, the other is refused', async () => {
    const t = await app();
    const state = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get('state')!;
    const both = await Promise.all([callback(t, { code: 'abcd-code', state }), callback(t, { code: 'abcd-code', state })]);
    const sessions = both.filter((r) => fragmentOf(r.location).access_token);
    expect(sessions).toHaveLength(1);
    const other = both.find((r) => !fragmentOf(r.location).access_token)!;
    expect(other.location.searchParams.get('error_code')).toBe('bad_oauth_state');
    const rows = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, (await db.orm.select().from(db.t.identities).where(eq(db.t.identities.providerId, String(ghUser.id))))[0]!.userId));
    expect(rows).toHaveLength(1);
  });

  test('forged, malformed, missing and expired states go back to SITE_URL with the reason', async () => {
    const t = await app();
    const forged = await callback(t, { code: 'x', state: crypto.randomUUID() });
    expect(forged.status).toBe(303);
    expect(forged.location.searchParams.get('error_code')).toBe('bad_oauth_state');
    const malformed = await callback(t, { code: 'x', state: 'not-a-uuid' });
    expect(malformed.location.searchParams.get('error_description')).toBe('OAuth state parameter is invalid');
    const missing = await callback(t, { code: 'x' });
    expect(Object.fromEntries(missing.location.searchParams)).toEqual({ error: 'invalid_request', error_code: 'bad_oauth_callback', error_description: 'OAuth state parameter missing' });

    const state = (await authorize(t, 'provider=github')).searchParams.get('state')!;
    await db.orm.update(db.t.flowState).set({ createdAt: new Date(Date.now() - 301_000) }).where(eq(db.t.flowState.id, state));
    const expired = await callback(t, { code: 'x', state });
    expect(expired.location.searchParams.get('error_description')).toBe('OAuth state has expired');
    expect(gh.requests).toHaveLength(0);
  });

  test('the provider refusing, the token exchange failing and a missing email come back to the redirect target', async () => {
    const t = await app();
    const state1 = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get('state')!;
    const refused = await callback(t, { error: 'access_denied', error_description: 'The user has denied your application access.', state: state1 });
    expect(refused.status).toBe(302);
    expect(`${refused.location.origin}${refused.location.pathname}`).toBe('https://app.example.com/done');
    expect(Object.fromEntries(refused.location.searchParams)).toEqual({ error: 'access_denied', error_description: 'The user has denied your application access.' });
    expect(fragmentOf(refused.location)).toEqual({ error: 'access_denied', error_description: 'The user has denied your application access.', sb: '' });

    tokenAnswer = { status: 401, body: { error: 'bad_verification_code' } };
    const failed = await signIn(t);
    expect(Object.fromEntries(failed.location.searchParams)).toEqual({ error: 'server_error', error_code: 'unexpected_failure', error_description: 'Unable to exchange external code: abcd' });
    // Basic first, then the credentials in the form (x/oauth2's auto-detection), then give up.
    expect(gh.requests.map((r) => [r.headers.authorization ?? 'none', r.form.client_secret ?? 'none'])).toEqual([[`Basic ${btoa('gh-client:gh-secret')}`, 'none'], ['none', 'gh-secret']]);
    expect(failed.location.href).not.toContain('gh-secret');

    tokenAnswer = { status: 200, body: { access_token: 'gho_x', token_type: 'bearer' } };
    ghEmails = [];
    const noEmail = await signIn(t);
    expect(noEmail.location.searchParams.get('error_description')).toBe('Error getting user email from external provider');
    const missingCode = await callback(t, { state: (await authorize(t, 'provider=github')).searchParams.get('state')! });
    expect(missingCode.location.searchParams.get('error_code')).toBe('bad_oauth_callback');
  });

  test('EMAIL_OPTIONAL: a provider account without email signs in, with no email on the user', async () => {
    const t = await app({ GOTRUE_EXTERNAL_GITHUB_EMAIL_OPTIONAL: 'true' });
    ghEmails = [];
    const f = fragmentOf((await signIn(t)).location);
    const me = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })).json() as Json;
    expect(me.email).toBe('');
    expect(me.identities[0].identity_data.email_verified).toBe(false);
  });

  test('DISABLE_SIGNUP and banned users: access_denied', async () => {
    const closed = await app({ AUTHSVC_DISABLE_SIGNUP: 'true' });
    const r = await signIn(closed);
    expect(Object.fromEntries(r.location.searchParams)).toEqual({ error: 'access_denied', error_code: 'signup_disabled', error_description: 'Signups not allowed for this instance' });

    const t = await app();
    const f = fragmentOf((await signIn(t)).location);
    const me = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })).json() as Json;
    await db.orm.update(db.t.users).set({ bannedUntil: new Date(Date.now() + 3600_000) }).where(eq(db.t.users.id, me.id));
    const banned = await signIn(t);
    expect(banned.location.searchParams.get('error_code')).toBe('user_banned');
    expect(banned.location.searchParams.get('error')).toBe('access_denied');
  });
});

describe('automatic linking', () => {
  test('a verified provider email joins the existing account of that address', async () => {
    const t = await app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email, session } = await signUpConfirmed(t);
    ghEmails = [{ email: email.toUpperCase(), primary: true, verified: true }];
    const f = fragmentOf((await signIn(t)).location);
    const me = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })).json() as Json;
    expect(me.id).toBe(session.user.id);
    expect(me.app_metadata.providers).toEqual(['email', 'github']);
    expect(me.identities.map((i: Json) => i.provider)).toEqual(['email', 'github']);
    const audit = await db.orm.select().from(db.t.auditLogEntries);
    expect(audit.some((a) => (a.payload as Json).action === 'identity_linked' && (a.payload as Json).actor_id === me.id)).toBe(true);
  });

  test('an unverified provider email never links: the owner is untouched and no session is issued', async () => {
    const t = await app();
    const owner = await signUpConfirmed(await app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' }));
    ghEmails = [{ email: owner.email, primary: true, verified: false }];
    const r = await signIn(t);
    expect(Object.fromEntries(r.location.searchParams)).toEqual({
      error: 'access_denied', error_code: 'provider_email_needs_verification',
      error_description: 'Unverified email with github. Verify the email with github in order to sign in',
    });
    expect(r.location.hash).not.toContain('access_token');
    const identities = await db.orm.select().from(db.t.identities).where(eq(db.t.identities.userId, owner.session.user.id));
    expect(identities.map((i) => i.provider)).toEqual(['email']);
  });

  test('an unverified email nobody holds gets a confirmation email and no session', async () => {
    const t = await app();
    const address = uniqueEmail('unverified');
    ghEmails = [{ email: address, primary: true, verified: false }];
    const r = await signIn(t);
    expect(r.location.searchParams.get('error_description')).toBe('Unverified email with github. A confirmation email has been sent to your github email');
    expect(t.mails.at(-1)).toMatchObject({ kind: 'confirmation', to: address });
    const [user] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, address));
    expect(user!.emailConfirmedAt).toBeNull();
    expect(user!.confirmationToken).toMatch(/^[0-9a-f]{56}$/);
  });

  test('an unconfirmed password signup of the address loses its password when the verified provider identity arrives', async () => {
    const t = await app();
    const address = uniqueEmail('squat');
    expect((await t.request('POST', '/signup', { email: address, password: 'attacker-pw-1' })).status).toBe(200);
    ghEmails = [{ email: address, primary: true, verified: true }];
    const f = fragmentOf((await signIn(t)).location);
    expect(f.access_token).toBeTruthy();
    const [user] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, address));
    expect(user!.encryptedPassword).toBeNull();
    expect(user!.emailConfirmedAt).not.toBeNull();
    const ids = await db.orm.select().from(db.t.identities).where(eq(db.t.identities.userId, user!.id));
    expect(ids.map((i) => i.provider)).toEqual(['github']);
    const login = await t.request('POST', '/token?grant_type=password', { email: address, password: 'attacker-pw-1' });
    expect(login.status).toBe(400);
  });
});

describe('invites', () => {
  async function invite(t: TestApp, email: string): Promise<string> {
    const admin = await new SignJWT({ role: 'service_role' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(TEST_JWT_SECRET));
    expect((await t.request('POST', '/invite', { email }, { authorization: `Bearer ${admin}` })).status).toBe(200);
    return new URL(t.mails.at(-1)!.confirmationUrl).searchParams.get('token')!;
  }

  test('invite_token: the provider must vouch for the invited address; then the invite is accepted and confirmed', async () => {
    const t = await app();
    const email = uniqueEmail('invited');
    const token = await invite(t, email);
    const unknown = await t.request('GET', '/authorize?provider=github&invite_token=nope');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error_code).toBe('user_not_found');

    ghEmails = [{ email: uniqueEmail('someone-else'), primary: true, verified: true }];
    const wrong = await signIn(t, `provider=github&invite_token=${token}`);
    expect(wrong.location.searchParams.get('error_description')).toBe('Invited email does not match emails from external provider');

    ghEmails = [{ email, primary: true, verified: true }];
    const f = fragmentOf((await signIn(t, `provider=github&invite_token=${token}`)).location);
    const me = await (await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })).json() as Json;
    expect(me.email).toBe(email);
    expect(me.email_confirmed_at).toBeTruthy();
    expect(me.app_metadata).toEqual({ provider: 'github', providers: ['github'] });
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, me.id));
    expect(row!.encryptedPassword).toBeNull(); // the invite's placeholder password is gone
    const audit = await db.orm.select().from(db.t.auditLogEntries);
    expect(audit.some((a) => (a.payload as Json).action === 'invite_accepted' && (a.payload as Json).actor_id === me.id)).toBe(true);
  });
});

describe('PKCE flow and supabase-js', () => {
  test('signInWithOAuth (PKCE): ?code= at the redirect target, exchangeCodeForSession gives the session and provider_token, once', async () => {
    const t = await app();
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
    expect(exchanged.data.session!.provider_token).toBe(`gho_token_${n}`);
    expect(exchanged.data.user!.app_metadata.provider).toBe('github');
    const again = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: 'x'.repeat(43) });
    expect(again.status).toBe(404);
  });

  test('signInWithOAuth (implicit): the fragment session works with setSession and getUser', async () => {
    const t = await app();
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'implicit' } });
    const { data } = await client.auth.signInWithOAuth({ provider: 'github', options: { skipBrowserRedirect: true } });
    const started = new URL(data.url!);
    const res = await t.request('GET', `${started.pathname.replace(/^\/auth\/v1/, '')}${started.search}`);
    const state = new URL(res.headers.get('location')!).searchParams.get('state')!;
    const f = fragmentOf((await callback(t, { code: 'abcd-code', state })).location);
    const set = await client.auth.setSession({ access_token: f.access_token!, refresh_token: f.refresh_token! });
    expect(set.error).toBeNull();
    const got = await client.auth.getUser();
    expect(got.data.user!.email).toBe(ghEmails[0]!.email.toLowerCase());
  });
});

describe('manual linking', () => {
  test('off by default: 404 manual_linking_disabled', async () => {
    const t = await app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { session } = await signUpConfirmed(t);
    const res = await t.request('GET', '/user/identities/authorize?provider=github', undefined, { authorization: `Bearer ${session.access_token}` });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 404, error_code: 'manual_linking_disabled', msg: 'Manual linking is disabled' });
  });

  test('linkIdentity, getUserIdentities and unlinkIdentity through supabase-js', async () => {
    const t = await app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true' });
    const { email, password } = await signUpConfirmed(t);
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'implicit' } });
    expect((await client.auth.signInWithPassword({ email, password })).error).toBeNull();
    ghEmails = [{ email: uniqueEmail('other'), primary: true, verified: true }];
    const linked = await client.auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
    expect(linked.error).toBeNull();
    // supabase-js asked GET /user/identities/authorize?skip_http_redirect=true: the URL is the provider's.
    const loc = new URL(linked.data.url!);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${gh.base}/login/oauth/authorize`);
    const cb = await callback(t, { code: 'abcd-code', state: loc.searchParams.get('state')! });
    expect(fragmentOf(cb.location).access_token).toBeTruthy();

    const ids = await client.auth.getUserIdentities();
    expect(ids.data!.identities.map((i) => i.provider).sort()).toEqual(['email', 'github']);
    const me = await client.auth.getUser();
    expect(me.data.user!.email).toBe(email);

    // Linking the same GitHub account again: already linked.
    const again = await client.auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
    const loc2 = new URL(again.data.url!);
    const cb2 = await callback(t, { code: 'abcd-code', state: loc2.searchParams.get('state')! });
    expect(Object.fromEntries(cb2.location.searchParams)).toMatchObject({ error_code: 'identity_already_exists', error_description: 'Identity is already linked' });

    const github = ids.data!.identities.find((i) => i.provider === 'github')!;
    expect((await client.auth.unlinkIdentity(github)).error).toBeNull();
    const after = await client.auth.getUserIdentities();
    expect(after.data!.identities.map((i) => i.provider)).toEqual(['email']);
    const last = after.data!.identities[0]!;
    const refused = await client.auth.unlinkIdentity(last);
    expect(refused.error?.code).toBe('single_identity_not_deletable');
  });
});

describe('settings', () => {
  test('/settings reports enabled providers', async () => {
    const t = await app();
    const s = await (await t.request('GET', '/settings')).json() as Json;
    expect(s.external.github).toBe(true);
    expect(s.external.google).toBe(false);
  });
});
