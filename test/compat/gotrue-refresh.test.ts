// Issue 31: refresh tokens GoTrue issued keep working after the move (legacy tokens in clear and
// signed version-2 tokens), their first refresh answers an authsvc child, and reuse follows
// authsvc's rules. Rows are written in GoTrue's shape (test/helpers/gotrue-rows.ts).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodeJwt } from 'jose';
import { encryptString } from '../../src/crypto/encrypted-string.ts';
import { legacyRefreshDigest } from '../../src/crypto/gotrue-refresh-token.ts';
import type { Database } from '../../src/db/database.ts';
import { hashLegacyRefreshTokens } from '../../src/db/gotrue-tokens.ts';
import { type TestApp, buildTestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import {
  exec,
  insertGoTrueSession,
  insertGoTrueUser,
  insertLegacyChain,
  insertLegacyToken,
  legacyToken,
  lit,
  signedToken,
  signingKey,
} from '../helpers/gotrue-rows.ts';

type Json = Record<string, any>;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const AUTHSVC_TOKEN = /^[a-z2-7]{32}$/;

let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

function manualClock(start = Date.now()) {
  let ms = start;
  return {
    now: () => new Date(ms),
    advance(seconds: number) {
      ms += seconds * 1000;
    },
  };
}

const refresh = (t: TestApp, token: string) =>
  t.request('POST', '/token?grant_type=refresh_token', { refresh_token: token });

async function expectError(res: Response, status: number, code: string, msg?: string): Promise<void> {
  const body = (await res.json()) as Json;
  expect({ status: res.status, code: body.error_code }).toEqual({ status, code });
  if (msg !== undefined) expect(body.msg).toBe(msg);
}

const tokenRows = async (sessionId: string) =>
  exec(
    db,
    `select token, parent, revoked from "${db.namespace}".refresh_tokens where session_id = ${lit(sessionId)} order by id`,
  );
const sessionRow = async (id: string) =>
  (
    await exec(
      db,
      `select refresh_token_counter::int as refresh_token_counter, refresh_token_hmac_key from "${db.namespace}".sessions where id = ${lit(id)}`,
    )
  )[0];

async function legacySession(n = 1, at?: Date) {
  const user = await insertGoTrueUser(db, { email: `gt-${crypto.randomUUID()}@example.com` });
  const sessionId = await insertGoTrueSession(db, user.id);
  const tokens = await insertLegacyChain(db, user.id, sessionId, n, at);
  return { user, sessionId, tokens };
}

describe('legacy GoTrue refresh tokens (12 characters, stored in clear)', () => {
  test('refresh: 200 with an authsvc child; the stored token becomes its SHA-256; the child rotates on', async () => {
    const t = await buildTestApp(db);
    const {
      user,
      sessionId,
      tokens: [token],
    } = await legacySession();
    const res = await refresh(t, token!);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.refresh_token).toMatch(AUTHSVC_TOKEN);
    expect(body.user.id).toBe(user.id);
    expect(body.user.identities.map((i: Json) => i.provider)).toEqual(['email']);
    expect(decodeJwt(body.access_token)).toMatchObject({
      sub: user.id,
      session_id: sessionId,
      amr: [{ method: 'password' }],
    });
    expect(await tokenRows(sessionId)).toEqual([
      { token: sha256(token!), parent: null, revoked: true },
      { token: sha256(body.refresh_token), parent: sha256(token!), revoked: false },
    ]);
    const next = await refresh(t, body.refresh_token);
    expect(next.status).toBe(200);
    expect(((await next.json()) as Json).refresh_token).toMatch(AUTHSVC_TOKEN);
  });

  test('a retry of the GoTrue token inside the reuse interval gets the same child; after it, reuse revokes the family', async () => {
    const clock = manualClock();
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' }, { now: clock.now });
    const {
      sessionId,
      tokens: [token],
    } = await legacySession();
    const first = (await (await refresh(t, token!)).json()) as Json;
    clock.advance(5);
    const again = await refresh(t, token!);
    expect(again.status).toBe(200);
    expect(((await again.json()) as Json).refresh_token).toBe(first.refresh_token);
    clock.advance(10);
    await expectError(
      await refresh(t, token!),
      400,
      'refresh_token_already_used',
      'Invalid Refresh Token: Already Used',
    );
    expect((await tokenRows(sessionId)).every((r) => r.revoked)).toBe(true);
    await expectError(await refresh(t, first.refresh_token), 400, 'refresh_token_already_used');
  });

  test('a GoTrue-era retry: the immediate predecessor of the live token, inside the interval, gets that token back', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const { sessionId, tokens } = await legacySession(3, new Date(Date.now() - 2000));
    const res = await refresh(t, tokens[1]!);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).refresh_token).toBe(tokens[2]);
    // Nothing was rotated: the live token is still GoTrue's and still works, once.
    expect((await tokenRows(sessionId)).map((r) => r.revoked)).toEqual([true, true, false]);
    const live = await refresh(t, tokens[2]!);
    expect(live.status).toBe(200);
  });

  test('an older GoTrue token (or any revoked one outside the interval) is reuse: the family is revoked', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const { sessionId, tokens } = await legacySession(3, new Date(Date.now() - 2000));
    await expectError(await refresh(t, tokens[0]!), 400, 'refresh_token_already_used');
    expect((await tokenRows(sessionId)).every((r) => r.revoked)).toBe(true);
    await expectError(await refresh(t, tokens[2]!), 400, 'refresh_token_already_used');

    const old = await legacySession(2, new Date(Date.now() - 60_000));
    await expectError(await refresh(t, old.tokens[0]!), 400, 'refresh_token_already_used');
    await expectError(await refresh(t, old.tokens[1]!), 400, 'refresh_token_already_used');
  });

  test('an unknown 12-character token is not found; a token without a session has no valid session', async () => {
    const t = await buildTestApp(db);
    await expectError(await refresh(t, legacyToken()), 400, 'refresh_token_not_found');
    const user = await insertGoTrueUser(db, { email: `gt-${crypto.randomUUID()}@example.com` });
    const orphan = legacyToken();
    await insertLegacyToken(db, { userId: user.id, sessionId: null, token: orphan });
    await expectError(
      await refresh(t, orphan),
      400,
      'session_not_found',
      'Invalid Refresh Token: No Valid Session Found',
    );
  });

  test('the session checks apply: a banned user, an expired session', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SESSIONS_TIMEBOX: '1h' });
    const banned = await legacySession();
    await exec(
      db,
      `update "${db.namespace}".users set banned_until = now() + interval '1 day' where id = ${lit(banned.user.id)}`,
    );
    await expectError(await refresh(t, banned.tokens[0]!), 400, 'user_banned');
    const user = await insertGoTrueUser(db, { email: `gt-${crypto.randomUUID()}@example.com` });
    const sessionId = await insertGoTrueSession(db, user.id, { at: new Date(Date.now() - 2 * 3_600_000) });
    const [token] = await insertLegacyChain(db, user.id, sessionId, 1);
    await expectError(await refresh(t, token!), 400, 'session_expired');
    expect((await tokenRows(sessionId))[0]).toMatchObject({ token, revoked: false });
  });

  test('`hash-refresh-tokens`: no token stays in clear, and the hashed GoTrue tokens still refresh', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const a = await legacySession(2);
    const b = await legacySession(1);
    const digest = (s: string) => legacyRefreshDigest(t.deps.keys.refreshChildKey, s);
    expect(await hashLegacyRefreshTokens(t.deps.db, digest, 2)).toBeGreaterThanOrEqual(3);
    const rows = await exec(
      db,
      `select count(*)::int as n from "${db.namespace}".refresh_tokens where length(token) = 12 or length(parent) = 12`,
    );
    expect(rows[0]!.n).toBe(0);
    expect(await tokenRows(a.sessionId)).toEqual([
      { token: digest(a.tokens[0]!), parent: null, revoked: true },
      { token: digest(a.tokens[1]!), parent: digest(a.tokens[0]!), revoked: false },
    ]);
    const res = await refresh(t, a.tokens[1]!);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).refresh_token).toMatch(AUTHSVC_TOKEN);
    expect((await tokenRows(a.sessionId))[1]).toMatchObject({ token: sha256(a.tokens[1]!), revoked: true });
    expect((await refresh(t, b.tokens[0]!)).status).toBe(200);
    // A revoked one is still recognised as reuse.
    await expectError(await refresh(t, a.tokens[0]!), 400, 'refresh_token_already_used');
  });
});

