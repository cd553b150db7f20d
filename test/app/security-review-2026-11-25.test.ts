// Regressions of the security review of 2026-11-25 (shared/reviews/security-2026-11-25.md), one
// per finding: each replays the attack over HTTP against the real app, with GitHub and Twilio
// played by fakes on 127.0.0.1, and asserts it no longer works (on commit 1533e94 every one did).
import { createHash } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LEGACY_LINK_MISSES_PER_HOUR } from '../../src/accounts/link-tokens.ts';
import { signUpConfirmed, TEST_JWT_SECRET, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio.ts';
import { authorize, callback, fragmentOf, signIn, useGithubFake } from '../helpers/oauth-github.ts';

type Json = Record<string, any>;
const h = useGithubFake();
const sha224 = (s: string) => createHash('sha224').update(s).digest('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let twilio: FakeTwilio;
beforeAll(async () => {
  twilio = await startFakeTwilio();
});
afterAll(async () => {
  await twilio?.close();
});

const PHONE_ENV = {
  AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
  AUTHSVC_SMS_PROVIDER: 'twilio',
  AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-test',
  AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'token',
  AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-test',
  AUTHSVC_SMS_MAX_FREQUENCY: '0',
};
let phones = 0;
const uniquePhone = () => `4477009${String(Date.now() % 100_000).padStart(5, '0')}${++phones % 10}`;

/** An app whose clock the test moves; `start` picks an hour of its own for the shared counters. */
async function clocked(env: Record<string, string>, start = Date.now()) {
  let now = start;
  const t = await h.app({ ...env, AUTHSVC_SMS_TWILIO_BASE_URL: twilio.base }, { now: () => new Date(now) });
  return Object.assign(t, {
    tick: (seconds: number) => {
      now += seconds * 1000;
    },
  });
}

const verify = (t: TestApp, body: Json) => t.request('POST', '/verify', body);
const adminToken = () =>
  new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
const usersWithEmail = (email: string) => h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.email, email));
const identitiesOf = async (userId: string) =>
  (await h.db.orm.select().from(h.db.t.identities).where(eq(h.db.t.identities.userId, userId)))
    .map((i) => i.provider)
    .sort();

