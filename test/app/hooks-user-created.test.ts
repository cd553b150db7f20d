// Auth hooks (issue 29), the user-creation pair and the request's address: the after user created
// hook at each of GoTrue's call sites (email and phone signup, anonymous sign-in, invite,
// generate_link, Web3 sign-up) over HTTP and as an SQL function, its failures (the user stays);
// before user created for Web3 sign-ups (a refusal writes nothing) and not for POST /admin/users;
// and `metadata.ip_address` as GoTrue's GetIPAddress reads it (X-Forwarded-For, Sb-Forwarded-For).
import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, TEST_JWT_SECRET, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { type FakeProvider, routedFetch, startFakeProvider } from '../helpers/fake-oauth.ts';
import { callback, fragmentOf, signIn, useGithubFake } from '../helpers/oauth-github.ts';
import { type SigningKey, signingKey } from '../helpers/oauth-scenarios-oidc.ts';
import { signInMessage, solanaWallet } from '../helpers/wallets.ts';

type Json = Record<string, any>;
let db: Database;
let serviceKey: string;
beforeAll(async () => {
  db = await openTestDb();
  serviceKey = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
});
afterAll(async () => {
  await db?.close();
});

const KEY = btoa('a 32-byte key for the hook tests');
const SECRET = `v1,whsec_${KEY}`;
const BASE = 'https://hooks.test';
const V2024 = { 'x-supabase-api-version': '2024-01-01' };
const admin = () => ({ authorization: `Bearer ${serviceKey}` });
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const noContent = () => new Response(null, { status: 204 });

interface Call {
  name: string;
  payload: Json;
}

/**
 * A Standard Webhooks receiver for every hook kind at `${BASE}/<kind>` (reached through
 * deps.fetch): checks each signature and records the call; `answers` picks the answer per kind.
 */
function receiver(answers: Record<string, (p: Json) => Response> = {}) {
  const calls: Call[] = [];
  const verifier = new Webhook(KEY);
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    if (url.origin !== BASE) throw new Error(`unexpected request to ${url}`);
    const body = String(init?.body);
    verifier.verify(body, Object.fromEntries(new Headers(init?.headers)));
    const payload = JSON.parse(body) as Json;
    const name = url.pathname.slice(1);
    calls.push({ name, payload });
    return (answers[name] ?? noContent)(payload);
  }) as typeof globalThis.fetch;
  const of = (name: string) => calls.filter((c) => c.name === name).map((c) => c.payload);
  return { calls, fetch, of };
}

const hookEnv = (...kinds: string[]) =>
  Object.fromEntries(
    kinds.flatMap((kind) => [
      [`AUTHSVC_HOOK_${kind}_ENABLED`, 'true'],
      [`AUTHSVC_HOOK_${kind}_URI`, `${BASE}/${kind.toLowerCase()}`],
      [`AUTHSVC_HOOK_${kind}_SECRETS`, SECRET],
    ]),
  );

async function userById(id: string) {
  return (await db.orm.select().from(db.t.users).where(eq(db.t.users.id, id)))[0];
}
async function userByEmail(email: string) {
  return (await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email)))[0];
}
async function sessionsOf(userId: string) {
  return db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, userId));
}

const WEB3 = { AUTHSVC_EXTERNAL_WEB3_SOLANA_ENABLED: 'true' };
function web3Body() {
  const w = solanaWallet();
  const message = signInMessage('Solana', { address: w.address });
  return { wallet: w, body: { chain: 'solana', message, signature: w.sign(message) } };
}

