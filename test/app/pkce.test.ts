// PKCE for email links: link → ?code= → grant_type=pkce, directly and through supabase-js.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import type { Database } from '../../src/db/database.ts';
import { base64url } from '../../src/crypto/encoding.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import { buildTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
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

const VERIFIER = 'a-very-long-code-verifier-0123456789-abcdefghijklmnop';
async function s256(v: string) {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(v))));
}

async function followLink(t: TestApp, link: string): Promise<URL> {
  const u = new URL(link);
  const res = await t.request('GET', `${u.pathname}${u.search}`);
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location')!);
}

describe('PKCE email links', () => {
  test('signup: the link redirects with ?code=, which trades once for a session with the verifier', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail();
    const res = await t.request('POST', '/signup?redirect_to=http://localhost:3000/cb', {
      email,
      password: 'secret-pw-1',
      code_challenge: await s256(VERIFIER),
      code_challenge_method: 's256',
    });
    expect(res.status).toBe(200);
    const mail = t.mails.at(-1)!;
    expect(new URL(mail.confirmationUrl).searchParams.get('token')).toMatch(/^pkce_[0-9a-f]{64}$/);
    const loc = await followLink(t, mail.confirmationUrl);
    expect(loc.origin + loc.pathname).toBe('http://localhost:3000/cb');
    expect(loc.hash).toBe('');
    const code = loc.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    const wrong = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: `${VERIFIER}x` });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      error_code: 'bad_code_verifier',
      msg: 'code challenge does not match previously saved code verifier',
    });
    const ok = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: VERIFIER });
    expect(ok.status).toBe(200);
    const session = (await ok.json()) as Json;
    expect(session.user).toMatchObject({ email });
    expect(session.user.email_confirmed_at).toBeTruthy();
    const again = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: VERIFIER });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ error_code: 'flow_state_not_found' });
  });

  test('recovery with the plain method; an expired flow state is 422', async () => {
    let now = new Date();
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }, { now: () => now });
    const email = uniqueEmail();
    await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
    const challenge = 'plain-challenge-0123456789-0123456789-0123456789';
    await t.request('POST', '/recover', { email, code_challenge: challenge, code_challenge_method: 'plain' });
    const code = (await followLink(t, t.mails.at(-1)!.confirmationUrl)).searchParams.get('code')!;
    now = new Date(now.getTime() + 301_000);
    const late = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: challenge });
    expect(late.status).toBe(422);
    expect(await late.json()).toMatchObject({ error_code: 'flow_state_expired' });
  });

  test('M3 (security review 2026-12-01): a code issued before the user was soft-deleted trades for nothing', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const adm = {
      authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 })}`,
    };
    const codeFor = async (email: string) => {
      await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
      await t.request('POST', '/otp', { email, code_challenge: await s256(VERIFIER), code_challenge_method: 's256' });
      return (await followLink(t, t.mails.at(-1)!.confirmationUrl)).searchParams.get('code')!;
    };
    // The admin API's soft delete: the flow states go with the user's sessions.
    const a = uniqueEmail();
    const codeA = await codeFor(a);
    const userA = (
      (await (
        await t.request('POST', '/token?grant_type=password', { email: a, password: 'secret-pw-1' })
      ).json()) as Json
    ).user.id as string;
    expect((await t.request('DELETE', `/admin/users/${userA}`, { should_soft_delete: true }, adm)).status).toBe(200);
    // A flow state that outlived a delete (one made before flow states were removed): the user is missing.
    const b = uniqueEmail();
    const codeB = await codeFor(b);
    await db.orm.update(db.t.users).set({ deletedAt: new Date() }).where(eq(db.t.users.email, b));
    for (const code of [codeA, codeB]) {
      const res = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: VERIFIER });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error_code: 'flow_state_not_found' });
    }
  });

  test('the code of a PKCE email still verifies directly with POST /verify', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail();
    await t.request('POST', '/signup', {
      email,
      password: 'secret-pw-1',
      code_challenge: await s256(VERIFIER),
      code_challenge_method: 'S256',
    });
    const res = await t.request('POST', '/verify', { type: 'signup', email, token: t.mails.at(-1)!.token });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).access_token).toBeTruthy();
  });

  test('an invalid PKCE link puts the error in the query and the fragment', async () => {
    const t = await buildTestApp(db);
    const res = await t.request('GET', `/verify?token=pkce_${'0'.repeat(56)}&type=signup`);
    const loc = new URL(res.headers.get('location')!);
    expect(loc.searchParams.get('error_code')).toBe('otp_expired');
    expect(new URLSearchParams(loc.hash.slice(1)).get('error_code')).toBe('otp_expired');
  });

  test('input errors', async () => {
    const t = await buildTestApp(db);
    const cases: [Json, string][] = [
      [
        { email: uniqueEmail(), code_challenge: await s256(VERIFIER) },
        'PKCE flow requires code_challenge_method and code_challenge',
      ],
      [
        { email: uniqueEmail(), code_challenge: await s256(VERIFIER), code_challenge_method: 'md5' },
        'code challenge method not supported',
      ],
      [
        { email: uniqueEmail(), code_challenge: 'short', code_challenge_method: 's256' },
        'code challenge has to be between 43 and 128 characters',
      ],
    ];
    for (const [body, msg] of cases) {
      const res = await t.request('POST', '/otp', body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).msg).toBe(msg);
    }
    const empty = await t.request('POST', '/token?grant_type=pkce', { auth_code: '', code_verifier: '' });
    expect(await empty.json()).toMatchObject({
      code: 400,
      error_code: 'validation_failed',
      msg: 'invalid request: both auth code and code verifier should be non-empty',
    });
    const unknown = await t.request('POST', '/token?grant_type=pkce', {
      auth_code: crypto.randomUUID(),
      code_verifier: VERIFIER,
    });
    expect(unknown.status).toBe(404);
  });
});

describe('PKCE email change', () => {
  test('both links: the first answers the message in query and fragment, the second ?code=', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const email = uniqueEmail();
    const session = (await (await t.request('POST', '/signup', { email, password: 'secret-pw-1' })).json()) as Json;
    // Autoconfirm would apply the change at once: confirm through an app without it.
    const strict = await buildTestApp(db);
    const newEmail = uniqueEmail('new');
    const put = await strict.request(
      'PUT',
      '/user',
      { email: newEmail, code_challenge: await s256(VERIFIER), code_challenge_method: 's256' },
      { authorization: `Bearer ${session.access_token}` },
    );
    expect(put.status).toBe(200);
    const [toNew, toCurrent] = strict.mails;
    expect(new URL(toNew!.confirmationUrl).searchParams.get('token')).toMatch(/^pkce_/);
    const half = await followLink(strict, toCurrent!.confirmationUrl);
    expect(half.searchParams.get('message')).toMatch(/^Confirmation link accepted/);
    expect(new URLSearchParams(half.hash.slice(1)).get('message')).toMatch(/^Confirmation link accepted/);
    const done = await followLink(strict, toNew!.confirmationUrl);
    const code = done.searchParams.get('code')!;
    const res = await strict.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: VERIFIER });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.user.email).toBe(newEmail);
    const claims = JSON.parse(atob(body.access_token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    expect(claims.amr[0].method).toBe('email_change');
  });
});

describe('supabase-js with flowType pkce', () => {
  test('signInWithOtp → magic link → exchangeCodeForSession', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const email = uniqueEmail();
    await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
    const store = new Map<string, string>();
    const supabase = supabaseClientFor(t.app, 'anon-key', {
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
    const sent = await supabase.auth.signInWithOtp({
      email,
      options: { emailRedirectTo: 'http://localhost:3000/auth/callback' },
    });
    expect(sent.error).toBeNull();
    const mail = t.mails.at(-1)!;
    expect(mail.kind).toBe('magic_link');
    const loc = await followLink(t, mail.confirmationUrl);
    expect(loc.pathname).toBe('/auth/callback');
    const { data, error } = await supabase.auth.exchangeCodeForSession(loc.searchParams.get('code')!);
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
    const { data: me } = await supabase.auth.getUser();
    expect(me.user?.email).toBe(email);
  });
});
