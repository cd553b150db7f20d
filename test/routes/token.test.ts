// POST /token: the password grant and refresh-token rotation / reuse detection.
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Database } from '../../src/db/database.ts';
import { auditRecord } from '../../src/db/audit.ts';
import { base32 } from '../../src/crypto/encoding.ts';
import { type TestApp, buildTestApp, signUpConfirmed, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;

const AUTOCONFIRM = { AUTHSVC_MAILER_AUTOCONFIRM: 'true' };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

/** A clock the test moves by hand (deps.now). Starts at the real time so issued JWTs verify. */
function manualClock(start = Date.now()) {
  let ms = start;
  return {
    now: () => new Date(ms),
    advance(seconds: number) {
      ms += seconds * 1000;
    },
    get ms() {
      return ms;
    },
  };
}

const login = (t: TestApp, email: string, password: string, headers?: Record<string, string>) =>
  t.request('POST', '/token?grant_type=password', { email, password }, headers);
const refresh = (t: TestApp, token: string) =>
  t.request('POST', '/token?grant_type=refresh_token', { refresh_token: token });

async function expectError(res: Response, status: number, code: string, msg?: string): Promise<Json> {
  const body = (await res.json()) as Json;
  expect({ status: res.status, code: body.error_code }).toEqual({ status, code });
  expect(body.code).toBe(status);
  if (msg !== undefined) expect(body.msg).toBe(msg);
  expect(res.headers.get('x-sb-error-code')).toBe(code);
  return body;
}

async function tokensOfSession(sessionId: string) {
  const r = db.t.refreshTokens;
  return db.orm.select().from(r).where(eq(r.sessionId, sessionId)).orderBy(r.id);
}

async function liveTokensOfSession(sessionId: string) {
  const r = db.t.refreshTokens;
  return db.orm
    .select()
    .from(r)
    .where(and(eq(r.sessionId, sessionId), eq(r.revoked, false)));
}

describe('POST /token?grant_type=password', () => {
  test("returns a session with GoTrue's body and sb-auth-* headers, and records the sign-in", async () => {
    const clock = manualClock();
    const t = await buildTestApp(db, AUTOCONFIRM, { now: clock.now });
    const { email, password, session: signup } = await signUpConfirmed(t);
    clock.advance(60);
    const res = await login(t, email, password);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Json;
    expect(Object.keys(body)).toEqual([
      'access_token',
      'token_type',
      'expires_in',
      'expires_at',
      'refresh_token',
      'user',
      'weak_password',
    ]);
    expect(body.token_type).toBe('bearer');
    expect(body.expires_in).toBe(3600);
    expect(body.expires_at).toBe(Math.floor(clock.ms / 1000) + 3600);
    expect(body.weak_password).toBeNull();
    expect(body.refresh_token).toMatch(/^[a-z2-7]{32}$/);
    expect(body.refresh_token).not.toBe(signup.refresh_token);
    expect(body.user).toMatchObject({ id: signup.user.id, email });
    expect(new Date(body.user.last_sign_in_at).getTime()).toBe(clock.ms);

    const claims = decodeJwt(body.access_token);
    expect(claims.sub).toBe(body.user.id);
    expect(claims.exp).toBe(body.expires_at);
    expect(claims.session_id).not.toBe(decodeJwt(signup.access_token).session_id);

    expect(res.headers.get('sb-auth-user-id')).toBe(body.user.id);
    expect(res.headers.get('sb-auth-session-id')).toBe(claims.session_id);
    expect(res.headers.get('sb-auth-refresh-token-prefix')).toBe(body.refresh_token.slice(0, 5));

    const sessionId = claims.session_id as string;
    const [userRow] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, body.user.id));
    expect(userRow!.lastSignInAt!.getTime()).toBe(clock.ms);
    const sessions = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.id, sessionId));
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ userId: body.user.id, aal: 'aal1' });
    const amr = await db.orm.select().from(db.t.mfaAmrClaims).where(eq(db.t.mfaAmrClaims.sessionId, sessionId));
    expect(amr.map((a) => a.authenticationMethod)).toEqual(['password']);
    expect(claims.amr).toEqual([{ method: 'password', timestamp: Math.floor(clock.ms / 1000) }]);
  });

  test('stores the refresh token only as its SHA-256 hash', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { email, password } = await signUpConfirmed(t);
    const body = (await (await login(t, email, password)).json()) as Json;
    const sessionId = decodeJwt(body.access_token).session_id as string;
    const rows = await tokensOfSession(sessionId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      token: sha256(body.refresh_token),
      parent: null,
      revoked: false,
      userId: body.user.id,
    });
    const all = await db.orm.select().from(db.t.refreshTokens);
    for (const r of all) {
      expect(r.token).not.toBe(body.refresh_token);
      expect(r.parent).not.toBe(body.refresh_token);
    }
  });

  test('reports a correct password that fails a stricter current policy in weak_password', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { email, password } = await signUpConfirmed(t, uniqueEmail(), 'correct-horse-1');
    const strict = await buildTestApp(db, {
      AUTHSVC_PASSWORD_MIN_LENGTH: '20',
      AUTHSVC_PASSWORD_REQUIRED_CHARACTERS: 'abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    });
    const res = await login(strict, email, password);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.access_token).toBeTruthy();
    expect(body.weak_password).toEqual({
      message:
        'Password should be at least 20 characters. Password should contain at least one character of each: abcdefghijklmnopqrstuvwxyz, ABCDEFGHIJKLMNOPQRSTUVWXYZ.',
      reasons: ['length', 'characters'],
    });
    const lengthOnly = await buildTestApp(db, { AUTHSVC_PASSWORD_MIN_LENGTH: '16' });
    const body2 = (await (await login(lengthOnly, email, password)).json()) as Json;
    expect(body2.weak_password).toEqual({ message: 'Password should be at least 16 characters.', reasons: ['length'] });
  });

  test('JWT_EXP sets expires_in, expires_at and the exp claim', async () => {
    const clock = manualClock();
    const t = await buildTestApp(db, { ...AUTOCONFIRM, AUTHSVC_JWT_EXP: '120' }, { now: clock.now });
    const { email, password } = await signUpConfirmed(t);
    const body = (await (await login(t, email, password)).json()) as Json;
    const nowS = Math.floor(clock.ms / 1000);
    expect(body.expires_in).toBe(120);
    expect(body.expires_at).toBe(nowS + 120);
    const claims = decodeJwt(body.access_token);
    expect(claims.iat).toBe(nowS);
    expect(claims.exp).toBe(nowS + 120);
  });

  test('a wrong password and an unknown user both answer invalid_credentials', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { email } = await signUpConfirmed(t);
    await expectError(await login(t, email, 'wrong-password'), 400, 'invalid_credentials', 'Invalid login credentials');
    await expectError(
      await login(t, uniqueEmail('nobody'), 'whatever-pw'),
      400,
      'invalid_credentials',
      'Invalid login credentials',
    );
    await expectError(await login(t, email, ''), 400, 'invalid_credentials', 'Invalid login credentials');
    // The 2024-01-01 error shape carries the same code.
    const v2024 = await login(t, email, 'wrong-password', { 'X-Supabase-Api-Version': '2024-01-01' });
    expect(v2024.status).toBe(400);
    expect(await v2024.json()).toEqual({ code: 'invalid_credentials', message: 'Invalid login credentials' });
  });

  test('a user without a password cannot sign in with one', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { email, password, session } = await signUpConfirmed(t);
    await db.orm.update(db.t.users).set({ encryptedPassword: '' }).where(eq(db.t.users.id, session.user.id));
    await expectError(await login(t, email, password), 400, 'invalid_credentials', 'Invalid login credentials');
  });

  test('an unconfirmed email answers email_not_confirmed only for the right password', async () => {
    const t = await buildTestApp(db);
    const email = uniqueEmail();
    expect((await t.request('POST', '/signup', { email, password: 'secret-pw-1' })).status).toBe(200);
    await expectError(await login(t, email, 'wrong-pw-1'), 400, 'invalid_credentials');
    await expectError(await login(t, email, 'secret-pw-1'), 400, 'email_not_confirmed', 'Email not confirmed');
  });

  test('both email and phone, or neither, is a validation error', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    await expectError(
      await t.request('POST', '/token?grant_type=password', {
        email: uniqueEmail(),
        phone: '+15555550100',
        password: 'secret-pw-1',
      }),
      400,
      'validation_failed',
      'Only an email address or phone number should be provided on login.',
    );
    await expectError(
      await t.request('POST', '/token?grant_type=password', { password: 'secret-pw-1' }),
      400,
      'validation_failed',
      'missing email or phone',
    );
    await expectError(
      await t.request('POST', '/token?grant_type=password', { email: '', phone: null, password: 'x' }),
      400,
      'validation_failed',
      'missing email or phone',
    );
  });

  test('a disabled provider answers 422', async () => {
    const t = await buildTestApp(db, { ...AUTOCONFIRM });
    const { email, password } = await signUpConfirmed(t);
    const off = await buildTestApp(db, { AUTHSVC_EXTERNAL_EMAIL_ENABLED: 'false' });
    await expectError(await login(off, email, password), 422, 'email_provider_disabled', 'Email logins are disabled');
    // Phone is off by default.
    await expectError(
      await t.request('POST', '/token?grant_type=password', { phone: '+15555550100', password: 'secret-pw-1' }),
      422,
      'phone_provider_disabled',
      'Phone logins are disabled',
    );
  });

  test('an unsupported or missing grant_type answers invalid_credentials "unsupported_grant_type"', async () => {
    const t = await buildTestApp(db);
    await expectError(
      await t.request('POST', '/token?grant_type=client_credentials', {}),
      400,
      'invalid_credentials',
      'unsupported_grant_type',
    );
    await expectError(
      await t.request('POST', '/token', { email: uniqueEmail(), password: 'x' }),
      400,
      'invalid_credentials',
      'unsupported_grant_type',
    );
  });

  test('malformed JSON answers bad_json', async () => {
    const t = await buildTestApp(db);
    const body = await expectError(await t.request('POST', '/token?grant_type=password', '{"email":'), 400, 'bad_json');
    expect(body.msg).toMatch(/^Could not parse request body as JSON: /);
    await expectError(await t.request('POST', '/token?grant_type=password', '[]'), 400, 'bad_json');
    await expectError(await t.request('POST', '/token?grant_type=refresh_token', ''), 400, 'bad_json');
  });

  test('a banned user is refused before the password is checked; an expired ban no longer applies', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { email, password, session } = await signUpConfirmed(t);
    const users = db.t.users;
    await db.orm
      .update(users)
      .set({ bannedUntil: new Date(Date.now() + 3_600_000) })
      .where(eq(users.id, session.user.id));
    await expectError(await login(t, email, password), 400, 'user_banned', 'User is banned');
    await expectError(await login(t, email, 'wrong-password'), 400, 'user_banned', 'User is banned');
    const before = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, session.user.id));
    expect(before).toHaveLength(1); // only the signup session: nothing was created

    await db.orm
      .update(users)
      .set({ bannedUntil: new Date(Date.now() - 1000) })
      .where(eq(users.id, session.user.id));
    expect((await login(t, email, password)).status).toBe(200);
  });
});

