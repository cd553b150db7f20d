// GET /sessions and DELETE /sessions/{session_id} (routes/sessions.ts, issue 46): the user's own
// live sessions from real sign-ins, newest first and without tokens; ending one (refresh and
// access tokens stop at once), the current one (a local sign-out), another user's, the aal2 rule
// with a verified TOTP factor, and an OAuth client's token refused (review 2026-12-01 H1).
import { decodeJwt } from 'jose';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { bearer, buildTestApp, signUpConfirmed, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { authorizationCode, type RegisteredClient, tokenRequest } from '../helpers/oauth-client.ts';
import { verifiedTotp } from '../helpers/totp-factor.ts';

type Json = Record<string, any>;
const PASSWORD = 'correct-horse-1';
const FIELDS = [
  'aal',
  'created_at',
  'current',
  'factor_id',
  'id',
  'ip',
  'not_after',
  'refreshed_at',
  'updated_at',
  'user_agent',
];

let db: Database;
let t: TestApp;
/** Added to the real clock: sign-ins a second apart are ordered by creation. */
let clockOffsetMs = 0;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(
    db,
    {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
      AUTHSVC_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
      AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
    },
    { now: () => new Date(Date.now() + clockOffsetMs) },
  );
});
afterAll(async () => {
  await db?.close();
});

const later = () => {
  clockOffsetMs += 1000;
};
const sid = (s: Json) => decodeJwt(s.access_token as string).session_id as string;

async function signIn(email: string, userAgent: string): Promise<Json> {
  later();
  const res = await t.request(
    'POST',
    '/token?grant_type=password',
    { email, password: PASSWORD },
    { 'user-agent': userAgent },
  );
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
}

/** A user with `n` sessions from real sign-ins, oldest first. */
async function userWithSessions(n: number): Promise<{ email: string; userId: string; sessions: Json[] }> {
  const email = uniqueEmail('sessions');
  const { session } = await signUpConfirmed(t, email, PASSWORD);
  const sessions = [session];
  for (let i = 1; i < n; i++) sessions.push(await signIn(email, `agent-${i}`));
  return { email, userId: session.user.id as string, sessions };
}

const list = async (token: string, path = '/sessions') => {
  const res = await t.request('GET', path, undefined, bearer(token));
  expect(res.status).toBe(200);
  return ((await res.json()) as { sessions: Json[] }).sessions;
};
const end = (token: string, id: string) => t.request('DELETE', `/sessions/${id}`, undefined, bearer(token));
const alive = async (s: Json) => (await t.request('GET', '/user', undefined, bearer(s.access_token))).status === 200;
const sessionRow = async (id: string) => (await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.id, id)))[0];
async function logoutAudit(userId: string): Promise<Json[]> {
  const rows = await db.orm.select().from(db.t.auditLogEntries);
  return rows.map((r) => r.payload as Json).filter((p) => p.actor_id === userId && p.action === 'logout');
}

const sessionNotFound = { code: 404, error_code: 'session_not_found', msg: 'Session not found' };

