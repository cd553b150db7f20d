// Email flows end to end, as a user lives them: the published supabase-js client talks to the real
// server process (`node bin/authsvc.js`), the server sends real email over SMTP to a mailbox running
// inside the test, and the test reads that email as a mail client would — it follows the link
// (`fetch(link, { redirect: 'manual' })`, session or error in the Location fragment) or types in
// the code (`verifyOtp`). Nothing is read from the server's database or log.
import { type Session, type SupabaseClient, type User, isAuthApiError } from '@supabase/supabase-js';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from '../helpers/free-port.ts';
import { type ServerProcess, cleanupProcesses, startServer } from '../helpers/server.ts';
import { supabaseClient } from '../helpers/supabase.ts';
import { type Mailbox, type ReceivedMail, mailCode, mailLink, startMailbox } from '../helpers/smtp.ts';

const JWT_SECRET = 'e2e-email-secret-with-at-least-32-characters';
const SITE_URL = 'http://localhost:3000';
const ADMIN_EMAIL = 'noreply@auth.example.test';
const SENDER_NAME = 'Authsvc E2E';
const PASSWORD = 'correct-horse-battery-1';
const NEW_PASSWORD = 'new-staple-battery-horse-2';

const SUBJECTS = {
  confirmation: 'Confirm Your Signup',
  magicLink: 'Your Magic Link',
  recovery: 'Reset Your Password',
  invite: 'You have been invited',
  reauthentication: 'Confirm reauthentication',
};

/** Default configuration: frequency limits as shipped (900 s confirmation/recovery, 60 s magic link). */
let server: ServerProcess;
/** SMTP_MAX_FREQUENCY=1 (resend) and SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION=true. */
let strict: ServerProcess;
let strictStarting: Promise<ServerProcess>;
let mailbox: Mailbox;
let anonKey: string;
let serviceKey: string;

function client(base: ServerProcess = server, key = anonKey): SupabaseClient {
  return supabaseClient(base.url, key);
}

let n = 0;
const email = (tag: string) => `${tag}-${Date.now().toString(36)}-${++n}@example.com`;

const sign = (role: string) =>
  new SignJWT({ role, iss: 'supabase-demo' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));

async function start(extra: Record<string, string>): Promise<ServerProcess> {
  // The port is chosen first so that API_EXTERNAL_URL (the base of every link) points at this process.
  const port = await freePort();
  return startServer({
    env: {
      PORT: String(port),
      AUTHSVC_API_EXTERNAL_URL: `http://127.0.0.1:${port}`,
      AUTHSVC_SITE_URL: SITE_URL,
      AUTHSVC_JWT_SECRET: JWT_SECRET,
      AUTHSVC_JWT_AUD: 'authenticated',
      AUTHSVC_JWT_DEFAULT_GROUP_NAME: 'authenticated',
      AUTHSVC_DB_DRIVER: 'postgres',
      DATABASE_URL: 'memory://',
      AUTHSVC_SMTP_HOST: '127.0.0.1',
      AUTHSVC_SMTP_PORT: String(mailbox.port),
      AUTHSVC_SMTP_ADMIN_EMAIL: ADMIN_EMAIL,
      AUTHSVC_SMTP_SENDER_NAME: SENDER_NAME,
      ...extra,
    },
  });
}

beforeAll(async () => {
  mailbox = await startMailbox();
  [anonKey, serviceKey] = await Promise.all([sign('anon'), sign('service_role')]);
  server = await start({});
  // Booting takes a few seconds of CPU: the second process starts while the first one's tests run.
  strictStarting = start({
    AUTHSVC_SMTP_MAX_FREQUENCY: '1',
    AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
  });
  strictStarting.catch(() => undefined); // reported by the beforeAll that awaits it
}, 60_000);

afterAll(async () => {
  await cleanupProcesses();
  await mailbox?.close();
});

// ------------------------------------------------------------------------------------------ reading mail

interface Letter {
  mail: ReceivedMail;
  link: URL | undefined;
  code: string;
}

