// The published client against the real server process: `@supabase/supabase-js` exactly as an
// application uses it, pointed at the server's base URL (it calls `<url>/auth/v1/…`, which the
// server serves as Supabase's gateway does).
import { type SupabaseClient, isAuthApiError, isAuthSessionMissingError } from '@supabase/supabase-js';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ServerProcess, cleanupProcesses, startServer } from '../helpers/server.ts';
import { supabaseClient } from '../helpers/supabase.ts';

const JWT_SECRET = 'e2e-secret-with-at-least-32-characters!!';

let server: ServerProcess;
let confirmServer: ServerProcess;
let anonKey: string;

function client(base: ServerProcess = server): SupabaseClient {
  return supabaseClient(base.url, anonKey);
}

let n = 0;
const email = (tag: string) => `${tag}-${Date.now().toString(36)}-${++n}@example.com`;
const PASSWORD = 'correct-horse-battery-1';

beforeAll(async () => {
  anonKey = await new SignJWT({ role: 'anon', iss: 'supabase-demo' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  const env = {
    AUTHSVC_JWT_SECRET: JWT_SECRET,
    AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    // GoTrue's code defaults both to "", Supabase deployments set them; the client does not care.
    AUTHSVC_JWT_AUD: 'authenticated',
    AUTHSVC_JWT_DEFAULT_GROUP_NAME: 'authenticated',
  };
  // Each in its own empty working directory, so each on its own embedded database.
  [server, confirmServer] = await Promise.all([
    startServer({ env: { ...env, AUTHSVC_MAILER_AUTOCONFIRM: 'true' } }),
    startServer({ env }),
  ]);
}, 120_000);

afterAll(async () => {
  await cleanupProcesses();
});

describe('supabase-js against the real server', () => {
  test('signUp, signInWithPassword, getUser, updateUser, refreshSession, signOut', async () => {
    const sb = client();
    const address = email('e2e');

    const up = await sb.auth.signUp({ email: address, password: PASSWORD, options: { data: { name: 'Ada' } } });
    expect(up.error).toBeNull();
    expect(up.data.session?.access_token).toBeTruthy();
    expect(up.data.user).toMatchObject({ email: address, user_metadata: { name: 'Ada' } });
    const userId = up.data.user!.id;

    const signIn = await sb.auth.signInWithPassword({ email: address, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(userId);
    const session = signIn.data.session!;
    expect(session).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(session.expires_at).toBeGreaterThan(Date.now() / 1000);

    const got = await sb.auth.getUser();
    expect(got.error).toBeNull();
    expect(got.data.user).toMatchObject({ id: userId, email: address, aud: 'authenticated', role: 'authenticated' });

    const updated = await sb.auth.updateUser({ data: { theme: 'dark' } });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.user_metadata).toMatchObject({ name: 'Ada', theme: 'dark' });
    // The session the client holds carries the updated user.
    expect((await sb.auth.getSession()).data.session?.user.user_metadata).toMatchObject({ theme: 'dark' });

    const refreshed = await sb.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    const next = refreshed.data.session!;
    expect(next.refresh_token).not.toBe(session.refresh_token);
    expect(next.access_token).not.toBe(session.access_token);
    expect(next.user.id).toBe(userId);
    const afterRefresh = await sb.auth.getUser(next.access_token);
    expect(afterRefresh.data.user?.user_metadata).toMatchObject({ name: 'Ada', theme: 'dark' });

    const out = await sb.auth.signOut();
    expect(out.error).toBeNull();
    expect((await sb.auth.getSession()).data.session).toBeNull();

    // Logout (scope global) deleted the sessions: their tokens are dead.
    const revoked = await client().auth.refreshSession({ refresh_token: next.refresh_token });
    expect(revoked.data.session).toBeNull();
    expect(isAuthApiError(revoked.error)).toBe(true);
    expect(revoked.error).toMatchObject({ status: 400, code: 'refresh_token_not_found' });
    // The access token still verifies but names a deleted session: the server answers 403
    // session_not_found, which the client turns into AuthSessionMissingError.
    const stale = await client().auth.getUser(next.access_token);
    expect(stale.data.user).toBeNull();
    expect(isAuthSessionMissingError(stale.error)).toBe(true);
  });

  test('refresh-token reuse revokes the family; the client reports refresh_token_already_used', async () => {
    const address = email('reuse');
    expect((await client().auth.signUp({ email: address, password: PASSWORD })).error).toBeNull();
    const first = (await client().auth.signInWithPassword({ email: address, password: PASSWORD })).data.session!;
    const second = (await client().auth.refreshSession({ refresh_token: first.refresh_token })).data.session!;
    expect(second.refresh_token).toBeTruthy();
    const third = (await client().auth.refreshSession({ refresh_token: second.refresh_token })).data.session!;
    expect(third.refresh_token).toBeTruthy();

    // `first` is no longer the active token's immediate parent: reuse, whatever the interval.
    const reused = await client().auth.refreshSession({ refresh_token: first.refresh_token });
    expect(reused.data.session).toBeNull();
    expect(isAuthApiError(reused.error)).toBe(true);
    expect(reused.error).toMatchObject({ status: 400, code: 'refresh_token_already_used' });

    // The whole family went with it, including the token that was live.
    const live = await client().auth.refreshSession({ refresh_token: third.refresh_token });
    expect(live.data.session).toBeNull();
    expect(live.error).toMatchObject({ status: 400, code: 'refresh_token_already_used' });
  });

  test('signInAnonymously', async () => {
    const sb = client();
    const anon = await sb.auth.signInAnonymously({ options: { data: { color: 'blue' } } });
    expect(anon.error).toBeNull();
    expect(anon.data.session?.access_token).toBeTruthy();
    expect(anon.data.user).toMatchObject({
      is_anonymous: true,
      role: 'authenticated',
      user_metadata: { color: 'blue' },
    });
    const got = await sb.auth.getUser();
    expect(got.error).toBeNull();
    expect(got.data.user?.id).toBe(anon.data.user?.id);
    expect(got.data.user?.is_anonymous).toBe(true);
  });

  test('a wrong password comes back as invalid_credentials', async () => {
    const address = email('wrong');
    expect((await client().auth.signUp({ email: address, password: PASSWORD })).error).toBeNull();
    const res = await client().auth.signInWithPassword({ email: address, password: 'not-the-password-1' });
    expect(res.data.session).toBeNull();
    expect(isAuthApiError(res.error)).toBe(true);
    expect(res.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
  });

  test('without autoconfirm signUp returns the user, no session, and the confirmation email is logged', async () => {
    const address = email('confirm');
    const up = await client(confirmServer).auth.signUp({ email: address, password: PASSWORD });
    expect(up.error).toBeNull();
    expect(up.data.session).toBeNull();
    expect(up.data.user).toMatchObject({ email: address });
    expect(up.data.user?.confirmation_sent_at).toBeTruthy();
    expect(up.data.user?.email_confirmed_at).toBeFalsy();

    const line = await confirmServer.waitForLine(
      (l) => l.includes('email (log transport: not sent)') && l.includes(address),
    );
    const mail = JSON.parse(line) as Record<string, unknown>;
    expect(mail).toMatchObject({ msg: 'email (log transport: not sent)', to: address });
    expect(mail.code).toMatch(/^\d{6}$/);
    const link = new URL(String(mail.link));
    expect(link.pathname).toBe('/verify');
    expect(link.searchParams.get('type')).toBe('signup');
    expect(link.searchParams.get('token')).toMatch(/^[0-9a-f]{64}$/);

    // Unconfirmed: no password sign-in yet.
    const signIn = await client(confirmServer).auth.signInWithPassword({ email: address, password: PASSWORD });
    expect(signIn.error).toMatchObject({ status: 400, code: 'email_not_confirmed' });
  });
});