describe('GET /sessions', () => {
  test('three sessions from sign-ins: newest first, the current one marked, every field, never a token', async () => {
    const { sessions } = await userWithSessions(3);
    const [a, b, c] = sessions as [Json, Json, Json];
    const listed = await list(b.access_token);
    expect(listed.map((s) => s.id)).toEqual([sid(c), sid(b), sid(a)]);
    expect(listed.map((s) => s.current)).toEqual([false, true, false]);
    for (const s of listed) expect(Object.keys(s).sort()).toEqual(FIELDS);
    expect(listed[0]).toMatchObject({ user_agent: 'agent-2', aal: 'aal1', factor_id: null, not_after: null });
    expect(new Date(listed[0]!.created_at).getTime()).toBeGreaterThan(new Date(listed[1]!.created_at).getTime());
    const text = JSON.stringify(listed);
    for (const s of sessions) {
      expect(text).not.toContain(s.refresh_token);
      expect(text).not.toContain(s.access_token);
    }
    expect(text).not.toMatch(/token|hmac/i);
    // Under Supabase's prefix too; from another session only the mark moves.
    expect((await list(a.access_token, '/auth/v1/sessions')).map((s) => s.current)).toEqual([false, false, true]);
    // Another user's sessions are not listed.
    const other = await userWithSessions(2);
    expect((await list(other.sessions[0]!.access_token)).map((s) => s.id)).toEqual(
      [...other.sessions].reverse().map(sid),
    );
    expect(listed.every((s) => s.id !== sid(other.sessions[0]!))).toBe(true);
  });

  test('a session past its not_after is not live, so not listed', async () => {
    const { sessions } = await userWithSessions(2);
    const [a, b] = sessions as [Json, Json];
    await db.orm
      .update(db.t.sessions)
      .set({ notAfter: new Date(Date.now() - 60_000) })
      .where(eq(db.t.sessions.id, sid(a)));
    expect((await list(b.access_token)).map((s) => s.id)).toEqual([sid(b)]);
  });

  test('SESSIONS_INACTIVITY_TIMEOUT and SESSIONS_SINGLE_PER_USER decide what lives, as for a refresh', async () => {
    let offset = 0;
    const limited = await buildTestApp(
      db,
      {
        AUTHSVC_MAILER_AUTOCONFIRM: 'true',
        AUTHSVC_SESSIONS_INACTIVITY_TIMEOUT: '10m',
        AUTHSVC_SESSIONS_SINGLE_PER_USER: 'true',
      },
      { now: () => new Date(Date.now() + offset) },
    );
    const listed = async (token: string) =>
      ((await (await limited.request('GET', '/sessions', undefined, bearer(token))).json()) as Json).sessions as Json[];
    const email = uniqueEmail('sessions-limits');
    const { session: a } = await signUpConfirmed(limited, email, PASSWORD);
    offset += 1000;
    const b = (await (
      await limited.request('POST', '/token?grant_type=password', { email, password: PASSWORD })
    ).json()) as Json;
    // One session a user: the newer sign-in is the one that lives.
    expect((await listed(a.access_token)).map((s) => s.id)).toEqual([sid(b)]);
    // Twenty minutes without a refresh: none lives, although the access token is still valid.
    offset += 20 * 60_000;
    expect(await listed(b.access_token)).toEqual([]);
    const refresh = await limited.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: b.refresh_token,
    });
    expect(((await refresh.json()) as Json).error_code).toBe('session_expired');
  });

  test('no token → 401 no_authorization', async () => {
    const res = await t.request('GET', '/sessions');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error_code: 'no_authorization' });
  });
});