/** Waits for the next email to `to`, checks what every email of ours has, returns its link and code. */
async function receive(to: string, subject: string): Promise<Letter> {
  const mail = await mailbox.next(to);
  const p = mail.parsed;
  expect(mail.envelopeTo).toEqual([to]);
  expect(p.subject).toBe(subject);
  expect(p.from).toMatchObject({ name: SENDER_NAME, address: ADMIN_EMAIL });
  expect(p.to).toEqual([expect.objectContaining({ address: to })]);
  expect(p.html).toBeTruthy();
  expect(p.text).toBeTruthy();
  const code = mailCode(mail);
  expect(code, `code in:\n${p.text}`).toMatch(/^\d{6}$/);
  expect(p.html).toContain(code!);
  const raw = mailLink(mail);
  // The text part shows the same URL the HTML part links to.
  if (raw) expect(p.text).toContain(raw);
  return { mail, link: raw ? new URL(raw) : undefined, code: code! };
}

/** A link to GET /verify on `base`, of `type`, redirecting to `redirectTo`. */
function expectVerifyLink(link: URL | undefined, base: ServerProcess, type: string, redirectTo: string): URL {
  expect(link, 'the email has a link').toBeDefined();
  expect(link!.origin).toBe(base.url);
  expect(link!.pathname).toBe('/verify');
  expect(link!.searchParams.get('type')).toBe(type);
  expect(link!.searchParams.get('token')).toMatch(/^[0-9a-f]{64}$/);
  expect(link!.searchParams.get('redirect_to')).toBe(redirectTo);
  return link!;
}

const SESSION_KEYS = ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'sb', 'token_type', 'type'];
const ERROR_KEYS = ['error', 'error_code', 'error_description', 'sb'];

async function click(link: URL): Promise<{ status: number; target: string; fragment: URLSearchParams }> {
  const res = await fetch(link, { redirect: 'manual' });
  await res.body?.cancel();
  const location = res.headers.get('location') ?? '';
  const hash = location.indexOf('#');
  return {
    status: res.status,
    target: hash < 0 ? location : location.slice(0, hash),
    fragment: new URLSearchParams(hash < 0 ? '' : location.slice(hash + 1)),
  };
}

/**
 * What a user's mail client and browser do with a link: a scanner's HEAD first (must not consume
 * it), then the click (303 to redirect_to with the session in the fragment), then a second click
 * (303 with the error in the fragment: links work once). Returns the session fragment.
 */
async function followLink(link: URL, type: string, redirectTo: string): Promise<URLSearchParams> {
  const head = await fetch(link, { method: 'HEAD', redirect: 'manual' });
  expect(head.status).toBeLessThan(400);
  expect(head.headers.get('location') ?? '').not.toContain('access_token');

  const first = await click(link);
  expect(first.status).toBe(303);
  expect(first.target).toBe(redirectTo);
  expect([...first.fragment.keys()]).toEqual(SESSION_KEYS);
  expect(first.fragment.get('token_type')).toBe('bearer');
  expect(first.fragment.get('type')).toBe(type);
  expect(first.fragment.get('sb')).toBe('');
  expect(Number(first.fragment.get('expires_in'))).toBe(3600);
  expect(Number(first.fragment.get('expires_at'))).toBeGreaterThan(Date.now() / 1000);

  const again = await click(link);
  expect(again.status).toBe(303);
  expect(again.target).toBe(redirectTo);
  expect([...again.fragment.keys()]).toEqual(ERROR_KEYS);
  expect(Object.fromEntries(again.fragment)).toEqual({
    error: 'access_denied',
    error_code: 'otp_expired',
    error_description: 'Email link is invalid or has expired',
    sb: '',
  });
  return first.fragment;
}

/** The session from a link's fragment, installed in a fresh client the way an app does it. */
async function adopt(
  fragment: URLSearchParams,
  base: ServerProcess = server,
): Promise<{ sb: SupabaseClient; session: Session; user: User }> {
  const sb = client(base);
  const set = await sb.auth.setSession({
    access_token: fragment.get('access_token')!,
    refresh_token: fragment.get('refresh_token')!,
  });
  expect(set.error).toBeNull();
  const got = await sb.auth.getUser();
  expect(got.error).toBeNull();
  return { sb, session: set.data.session!, user: got.data.user! };
}

