// The admin user API through the published supabase-js admin client (auth.admin.*) and raw
// requests for headers, error cases and non-admin callers.
import type { SupabaseClient } from '@supabase/supabase-js';
import { eq, sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';
import type { Database } from '../../src/db/database.ts';
import { parseBanDuration } from '../../src/admin/ban-duration.ts';
import { parsePage, parseSort } from '../../src/admin/pagination.ts';
import { parseUuid } from '../../src/http/uuid.ts';
import { buildTestApp, signUpConfirmed, TEST_JWT_SECRET, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

type Json = Record<string, any>;

const HASHES: [string, string, string][] = [
  ['bcrypt', '$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga', 'allmine'],
  [
    'argon2id',
    '$argon2id$v=19$m=32,t=3,p=2$SFVpOWJ0eXhjRzVkdGN1RQ$RXnb8rh7LaDcn07xsssqqulZYXOM/EUCEFMVcAcyYVk',
    'test',
  ],
  [
    'Firebase scrypt',
    '$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==$42xEC+ixf3L2lw==$lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
    'user1password',
  ],
];

let db: Database;
let t: TestApp;
let serviceKey: string;
let sb: SupabaseClient;
let phoneCounter = 0;

async function roleToken(role: string, extra: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ role, ...extra })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

function client(key: string, headers: Record<string, string> = {}): SupabaseClient {
  return supabaseClientFor(t.app, key, { headers });
}

const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.request(method, path, body, { authorization: `Bearer ${serviceKey}`, ...headers });
const uniquePhone = () =>
  `+1555${String(Date.now() % 100000).padStart(5, '0')}${String(++phoneCounter).padStart(2, '0')}`;
const signIn = (body: Json) => t.request('POST', '/token?grant_type=password', body);

async function userRow(id: string) {
  const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, id));
  return row;
}

async function auditFor(userId: string, action: string): Promise<Json[]> {
  const rows = await db.orm.select().from(db.t.auditLogEntries);
  return rows.map((r) => r.payload as Json).filter((p) => p.action === action && p.traits?.user_id === userId);
}

