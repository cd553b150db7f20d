// GET /admin/audit: what the actions write to audit_log_entries, read back through the API with
// GoTrue's paging headers and query scopes.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, TEST_JWT_SECRET, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
const NIL = '00000000-0000-0000-0000-000000000000';
let db: Database;
let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  db = await openTestDb();
  // A clock that moves at least 1 ms per reading, so entries of separate requests never tie.
  let last = 0;
  const now = () => {
    last = Math.max(Date.now(), last + 1);
    return new Date(last);
  };
  t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }, { now });
  const token = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
  admin = { authorization: `Bearer ${token}` };
});
afterAll(async () => {
  await db?.close();
});

async function audit(query: string, headers = admin): Promise<{ res: Response; entries: Json[] }> {
  const res = await t.request('GET', `/admin/audit${query}`, undefined, headers);
  const body = (await res.json()) as Json;
  return { res, entries: res.status === 200 ? (body as Json[]) : [body] };
}

const q = (scope: string, text: string) => `query=${encodeURIComponent(`${scope}:${text}`)}`;

async function ok(res: Response, label: string): Promise<Json> {
  const body = (await res.json()) as Json;
  expect(res.status, `${label}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

/** signup (autoconfirm), password sign-in, refresh, logout, and an admin recovery link, all from one IP. */
async function lifeOfAUser(email: string, data: Json = {}): Promise<void> {
  const ip = { 'x-forwarded-for': '203.0.113.7' };
  await ok(await t.request('POST', '/signup', { email, password: 'secret-pw-1', data }, ip), 'signup');
  const login = await ok(
    await t.request('POST', '/token?grant_type=password', { email, password: 'secret-pw-1' }, ip),
    'login',
  );
  const refreshed = await ok(
    await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: login.refresh_token }, ip),
    'refresh',
  );
  const out = await t.request('POST', '/logout', undefined, {
    ...ip,
    authorization: `Bearer ${refreshed.access_token}`,
  });
  expect(out.status).toBe(204);
  await ok(
    await t.request('POST', '/admin/generate_link', { type: 'recovery', email }, { ...admin, ...ip }),
    'generate_link',
  );
}

describe('GET /admin/audit', () => {
  test("each action is recorded with its action, log_type, actor and IP, newest first, in GoTrue's shape", async () => {
    const email = uniqueEmail('audit-life');
    await lifeOfAUser(email);
    const { res, entries } = await audit(`?${q('author', email)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe(String(entries.length));
    const actions = entries.map((e) => e.payload.action);
    // Newest first: the admin's recovery link is the last thing that happened, the signup the first.
    expect(actions[0]).toBe('user_recovery_requested');
    expect(actions.slice(-2).sort()).toEqual(['login', 'user_signedup']);
    expect([...actions].sort()).toEqual(
      [
        'login',
        'login',
        'logout',
        'token_refreshed',
        'token_revoked',
        'user_recovery_requested',
        'user_signedup',
      ].sort(),
    );
    const times = entries.map((e) => Date.parse(e.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const userId = entries[0]!.payload.actor_id;
    expect(userId).toMatch(/^[0-9a-f-]{36}$/);
    const logType: Record<string, string> = {
      login: 'account',
      logout: 'account',
      user_signedup: 'team',
      token_refreshed: 'token',
      token_revoked: 'token',
      user_recovery_requested: 'user',
    };
    for (const e of entries) {
      expect(Object.keys(e)).toEqual(['id', 'payload', 'created_at', 'ip_address']);
      expect(e.ip_address).toBe('203.0.113.7');
      expect(e.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(e.payload).toMatchObject({
        actor_id: userId,
        actor_username: email,
        actor_via_sso: false,
        log_type: logType[e.payload.action],
      });
      // Go writes map keys sorted.
      expect(Object.keys(e.payload)).toEqual([...Object.keys(e.payload)].sort());
    }
    expect(entries.find((e) => e.payload.action === 'login')!.payload.traits).toEqual({ provider: 'email' });
  });

  test('generate_link writes the admin pseudo-user (nil id, role as username) for invites and created users', async () => {
    const invited = uniqueEmail('audit-invite');
    const created = uniqueEmail('audit-created');
    await ok(await t.request('POST', '/admin/generate_link', { type: 'invite', email: invited }, admin), 'invite');
    await ok(
      await t.request(
        'POST',
        '/admin/generate_link',
        { type: 'signup', email: created, password: 'secret-pw-1' },
        admin,
      ),
      'signup',
    );
    const { entries } = await audit(`?${q('author', 'service_role')}&per_page=1000`);
    const invite = entries.find((e) => e.payload.traits?.user_email === invited)!;
    expect(invite.payload).toEqual({
      action: 'user_invited',
      actor_id: NIL,
      actor_username: 'service_role',
      actor_via_sso: false,
      log_type: 'team',
      traits: { user_email: invited, user_id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
    const signup = entries.find((e) => e.payload.traits?.user_email === created)!;
    expect(signup.payload).toMatchObject({
      action: 'user_signedup',
      actor_id: NIL,
      actor_username: 'service_role',
      log_type: 'team',
      traits: { provider: 'email' },
    });
  });

  test('paging: per_page and page, X-Total-Count and Link (next, last) with the query kept', async () => {
    const email = uniqueEmail('audit-page');
    await lifeOfAUser(email);
    const query = q('author', email);
    const { entries: all } = await audit(`?${query}`);
    expect(all).toHaveLength(7);
    const pages: Json[][] = [];
    for (let page = 1; page <= 4; page++) {
      const { res, entries } = await audit(`?${query}&per_page=3&page=${page}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-total-count')).toBe('7');
      const encoded = `query=author%3A${encodeURIComponent(email).replaceAll('%20', '+')}`;
      const last = `</admin/audit?page=3&per_page=3&${encoded}>; rel="last"`;
      const next = `</admin/audit?page=${page + 1}&per_page=3&${encoded}>; rel="next", `;
      expect(res.headers.get('link')).toBe(page < 3 ? next + last : last);
      pages.push(entries);
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1, 0]);
    expect(pages.flat().map((e) => e.id)).toEqual(all.map((e) => e.id));
    // Under /auth/v1 the links keep the prefix the client used.
    const prefixed = await t.request('GET', `/auth/v1/admin/audit?${query}&per_page=5`, undefined, admin);
    expect(prefixed.headers.get('link')).toMatch(/^<\/auth\/v1\/admin\/audit\?page=2&per_page=5&query=/);
    // Defaults: page 1, 50 a page.
    const { res: dflt } = await audit(`?${q('author', 'no-such-author-anywhere')}`);
    expect(dflt.headers.get('x-total-count')).toBe('0');
    expect(dflt.headers.get('link')).toBe(`</admin/audit?page=0&query=author%3Ano-such-author-anywhere>; rel="last"`);
    // Page 0 reads as page 1; a page far past the end is empty; per_page 0 is refused.
    const { entries: zero } = await audit(`?${query}&per_page=3&page=0`);
    expect(zero.map((e) => e.id)).toEqual(pages[0]!.map((e) => e.id));
    const { res: far, entries: farBody } = await audit(`?${query}&page=18446744073709551615`);
    expect(far.status).toBe(200);
    expect(farBody).toEqual([]);
    expect((await audit('?per_page=0')).res.status).toBe(400);
    const { res: bad, entries: badBody } = await audit('?page=two');
    expect(bad.status).toBe(400);
    expect(badBody[0]).toMatchObject({
      error_code: 'validation_failed',
      msg: 'Bad Pagination Parameters: strconv.ParseUint: parsing "two": invalid syntax',
    });
  });

  test('scopes: author (username or full name), action, type; ILIKE substring', async () => {
    const email = uniqueEmail('audit-scope');
    await lifeOfAUser(email, { full_name: 'Zebulon Quartermaine' });
    const { entries: byName } = await audit(`?${q('author', 'ZEBULON quarter')}`);
    expect(byName.length).toBe(7);
    expect(
      byName.every((e) => e.payload.actor_name === 'Zebulon Quartermaine' && e.payload.actor_username === email),
    ).toBe(true);
    const { entries: byMail } = await audit(`?${q('author', email.slice(0, 20).toUpperCase())}`);
    expect(byMail.map((e) => e.id).sort()).toEqual(byName.map((e) => e.id).sort());

    const { entries: refreshed } = await audit(`?${q('action', 'token_ref')}&per_page=1000`);
    expect(refreshed.length).toBeGreaterThan(0);
    expect(refreshed.every((e) => e.payload.action === 'token_refreshed')).toBe(true);
    expect(refreshed.some((e) => e.payload.actor_username === email)).toBe(true);

    const { entries: tokens } = await audit(`?${q('type', 'TOKEN')}&per_page=1000`);
    expect(new Set(tokens.map((e) => e.payload.action))).toEqual(new Set(['token_refreshed', 'token_revoked']));
    const { entries: team } = await audit(`?${q('type', 'team')}&per_page=1000`);
    expect(team.length).toBeGreaterThan(0);
    expect(team.every((e) => e.payload.log_type === 'team')).toBe(true);

    // An empty text after the scope is no filter (GoTrue).
    const { res: everything } = await audit(`?query=action:&per_page=1`);
    const { res: unfiltered } = await audit('?per_page=1');
    expect(everything.headers.get('x-total-count')).toBe(unfiltered.headers.get('x-total-count'));
  });

  test('a bad scope is 400; non-admins 403; no token 401', async () => {
    for (const query of ['foo:bar', 'author', 'log_type:team']) {
      const { res, entries } = await audit(`?query=${encodeURIComponent(query)}`);
      expect(res.status).toBe(400);
      expect(entries[0]).toMatchObject({
        code: 400,
        error_code: 'validation_failed',
        msg: `Invalid query scope: ${query}`,
      });
    }
    const email = uniqueEmail('audit-user');
    const signup = await ok(await t.request('POST', '/signup', { email, password: 'secret-pw-1' }), 'signup');
    const asUser = await audit('', { authorization: `Bearer ${signup.access_token}` });
    expect(asUser.res.status).toBe(403);
    expect(asUser.entries[0]).toMatchObject({ error_code: 'not_admin' });
    expect((await audit('', {})).res.status).toBe(401);
  });
});