describe('after user created hook over HTTP', () => {
  test('email signup: the saved user with its identity, after the commit; the answer is the user', async () => {
    const hook = receiver();
    const t = await buildTestApp(
      db,
      { ...hookEnv('BEFORE_USER_CREATED', 'AFTER_USER_CREATED'), AUTHSVC_SMTP_MAX_FREQUENCY: '1s' },
      { fetch: hook.fetch },
    );
    const email = uniqueEmail('after');
    const res = await t.request('POST', '/signup', { email, password: 'correct-horse-1', data: { team: 'a' } });
    expect(res.status).toBe(200);
    const user = (await res.json()) as Json;
    expect(hook.calls.map((c) => c.name)).toEqual(['before_user_created', 'after_user_created']);
    const [after] = hook.of('after_user_created');
    expect(after).toMatchObject({
      metadata: { name: 'after-user-created', uuid: expect.any(String), time: expect.any(String) },
      user: {
        id: user.id,
        aud: 'authenticated',
        email,
        user_metadata: { team: 'a' },
        app_metadata: { provider: 'email', providers: ['email'] },
      },
    });
    expect(after!.user.identities).toEqual([expect.objectContaining({ provider: 'email', user_id: user.id })]);
    expect(after!.user.created_at).toBeTruthy();
    expect(t.mails).toHaveLength(1); // the confirmation went out before the hook
    // As GoTrue's /signup: signing the unconfirmed address up again (past SMTP_MAX_FREQUENCY)
    // reports the same user again.
    await new Promise((r) => setTimeout(r, 1100));
    const again = await t.request('POST', '/signup', { email, password: 'correct-horse-2' });
    expect(again.status, await again.clone().text()).toBe(200);
    expect(hook.of('after_user_created').map((p) => p.user.id)).toEqual([user.id, user.id]);
    expect(hook.of('before_user_created')).toHaveLength(1);
  });

  test('phone signup is reported too (its code through the send SMS hook)', async () => {
    const hook = receiver();
    const t = await buildTestApp(
      db,
      { ...hookEnv('SEND_SMS', 'AFTER_USER_CREATED'), AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true' },
      { fetch: hook.fetch },
    );
    const phone = `1555${String(Date.now()).slice(-7)}`;
    const res = await t.request('POST', '/signup', { phone: `+${phone}`, password: 'correct-horse-1' });
    expect(res.status).toBe(200);
    const user = (await res.json()) as Json;
    expect(hook.calls.map((c) => c.name)).toEqual(['send_sms', 'after_user_created']);
    expect(hook.of('after_user_created')[0]!.user).toMatchObject({ id: user.id, phone });
  });

  test('as in GoTrue, an autoconfirmed signup (answered with a session) and POST /admin/users call neither hook of the pair', async () => {
    const hook = receiver();
    const t = await buildTestApp(
      db,
      { ...hookEnv('AFTER_USER_CREATED'), AUTHSVC_MAILER_AUTOCONFIRM: 'true' },
      { fetch: hook.fetch },
    );
    expect(
      (await t.request('POST', '/signup', { email: uniqueEmail('auto'), password: 'correct-horse-1' })).status,
    ).toBe(200);
    const both = receiver();
    const t2 = await buildTestApp(db, hookEnv('BEFORE_USER_CREATED', 'AFTER_USER_CREATED'), { fetch: both.fetch });
    const created = await t2.request(
      'POST',
      '/admin/users',
      { email: uniqueEmail('admin'), password: 'correct-horse-1' },
      admin(),
    );
    expect(created.status).toBe(200);
    expect(hook.calls).toHaveLength(0);
    expect(both.calls).toHaveLength(0);
  });

  test('signup: a refusal or failure answers GoTrue\'s 500 "Error invoking hook", and the user stays', async () => {
    const hook = receiver({ after_user_created: () => json({ error: { http_code: 409, message: 'CRM is down' } }) });
    const t = await buildTestApp(db, hookEnv('AFTER_USER_CREATED'), { fetch: hook.fetch });
    const email = uniqueEmail('after-fail');
    const res = await t.request('POST', '/signup', { email, password: 'correct-horse-1' }, V2024);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ code: 'unexpected_failure', message: 'Error invoking hook' });
    expect(await userByEmail(email)).toBeDefined();
    expect(t.mails).toHaveLength(1);
    const broken = receiver({ after_user_created: () => new Response('oops', { status: 500 }) });
    const t2 = await buildTestApp(db, hookEnv('AFTER_USER_CREATED'), { fetch: broken.fetch });
    const other = uniqueEmail('after-500');
    expect((await t2.request('POST', '/signup', { email: other, password: 'correct-horse-1' })).status).toBe(500);
    expect(await userByEmail(other)).toBeDefined();
  });

  test('anonymous sign-in: reported with the new user; a refusal is the answer, the user and its session stay', async () => {
    let refuse = false;
    const hook = receiver({
      after_user_created: () => (refuse ? json({ error: { http_code: 403, message: 'no more guests' } }) : noContent()),
    });
    const t = await buildTestApp(
      db,
      { ...hookEnv('AFTER_USER_CREATED'), AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' },
      { fetch: hook.fetch },
    );
    const ok = await t.request('POST', '/signup', {});
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as Json;
    expect(hook.of('after_user_created')[0]!.user).toMatchObject({ id: body.user.id, is_anonymous: true });
    refuse = true;
    const res = await t.request('POST', '/signup', {}, V2024);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ code: 'unknown', message: 'no more guests' });
    const refusedId = hook.of('after_user_created')[1]!.user.id as string;
    expect(await userById(refusedId)).toBeDefined();
    expect(await sessionsOf(refusedId)).toHaveLength(1);
  });

  test('invite and generate_link signup/invite report the new user; a refusal passes through and the user stays', async () => {
    let refuse = false;
    const hook = receiver({
      after_user_created: () =>
        refuse ? json({ error: { http_code: 422, message: 'seat limit reached' } }) : noContent(),
    });
    const t = await buildTestApp(db, hookEnv('AFTER_USER_CREATED'), { fetch: hook.fetch });
    const invited = uniqueEmail('inv');
    const inv = await t.request('POST', '/invite', { email: invited }, admin());
    expect(inv.status).toBe(200);
    expect(hook.of('after_user_created')[0]!.user).toMatchObject({
      id: ((await inv.json()) as Json).id,
      email: invited,
    });
    const linked = uniqueEmail('link');
    const link = await t.request(
      'POST',
      '/admin/generate_link',
      { type: 'signup', email: linked, password: 'correct-horse-1' },
      admin(),
    );
    expect(link.status).toBe(200);
    expect(hook.of('after_user_created')[1]!.user).toMatchObject({
      id: ((await link.json()) as Json).id,
      email: linked,
    });
    // A link for an existing user makes nobody: no call.
    expect(
      (await t.request('POST', '/admin/generate_link', { type: 'magiclink', email: linked }, admin())).status,
    ).toBe(200);
    expect(hook.of('after_user_created')).toHaveLength(2);
    // As GoTrue's /invite: a re-invite of the unconfirmed user reports it again.
    expect((await t.request('POST', '/invite', { email: invited }, admin())).status).toBe(200);
    expect(hook.of('after_user_created')[2]!.user.email).toBe(invited);

    refuse = true;
    const refused = uniqueEmail('inv-refused');
    const res = await t.request('POST', '/invite', { email: refused }, { ...admin(), ...V2024 });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ code: 'unknown', message: 'seat limit reached' });
    expect(await userByEmail(refused)).toBeDefined();
    const refusedLink = uniqueEmail('link-refused');
    expect(
      (await t.request('POST', '/admin/generate_link', { type: 'invite', email: refusedLink }, admin())).status,
    ).toBe(422);
    expect(await userByEmail(refusedLink)).toBeDefined();
  });

  test('Web3: a new wallet is reported once (not on its next sign-in); a refusal passes through, the account stays', async () => {
    let refuse = false;
    const hook = receiver({
      after_user_created: () =>
        refuse ? json({ error: { http_code: 403, message: 'wallet not on the list' } }) : noContent(),
    });
    const t = await buildTestApp(db, { ...hookEnv('AFTER_USER_CREATED'), ...WEB3 }, { fetch: hook.fetch });
    const { wallet, body } = web3Body();
    const first = await t.request('POST', '/token?grant_type=web3', body);
    expect(first.status).toBe(200);
    const user = ((await first.json()) as Json).user;
    expect(hook.of('after_user_created')).toEqual([
      expect.objectContaining({ user: expect.objectContaining({ id: user.id }) }),
    ]);
    expect(hook.of('after_user_created')[0]!.user.identities[0]).toMatchObject({
      provider: 'web3',
      id: `web3:solana:${wallet.address}`,
    });
    const again = signInMessage('Solana', { address: wallet.address, nonce: 'another-nonce-1' });
    expect(
      (
        await t.request('POST', '/token?grant_type=web3', {
          chain: 'solana',
          message: again,
          signature: wallet.sign(again),
        })
      ).status,
    ).toBe(200);
    expect(hook.of('after_user_created')).toHaveLength(1);

    refuse = true;
    const next = web3Body();
    const res = await t.request('POST', '/token?grant_type=web3', next.body, V2024);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ code: 'unknown', message: 'wallet not on the list' });
    const id = hook.of('after_user_created')[1]!.user.id as string;
    expect(await userById(id)).toBeDefined();
  });
});