beforeAll(async () => {
  db = await openTestDb();
  // Phone logins are off by default (as in GoTrue); admin create does not need them, sign-in does.
  // The production hasher: the stored hash's cost is asserted.
  t = await buildTestApp(db, { AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true' }, { hasher: createNodeHasher() });
  serviceKey = await roleToken('service_role');
  sb = client(serviceKey);
});
afterAll(async () => {
  await db?.close();
});

describe('admin access', () => {
  test('no token → 401, a user token → 403 not_admin, a bad signature → 403 bad_jwt, supabase_admin → 200', async () => {
    const none = await t.request('GET', '/admin/users');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error_code: 'no_authorization' });

    const autoconfirm = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { session } = await signUpConfirmed(autoconfirm);
    for (const [method, path] of [
      ['GET', '/admin/users'],
      ['POST', '/admin/users'],
      ['GET', `/admin/users/${session.user.id}`],
      ['PUT', `/admin/users/${session.user.id}`],
      ['DELETE', `/admin/users/${session.user.id}`],
    ] as const) {
      const res = await t.request(method, path, method === 'GET' ? undefined : { email: uniqueEmail() }, {
        authorization: `Bearer ${session.access_token}`,
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await res.json()).toMatchObject({ error_code: 'not_admin', msg: 'User not allowed' });
    }
    const viaClient = await client(session.access_token).auth.admin.listUsers();
    expect(viaClient.error?.status).toBe(403);
    expect(viaClient.error?.code).toBe('not_admin');

    const forged = await new SignJWT({ role: 'service_role' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('some-other-secret-of-at-least-32-chars!'));
    const bad = await t.request('GET', '/admin/users', undefined, { authorization: `Bearer ${forged}` });
    expect(bad.status).toBe(403);
    expect(await bad.json()).toMatchObject({ error_code: 'bad_jwt' });

    const ok = await t.request('GET', '/admin/users', undefined, {
      authorization: `Bearer ${await roleToken('supabase_admin')}`,
    });
    expect(ok.status).toBe(200);
    expect(await (await t.request('GET', '/admin/users')).status).toBe(401);
    expect(await userRow(session.user.id)).toBeDefined(); // the forbidden DELETE did nothing
  });
});

describe('create', () => {
  test('createUser: confirmed email user with metadata; signs in; audited as the admin', async () => {
    const email = uniqueEmail('Create');
    const { data, error } = await sb.auth.admin.createUser({
      email,
      password: 'pw-123456',
      email_confirm: true,
      user_metadata: { full_name: 'Ada Lovelace' },
      app_metadata: { plan: 'pro', provider: 'github', providers: ['github'] },
    });
    expect(error).toBeNull();
    const user = data.user!;
    expect(user).toMatchObject({
      email: email.toLowerCase(),
      phone: '',
      role: 'authenticated',
      aud: 'authenticated',
      is_anonymous: false,
      user_metadata: { full_name: 'Ada Lovelace', email_verified: true },
      app_metadata: { provider: 'email', providers: ['email'], plan: 'pro' },
    });
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.confirmed_at).toBeTruthy();
    expect(user.identities).toHaveLength(1);
    expect(user.identities![0]).toMatchObject({
      provider: 'email',
      id: user.id,
      user_id: user.id,
      email: email.toLowerCase(),
      identity_data: { sub: user.id, email: email.toLowerCase(), email_verified: true, phone_verified: false },
    });
    const login = await signIn({ email, password: 'pw-123456' });
    expect(login.status).toBe(200);
    const [entry] = await auditFor(user.id, 'user_signedup');
    expect(entry).toMatchObject({
      actor_id: '00000000-0000-0000-0000-000000000000',
      actor_username: 'service_role',
      log_type: 'team',
      traits: { user_id: user.id, user_email: email.toLowerCase(), user_phone: '' },
    });
  });

  test('role and aud on create; without a password a random one; an address taken in another audience → 422', async () => {
    const email = uniqueEmail();
    const res = await admin('POST', '/admin/users', { email, role: '  editor ', aud: 'other-aud' });
    expect(res.status).toBe(200);
    const user = (await res.json()) as Json;
    expect(user).toMatchObject({ role: 'editor', aud: 'other-aud' });
    expect(user.user_metadata).toEqual({});
    expect(user.email_confirmed_at).toBeUndefined();
    expect((await userRow(user.id))!.encryptedPassword).toMatch(/^\$2a\$10\$/);
    // Free in the default audience by GoTrue's per-audience check, but the unique index spans
    // audiences: GoTrue answers 500 there, authsvc 422 email_exists.
    const dup = await admin('POST', '/admin/users', { email });
    expect(dup.status).toBe(422);
    expect(await dup.json()).toMatchObject({ error_code: 'email_exists' });
  });

  test('phone user: digits only, phone identity, phone_confirm, signs in with the phone', async () => {
    const phone = uniquePhone();
    const { data, error } = await sb.auth.admin.createUser({ phone, password: 'phone-pass-1', phone_confirm: true });
    expect(error).toBeNull();
    const user = data.user!;
    expect(user).toMatchObject({
      phone: phone.slice(1),
      email: '',
      app_metadata: { provider: 'phone', providers: ['phone'] },
    });
    expect(user.phone_confirmed_at).toBeTruthy();
    expect(user.identities![0]).toMatchObject({
      provider: 'phone',
      identity_data: { sub: user.id, phone: phone.slice(1), phone_verified: true },
    });
    expect((await signIn({ phone, password: 'phone-pass-1' })).status).toBe(200);
    const dup = await admin('POST', '/admin/users', { phone: phone.replace('+1', '+1 ') });
    expect(dup.status).toBe(422);
    expect(await dup.json()).toMatchObject({
      error_code: 'phone_exists',
      msg: 'Phone number already registered by another user',
    });
    const both = await admin('POST', '/admin/users', { email: uniqueEmail(), phone: uniquePhone() });
    expect(((await both.json()) as Json).app_metadata).toEqual({ provider: 'email', providers: ['email', 'phone'] });
  });

  test('POST /admin/users/{user_id} and body id create with that id; taken, nil and malformed ids are refused', async () => {
    const id = crypto.randomUUID();
    const res = await admin('POST', `/admin/users/${id}`, { email: uniqueEmail(), email_confirm: true });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).id).toBe(id);
    const again = await admin('POST', `/admin/users/${id}`, { email: uniqueEmail() });
    expect(again.status).toBe(422);
    expect(await again.json()).toMatchObject({ error_code: 'user_already_exists' });

    const bodyId = crypto.randomUUID();
    const viaClient = await sb.auth.admin.createUser({ id: bodyId, email: uniqueEmail() });
    expect(viaClient.data.user?.id).toBe(bodyId);

    const cases: [string, unknown, number, string][] = [
      [`/admin/users/not-a-uuid`, { email: uniqueEmail() }, 404, 'user_id must be an UUID'],
      [`/admin/users/00000000-0000-0000-0000-000000000000`, { email: uniqueEmail() }, 400, 'ID cannot be a nil uuid'],
      ['/admin/users', { email: uniqueEmail(), id: 'nope' }, 400, 'ID must conform to the uuid v4 format'],
      [
        '/admin/users',
        { email: uniqueEmail(), id: '00000000-0000-0000-0000-000000000000' },
        400,
        'ID cannot be a nil uuid',
      ],
      [
        `/admin/users/${crypto.randomUUID()}`,
        { email: uniqueEmail(), id: crypto.randomUUID() },
        400,
        'The id in the body does not match the user_id in the path',
      ],
    ];
    for (const [path, body, status, msg] of cases) {
      const r = await admin('POST', path, body);
      expect(r.status, path).toBe(status);
      expect(await r.json()).toMatchObject({ error_code: 'validation_failed', msg });
    }
  });

  test('bad input: GoTrue status and code, nothing written', async () => {
    const email = uniqueEmail();
    const taken = (await sb.auth.admin.createUser({ email })).data.user!;
    const cases: [unknown, number, string, string?][] = [
      [{}, 400, 'validation_failed', 'Cannot create a user without either an email or phone'],
      [{ email: 'not-an-email' }, 400, 'validation_failed', 'Unable to validate email address: invalid format'],
      [{ phone: '+0123' }, 400, 'validation_failed', 'Invalid phone number format (E.164 required)'],
      [
        { email: email.toUpperCase() },
        422,
        'email_exists',
        'A user with this email address has already been registered',
      ],
      [
        { email: uniqueEmail(), password: 'x', password_hash: HASHES[0]![1] },
        400,
        'validation_failed',
        'Only a password or a password hash should be provided',
      ],
      [{ email: uniqueEmail(), password_hash: '$md5$abc' }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), password_hash: '$2a$10$short' }, 400, 'validation_failed'],
      [
        { email: uniqueEmail(), password: 'p'.repeat(73) },
        400,
        'validation_failed',
        'Password cannot be longer than 72 characters',
      ],
      [
        { email: uniqueEmail(), ban_duration: '1d' },
        400,
        'validation_failed',
        'invalid format for ban duration: time: unknown unit "d" in duration "1d"',
      ],
      [
        { email: uniqueEmail(), ban_duration: 'forever' },
        400,
        'validation_failed',
        'invalid format for ban duration: time: invalid duration "forever"',
      ],
      [{ email: uniqueEmail(), role: 'r'.repeat(256) }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), user_metadata: { a: 'nul\u0000' } }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), user_metadata: ['not', 'an', 'object'] }, 400, 'bad_json'],
      [{ email: uniqueEmail(), email_confirm: 'yes' }, 400, 'bad_json'],
      ['{"email": ', 400, 'bad_json'],
    ];
    const before = await db.orm.select({ n: sql<number>`count(*)::int` }).from(db.t.users);
    for (const [body, status, code, msg] of cases) {
      const r = await admin('POST', '/admin/users', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      const json = (await r.json()) as Json;
      expect(json.error_code, JSON.stringify(body)).toBe(code);
      if (msg) expect(json.msg).toBe(msg);
      expect(r.headers.get('x-sb-error-code')).toBe(code);
    }
    const after = await db.orm.select({ n: sql<number>`count(*)::int` }).from(db.t.users);
    expect(after[0]!.n).toBe(before[0]!.n);
    expect(await auditFor(taken.id, 'user_signedup')).toHaveLength(1);
    // The 2024 error shape applies here as everywhere.
    const v2024 = await admin('POST', '/admin/users', {}, { 'x-supabase-api-version': '2024-01-01' });
    expect(await v2024.json()).toEqual({
      code: 'validation_failed',
      message: 'Cannot create a user without either an email or phone',
    });
  });

  test.each(HASHES)(
    'an imported %s password_hash is stored as is and signs in with its password',
    async (_kind, hash, password) => {
      const email = uniqueEmail();
      const { data, error } = await sb.auth.admin.createUser({ email, password_hash: hash, email_confirm: true });
      expect(error).toBeNull();
      expect((await userRow(data.user!.id))!.encryptedPassword).toBe(hash);
      const ok = await signIn({ email, password });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Json).user.id).toBe(data.user!.id);
      const bad = await signIn({ email, password: `${password}!` });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ error_code: 'invalid_credentials' });
    },
  );
});