describe('H1: no link value can be computed from an address and a code', () => {
  test('POST /recover, then sha224(address + code) as token_hash: refused; the mailed link is 256 random bits and works', async () => {
    const t = await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email } = await signUpConfirmed(t, uniqueEmail('ceo'));
    expect((await t.request('POST', '/recover', { email })).status).toBe(200);
    const mail = t.mails.at(-1)!;
    expect(mail).toMatchObject({ kind: 'recovery', to: email });
    // What the attacker computes for the right code (the end of the 10^6 walk): no session.
    const guessed = await verify(t, { type: 'recovery', token_hash: sha224(email + mail.token) });
    expect(guessed.status).toBe(403);
    expect(await guessed.json()).toMatchObject({ error_code: 'otp_expired' });
    // The link carries {{ .TokenHash }}: random, stored only as its SHA-256.
    expect(mail.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(new URL(mail.confirmationUrl).searchParams.get('token')).toBe(mail.tokenHash);
    const [row] = await h.db.orm.select().from(h.db.t.oneTimeTokens).where(eq(h.db.t.oneTimeTokens.relatesTo, email));
    expect(row).toMatchObject({
      tokenType: 'recovery_token',
      tokenHash: sha224(email + mail.token),
      linkHash: sha256(mail.tokenHash),
    });
    const owner = await verify(t, { type: 'recovery', token_hash: mail.tokenHash });
    expect(owner.status).toBe(200);
    expect(((await owner.json()) as Json).user.email).toBe(email);
  });

  test('a code killed by five wrong attempts is dead on the link path too', async () => {
    const t = await h.app();
    const email = uniqueEmail('killed');
    expect((await t.request('POST', '/signup', { email, password: 'owner-pass-1' })).status).toBe(200);
    const mail = t.mails.at(-1)!;
    const wrong = mail.token === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await verify(t, { type: 'signup', email, token: wrong })).status).toBe(403);
    expect((await verify(t, { type: 'signup', token_hash: mail.tokenHash })).status).toBe(403);
    const [user] = await usersWithEmail(email);
    expect(user!.emailConfirmedAt).toBeNull();
  });

  test('a texted code is never an email token: sha224(phone + code) as a signup token_hash is refused, the code still works as sms', async () => {
    const t = await clocked(PHONE_ENV);
    const phone = uniquePhone();
    expect((await t.request('POST', '/otp', { phone: `+${phone}` })).status).toBe(200);
    const code = twilio.lastCode();
    for (const type of ['signup', 'magiclink', 'recovery', 'invite', 'email']) {
      const res = await verify(t, { type, token_hash: sha224(phone + code) });
      expect(res.status).toBe(403);
    }
    const ok = await verify(t, { type: 'sms', phone: `+${phone}`, token: code });
    expect(ok.status).toBe(200);
  });

  test('/authorize?invite_token= answers alike for the right hash, a wrong one and the real link token (no oracle); only a pending invitation is accepted', async () => {
    const t = await h.app();
    const email = uniqueEmail('invitee');
    expect(
      (await t.request('POST', '/invite', { email }, { authorization: `Bearer ${await adminToken()}` })).status,
    ).toBe(200);
    const mail = t.mails.at(-1)!;
    for (const value of [sha224(email + mail.token), 'f'.repeat(56), mail.tokenHash]) {
      const res = await t.request('GET', `/authorize?provider=github&invite_token=${value}`);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get('location')!).origin).toBe(h.fake.base);
    }
    h.emails = [{ email, primary: true, verified: true }];
    const guessed = await signIn(t, `provider=github&invite_token=${sha224(email + mail.token)}`);
    expect(guessed.location.searchParams.get('error_code')).toBe('invite_not_found');
    // A signup confirmation's link is no invitation either.
    const other = uniqueEmail('signup');
    expect((await t.request('POST', '/signup', { email: other, password: 'some-pass-1' })).status).toBe(200);
    h.emails = [{ email: other, primary: true, verified: true }];
    const notInvite = await signIn(t, `provider=github&invite_token=${t.mails.at(-1)!.tokenHash}`);
    expect(notInvite.location.searchParams.get('error_code')).toBe('invite_not_found');
    h.emails = [{ email, primary: true, verified: true }];
    const accepted = fragmentOf((await signIn(t, `provider=github&invite_token=${mail.tokenHash}`)).location);
    expect(accepted.access_token).toBeTruthy();
  });

  test('old-format links (written before migration 0004, or by GoTrue): honoured until the code expires, and only while the hourly miss budget lasts', async () => {
    // An hour of its own: the miss budget is one counter for the whole deployment.
    const t = await clocked({ AUTHSVC_LOG_LEVEL: 'warn' }, Date.UTC(2031, 0, 1, 10, 0, 0));
    const email = uniqueEmail('legacy');
    expect((await t.request('POST', '/signup', { email, password: 'legacy-pass-1' })).status).toBe(200);
    const code = t.mails.at(-1)!.token;
    const [user] = await usersWithEmail(email);
    // What GoTrue leaves behind: the link is the code's hash itself, no link_hash.
    await h.db.orm
      .update(h.db.t.oneTimeTokens)
      .set({ linkHash: null })
      .where(eq(h.db.t.oneTimeTokens.userId, user!.id));
    const legacy = sha224(email + code);
    for (let i = 0; i < LEGACY_LINK_MISSES_PER_HOUR; i++) {
      expect((await verify(t, { type: 'signup', token_hash: sha224(`${email}guess-${i}`) })).status).toBe(403);
    }
    // The budget is spent: even the right old link is refused in this hour.
    expect((await verify(t, { type: 'signup', token_hash: legacy })).status).toBe(403);
    expect(t.logs.some((l) => l.includes('old-format link refused: the hourly budget of misses is spent'))).toBe(true);
    t.tick(3600);
    const ok = await verify(t, { type: 'signup', token_hash: legacy });
    expect(ok.status).toBe(200);
    // …and never after MAILER_OTP_EXP.
    const late = uniqueEmail('legacy-late');
    expect((await t.request('POST', '/signup', { email: late, password: 'legacy-pass-1' })).status).toBe(200);
    const lateCode = t.mails.at(-1)!.token;
    await h.db.orm
      .update(h.db.t.oneTimeTokens)
      .set({ linkHash: null })
      .where(and(eq(h.db.t.oneTimeTokens.relatesTo, late), eq(h.db.t.oneTimeTokens.tokenType, 'confirmation_token')));
    t.tick(86_400 + 1);
    expect((await verify(t, { type: 'signup', token_hash: sha224(late + lateCode) })).status).toBe(403);
    const pending = await h.db.orm
      .select()
      .from(h.db.t.oneTimeTokens)
      .where(and(eq(h.db.t.oneTimeTokens.relatesTo, late), isNull(h.db.t.oneTimeTokens.linkHash)));
    expect(pending).toHaveLength(1);
  });
});