describe('client addresses', () => {
  test('a malformed X-Forwarded-For entry is skipped, never stored (Postgres inet would refuse it) and never a 500', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { email, password } = await signUpConfirmed(t);
    for (const xff of ['1:2:3', '::::', '1::2::3', 'fe80::1%eth0, 2001:db8::7']) {
      const res = await t.request(
        'POST',
        '/token?grant_type=password',
        { email, password },
        { 'X-Forwarded-For': xff },
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      const [session] = await db.orm
        .select()
        .from(db.t.sessions)
        .where(eq(db.t.sessions.id, decodeJwt(body.access_token).session_id as string));
      expect(session!.ip).toBe(xff.includes(',') ? '2001:db8::7' : null);
      const again = await t.request(
        'POST',
        '/token?grant_type=refresh_token',
        { refresh_token: body.refresh_token },
        { 'X-Forwarded-For': xff },
      );
      expect(again.status).toBe(200);
    }
  });
});

describe('POST /token?grant_type=refresh_token', () => {
  test("rotates: the old token is revoked, a child is stored with its parent's hash, same session and amr", async () => {
    const clock = manualClock();
    const t = await buildTestApp(db, AUTOCONFIRM, { now: clock.now });
    const { email, password } = await signUpConfirmed(t);
    const first = (await (await login(t, email, password)).json()) as Json;
    const sessionId = decodeJwt(first.access_token).session_id as string;
    const loginAt = Math.floor(clock.ms / 1000);

    clock.advance(30);
    const res = await t.request(
      'POST',
      '/token?grant_type=refresh_token',
      { refresh_token: first.refresh_token },
      { 'User-Agent': 'refresher/2.0', 'X-Forwarded-For': '203.0.113.9' },
    );
    expect(res.status).toBe(200);
    const second = (await res.json()) as Json;
    expect(Object.keys(second)).toEqual([
      'access_token',
      'token_type',
      'expires_in',
      'expires_at',
      'refresh_token',
      'user',
    ]);
    expect(second.refresh_token).toMatch(/^[a-z2-7]{32}$/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.expires_at).toBe(Math.floor(clock.ms / 1000) + 3600);
    expect(second.user.id).toBe(first.user.id);
    expect(res.headers.get('sb-auth-session-id')).toBe(sessionId);
    expect(res.headers.get('sb-auth-user-id')).toBe(first.user.id);
    expect(res.headers.get('sb-auth-refresh-token-prefix')).toBe(second.refresh_token.slice(0, 5));
    const claims = decodeJwt(second.access_token);
    expect(claims.session_id).toBe(sessionId);
    // Refresh adds no AMR entry: the sign-in method and time are kept.
    expect(claims.amr).toEqual([{ method: 'password', timestamp: loginAt }]);

    const rows = await tokensOfSession(sessionId);
    expect(rows.map((r) => ({ token: r.token, parent: r.parent, revoked: r.revoked }))).toEqual([
      { token: sha256(first.refresh_token), parent: null, revoked: true },
      { token: sha256(second.refresh_token), parent: sha256(first.refresh_token), revoked: false },
    ]);
    const [session] = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.id, sessionId));
    expect(session!.refreshedAt!.getTime()).toBe(clock.ms);
    expect(session!.updatedAt!.getTime()).toBe(clock.ms);
    expect(session!.createdAt!.getTime()).toBe(clock.ms - 30_000);
    expect({ ua: session!.userAgent, ip: session!.ip }).toEqual({ ua: 'refresher/2.0', ip: '203.0.113.9' });
    const audit = await db.orm.select().from(db.t.auditLogEntries);
    const ofRefresh = audit.filter((e) => e.createdAt!.getTime() === clock.ms && e.payload!.actor_id === first.user.id);
    expect(
      ofRefresh
        .map((e) => ({ action: e.payload!.action, ip: e.ipAddress }))
        .sort((a, b) => String(a.action).localeCompare(String(b.action))),
    ).toEqual([
      { action: 'token_refreshed', ip: '203.0.113.9' },
      { action: 'token_revoked', ip: '203.0.113.9' },
    ]);

    // The child works in turn, and the new access token is accepted.
    const third = await refresh(t, second.refresh_token);
    expect(third.status).toBe(200);
    const user = await t.request('GET', '/user', undefined, { Authorization: `Bearer ${second.access_token}` });
    expect(user.status).toBe(200);
    expect(((await user.json()) as Json).id).toBe(first.user.id);
  });

  test('a session past not_after answers session_expired, and the token stays as it was', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    await db.orm
      .update(db.t.sessions)
      .set({ notAfter: new Date(Date.now() - 1000) })
      .where(eq(db.t.sessions.id, sessionId));
    await expectError(
      await refresh(t, session.refresh_token),
      400,
      'session_expired',
      'Invalid Refresh Token: Session Expired',
    );
    expect((await tokensOfSession(sessionId)).map((r) => r.revoked)).toEqual([false]);
  });

  test('SESSIONS_TIMEBOX: refreshes work until the session is that old, then session_expired and nothing changes', async () => {
    const clock = manualClock();
    const t = await buildTestApp(db, { ...AUTOCONFIRM, AUTHSVC_SESSIONS_TIMEBOX: '1h' }, { now: clock.now });
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    clock.advance(3599);
    const ok = await refresh(t, session.refresh_token);
    expect(ok.status).toBe(200);
    const child = ((await ok.json()) as Json).refresh_token as string;
    clock.advance(2);
    await expectError(await refresh(t, child), 400, 'session_expired', 'Invalid Refresh Token: Session Expired');
    expect((await tokensOfSession(sessionId)).map((r) => r.revoked)).toEqual([true, false]);
  });

  test('SESSIONS_INACTIVITY_TIMEOUT counts from the last refresh (the sign-in before the first), with the fast path and the transactional one', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SESSIONS_INACTIVITY_TIMEOUT: '30m' },
      { now: clock.now },
    );
    // Never refreshed: the sign-in is the last activity.
    const idle = await signUpConfirmed(t);
    clock.advance(30 * 60 + 1);
    await expectError(
      await refresh(t, idle.session.refresh_token),
      400,
      'session_expired',
      'Invalid Refresh Token: Session Expired (Inactivity)',
    );

    for (const legacy of [false, true]) {
      const { session } = await signUpConfirmed(t);
      const sessionId = decodeJwt(session.access_token).session_id as string;
      if (legacy) {
        // A per-session key keeps the refresh off the one-statement path.
        const key = Buffer.from('k'.repeat(32)).toString('base64url');
        await db.orm.update(db.t.sessions).set({ refreshTokenHmacKey: key }).where(eq(db.t.sessions.id, sessionId));
      }
      let token = session.refresh_token as string;
      for (const wait of [20 * 60, 29 * 60, 30 * 60]) {
        clock.advance(wait);
        const res = await refresh(t, token);
        expect(res.status).toBe(200);
        token = ((await res.json()) as Json).refresh_token as string;
      }
      clock.advance(30 * 60 + 1);
      await expectError(
        await refresh(t, token),
        400,
        'session_expired',
        'Invalid Refresh Token: Session Expired (Inactivity)',
      );
      expect((await liveTokensOfSession(sessionId)).map((r) => r.token)).toEqual([sha256(token)]);
    }
  });

  test('SESSIONS_SINGLE_PER_USER: only the most recently active session refreshes; SESSIONS_TAGS keeps one per tag', async () => {
    const clock = manualClock();
    const t = await buildTestApp(db, { ...AUTOCONFIRM, AUTHSVC_SESSIONS_SINGLE_PER_USER: 'true' }, { now: clock.now });
    const { email, password, session: a } = await signUpConfirmed(t);
    clock.advance(5);
    const b = (await (await login(t, email, password)).json()) as Json;
    clock.advance(5);
    const newer = 'Invalid Refresh Token: Session Expired (Revoked by Newer Login)';
    await expectError(await refresh(t, a.refresh_token), 400, 'session_expired', newer);
    const sessionA = decodeJwt(a.access_token).session_id as string;
    expect((await liveTokensOfSession(sessionA)).map((r) => r.token)).toEqual([sha256(a.refresh_token)]);
    const b2 = await refresh(t, b.refresh_token);
    expect(b2.status).toBe(200);
    clock.advance(5);
    expect((await refresh(t, ((await b2.json()) as Json).refresh_token)).status).toBe(200);
    await expectError(await refresh(t, a.refresh_token), 400, 'session_expired', newer);

    // With tags, a session only competes with sessions of its own tag (untagged: the first tag).
    const tagged = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SESSIONS_SINGLE_PER_USER: 'true', AUTHSVC_SESSIONS_TAGS: 'web,mobile' },
      { now: clock.now },
    );
    await db.orm.update(db.t.sessions).set({ tag: 'mobile' }).where(eq(db.t.sessions.id, sessionA));
    expect((await refresh(tagged, a.refresh_token)).status).toBe(200);
  });

  test('a session from an earlier build (its own HMAC key) still rotates, and a retry gets the same child', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' },
      { now: clock.now },
    );
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    const [fresh] = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.id, sessionId));
    expect(fresh!.refreshTokenHmacKey).toBeNull();
    const legacyKey = Buffer.from('k'.repeat(32)).toString('base64url');
    await db.orm.update(db.t.sessions).set({ refreshTokenHmacKey: legacyKey }).where(eq(db.t.sessions.id, sessionId));
    const a = session.refresh_token as string;
    const first = await refresh(t, a);
    expect(first.status).toBe(200);
    const b = ((await first.json()) as Json).refresh_token as string;
    // The child is the HMAC of the parent under the session's own key, as before.
    const expected = createHmac('sha256', Buffer.from(legacyKey, 'base64url')).update(a).digest().subarray(0, 20);
    expect(b).toBe(base32(expected));
    clock.advance(2);
    const retry = await refresh(t, a);
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as Json).refresh_token).toBe(b);
    expect((await refresh(t, b)).status).toBe(200);
  });

  test("audit entries written by the rotation statement equal auditRecord's payloads", async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const shapes: [Record<string, unknown>, string | null][] = [
      [{}, null],
      [{ full_name: 'Ada Lovelace' }, null],
      [{ full_name: '' }, null],
      [{ full_name: 42 }, null],
      [{}, '15551234567'],
    ];
    for (const [data, phone] of shapes) {
      const { session } = await signUpConfirmed(t);
      const userId = session.user.id as string;
      await db.orm
        .update(db.t.users)
        .set({ rawUserMetaData: { ...session.user.user_metadata, ...data }, ...(phone ? { phone } : {}) })
        .where(eq(db.t.users.id, userId));
      const res = await t.request(
        'POST',
        '/token?grant_type=refresh_token',
        { refresh_token: session.refresh_token },
        { 'X-Forwarded-For': '198.51.100.4' },
      );
      expect(res.status).toBe(200);
      const [user] = await db.orm.select().from(db.t.users).where(eq(db.t.users.id, userId));
      const entries = (await db.orm.select().from(db.t.auditLogEntries)).filter(
        (e) => e.payload!.actor_id === userId && e.payload!.log_type === 'token',
      );
      expect(entries.map((e) => e.payload).sort((x, y) => String(x!.action).localeCompare(String(y!.action)))).toEqual(
        (['token_refreshed', 'token_revoked'] as const).map(
          (action) => auditRecord({ actor: user!, action, now: new Date() }).payload,
        ),
      );
      expect(entries.map((e) => e.ipAddress)).toEqual(['198.51.100.4', '198.51.100.4']);
    }
  });

  test('an unknown token answers refresh_token_not_found; a malformed one validation_failed', async () => {
    const t = await buildTestApp(db);
    await expectError(
      await refresh(t, 'abcdefghijklmnopqrstuvwxyz234567'),
      400,
      'refresh_token_not_found',
      'Invalid Refresh Token: Refresh Token Not Found',
    );
    await expectError(await refresh(t, 'not a token!'), 400, 'validation_failed');
    await expectError(await refresh(t, 'short'), 400, 'validation_failed');
    await expectError(await refresh(t, 'x'.repeat(500)), 400, 'validation_failed');
    await expectError(
      await t.request('POST', '/token?grant_type=refresh_token', {}),
      400,
      'validation_failed',
      'Refresh token is not valid',
    );
  });

  test('reuse outside the interval is malicious: 400 and the whole family is revoked', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' },
      { now: clock.now },
    );
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    const a = session.refresh_token as string;
    const b = ((await (await refresh(t, a)).json()) as Json).refresh_token as string;

    clock.advance(11);
    await expectError(await refresh(t, a), 400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
    expect(await liveTokensOfSession(sessionId)).toEqual([]);
    // The current child is dead too, and reusing it is reported the same way.
    await expectError(await refresh(t, b), 400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
    // The session row itself stays (GoTrue keeps it); no new token appeared.
    expect(await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.id, sessionId))).toHaveLength(1);
    expect(await tokensOfSession(sessionId)).toHaveLength(2);
  });

  test('with no reuse interval even an instant retry of the predecessor is reuse', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '0' },
      { now: clock.now },
    );
    const { session } = await signUpConfirmed(t);
    const a = session.refresh_token as string;
    const b = ((await (await refresh(t, a)).json()) as Json).refresh_token as string;
    // Same instant, interval 0: there is no window in which a retry is allowed.
    await expectError(await refresh(t, a), 400, 'refresh_token_already_used');
    await expectError(await refresh(t, b), 400, 'refresh_token_already_used');
  });

  test('inside the interval the immediate predecessor gets the same child back and is not malicious', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' },
      { now: clock.now },
    );
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    const a = session.refresh_token as string;
    const b = ((await (await refresh(t, a)).json()) as Json).refresh_token as string;

    clock.advance(5);
    const retry = await refresh(t, a);
    expect(retry.status).toBe(200);
    const again = (await retry.json()) as Json;
    expect(again.refresh_token).toBe(b);
    expect(decodeJwt(again.access_token).session_id).toBe(sessionId);
    expect(retry.headers.get('sb-auth-refresh-token-prefix')).toBe(b.slice(0, 5));
    // No new row, the child is still live, and it rotates normally.
    expect(await tokensOfSession(sessionId)).toHaveLength(2);
    expect((await liveTokensOfSession(sessionId)).map((r) => r.token)).toEqual([sha256(b)]);
    const c = await refresh(t, b);
    expect(c.status).toBe(200);
    expect(((await c.json()) as Json).refresh_token).not.toBe(b);
  });

  test('the interval is measured from the revocation: just past it the predecessor is malicious', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' },
      { now: clock.now },
    );
    const { session } = await signUpConfirmed(t);
    const a = session.refresh_token as string;
    const b = ((await (await refresh(t, a)).json()) as Json).refresh_token as string;
    clock.advance(9);
    expect((await refresh(t, a)).status).toBe(200);
    clock.advance(2); // 11 s after A was revoked (the retry did not extend the window)
    await expectError(await refresh(t, a), 400, 'refresh_token_already_used');
    await expectError(await refresh(t, b), 400, 'refresh_token_already_used');
  });

  test('an older token (grand-parent) inside the interval is malicious', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '60' },
      { now: clock.now },
    );
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    const a = session.refresh_token as string;
    clock.advance(1);
    const b = ((await (await refresh(t, a)).json()) as Json).refresh_token as string;
    clock.advance(1);
    const c = ((await (await refresh(t, b)).json()) as Json).refresh_token as string;
    clock.advance(1);
    await expectError(await refresh(t, a), 400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
    expect(await liveTokensOfSession(sessionId)).toEqual([]);
    await expectError(await refresh(t, c), 400, 'refresh_token_already_used');
    // And B, formerly the immediate predecessor, no longer gets anything either.
    await expectError(await refresh(t, b), 400, 'refresh_token_already_used');
  });

  test('with rotation disabled, reuse fails but the family survives', async () => {
    const clock = manualClock();
    const t = await buildTestApp(
      db,
      { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED: 'false' },
      { now: clock.now },
    );
    const { session } = await signUpConfirmed(t);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    const a = session.refresh_token as string;
    const b = ((await (await refresh(t, a)).json()) as Json).refresh_token as string;
    clock.advance(60);
    const reuse = await refresh(t, a);
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as Json).error_code).toBe('refresh_token_already_used');
    expect((await liveTokensOfSession(sessionId)).map((r) => r.token)).toEqual([sha256(b)]);
    expect((await refresh(t, b)).status).toBe(200);
  });

  test('after logout the token is gone: refresh_token_not_found', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { session } = await signUpConfirmed(t);
    const out = await t.request('POST', '/logout', undefined, { Authorization: `Bearer ${session.access_token}` });
    expect(out.status).toBe(204);
    const sessionId = decodeJwt(session.access_token).session_id as string;
    expect(await tokensOfSession(sessionId)).toEqual([]);
    await expectError(
      await refresh(t, session.refresh_token),
      400,
      'refresh_token_not_found',
      'Invalid Refresh Token: Refresh Token Not Found',
    );
  });

  test('M3 (security review 2026-12-01): a session of a soft-deleted user does not refresh, on the one-statement path, the transactional one and inside the reuse interval', async () => {
    // The review's session came from a passkey sign-in after the soft delete (refused now); any
    // session that outlived a delete (a path that missed the check, a row written by other
    // software) is stood in for by setting deleted_at on a signed-in user.
    const t = await buildTestApp(db, { ...AUTOCONFIRM, AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const notFound = 'Invalid Refresh Token: Refresh Token Not Found';
    for (const path of ['statement', 'transaction', 'retry'] as const) {
      const { session } = await signUpConfirmed(t);
      const sessionId = decodeJwt(session.access_token).session_id as string;
      const token = session.refresh_token as string;
      if (path === 'transaction') {
        // A per-session key keeps the refresh off the one-statement path.
        await db.orm
          .update(db.t.sessions)
          .set({ refreshTokenHmacKey: Buffer.from('k'.repeat(32)).toString('base64url') })
          .where(eq(db.t.sessions.id, sessionId));
      }
      if (path === 'retry') expect((await refresh(t, token)).status).toBe(200); // the retry of `token` would get its child back
      await db.orm.update(db.t.users).set({ deletedAt: new Date() }).where(eq(db.t.users.id, session.user.id));
      const live = (await liveTokensOfSession(sessionId)).map((r) => r.token);
      await expectError(await refresh(t, token), 400, 'refresh_token_not_found', notFound);
      // Nothing rotated, nothing revoked.
      expect(
        (await liveTokensOfSession(sessionId)).map((r) => r.token),
        path,
      ).toEqual(live);
    }
  });

  test('a banned user cannot refresh', async () => {
    const t = await buildTestApp(db, AUTOCONFIRM);
    const { session } = await signUpConfirmed(t);
    await db.orm
      .update(db.t.users)
      .set({ bannedUntil: new Date(Date.now() + 3_600_000) })
      .where(eq(db.t.users.id, session.user.id));
    await expectError(
      await refresh(t, session.refresh_token),
      400,
      'user_banned',
      'Invalid Refresh Token: User Banned',
    );
    // Nothing rotated.
    const sessionId = decodeJwt(session.access_token).session_id as string;
    expect((await liveTokensOfSession(sessionId)).map((r) => r.token)).toEqual([sha256(session.refresh_token)]);
  });
});