describe('list and get', () => {
  test('pages newest first with X-Total-Count and Link; sort, filter; supabase-js listUsers', async () => {
    const aud = `list-${crypto.randomUUID()}`;
    const audHeader = { 'x-jwt-aud': aud };
    const ids: string[] = [];
    for (const name of ['Grace Hopper', 'Alan Turing', 'Barbara Liskov']) {
      const res = await admin(
        'POST',
        '/admin/users',
        { email: uniqueEmail('list'), user_metadata: { full_name: name } },
        audHeader,
      );
      ids.push(((await res.json()) as Json).id);
    }
    const first = await admin('GET', '/admin/users?per_page=2', undefined, audHeader);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-total-count')).toBe('3');
    expect(first.headers.get('link')).toBe(
      '</admin/users?page=2&per_page=2>; rel="next", </admin/users?page=2&per_page=2>; rel="last"',
    );
    const body = (await first.json()) as Json;
    expect(body.aud).toBe(aud);
    expect(body.users.map((u: Json) => u.id)).toEqual([ids[2], ids[1]]);
    expect(body.users[0].identities).toBeNull();

    const second = await admin('GET', '/admin/users?page=2&per_page=2', undefined, audHeader);
    expect(((await second.json()) as Json).users.map((u: Json) => u.id)).toEqual([ids[0]]);
    expect(second.headers.get('link')).toBe('</admin/users?page=2&per_page=2>; rel="last"');

    const defaults = await admin('GET', '/auth/v1/admin/users', undefined, audHeader);
    expect(defaults.headers.get('link')).toBe('</auth/v1/admin/users?page=1>; rel="last"');
    expect(((await defaults.json()) as Json).users).toHaveLength(3);

    const asc = await admin('GET', '/admin/users?sort=created_at%20asc', undefined, audHeader);
    expect(((await asc.json()) as Json).users.map((u: Json) => u.id)).toEqual(ids);
    const filtered = await admin('GET', '/admin/users?filter=alan+t', undefined, audHeader);
    expect(((await filtered.json()) as Json).users.map((u: Json) => u.id)).toEqual([ids[1]]);
    expect(filtered.headers.get('x-total-count')).toBe('1');
    expect(filtered.headers.get('link')).toBe('</admin/users?filter=alan+t&page=1>; rel="last"');

    for (const [query, msg] of [
      ['page=abc', 'Bad Pagination Parameters: strconv.ParseUint: parsing "abc": invalid syntax'],
      ['per_page=-1', 'Bad Pagination Parameters: strconv.ParseUint: parsing "-1": invalid syntax'],
      ['per_page=0', 'Bad Pagination Parameters: per_page must be greater than 0'],
      ['sort=email', "Bad Sort Parameters: bad field for sort 'email'"],
      ['sort=created_at%20up', "Bad Sort Parameters: bad direction for sort 'up', only 'asc' and 'desc' allowed"],
    ]) {
      const r = await admin('GET', `/admin/users?${query}`);
      expect(r.status, query).toBe(400);
      expect(await r.json()).toMatchObject({ error_code: 'validation_failed', msg });
    }

    const listed = await client(serviceKey, audHeader).auth.admin.listUsers({ page: 1, perPage: 2 });
    expect(listed.error).toBeNull();
    expect(listed.data.users.map((u) => u.id)).toEqual([ids[2], ids[1]]);
    expect(listed.data).toMatchObject({ total: 3, nextPage: 2, lastPage: 2, aud });
  });

  test('exact look-ups: ?email= (case aside, never a substring) and ?phone= (normalised), in the list shape and headers', async () => {
    const aud = `exact-${crypto.randomUUID()}`;
    const audHeader = { 'x-jwt-aud': aud };
    const email = uniqueEmail('exact');
    const phone = uniquePhone();
    const user = (await (await admin('POST', '/admin/users', { email, phone }, audHeader)).json()) as Json;
    // Decoys: an address holding this one, and one stored in mixed case (as a GoTrue import may hold it).
    await admin('POST', '/admin/users', { email: `x${email}` }, audHeader);
    const mixed = (await (
      await admin('POST', '/admin/users', { email: uniqueEmail('mixed') }, audHeader)
    ).json()) as Json;
    const mixedStored = `Mixed.${mixed.email}`.replace('@example.com', '@Example.COM');
    await db.orm.update(db.t.users).set({ email: mixedStored }).where(eq(db.t.users.id, mixed.id));
    const look = async (query: string) => {
      const res = await admin('GET', `/admin/users?${query}`, undefined, audHeader);
      expect(res.status, query).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.aud).toBe(aud);
      return {
        ids: body.users.map((u: Json) => u.id),
        total: res.headers.get('x-total-count'),
        link: res.headers.get('link'),
      };
    };

    expect(await look(`email=${encodeURIComponent(email.toUpperCase())}`)).toEqual({
      ids: [user.id],
      total: '1',
      link: `</admin/users?email=${encodeURIComponent(email.toUpperCase())}&page=1>; rel="last"`,
    });
    expect((await look(`email=${encodeURIComponent(mixedStored.toLowerCase())}`)).ids).toEqual([mixed.id]);
    for (const form of [phone, phone.slice(1), phone.replace('+1555', '+1 555 '), phone.replace('+', '%2B')]) {
      const q = form.includes('%') ? `phone=${form}` : `phone=${encodeURIComponent(form)}`;
      expect((await look(q)).ids, form).toEqual([user.id]);
    }
    // `+` in a query string is a space: ?phone=+1555… finds the user too.
    expect((await look(`phone=${phone}`)).ids).toEqual([user.id]);

    // A substring, another address, another number: an empty list, total 0.
    for (const query of [
      `email=${encodeURIComponent(email.slice(0, 12))}`,
      `email=${encodeURIComponent(`nobody-${email}`)}`,
      `phone=${encodeURIComponent(phone.slice(0, -2))}`,
    ]) {
      const none = await look(query);
      expect({ ids: none.ids, total: none.total }).toEqual({ ids: [], total: '0' });
      expect(none.link).toMatch(/rel="last"$/);
    }
    // The request's audience only, as the list.
    const elsewhere = await admin('GET', `/admin/users?email=${encodeURIComponent(email)}`);
    expect(((await elsewhere.json()) as Json).users).toEqual([]);

    for (const [query, msg] of [
      [`filter=exact&email=${encodeURIComponent(email)}`, 'filter and email'],
      [`email=${encodeURIComponent(email)}&phone=${encodeURIComponent(phone)}`, 'email and phone'],
      [`filter=exact&phone=${encodeURIComponent(phone)}`, 'filter and phone'],
    ]) {
      const res = await admin('GET', `/admin/users?${query}`, undefined, audHeader);
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 400,
        body: {
          code: 400,
          error_code: 'validation_failed',
          msg: `Only one of filter, email and phone may be given, not ${msg}`,
        },
      });
    }
  });

  test('getUserById returns identities; unknown → 404 user_not_found; malformed id → 404 validation_failed', async () => {
    const created = (await sb.auth.admin.createUser({ email: uniqueEmail(), email_confirm: true })).data.user!;
    const got = await sb.auth.admin.getUserById(created.id);
    expect(got.error).toBeNull();
    expect(got.data.user).toMatchObject({ id: created.id, email: created.email });
    expect(got.data.user!.identities).toHaveLength(1);

    const missing = await admin('GET', `/admin/users/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error_code: 'user_not_found', msg: 'User not found' });
    const viaClient = await sb.auth.admin.getUserById(crypto.randomUUID());
    expect(viaClient.error?.status).toBe(404);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const bad = await admin(method, '/admin/users/12345', method === 'PUT' ? {} : undefined);
      expect(bad.status, method).toBe(404);
      expect(await bad.json()).toMatchObject({ error_code: 'validation_failed', msg: 'user_id must be an UUID' });
    }
    // gofrs/uuid forms are accepted, as by GoTrue.
    expect((await admin('GET', `/admin/users/${created.id.replaceAll('-', '').toUpperCase()}`)).status).toBe(200);
  });
});

describe('update', () => {
  test('metadata merge (null deletes), provider keys kept, role, audit with the new values', async () => {
    const created = (
      await sb.auth.admin.createUser({
        email: uniqueEmail(),
        user_metadata: { a: 1, b: 2 },
        app_metadata: { tier: 'free', x: 1 },
      })
    ).data.user!;
    const { data, error } = await sb.auth.admin.updateUserById(created.id, {
      user_metadata: { b: null, c: 3 },
      app_metadata: { tier: 'pro', x: null, provider: 'google', providers: null },
      role: 'editor',
    });
    expect(error).toBeNull();
    expect(data.user!.user_metadata).toEqual({ a: 1, c: 3 });
    expect(data.user!.app_metadata).toEqual({ provider: 'email', providers: ['email'], tier: 'pro' });
    expect(data.user!.role).toBe('editor');
    const [entry] = await auditFor(created.id, 'user_modified');
    expect(entry).toMatchObject({
      actor_username: 'service_role',
      log_type: 'user',
      traits: { user_email: created.email },
    });
  });

  test('email and phone change at once; identities follow; a taken email/phone → 422 and nothing changes', async () => {
    const email = uniqueEmail();
    const created = (
      await sb.auth.admin.createUser({
        email,
        password: 'pw-123456',
        email_confirm: true,
        user_metadata: { keep: true },
      })
    ).data.user!;
    const newEmail = uniqueEmail('moved');
    const phone = uniquePhone();
    const { data, error } = await sb.auth.admin.updateUserById(created.id, { email: newEmail, phone });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email: newEmail, phone: phone.slice(1) });
    expect(data.user!.app_metadata).toEqual({ provider: 'email', providers: ['email', 'phone'] });
    const byProvider = Object.fromEntries(data.user!.identities!.map((i) => [i.provider, i]));
    expect(byProvider.email!.identity_data).toMatchObject({ email: newEmail, email_verified: false });
    expect(byProvider.phone!.identity_data).toMatchObject({
      sub: created.id,
      phone: phone.slice(1),
      phone_verified: false,
    });
    expect((await signIn({ email: newEmail, password: 'pw-123456' })).status).toBe(200);
    expect((await signIn({ email, password: 'pw-123456' })).status).toBe(400);

    const other = (await sb.auth.admin.createUser({ email: uniqueEmail(), phone: uniquePhone() })).data.user!;
    const modifiedBefore = (await auditFor(created.id, 'user_modified')).length;
    const takenEmail = await admin('PUT', `/admin/users/${created.id}`, {
      email: other.email!.toUpperCase(),
      user_metadata: { keep: false },
    });
    expect(takenEmail.status).toBe(422);
    expect(await takenEmail.json()).toMatchObject({ error_code: 'email_exists' });
    const takenPhone = await admin('PUT', `/admin/users/${created.id}`, { phone: `+${other.phone}`, role: 'changed' });
    expect(takenPhone.status).toBe(422);
    expect(await takenPhone.json()).toMatchObject({ error_code: 'phone_exists' });
    const row = await userRow(created.id);
    expect(row).toMatchObject({
      email: newEmail,
      phone: phone.slice(1),
      rawUserMetaData: { keep: true, email_verified: true },
    });
    expect(row!.role).not.toBe('changed');
    expect(await auditFor(created.id, 'user_modified')).toHaveLength(modifiedBefore);
    // Its own current values are not "taken".
    expect((await admin('PUT', `/admin/users/${created.id}`, { email: newEmail })).status).toBe(200);
  });

  test('email_confirm on update confirms (user_metadata and identity); unknown user → 404', async () => {
    const created = (await sb.auth.admin.createUser({ email: uniqueEmail(), password: 'pw-123456' })).data.user!;
    expect((await signIn({ email: created.email, password: 'pw-123456' })).status).toBe(400);
    const { data } = await sb.auth.admin.updateUserById(created.id, { email_confirm: true });
    expect(data.user!.email_confirmed_at).toBeTruthy();
    expect(data.user!.user_metadata).toMatchObject({ email_verified: true });
    expect(data.user!.identities![0]!.identity_data).toMatchObject({ email_verified: true });
    expect((await signIn({ email: created.email, password: 'pw-123456' })).status).toBe(200);
    const missing = await admin('PUT', `/admin/users/${crypto.randomUUID()}`, { role: 'x' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error_code: 'user_not_found' });
  });

  test('a new password is strength-checked and signs the user out everywhere', async () => {
    const email = uniqueEmail();
    const created = (await sb.auth.admin.createUser({ email, password: 'old-password', email_confirm: true })).data
      .user!;
    const session = (await (await signIn({ email, password: 'old-password' })).json()) as Json;
    const weak = await admin('PUT', `/admin/users/${created.id}`, { password: '123' });
    expect(weak.status).toBe(422);
    expect(await weak.json()).toMatchObject({ error_code: 'weak_password', weak_password: { reasons: ['length'] } });
    const tooLong = await admin('PUT', `/admin/users/${created.id}`, { password: 'p'.repeat(73) });
    expect(tooLong.status).toBe(400);
    expect((await signIn({ email, password: 'old-password' })).status).toBe(200); // unchanged so far

    const { error } = await sb.auth.admin.updateUserById(created.id, { password: 'new-password' });
    expect(error).toBeNull();
    const refresh = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: session.refresh_token,
    });
    expect(refresh.status).toBe(400);
    const me = await t.request('GET', '/user', undefined, { authorization: `Bearer ${session.access_token}` });
    expect(me.status).toBe(403);
    expect(await me.json()).toMatchObject({ error_code: 'session_not_found' });
    expect((await signIn({ email, password: 'old-password' })).status).toBe(400);
    expect((await signIn({ email, password: 'new-password' })).status).toBe(200);
  });
});

describe('ban', () => {
  test('ban_duration bans sign-in, refresh and authenticated calls with GoTrue codes; "none" lifts it', async () => {
    const email = uniqueEmail();
    const created = (await sb.auth.admin.createUser({ email, password: 'pw-123456', email_confirm: true })).data.user!;
    const session = (await (await signIn({ email, password: 'pw-123456' })).json()) as Json;
    const auth = { authorization: `Bearer ${session.access_token}` };

    const before = Date.now();
    const { data, error } = await sb.auth.admin.updateUserById(created.id, { ban_duration: '1h30m' });
    expect(error).toBeNull();
    const until = Date.parse(data.user!.banned_until!);
    expect(until).toBeGreaterThanOrEqual(before + 90 * 60_000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 90 * 60_000 + 1000);

    const login = await signIn({ email, password: 'pw-123456' });
    expect(login.status).toBe(400);
    expect(await login.json()).toMatchObject({ error_code: 'user_banned', msg: 'User is banned' });
    const refresh = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: session.refresh_token,
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({
      error_code: 'user_banned',
      msg: 'Invalid Refresh Token: User Banned',
    });
    const me = await t.request('GET', '/user', undefined, auth);
    expect(me.status).toBe(403);
    expect(await me.json()).toMatchObject({ error_code: 'user_banned' });
    // Sessions are kept (GoTrue §11.6).
    expect(await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, created.id))).toHaveLength(1);

    const unban = await sb.auth.admin.updateUserById(created.id, { ban_duration: 'none' });
    expect(unban.error).toBeNull();
    expect(unban.data.user!.banned_until).toBeUndefined();
    expect((await signIn({ email, password: 'pw-123456' })).status).toBe(200);
    expect(
      (await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })).status,
    ).toBe(200);
    expect((await t.request('GET', '/user', undefined, auth)).status).toBe(200);
  });

  test('ban on create; "0" unbans; a negative duration bans no one', async () => {
    const email = uniqueEmail();
    const created = (
      await sb.auth.admin.createUser({ email, password: 'pw-123456', email_confirm: true, ban_duration: '24h' })
    ).data.user!;
    expect(created.banned_until).toBeTruthy();
    expect(await (await signIn({ email, password: 'pw-123456' })).json()).toMatchObject({ error_code: 'user_banned' });
    await sb.auth.admin.updateUserById(created.id, { ban_duration: '0' });
    expect((await userRow(created.id))!.bannedUntil).toBeNull();
    await sb.auth.admin.updateUserById(created.id, { ban_duration: '-5m' });
    expect((await signIn({ email, password: 'pw-123456' })).status).toBe(200);
    const bad = await admin('PUT', `/admin/users/${created.id}`, { ban_duration: '10 days' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error_code: 'validation_failed' });
  });

  test('parseBanDuration: Go units, none, overflow', () => {
    expect(parseBanDuration('none')).toBe(0);
    expect(parseBanDuration('300ms')).toBe(300);
    expect(parseBanDuration('1.5h')).toBe(5_400_000);
    expect(parseBanDuration('2h45m')).toBe(9_900_000);
    expect(parseBanDuration('1500us')).toBe(1.5);
    expect(parseBanDuration('1500µs')).toBe(1.5);
    expect(parseBanDuration('1000000ns')).toBe(1);
    expect(parseBanDuration('2562047h')).toBeGreaterThan(0);
    for (const bad of ['1d', '1', 'h', '.h', '1w', '2562048h', 'None'])
      expect(() => parseBanDuration(bad), bad).toThrow(/invalid format for ban duration/);
  });
});

describe('delete', () => {
  test('soft delete obfuscates contact data, empties metadata, removes sessions, keeps the row', async () => {
    const email = uniqueEmail();
    const phone = uniquePhone();
    const created = (
      await sb.auth.admin.createUser({
        email,
        phone,
        password: 'pw-123456',
        email_confirm: true,
        user_metadata: { full_name: 'Gone' },
        app_metadata: { x: 1 },
      })
    ).data.user!;
    const session = (await (await signIn({ email, password: 'pw-123456' })).json()) as Json;

    const { error } = await sb.auth.admin.deleteUser(created.id, true);
    expect(error).toBeNull();
    const row = (await userRow(created.id))!;
    expect(row.deletedAt).toBeTruthy();
    expect(row.email).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(row.phone).toMatch(/^[A-Za-z0-9_-]{15}$/);
    expect(row.encryptedPassword).toBeNull();
    expect(row.rawUserMetaData).toEqual({});
    expect(row.rawAppMetaData).toEqual({});
    const identities = await db.orm.select().from(db.t.identities).where(eq(db.t.identities.userId, created.id));
    expect(identities).toHaveLength(2);
    for (const i of identities) {
      expect(i.identityData).toEqual({});
      expect(i.providerId).not.toBe(created.id);
      expect(i.email).toBeNull();
    }
    expect(await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, created.id))).toHaveLength(0);
    expect(
      await db.orm.select().from(db.t.refreshTokens).where(eq(db.t.refreshTokens.userId, created.id)),
    ).toHaveLength(0);

    expect((await signIn({ email, password: 'pw-123456' })).status).toBe(400);
    expect(
      (await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })).status,
    ).toBe(400);
    const got = await sb.auth.admin.getUserById(created.id);
    expect(got.data.user!.user_metadata).toEqual({});
    expect(got.data.user!.app_metadata).toEqual({});
    expect(got.data.user!.deleted_at).toBeTruthy();
    // The address is free again; the id is not.
    expect((await sb.auth.admin.createUser({ email, phone })).error).toBeNull();
    expect((await admin('POST', `/admin/users/${created.id}`, { email: uniqueEmail() })).status).toBe(422);
    // Deleting again is a no-op, but answered and audited as GoTrue does.
    const again = await admin('DELETE', `/admin/users/${created.id}`, { should_soft_delete: true });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({});
    expect((await userRow(created.id))!.deletedAt).toEqual(row.deletedAt);
    expect(await auditFor(created.id, 'user_deleted')).toHaveLength(2);
  });

  test('M3 (security review 2026-12-01): soft delete removes every way back in (MFA factors with WebAuthn credentials, recovery codes, passkeys, ceremonies, flow states) and clears the confirmations', async () => {
    const email = uniqueEmail();
    const created = (
      await sb.auth.admin.createUser({
        email,
        phone: uniquePhone(),
        password: 'pw-123456',
        email_confirm: true,
        phone_confirm: true,
      })
    ).data.user!;
    expect(created.email_confirmed_at && created.phone_confirmed_at).toBeTruthy();
    const id = created.id;
    const now = new Date();
    // What the user's own requests would have left (written directly: this app has no MFA or passkeys on).
    await db.orm.insert(db.t.mfaFactors).values([
      {
        id: crypto.randomUUID(),
        userId: id,
        factorType: 'totp',
        status: 'verified',
        secret: 'JBSWY3DPEHPK3PXP',
        createdAt: now,
        updatedAt: now,
      },
      {
        id: crypto.randomUUID(),
        userId: id,
        factorType: 'webauthn',
        status: 'verified',
        webAuthnCredential: { id: 'AAAA', publicKey: 'AAAA' },
        createdAt: now,
        updatedAt: now,
      },
    ]);
    const setId = crypto.randomUUID();
    await db.orm
      .insert(db.t.mfaRecoveryCodeSets)
      .values({ id: setId, userId: id, friendlyName: 'Recovery codes', createdAt: now, updatedAt: now });
    await db.orm
      .insert(db.t.mfaRecoveryCodes)
      .values({ id: crypto.randomUUID(), setId, codeHash: 'x'.repeat(64), createdAt: now });
    await db.orm
      .insert(db.t.webauthnCredentials)
      .values({ userId: id, credentialId: crypto.getRandomValues(new Uint8Array(16)), publicKey: new Uint8Array(8) });
    await db.orm.insert(db.t.webauthnChallenges).values({
      userId: id,
      challengeType: 'registration',
      sessionData: {},
      expiresAt: new Date(now.getTime() + 60_000),
    });
    await db.orm.insert(db.t.flowState).values({
      id: crypto.randomUUID(),
      userId: id,
      authCode: crypto.randomUUID(),
      providerType: 'github',
      providerAccessToken: 'gho_secret',
      authenticationMethod: 'oauth',
      createdAt: now,
      updatedAt: now,
    });

    expect((await sb.auth.admin.deleteUser(id, true)).error).toBeNull();
    const row = (await userRow(id))!;
    expect({
      deleted: !!row.deletedAt,
      email: row.emailConfirmedAt,
      phone: row.phoneConfirmedAt,
      confirmed: row.confirmedAt,
    }).toEqual({ deleted: true, email: null, phone: null, confirmed: null });
    const got = (await sb.auth.admin.getUserById(id)).data.user!;
    expect([got.email_confirmed_at, got.phone_confirmed_at, got.factors ?? []]).toEqual([undefined, undefined, []]);
    for (const table of [
      db.t.mfaFactors,
      db.t.mfaRecoveryCodeSets,
      db.t.webauthnCredentials,
      db.t.webauthnChallenges,
      db.t.flowState,
    ]) {
      expect(await db.orm.select().from(table).where(eq(table.userId, id))).toEqual([]);
    }
    expect(await db.orm.select().from(db.t.mfaRecoveryCodes).where(eq(db.t.mfaRecoveryCodes.setId, setId))).toEqual([]);
  });

  test('hard delete removes the user, identities, sessions and refresh tokens; audit entry stays', async () => {
    const email = uniqueEmail();
    const created = (await sb.auth.admin.createUser({ email, password: 'pw-123456', email_confirm: true })).data.user!;
    const session = (await (await signIn({ email, password: 'pw-123456' })).json()) as Json;
    // Session-less tokens from a GoTrue database (nil instance) or written without an instance.
    const now = new Date();
    await db.orm.insert(db.t.refreshTokens).values([
      {
        instanceId: '00000000-0000-0000-0000-000000000000',
        token: `legacy-a-${created.id}`,
        userId: created.id,
        revoked: false,
        createdAt: now,
        updatedAt: now,
      },
      {
        instanceId: null,
        token: `legacy-b-${created.id}`,
        userId: created.id,
        revoked: false,
        createdAt: now,
        updatedAt: now,
      },
    ]);
    const res = await admin('DELETE', `/admin/users/${created.id}`); // no body at all
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(await userRow(created.id)).toBeUndefined();
    expect(await db.orm.select().from(db.t.identities).where(eq(db.t.identities.userId, created.id))).toHaveLength(0);
    expect(await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, created.id))).toHaveLength(0);
    expect(
      await db.orm.select().from(db.t.refreshTokens).where(eq(db.t.refreshTokens.userId, created.id)),
    ).toHaveLength(0);
    expect(
      (await t.request('GET', '/user', undefined, { authorization: `Bearer ${session.access_token}` })).status,
    ).toBe(403);
    const [entry] = await auditFor(created.id, 'user_deleted');
    expect(entry).toMatchObject({
      actor_username: 'service_role',
      log_type: 'team',
      traits: { user_email: email.toLowerCase() },
    });

    const viaClient = (await sb.auth.admin.createUser({ email: uniqueEmail() })).data.user!;
    expect((await sb.auth.admin.deleteUser(viaClient.id)).error).toBeNull();
    expect(await userRow(viaClient.id)).toBeUndefined();
    const missing = await sb.auth.admin.deleteUser(viaClient.id);
    expect(missing.error?.status).toBe(404);
    const badBody = await admin('DELETE', `/admin/users/${created.id}`, '{nope');
    expect(badBody.status).toBe(400);
  });
});

describe('helpers', () => {
  test('parseUuid accepts the gofrs forms only', () => {
    const id = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';
    for (const form of [id, id.toUpperCase(), `{${id}}`, `urn:uuid:${id}`, id.replaceAll('-', '')])
      expect(parseUuid(form), form).toBe(id);
    for (const bad of ['', 'x', `${id}0`, `{${id}`, id.replaceAll('-', '').slice(1), `urn:uuid:{${id}}`])
      expect(parseUuid(bad), bad).toBeNull();
  });

  test('parsePage and parseSort', () => {
    expect(parsePage(undefined, '')).toEqual({ page: 1n, perPage: 50n });
    expect(parsePage('0', '18446744073709551615')).toEqual({ page: 0n, perPage: 18446744073709551615n });
    expect(() => parsePage('18446744073709551616', undefined)).toThrow(/value out of range/);
    expect(parseSort([])).toBe(false);
    expect(parseSort(['created_at'])).toBe(false);
    expect(parseSort(['created_at ASC'])).toBe(true);
    expect(() => parseSort([''])).toThrow("bad field for sort ''");
  });
});