describe("H2: an unverified provider address never ends up in someone else's account", () => {
  test("the attacker signs in with GitHub reporting the victim's address unverified; the victim signs up and confirms; the attacker's next sign-in is not the victim", async () => {
    const t = await h.app();
    const victim = uniqueEmail('victim2');
    const attacker = { ...h.user };
    h.emails = [{ email: victim, primary: true, verified: false }];
    const first = await signIn(t);
    expect(first.location.searchParams.get('error_code')).toBe('provider_email_needs_verification');
    expect(await usersWithEmail(victim)).toHaveLength(0);

    expect((await t.request('POST', '/signup', { email: victim, password: 'victim-pass-123' })).status).toBe(200);
    const link = new URL(t.mails.at(-1)!.confirmationUrl);
    const confirmed = await t.request('GET', `${link.pathname}${link.search}`);
    expect(confirmed.status).toBe(303);
    const [victimRow] = await usersWithEmail(victim);
    expect(await identitiesOf(victimRow!.id)).toEqual(['email']);

    h.user = attacker;
    const again = await signIn(t);
    expect(fragmentOf(again.location).access_token).toBeUndefined();
    expect(again.location.searchParams.get('error_code')).toBe('provider_email_needs_verification');
    const login = await t.request('POST', '/token?grant_type=password', { email: victim, password: 'victim-pass-123' });
    expect(((await login.json()) as Json).user.identities.map((i: Json) => i.provider)).toEqual(['email']);
  });

  test('MAILER_AUTOCONFIRM does not confirm an unverified address either: the attacker gets an account without it, the victim their own', async () => {
    const t = await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const victim = uniqueEmail('victim-ac');
    h.emails = [{ email: victim, primary: true, verified: false }];
    const attacker = fragmentOf((await signIn(t)).location);
    const attackerUser = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${attacker.access_token}` })
    ).json()) as Json;
    expect(attackerUser.email).toBe('');
    expect(attackerUser.identities[0].identity_data.email).toBe(victim);
    const signup = await t.request('POST', '/signup', { email: victim, password: 'victim-pass-123' });
    expect(signup.status).toBe(200);
    expect(((await signup.json()) as Json).user.id).not.toBe(attackerUser.id);
  });

  test('an account left by older data (unverified provider address on users.email, identity attached): confirming the address by email removes that identity', async () => {
    const t = await h.app();
    const victim = uniqueEmail('victim-old');
    const id = crypto.randomUUID();
    const now = new Date();
    await h.db.orm.insert(h.db.t.users).values({
      id,
      aud: 'authenticated',
      role: 'authenticated',
      email: victim,
      rawAppMetaData: { provider: 'github', providers: ['github'] },
      rawUserMetaData: {},
      createdAt: now,
      updatedAt: now,
    });
    await h.db.orm.insert(h.db.t.identities).values({
      providerId: String(h.user.id),
      userId: id,
      provider: 'github',
      identityData: { sub: String(h.user.id), email: victim, email_verified: false },
      createdAt: now,
      updatedAt: now,
      lastSignInAt: now,
    });
    expect((await t.request('POST', '/signup', { email: victim, password: 'victim-pass-123' })).status).toBe(200);
    const link = new URL(t.mails.at(-1)!.confirmationUrl);
    const f = new URLSearchParams(
      (await t.request('GET', `${link.pathname}${link.search}`)).headers.get('location')!.split('#')[1],
    );
    expect(f.get('access_token')).toBeTruthy();
    expect(await identitiesOf(id)).toEqual(['email']);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.get('access_token')}` })
    ).json()) as Json;
    expect(me.app_metadata).toMatchObject({ provider: 'email', providers: ['email'] });
    // The attacker's GitHub account no longer reaches it.
    h.emails = [{ email: victim, primary: true, verified: false }];
    const again = await signIn(t);
    expect(fragmentOf(again.location).access_token).toBeUndefined();
  });
});