describe('signed GoTrue refresh tokens (SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION 2)', () => {
  async function signedSession(counter: number, storedKey?: (sessionId: string, key: string) => Promise<string>) {
    const user = await insertGoTrueUser(db, { email: `gt-${crypto.randomUUID()}@example.com` });
    const key = signingKey();
    // The id is needed to seal the key: write the session, then its key.
    const sessionId = await insertGoTrueSession(db, user.id, {
      hmacKey: key,
      counter,
      refreshedAt: new Date(Date.now() - 60_000),
    });
    if (storedKey) {
      await exec(
        db,
        `update "${db.namespace}".sessions set refresh_token_hmac_key = ${lit(await storedKey(sessionId, key))} where id = ${lit(sessionId)}`,
      );
    }
    return { user, sessionId, key };
  }

  test('the current token: 200 with an authsvc child; the counter moves on; the child rotates on', async () => {
    const t = await buildTestApp(db);
    const { user, sessionId, key } = await signedSession(5);
    const token = signedToken(sessionId, 5, key);
    const res = await refresh(t, token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.refresh_token).toMatch(AUTHSVC_TOKEN);
    expect(decodeJwt(body.access_token)).toMatchObject({ sub: user.id, session_id: sessionId });
    // Adopted at 5: negative, which GoTrue never writes.
    expect(await sessionRow(sessionId)).toEqual({ refresh_token_counter: -6, refresh_token_hmac_key: key });
    expect(await tokenRows(sessionId)).toEqual([
      { token: sha256(token), parent: null, revoked: true },
      { token: sha256(body.refresh_token), parent: sha256(token), revoked: false },
    ]);
    const next = await refresh(t, body.refresh_token);
    expect(next.status).toBe(200);
    const third = await refresh(t, ((await next.json()) as Json).refresh_token);
    expect(third.status).toBe(200);
  });

  test('a counter counts as GoTrue writes it past one byte (uvarint)', async () => {
    const t = await buildTestApp(db);
    const { sessionId, key } = await signedSession(300_000);
    expect((await refresh(t, signedToken(sessionId, 300_000, key))).status).toBe(200);
  });

  test('a retry inside the interval gets the same child; after it, reuse', async () => {
    const clock = manualClock();
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' }, { now: clock.now });
    const { sessionId, key } = await signedSession(2);
    const token = signedToken(sessionId, 2, key);
    const first = (await (await refresh(t, token)).json()) as Json;
    clock.advance(3);
    const again = await refresh(t, token);
    expect(((await again.json()) as Json).refresh_token).toBe(first.refresh_token);
    clock.advance(20);
    await expectError(await refresh(t, token), 400, 'refresh_token_already_used');
    await expectError(await refresh(t, first.refresh_token), 400, 'refresh_token_already_used');
  });

  test('GoTrue-era: one behind inside the interval gets the current signed token; older is reuse and ends the session', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const user = await insertGoTrueUser(db, { email: `gt-${crypto.randomUUID()}@example.com` });
    const key = signingKey();
    const sessionId = await insertGoTrueSession(db, user.id, {
      hmacKey: key,
      counter: 4,
      refreshedAt: new Date(Date.now() - 2000),
    });
    const res = await refresh(t, signedToken(sessionId, 3, key));
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).refresh_token).toBe(signedToken(sessionId, 4, key));
    await expectError(await refresh(t, signedToken(sessionId, 2, key)), 400, 'refresh_token_already_used');
    expect(await sessionRow(sessionId)).toBeUndefined();
    await expectError(await refresh(t, signedToken(sessionId, 4, key)), 400, 'refresh_token_not_found');
  });

  test('one behind outside the interval is reuse', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const { sessionId, key } = await signedSession(4);
    await expectError(await refresh(t, signedToken(sessionId, 3, key)), 400, 'refresh_token_already_used');
    expect(await sessionRow(sessionId)).toBeUndefined();
  });

  test("after the first refresh in authsvc no signed token is current: one minted from a dump's key is refused", async () => {
    const t = await buildTestApp(db);
    const { sessionId, key } = await signedSession(7);
    const first = await refresh(t, signedToken(sessionId, 7, key));
    expect(first.status).toBe(200);
    for (const counter of [8, 9]) {
      await expectError(
        await refresh(t, signedToken(sessionId, counter, key)),
        400,
        'validation_failed',
        'Invalid Refresh Token: Not Issued By This Server',
      );
    }
    expect((await refresh(t, ((await first.json()) as Json).refresh_token)).status).toBe(200);
  });

  test('after the first refresh in authsvc an older signed token is reuse', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const { sessionId, key } = await signedSession(7);
    expect((await refresh(t, signedToken(sessionId, 7, key))).status).toBe(200);
    await expectError(await refresh(t, signedToken(sessionId, 6, key)), 400, 'refresh_token_already_used');
    expect(await sessionRow(sessionId)).toBeUndefined();
  });

  test('ahead of the counter: Not Issued By This Server; another key or a session without one: not found', async () => {
    const t = await buildTestApp(db);
    const { sessionId, key } = await signedSession(1);
    await expectError(
      await refresh(t, signedToken(sessionId, 2, key)),
      400,
      'validation_failed',
      'Invalid Refresh Token: Not Issued By This Server',
    );
    await expectError(await refresh(t, signedToken(sessionId, 1, signingKey())), 400, 'refresh_token_not_found');
    const user = await insertGoTrueUser(db, { email: `gt-${crypto.randomUUID()}@example.com` });
    const plain = await insertGoTrueSession(db, user.id);
    await expectError(await refresh(t, signedToken(plain, 0, key)), 400, 'refresh_token_not_found');
    // A flipped byte fails the checksum.
    const good = signedToken(sessionId, 1, key);
    const bad = good.slice(0, 10) + (good[10] === 'A' ? 'B' : 'A') + good.slice(11);
    await expectError(await refresh(t, bad), 400, 'refresh_token_not_found');
    expect((await refresh(t, good)).status).toBe(200);
  });

  test('M3 (security review 2026-12-01): GoTrue tokens of a soft-deleted user do not refresh (live, GoTrue-era retries, legacy and signed)', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const deleted = (userId: string) =>
      exec(db, `update "${db.namespace}".users set deleted_at = now() where id = ${lit(userId)}`);
    const notFound = 'Invalid Refresh Token: Refresh Token Not Found';
    // Legacy: the live token (adopted, then rotated by the caller) and the predecessor inside the interval (answered here).
    const legacy = await legacySession(3, new Date(Date.now() - 2000));
    await deleted(legacy.user.id);
    for (const token of [legacy.tokens[2]!, legacy.tokens[1]!])
      await expectError(await refresh(t, token), 400, 'refresh_token_not_found', notFound);
    expect((await tokenRows(legacy.sessionId)).map((r) => [r.token, r.revoked])).toEqual(
      legacy.tokens.map((tk, i) => [tk, i < 2]),
    );
    // Signed: the current token and the one before it inside the interval.
    const { user, sessionId, key } = await signedSession(4);
    await exec(
      db,
      `update "${db.namespace}".sessions set refreshed_at = (now() - interval '2 seconds') at time zone 'UTC' where id = ${lit(sessionId)}`,
    );
    await deleted(user.id);
    for (const counter of [4, 3])
      await expectError(
        await refresh(t, signedToken(sessionId, counter, key)),
        400,
        'refresh_token_not_found',
        notFound,
      );
    expect(await sessionRow(sessionId)).toEqual({ refresh_token_counter: 4, refresh_token_hmac_key: key });
    expect(await tokenRows(sessionId)).toEqual([]);
  });

  test('a key sealed with SECURITY_DB_ENCRYPTION_* opens with the configured keys; without them: 500', async () => {
    const master = Buffer.alloc(32, 7).toString('base64url');
    const enc = {
      AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
      AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1',
      AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: master,
      AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${master}`,
    };
    const t = await buildTestApp(db, enc);
    const { sessionId, key } = await signedSession(0, (id, k) =>
      encryptString(id, k, 'k1', master, (n) => crypto.getRandomValues(new Uint8Array(n))),
    );
    expect((await sessionRow(sessionId))!.refresh_token_hmac_key).toMatch(/^\{"key_id":"k1"/);
    const without = await buildTestApp(db);
    const res = await refresh(without, signedToken(sessionId, 0, key));
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain(key);
    expect((await refresh(t, signedToken(sessionId, 0, key))).status).toBe(200);
  });
});

describe('concurrent first uses of one GoTrue token (truly parallel with TEST_DATABASE_URL)', () => {
  const N = 8;
  async function all(t: TestApp, token: string) {
    return Promise.all(
      Array.from({ length: N }, async () => {
        const res = await refresh(t, token);
        return { status: res.status, body: (await res.json()) as Json };
      }),
    );
  }

  test('a legacy token: every request gets the one child; one live row', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const {
      sessionId,
      tokens: [token],
    } = await legacySession();
    const outcomes = await all(t, token!);
    expect(outcomes.map((o) => o.status)).toEqual(Array(N).fill(200));
    expect(new Set(outcomes.map((o) => o.body.refresh_token)).size).toBe(1);
    expect((await tokenRows(sessionId)).filter((r) => !r.revoked)).toHaveLength(1);
  });

  test('a signed token: every request gets the one child; one live row', async () => {
    const t = await buildTestApp(db, { AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const user = await insertGoTrueUser(db, { email: `gt-${crypto.randomUUID()}@example.com` });
    const key = signingKey();
    const sessionId = await insertGoTrueSession(db, user.id, { hmacKey: key, counter: 1 });
    const outcomes = await all(t, signedToken(sessionId, 1, key));
    expect(outcomes.map((o) => o.status)).toEqual(Array(N).fill(200));
    expect(new Set(outcomes.map((o) => o.body.refresh_token)).size).toBe(1);
    expect((await tokenRows(sessionId)).filter((r) => !r.revoked)).toHaveLength(1);
  });
});