/** A confirmed user with a password, made through the confirmation email's code. */
async function confirmedUser(base: ServerProcess, tag: string): Promise<string> {
  const address = email(tag);
  const up = await client(base).auth.signUp({ email: address, password: PASSWORD });
  expect(up.error).toBeNull();
  const { code } = await receive(address, SUBJECTS.confirmation);
  const v = await client(base).auth.verifyOtp({ email: address, token: code, type: 'signup' });
  expect(v.error).toBeNull();
  return address;
}

// ------------------------------------------------------------------------------------------ flows

describe('signup confirmation', () => {
  test('signUp → email with link and code → the link confirms and signs in; works once', async () => {
    const address = email('signup-link');
    const redirectTo = `${SITE_URL}/welcome`;
    const up = await client().auth.signUp({
      email: address,
      password: PASSWORD,
      options: { emailRedirectTo: redirectTo, data: { name: 'Ada' } },
    });
    expect(up.error).toBeNull();
    expect(up.data.session).toBeNull();
    expect(up.data.user?.email_confirmed_at).toBeFalsy();
    expect(up.data.user?.confirmation_sent_at).toBeTruthy();

    // Not confirmed yet.
    const early = await client().auth.signInWithPassword({ email: address, password: PASSWORD });
    expect(early.error).toMatchObject({ status: 400, code: 'email_not_confirmed' });

    const letter = await receive(address, SUBJECTS.confirmation);
    const link = expectVerifyLink(letter.link, server, 'signup', redirectTo);
    const fragment = await followLink(link, 'signup', redirectTo);

    const { sb, session, user } = await adopt(fragment);
    expect(user).toMatchObject({
      id: up.data.user!.id,
      email: address,
      user_metadata: expect.objectContaining({ name: 'Ada' }),
    });
    expect(user.email_confirmed_at).toBeTruthy();
    expect(session.user.id).toBe(user.id);
    // The refresh token from the fragment is a real one.
    const refreshed = await sb.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session?.refresh_token).not.toBe(fragment.get('refresh_token'));

    // The email's code went with its link.
    const code = await client().auth.verifyOtp({ email: address, token: letter.code, type: 'signup' });
    expect(code.error).toMatchObject({ status: 403, code: 'otp_expired' });

    const signIn = await client().auth.signInWithPassword({ email: address, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(user.id);
    expect(mailbox.to(address)).toHaveLength(1);
  });

  test.each(['signup', 'email'] as const)(
    'signUp → the code typed into verifyOtp({ type: %j }) confirms and signs in; works once',
    async (type) => {
      const address = email(`signup-code-${type}`);
      // A redirect_to off the site and the allow list is replaced by SITE_URL.
      const up = await client().auth.signUp({
        email: address,
        password: PASSWORD,
        options: { emailRedirectTo: 'https://evil.example/steal' },
      });
      expect(up.error).toBeNull();
      const letter = await receive(address, SUBJECTS.confirmation);
      expectVerifyLink(letter.link, server, 'signup', SITE_URL);

      const sb = client();
      const v = await sb.auth.verifyOtp({ email: address, token: letter.code, type });
      expect(v.error).toBeNull();
      expect(v.data.session?.access_token).toBeTruthy();
      expect(v.data.user).toMatchObject({ id: up.data.user!.id, email: address });
      expect(v.data.user?.email_confirmed_at).toBeTruthy();
      const got = await sb.auth.getUser();
      expect(got.data.user?.id).toBe(up.data.user!.id);

      const again = await client().auth.verifyOtp({ email: address, token: letter.code, type });
      expect(isAuthApiError(again.error)).toBe(true);
      expect(again.error).toMatchObject({ status: 403, code: 'otp_expired' });
      // And the link of the same email is spent too.
      const late = await click(letter.link!);
      expect(late.status).toBe(303);
      expect(late.fragment.get('error_code')).toBe('otp_expired');
    },
  );

  test("verifyOtp({ token_hash, type }) with the hash from the link (an app's own confirm page) signs in once", async () => {
    const address = email('signup-hash');
    const up = await client().auth.signUp({ email: address, password: PASSWORD });
    expect(up.error).toBeNull();
    const letter = await receive(address, SUBJECTS.confirmation);
    const tokenHash = expectVerifyLink(letter.link, server, 'signup', SITE_URL).searchParams.get('token')!;

    const sb = client();
    const v = await sb.auth.verifyOtp({ token_hash: tokenHash, type: 'signup' });
    expect(v.error).toBeNull();
    expect(v.data.user).toMatchObject({ id: up.data.user!.id, email: address });
    expect((await sb.auth.getUser()).data.user?.email_confirmed_at).toBeTruthy();

    const again = await client().auth.verifyOtp({ token_hash: tokenHash, type: 'signup' });
    expect(again.error).toMatchObject({ status: 403, code: 'otp_expired' });
  });
});

describe('signInWithOtp', () => {
  test.each(['magiclink', 'email'] as const)(
    'a confirmed user gets a magic link whose code verifies as %j',
    async (type) => {
      const address = await confirmedUser(server, `otp-${type}`);
      const redirectTo = `${SITE_URL}/app`;
      const sent = await client().auth.signInWithOtp({
        email: address,
        options: { shouldCreateUser: false, emailRedirectTo: redirectTo },
      });
      expect(sent.error).toBeNull();
      const letter = await receive(address, SUBJECTS.magicLink);
      expectVerifyLink(letter.link, server, 'magiclink', redirectTo);

      const sb = client();
      const v = await sb.auth.verifyOtp({ email: address, token: letter.code, type });
      expect(v.error).toBeNull();
      expect(v.data.user?.email).toBe(address);
      expect((await sb.auth.getUser()).data.user?.email).toBe(address);

      const again = await client().auth.verifyOtp({ email: address, token: letter.code, type });
      expect(again.error).toMatchObject({ status: 403, code: 'otp_expired' });
    },
  );

  test('a new address gets a confirmation; once confirmed, a magic link whose link signs in once', async () => {
    const address = email('otp-new');
    // shouldCreateUser: false refuses an unknown address and sends nothing.
    const refused = await client().auth.signInWithOtp({ email: address, options: { shouldCreateUser: false } });
    expect(refused.error).toMatchObject({ status: 422, code: 'otp_disabled' });

    const sent = await client().auth.signInWithOtp({ email: address, options: { data: { plan: 'free' } } });
    expect(sent.error).toBeNull();
    expect(sent.data).toMatchObject({ user: null, session: null });
    const confirmation = await receive(address, SUBJECTS.confirmation);
    expectVerifyLink(confirmation.link, server, 'signup', SITE_URL);
    const v = await client().auth.verifyOtp({ email: address, token: confirmation.code, type: 'email' });
    expect(v.error).toBeNull();
    expect(v.data.user).toMatchObject({ email: address, user_metadata: expect.objectContaining({ plan: 'free' }) });
    expect(v.data.user?.email_confirmed_at).toBeTruthy();

    // Now confirmed: the next request is a magic link.
    expect((await client().auth.signInWithOtp({ email: address })).error).toBeNull();
    const magic = await receive(address, SUBJECTS.magicLink);
    const link = expectVerifyLink(magic.link, server, 'magiclink', SITE_URL);
    const fragment = await followLink(link, 'magiclink', SITE_URL);
    const { user } = await adopt(fragment);
    expect(user.id).toBe(v.data.user!.id);

    // Within a minute a second magic link is refused, and no email goes out.
    const soon = await client().auth.signInWithOtp({ email: address });
    expect(soon.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });
    expect(mailbox.to(address)).toHaveLength(2);
  });
});