describe('DELETE /sessions/{session_id}', () => {
  test("another session → 204: its refresh token fails as GoTrue's does, its access token is refused; audited", async () => {
    const { userId, sessions } = await userWithSessions(3);
    const [a, b, c] = sessions as [Json, Json, Json];
    const res = await end(a.access_token, sid(c));
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await sessionRow(sid(c))).toBeUndefined();
    const refresh = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: c.refresh_token });
    expect({ status: refresh.status, body: await refresh.json() }).toEqual({
      status: 400,
      body: {
        code: 400,
        error_code: 'refresh_token_not_found',
        msg: 'Invalid Refresh Token: Refresh Token Not Found',
      },
    });
    const refused = await t.request('GET', '/user', undefined, bearer(c.access_token));
    expect({ status: refused.status, body: await refused.json() }).toEqual({
      status: 403,
      body: { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' },
    });
    expect([await alive(a), await alive(b)]).toEqual([true, true]);
    expect((await list(a.access_token)).map((s) => s.id)).toEqual([sid(b), sid(a)]);
    expect(await logoutAudit(userId)).toEqual([
      expect.objectContaining({ log_type: 'account', traits: { session_id: sid(c) } }),
    ]);
  });

  test('the current session → 204, a local sign-out: later calls with its token are refused, audited as /logout', async () => {
    const { userId, sessions } = await userWithSessions(2);
    const [a, b] = sessions as [Json, Json];
    // gofrs/uuid forms are read as GoTrue reads ids.
    expect((await end(b.access_token, sid(b).replaceAll('-', '').toUpperCase())).status).toBe(204);
    const refused = await t.request('GET', '/user', undefined, bearer(b.access_token));
    expect({ status: refused.status, code: ((await refused.json()) as Json).error_code }).toEqual({
      status: 403,
      code: 'session_not_found',
    });
    expect(await alive(a)).toBe(true);
    const audit = await logoutAudit(userId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).not.toHaveProperty('traits');
  });

  test("another user's session, an unknown id → 404 session_not_found, nothing ended; a malformed id → 404 validation_failed", async () => {
    const mine = await userWithSessions(1);
    const theirs = await userWithSessions(1);
    const token = mine.sessions[0]!.access_token as string;
    for (const id of [sid(theirs.sessions[0]!), crypto.randomUUID()]) {
      const res = await end(token, id);
      expect({ status: res.status, body: await res.json() }).toEqual({ status: 404, body: sessionNotFound });
    }
    expect(await sessionRow(sid(theirs.sessions[0]!))).toBeDefined();
    expect(await alive(theirs.sessions[0]!)).toBe(true);
    const bad = await end(token, 'not-a-uuid');
    expect({ status: bad.status, body: await bad.json() }).toEqual({
      status: 404,
      body: { code: 404, error_code: 'validation_failed', msg: 'session_id must be an UUID' },
    });
    expect(await logoutAudit(mine.userId)).toEqual([]);
    expect(await logoutAudit(theirs.userId)).toEqual([]);
  });

  test('with a verified TOTP factor: ending another session needs aal2 (401 insufficient_aal), its own does not', async () => {
    const email = uniqueEmail('sessions-mfa');
    const { session } = await signUpConfirmed(t, email, PASSWORD);
    const { factorId, aal2 } = await verifiedTotp(t, session.access_token);
    const b = await signIn(email, 'agent-b');
    const c = await signIn(email, 'agent-c');
    const d = await signIn(email, 'agent-d');
    const refused = await end(b.access_token, sid(c));
    expect({ status: refused.status, body: await refused.json() }).toEqual({
      status: 401,
      body: {
        code: 401,
        error_code: 'insufficient_aal',
        msg: 'AAL2 session is required to end another session when MFA is enabled.',
      },
    });
    expect(await alive(c)).toBe(true);
    const listed = await list(aal2.access_token);
    expect(listed.find((s) => s.id === sid(aal2))).toMatchObject({ aal: 'aal2', current: true });
    expect(listed.find((s) => s.id === sid(aal2))!.factor_id).toBe(factorId);
    expect((await end(aal2.access_token, sid(c))).status).toBe(204);
    expect(await alive(c)).toBe(false);
    // An aal1 session may still end itself.
    expect((await end(d.access_token, sid(d))).status).toBe(204);
    expect([await alive(b), await alive(d), await alive(aal2)]).toEqual([true, false, true]);
  });
});

describe("H1 (security review 2026-12-01): an OAuth client's token", () => {
  test("is refused by GET and DELETE /sessions, and its session is not listed as the user's", async () => {
    const { sessions } = await userWithSessions(1);
    const user = sessions[0]!;
    const reg = await t.request('POST', '/oauth/clients/register', {
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      token_endpoint_auth_method: 'none',
      client_name: 'Sessions test client',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(reg.status).toBe(201);
    const client = (await reg.json()) as RegisteredClient;
    const { code, pkce } = await authorizationCode(t, client, user.access_token, { scope: 'email' });
    const tokenRes = await tokenRequest(t, client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: pkce.verifier,
    });
    expect(tokenRes.status).toBe(200);
    const clientToken = ((await tokenRes.json()) as Json).access_token as string;
    const refusedAsClient = {
      status: 403,
      body: {
        code: 403,
        error_code: 'oauth_client_token_not_allowed',
        msg: 'A token issued to an OAuth client cannot be used at this endpoint',
      },
    };
    for (const [method, path] of [
      ['GET', '/sessions'],
      ['DELETE', `/sessions/${sid(user)}`],
      ['DELETE', `/sessions/${decodeJwt(clientToken).session_id}`],
    ] as const) {
      const res = await t.request(method, path, undefined, bearer(clientToken));
      expect({ route: `${method} ${path}`, status: res.status, body: await res.json() }).toEqual({
        route: `${method} ${path}`,
        ...refusedAsClient,
      });
    }
    expect(await alive(user)).toBe(true);
    // The client's session is the grant's (/user/oauth/grants), not one the user lists or ends here.
    expect((await list(user.access_token)).map((s) => s.id)).toEqual([sid(user)]);
    const clientSession = decodeJwt(clientToken).session_id as string;
    expect((await end(user.access_token, clientSession)).status).toBe(404);
    expect(await sessionRow(clientSession)).toBeDefined();
  });
});