describe('both hooks on an ID-token sign-up (the OAuth account path)', () => {
  let fake: FakeProvider;
  let key: SigningKey;
  beforeAll(async () => {
    key = await signingKey('k1');
    fake = await startFakeProvider();
    fake.routes.set('GET /.well-known/openid-configuration', () => ({
      body: {
        issuer: 'https://accounts.google.com',
        authorization_endpoint: 'x',
        token_endpoint: 'y',
        jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
      },
    }));
    fake.routes.set('GET /oauth2/v3/certs', () => ({ body: { keys: [key.jwk] } }));
  });
  afterAll(async () => {
    await fake?.close();
  });

  test('a new Google account is asked about and reported once; an after-hook refusal passes through and the account stays', async () => {
    let refuse = false;
    const hook = receiver({
      after_user_created: () => (refuse ? json({ error: { http_code: 451, message: 'region closed' } }) : noContent()),
    });
    const google = routedFetch(fake, ['accounts.google.com', 'www.googleapis.com']);
    const fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
      String(input).startsWith(BASE) ? hook.fetch(input, init) : google(input, init)) as typeof globalThis.fetch;
    const t = await buildTestApp(
      db,
      {
        ...hookEnv('BEFORE_USER_CREATED', 'AFTER_USER_CREATED'),
        GOTRUE_EXTERNAL_GOOGLE_ENABLED: 'true',
        GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID: 'google-web',
        GOTRUE_EXTERNAL_GOOGLE_SECRET: 's',
        GOTRUE_EXTERNAL_GOOGLE_REDIRECT_URI: 'https://auth.example.com/callback',
      },
      { fetch },
    );
    const claims = (sub: string) => ({
      iss: 'https://accounts.google.com',
      aud: 'google-web',
      sub,
      email: uniqueEmail('g'),
      email_verified: true,
    });
    const first = claims(`g-${Date.now()}`);
    const res = await t.request('POST', '/token?grant_type=id_token', {
      provider: 'google',
      id_token: await key.sign(first),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const user = ((await res.json()) as Json).user;
    expect(hook.calls.map((c) => c.name)).toEqual(['before_user_created', 'after_user_created']);
    expect(hook.of('before_user_created')[0]!.user).toMatchObject({
      email: first.email,
      app_metadata: { provider: 'google' },
    });
    expect(hook.of('after_user_created')[0]!.user).toMatchObject({
      id: user.id,
      identities: [expect.objectContaining({ provider: 'google', id: first.sub })],
    });
    // Signing in again makes nobody: neither hook.
    expect(
      (await t.request('POST', '/token?grant_type=id_token', { provider: 'google', id_token: await key.sign(first) }))
        .status,
    ).toBe(200);
    expect(hook.calls).toHaveLength(2);

    refuse = true;
    const second = claims(`g2-${Date.now()}`);
    const no = await t.request(
      'POST',
      '/token?grant_type=id_token',
      { provider: 'google', id_token: await key.sign(second) },
      V2024,
    );
    expect(no.status).toBe(451);
    expect(await no.json()).toEqual({ code: 'unknown', message: 'region closed' });
    expect(await userByEmail(second.email)).toBeDefined();
  });
});

describe('both hooks on an OAuth callback sign-up', () => {
  const gh = useGithubFake();
  const hookedFetch = (hook: ReturnType<typeof receiver>) =>
    ((input: RequestInfo | URL, init?: RequestInit) =>
      String(input).startsWith(BASE)
        ? hook.fetch(input, init)
        : globalThis.fetch(input, init)) as typeof globalThis.fetch;

  test('a new GitHub account is asked about and reported after the commit; signing in again calls neither', async () => {
    const hook = receiver();
    const t = await gh.app(hookEnv('BEFORE_USER_CREATED', 'AFTER_USER_CREATED'), { fetch: hookedFetch(hook) });
    const first = await signIn(t);
    expect(first.status).toBe(302);
    const token = fragmentOf(first.location).access_token!;
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${token}` })
    ).json()) as Json;
    expect(hook.calls.map((c) => c.name)).toEqual(['before_user_created', 'after_user_created']);
    expect(hook.of('after_user_created')[0]!.user).toMatchObject({
      id: me.id,
      email: gh.emails[0]!.email,
      app_metadata: { provider: 'github' },
    });
    const state = (
      await t.request('GET', '/authorize?provider=github&redirect_to=https://app.example.com/done')
    ).headers.get('location')!;
    const again = await callback(t, { code: 'abcd-code', state: new URL(state).searchParams.get('state')! });
    expect(fragmentOf(again.location).access_token).toBeTruthy();
    expect(hook.calls).toHaveLength(2);
  });

  test("an after-hook refusal is the redirect's error; the account stays", async () => {
    const hook = receiver({
      after_user_created: () => json({ error: { http_code: 403, message: 'not on the list' } }),
    });
    const t = await gh.app(hookEnv('AFTER_USER_CREATED'), { fetch: hookedFetch(hook) });
    const res = await signIn(t);
    expect(res.status).toBe(302);
    const errorParams = Object.fromEntries([
      ...new URLSearchParams(res.location.hash.slice(1)),
      ...res.location.searchParams,
    ]);
    expect(errorParams, res.location.toString()).toMatchObject({ error_description: 'not on the list' });
    const [row] = await gh.db.orm.select().from(gh.db.t.users).where(eq(gh.db.t.users.email, gh.emails[0]!.email));
    expect(row).toBeDefined();
  });
});

describe('after user created hook as an SQL function', () => {
  const ns = () => db.namespace;
  beforeAll(async () => {
    await db.withSession((s) =>
      s.exec(`
      create table if not exists "${ns()}".hook_profiles (user_id uuid primary key, email text, ip text);
      create or replace function "${ns()}".hook_after(event jsonb) returns jsonb language plpgsql as $$
      begin
        if event->'user'->>'email' like 'refused-%' then
          return '{"error": {"http_code": 400, "message": "refused by SQL"}}'::jsonb;
        end if;
        insert into "${ns()}".hook_profiles values ((event->'user'->>'id')::uuid, event->'user'->>'email', event->'metadata'->>'ip_address');
        return '{}'::jsonb;
      end $$;`),
    );
  });

  test('the function sees the saved user and its writes stay; its refusal is the answer and the user stays', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_HOOK_AFTER_USER_CREATED_ENABLED: 'true',
      AUTHSVC_HOOK_AFTER_USER_CREATED_URI: `pg-functions://postgres/${ns()}/hook_after`,
    });
    const email = uniqueEmail('sql-after');
    const res = await t.request(
      'POST',
      '/signup',
      { email, password: 'correct-horse-1' },
      { 'x-forwarded-for': '203.0.113.9' },
    );
    expect(res.status).toBe(200);
    const id = ((await res.json()) as Json).id as string;
    const rows = await db.withSession((s) =>
      s.exec(`select user_id::text as id, email, ip from "${ns()}".hook_profiles where user_id = '${id}'`),
    );
    expect(rows).toEqual([{ id, email, ip: '203.0.113.9' }]);
    const refused = `refused-${uniqueEmail('sql')}`;
    const no = await t.request('POST', '/signup', { email: refused, password: 'correct-horse-1' });
    expect(no.status).toBe(500);
    expect(((await no.json()) as Json).msg).toBe('Error invoking hook');
    expect(await userByEmail(refused)).toBeDefined();
  });
});