describe('M2: only verified identities are link targets', () => {
  test("the attacker's identity later reports the victim's address unverified: the victim's verified sign-in does not join it, nor fails with 500", async () => {
    const t = await h.app();
    const attackerGithub = { ...h.user };
    h.emails = [{ email: uniqueEmail('mallory3'), primary: true, verified: true }];
    const attacker = fragmentOf((await signIn(t)).location);
    const attackerId = (
      (await (
        await t.request('GET', '/user', undefined, { authorization: `Bearer ${attacker.access_token}` })
      ).json()) as Json
    ).id;
    const victim = uniqueEmail('victim5');
    h.emails = [{ email: victim, primary: true, verified: false }];
    await signIn(t); // the same GitHub account, its address changed
    h.user = { ...attackerGithub, id: attackerGithub.id + 1, login: 'victim5' };
    h.emails = [{ email: victim, primary: true, verified: true }];
    const v = fragmentOf((await signIn(t)).location);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${v.access_token}` })
    ).json()) as Json;
    expect(me.id).not.toBe(attackerId);
    expect(me.email).toBe(victim);
    expect(await identitiesOf(attackerId)).toEqual(['github']);

    // The DoS variant: the victim already has an email account; their GitHub joins it.
    const owner = await signUpConfirmed(await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' }), uniqueEmail('victim6'));
    h.user = attackerGithub;
    h.emails = [{ email: owner.email, primary: true, verified: false }];
    await signIn(t);
    h.user = { ...attackerGithub, id: attackerGithub.id + 2, login: 'victim6' };
    h.emails = [{ email: owner.email, primary: true, verified: true }];
    const joined = fragmentOf((await signIn(t)).location);
    expect(joined.access_token).toBeTruthy();
    const joinedUser = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${joined.access_token}` })
    ).json()) as Json;
    expect(joinedUser.id).toBe(owner.session.user.id);
  });
});

describe('M1: an OAuth flow finishes only in the browser that started it', () => {
  const env = {
    AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true',
    AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  };

  test("linking: the attacker's state, finished in the victim's browser, links nothing and signs the browser into nothing", async () => {
    const t = await h.app(env);
    // The attacker (an app calling cross-origin: no cookie kept) starts a linking flow.
    const anon = (await (
      await t.app.request('/signup', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
    ).json()) as Json;
    const started = await t.app.request('/user/identities/authorize?provider=github&skip_http_redirect=true', {
      headers: { authorization: `Bearer ${anon.access_token}` },
    });
    const state = new URL(((await started.json()) as Json).url).searchParams.get('state')!;
    h.emails = [{ email: uniqueEmail('victim7'), primary: true, verified: true }];
    t.cookies.clear();
    const cb = await callback(t, { code: 'v7', state });
    expect(`${cb.location.origin}${cb.location.pathname}`).toBe('http://localhost:3000/');
    expect(cb.location.searchParams.get('error_code')).toBe('bad_oauth_state');
    expect(fragmentOf(cb.location).access_token).toBeUndefined();
    expect(
      await h.db.orm
        .select()
        .from(h.db.t.identities)
        .where(eq(h.db.t.identities.providerId, String(h.user.id))),
    ).toHaveLength(0);
    const refreshed = (await (
      await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: anon.refresh_token })
    ).json()) as Json;
    expect(refreshed.user).toMatchObject({ email: '', is_anonymous: true });
  });

  test('login CSRF: a sign-in started in one browser and finished in another is refused; in its own browser it works', async () => {
    const t = await h.app();
    const loc = await authorize(t, 'provider=github');
    const state = loc.searchParams.get('state')!;
    const mine = new Map(t.cookies);
    t.cookies.clear();
    const other = await callback(t, { code: 'abcd-code', state });
    expect(other.location.searchParams.get('error_code')).toBe('bad_oauth_state');
    expect(fragmentOf(other.location).access_token).toBeUndefined();
    for (const [k, v] of mine) t.cookies.set(k, v);
    const own = await callback(t, { code: 'abcd-code', state });
    expect(fragmentOf(own.location).access_token).toBeTruthy();
    // Finished: the state left the browser's list.
    expect(t.cookies.get('authsvc-oauth-states') ?? '').not.toContain(state);
  });

  test("PKCE linking finished in the victim's browser: a code lands there and nothing is linked (only the verifier's holder completes it)", async () => {
    const t = await h.app(env);
    const { session } = await signUpConfirmed(t);
    const challenge = 'c'.repeat(43);
    const started = await t.app.request(
      `/user/identities/authorize?provider=github&skip_http_redirect=true&code_challenge=${challenge}&code_challenge_method=plain`,
      { headers: { authorization: `Bearer ${session.access_token}` } },
    );
    const state = new URL(((await started.json()) as Json).url).searchParams.get('state')!;
    t.cookies.clear();
    const cb = await callback(t, { code: 'v8', state });
    const code = cb.location.searchParams.get('code');
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    expect(await identitiesOf(session.user.id)).toEqual(['email']);
    const wrongVerifier = await t.request('POST', '/token?grant_type=pkce', {
      auth_code: code,
      code_verifier: 'd'.repeat(43),
    });
    expect(wrongVerifier.status).toBe(400);
    expect(await identitiesOf(session.user.id)).toEqual(['email']);
    const starter = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: challenge });
    expect(starter.status).toBe(200);
    expect(await identitiesOf(session.user.id)).toEqual(['email', 'github']);
  });

  test("the binding cookie: HttpOnly, Path=/, SameSite=None; Secure under https (Apple's cross-site form_post carries it), Lax under http", async () => {
    const https = await h.app({ AUTHSVC_API_EXTERNAL_URL: 'https://auth.example.com' });
    const res = await https.request('GET', '/authorize?provider=github');
    const state = new URL(res.headers.get('location')!).searchParams.get('state')!;
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('authsvc-oauth-states='))!;
    expect(cookie).toBe(`authsvc-oauth-states=${state}; Max-Age=300; Path=/; HttpOnly; Secure; SameSite=None`);
    const posted = await https.request(
      'POST',
      '/callback',
      new URLSearchParams({ code: 'abcd-code', state }).toString(),
      { 'content-type': 'application/x-www-form-urlencoded' },
    );
    expect(fragmentOf(new URL(posted.headers.get('location')!)).access_token).toBeTruthy();

    const http = await h.app();
    const plain = await http.request('GET', '/authorize?provider=github');
    expect(plain.headers.getSetCookie().find((c) => c.startsWith('authsvc-oauth-states='))).toMatch(
      /; Path=\/; HttpOnly; SameSite=Lax$/,
    );
  });
});