describe('password recovery', () => {
  test('resetPasswordForEmail → email → link → updateUser({ password }) → signInWithPassword', async () => {
    const address = await confirmedUser(server, 'recover');
    const redirectTo = `${SITE_URL}/reset-password`;
    const sent = await client().auth.resetPasswordForEmail(address, { redirectTo });
    expect(sent.error).toBeNull();

    const letter = await receive(address, SUBJECTS.recovery);
    const link = expectVerifyLink(letter.link, server, 'recovery', redirectTo);
    const fragment = await followLink(link, 'recovery', redirectTo);
    const { sb, user } = await adopt(fragment);
    expect(user.email).toBe(address);
    expect(user.recovery_sent_at).toBeTruthy();

    const updated = await sb.auth.updateUser({ password: NEW_PASSWORD });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.id).toBe(user.id);

    const old = await client().auth.signInWithPassword({ email: address, password: PASSWORD });
    expect(old.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
    const signIn = await client().auth.signInWithPassword({ email: address, password: NEW_PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(user.id);

    // A second request inside SMTP_MAX_FREQUENCY (900 s here) is refused; an unknown address is not revealed.
    const soon = await client().auth.resetPasswordForEmail(address);
    expect(soon.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });
    expect((await client().auth.resetPasswordForEmail(email('nobody'))).error).toBeNull();
    expect(mailbox.to(address)).toHaveLength(2);
  });
});

describe('invite', () => {
  test('auth.admin.inviteUserByEmail (service_role) → email → link → session; the user sets a password', async () => {
    const address = email('invite');
    const redirectTo = `${SITE_URL}/accept`;
    const admin = client(server, serviceKey);
    const invited = await admin.auth.admin.inviteUserByEmail(address, { redirectTo, data: { team: 'blue' } });
    expect(invited.error).toBeNull();
    expect(invited.data.user).toMatchObject({ email: address, user_metadata: { team: 'blue' } });
    expect(invited.data.user?.invited_at).toBeTruthy();
    expect(invited.data.user?.email_confirmed_at).toBeFalsy();

    // The anon key is not enough.
    const denied = await client().auth.admin.inviteUserByEmail(email('invite-denied'));
    expect(denied.error).toMatchObject({ status: 403, code: 'not_admin' });

    const letter = await receive(address, SUBJECTS.invite);
    expect(letter.mail.parsed.text).toContain(SITE_URL);
    const link = expectVerifyLink(letter.link, server, 'invite', redirectTo);
    const fragment = await followLink(link, 'invite', redirectTo);
    const { sb, user } = await adopt(fragment);
    expect(user).toMatchObject({
      id: invited.data.user!.id,
      email: address,
      user_metadata: expect.objectContaining({ team: 'blue' }),
    });
    expect(user.email_confirmed_at).toBeTruthy();

    expect((await sb.auth.updateUser({ password: PASSWORD })).error).toBeNull();
    const signIn = await client().auth.signInWithPassword({ email: address, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(user.id);
  });
});

describe('with SMTP_MAX_FREQUENCY=1 and reauthentication required', () => {
  beforeAll(async () => {
    strict = await strictStarting;
  }, 60_000);

  test('resend({ type: "signup" }) sends a new confirmation whose code works; the old one no longer does', async () => {
    const address = email('resend');
    expect((await client(strict).auth.signUp({ email: address, password: PASSWORD })).error).toBeNull();
    const first = await receive(address, SUBJECTS.confirmation);

    // Inside the 1 s window: refused, nothing sent.
    const early = await client(strict).auth.resend({ type: 'signup', email: address });
    expect(early.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });

    await new Promise((r) => setTimeout(r, 1_100));
    const redirectTo = `${SITE_URL}/again`;
    const again = await client(strict).auth.resend({
      type: 'signup',
      email: address,
      options: { emailRedirectTo: redirectTo },
    });
    expect(again.error).toBeNull();
    const second = await receive(address, SUBJECTS.confirmation);
    expectVerifyLink(second.link, strict, 'signup', redirectTo);
    expect(second.link!.searchParams.get('token')).not.toBe(first.link!.searchParams.get('token'));
    expect(mailbox.to(address)).toHaveLength(2);

    if (second.code !== first.code) {
      const stale = await client(strict).auth.verifyOtp({ email: address, token: first.code, type: 'signup' });
      expect(stale.error).toMatchObject({ status: 403, code: 'otp_expired' });
    }
    const v = await client(strict).auth.verifyOtp({ email: address, token: second.code, type: 'signup' });
    expect(v.error).toBeNull();
    expect(v.data.user?.email_confirmed_at).toBeTruthy();

    // Confirmed: resend has nothing to send and says nothing about it, inside the window or not.
    // (The server answers after the SMTP transaction, so a message would already be here.)
    expect((await client(strict).auth.resend({ type: 'signup', email: address })).error).toBeNull();
    expect(mailbox.to(address)).toHaveLength(2);
  });

  test('reauthenticate() → nonce email → updateUser({ password, nonce }); the nonce works once', async () => {
    const address = email('reauth');
    expect((await client(strict).auth.signUp({ email: address, password: PASSWORD })).error).toBeNull();
    const confirmation = await receive(address, SUBJECTS.confirmation);
    const sb = client(strict);
    expect((await sb.auth.verifyOtp({ email: address, token: confirmation.code, type: 'email' })).error).toBeNull();

    const bare = await sb.auth.updateUser({ password: NEW_PASSWORD });
    expect(bare.error).toMatchObject({ status: 400, code: 'reauthentication_needed' });

    const re = await sb.auth.reauthenticate();
    expect(re.error).toBeNull();
    const letter = await receive(address, SUBJECTS.reauthentication);
    expect(letter.link).toBeUndefined(); // a nonce is typed in, never clicked

    const wrong = await sb.auth.updateUser({
      password: NEW_PASSWORD,
      nonce: letter.code === '000000' ? '111111' : '000000',
    });
    expect(wrong.error).toMatchObject({ status: 422, code: 'reauthentication_not_valid' });

    const ok = await sb.auth.updateUser({ password: NEW_PASSWORD, nonce: letter.code });
    expect(ok.error).toBeNull();
    const signIn = await client(strict).auth.signInWithPassword({ email: address, password: NEW_PASSWORD });
    expect(signIn.error).toBeNull();

    const reused = await sb.auth.updateUser({ password: 'third-password-horse-3', nonce: letter.code });
    expect(reused.error).toMatchObject({ status: 422, code: 'reauthentication_not_valid' });
  });
});

describe('PKCE (flowType: "pkce")', () => {
  test('signUp → email → the link redirects with ?code= → exchangeCodeForSession; the code works once', async () => {
    const store = new Map<string, string>();
    const sb = supabaseClient(server.url, anonKey, {
      auth: {
        flowType: 'pkce',
        persistSession: true,
        storage: {
          getItem: (k) => store.get(k) ?? null,
          setItem: (k, v) => {
            store.set(k, v);
          },
          removeItem: (k) => {
            store.delete(k);
          },
        },
      },
    });
    const address = email('pkce');
    const redirectTo = 'http://localhost:3000/auth/callback';
    const up = await sb.auth.signUp({ email: address, password: PASSWORD, options: { emailRedirectTo: redirectTo } });
    expect(up.error).toBeNull();
    expect(up.data.session).toBeNull();
    const { link } = await receive(address, SUBJECTS.confirmation);
    expect(link!.searchParams.get('token')).toMatch(/^pkce_[0-9a-f]{64}$/);
    const head = await fetch(link!, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBeLessThan(400);
    const first = await click(link!);
    expect(first.status).toBe(303);
    const target = new URL(first.target);
    expect(`${target.origin}${target.pathname}`).toBe(redirectTo);
    const code = target.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    const exchanged = await sb.auth.exchangeCodeForSession(code);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user?.email).toBe(address);
    expect((await sb.auth.getUser()).data.user?.email_confirmed_at).toBeTruthy();
    // The flow state is gone: the same code cannot be traded again.
    const replay = await fetch(`${server.url}/token?grant_type=pkce`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth_code: code, code_verifier: 'x'.repeat(43) }),
    });
    expect(replay.status).toBe(404);
  });
});