describe('before user created hook: a refusal writes nothing at any call site', () => {
  test('invite, generate_link signup/invite/magic link, /otp and magic link by email, phone signup and phone /otp', async () => {
    const hook = receiver({ before_user_created: () => json({ error: { http_code: 403, message: 'closed' } }) });
    const t = await buildTestApp(
      db,
      { ...hookEnv('BEFORE_USER_CREATED', 'SEND_SMS'), AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true' },
      { fetch: hook.fetch },
    );
    const refusedEmail = async (what: string, send: (email: string) => Promise<Response>) => {
      const email = uniqueEmail('refused');
      const res = await send(email);
      expect(res.status, what).toBe(403);
      expect(((await res.json()) as Json).msg, what).toBe('closed');
      expect(await userByEmail(email), what).toBeUndefined();
    };
    await refusedEmail('invite', (email) => t.request('POST', '/invite', { email }, admin()));
    for (const type of ['signup', 'invite', 'magiclink']) {
      await refusedEmail(`generate_link ${type}`, (email) =>
        t.request('POST', '/admin/generate_link', { type, email, password: 'correct-horse-1' }, admin()),
      );
    }
    await refusedEmail('/otp', (email) => t.request('POST', '/otp', { email }));
    await refusedEmail('/magiclink', (email) => t.request('POST', '/magiclink', { email }));
    for (const [what, path] of [
      ['phone signup', '/signup'],
      ['phone /otp', '/otp'],
    ]) {
      const phone = `1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
      const res = await t.request('POST', path!, { phone: `+${phone}`, password: 'correct-horse-1' });
      expect(res.status, what).toBe(403);
      const rows = await db.orm.select().from(db.t.users).where(eq(db.t.users.phone, phone));
      expect(rows, what).toHaveLength(0);
    }
    expect(hook.of('send_sms')).toHaveLength(0);
    expect(t.mails).toHaveLength(0);
  });
});

describe('before user created hook: Web3 sign-ups', () => {
  test('a new wallet is asked about with its would-be user; a refusal writes no user and no identity', async () => {
    let refuse = false;
    const hook = receiver({
      before_user_created: () => (refuse ? json({ error: { http_code: 403, message: 'no wallets' } }) : noContent()),
    });
    const t = await buildTestApp(db, { ...hookEnv('BEFORE_USER_CREATED'), ...WEB3 }, { fetch: hook.fetch });
    const ok = web3Body();
    expect((await t.request('POST', '/token?grant_type=web3', ok.body)).status).toBe(200);
    expect(hook.of('before_user_created')[0]).toMatchObject({
      metadata: { name: 'before-user-created' },
      user: {
        email: '',
        app_metadata: { provider: 'web3', providers: ['web3'] },
        user_metadata: { sub: `web3:solana:${ok.wallet.address}` },
      },
    });
    refuse = true;
    const no = web3Body();
    const res = await t.request('POST', '/token?grant_type=web3', no.body, V2024);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ code: 'unknown', message: 'no wallets' });
    const identities = await db.orm
      .select()
      .from(db.t.identities)
      .where(eq(db.t.identities.providerId, `web3:solana:${no.wallet.address}`));
    expect(identities).toHaveLength(0);
    const refusedId = hook.of('before_user_created')[1]!.user.id as string;
    expect(await userById(refusedId)).toBeUndefined();
  });
});

describe('metadata.ip_address', () => {
  test("every hook kind gets the client address from X-Forwarded-For, as GoTrue's GetIPAddress reads it", async () => {
    const hook = receiver({ custom_access_token: (p) => json({ claims: p.claims }) });
    const t = await buildTestApp(
      db,
      hookEnv(
        'BEFORE_USER_CREATED',
        'AFTER_USER_CREATED',
        'SEND_EMAIL',
        'CUSTOM_ACCESS_TOKEN',
        'PASSWORD_VERIFICATION_ATTEMPT',
      ),
      { fetch: hook.fetch },
    );
    const email = uniqueEmail('ip');
    const xff = { 'x-forwarded-for': 'not-an-ip, 198.51.100.7, 10.0.0.1' };
    expect((await t.request('POST', '/signup', { email, password: 'correct-horse-1' }, xff)).status).toBe(200);
    await db.orm.update(db.t.users).set({ emailConfirmedAt: new Date() }).where(eq(db.t.users.email, email));
    const signIn = await t.request('POST', '/token?grant_type=password', { email, password: 'correct-horse-1' }, xff);
    expect(signIn.status, await signIn.clone().text()).toBe(200);
    expect(hook.calls.map((c) => c.name)).toEqual([
      'before_user_created',
      'send_email',
      'after_user_created',
      'password_verification_attempt',
      'custom_access_token',
    ]);
    for (const c of hook.calls) expect(c.payload.metadata.ip_address, c.name).toBe('198.51.100.7');
  });

  test('with SECURITY_SB_FORWARDED_FOR_ENABLED the Sb-Forwarded-For address wins; without either header none is sent', async () => {
    const hook = receiver();
    const t = await buildTestApp(
      db,
      { ...hookEnv('AFTER_USER_CREATED'), AUTHSVC_SECURITY_SB_FORWARDED_FOR_ENABLED: 'true' },
      { fetch: hook.fetch },
    );
    const headers = { 'sb-forwarded-for': '2001:db8::5', 'x-forwarded-for': '198.51.100.7' };
    expect(
      (await t.request('POST', '/signup', { email: uniqueEmail('sbff'), password: 'correct-horse-1' }, headers)).status,
    ).toBe(200);
    expect(hook.calls[0]!.payload.metadata.ip_address).toBe('2001:db8::5');
    expect(
      (await t.request('POST', '/signup', { email: uniqueEmail('noip'), password: 'correct-horse-1' })).status,
    ).toBe(200);
    expect(hook.calls[1]!.payload.metadata).not.toHaveProperty('ip_address');
  });
});