describe('M3: RATE_LIMIT_SMS_SENT holds under SMS_AUTOCONFIRM', () => {
  test('eight POST /otp for new numbers with a cap of 4: four texts, then 429 over_sms_send_rate_limit', async () => {
    const t = await clocked(
      { ...PHONE_ENV, AUTHSVC_SMS_AUTOCONFIRM: 'true', AUTHSVC_RATE_LIMIT_SMS_SENT: '4' },
      Date.UTC(2031, 0, 2, 10, 0, 0),
    );
    const before = twilio.texts.length;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await t.request('POST', '/otp', { phone: `+${uniquePhone()}` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    expect(twilio.texts.length - before).toBe(4);
  });
});

describe('L1: an unverified primary address with a verified secondary one', () => {
  test('held by someone: a 4xx to the redirect target, not a 500; free: it never goes on the new account', async () => {
    const t = await h.app();
    const holder = await signUpConfirmed(await h.app({ AUTHSVC_MAILER_AUTOCONFIRM: 'true' }), uniqueEmail('victim6'));
    h.emails = [
      { email: holder.email, primary: true, verified: false },
      { email: uniqueEmail('m9'), primary: false, verified: true },
    ];
    const taken = await signIn(t);
    expect(Object.fromEntries(taken.location.searchParams)).toMatchObject({
      error: 'access_denied',
      error_code: 'provider_email_needs_verification',
    });
    expect((await usersWithEmail(holder.email)).map((u) => u.id)).toEqual([holder.session.user.id]);

    const free = uniqueEmail('victim99');
    h.user = { ...h.user, id: h.user.id + 1 };
    h.emails = [
      { email: free, primary: true, verified: false },
      { email: uniqueEmail('m9'), primary: false, verified: true },
    ];
    const r = await signIn(t);
    expect(r.location.searchParams.get('error_code')).toBe('provider_email_needs_verification');
    expect(await usersWithEmail(free)).toHaveLength(0);
  });
});
