// MFA recovery codes (issue 27 item 6) through the real app: every endpoint and error, codes that
// work once, normalisation, the failure lockout, aal1 → aal2 with AMR mfa/recovery_code read from
// the real token, regeneration, deletion, races on one code (run this file with
// TEST_DATABASE_URL too: there the requests really run in parallel), and bad input.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { BASE_ENV, buildTestApp, signUpConfirmed, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';
import { decodeBase32, totpAt } from '../helpers/totp.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'x-supabase-api-version': '2024-01-01' });
const ENABLED = {
  AUTHSVC_MFA_RECOVERY_CODES_ENROLL_ENABLED: 'true',
  AUTHSVC_MFA_RECOVERY_CODES_VERIFY_ENABLED: 'true',
};
const errorOf = async (res: Response): Promise<Json> => ({ status: res.status, ...((await res.json()) as Json) });
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The app with its own clock (`tick`), recovery codes on unless `env` says otherwise. */
async function app(env: Record<string, string> = {}) {
  let now = Date.now();
  const t = await buildTestApp(
    db,
    { AUTHSVC_MAILER_AUTOCONFIRM: 'true', ...ENABLED, ...env },
    { now: () => new Date(now) },
  );
  return Object.assign(t, {
    tick: (s: number) => {
      now += s * 1000;
    },
    nowSeconds: () => now / 1000,
  });
}
type App = Awaited<ReturnType<typeof app>>;

async function signIn(t: TestApp, email: string, password: string): Promise<Json> {
  const res = await t.request('POST', '/token?grant_type=password', { email, password });
  expect(res.status).toBe(200);
  return res.json() as Promise<Json>;
}

/** A user with a verified TOTP factor; `aal2` is its upgraded session. */
async function userWithTotp(t: App) {
  const { email, password, session } = await signUpConfirmed(t, uniqueEmail('rc'));
  const factor = (await (
    await t.request('POST', '/factors', { factor_type: 'totp' }, bearer(session.access_token))
  ).json()) as Json;
  t.tick(5);
  const ch = (await (
    await t.request('POST', `/factors/${factor.id}/challenge`, undefined, bearer(session.access_token))
  ).json()) as Json;
  const res = await t.request(
    'POST',
    `/factors/${factor.id}/verify`,
    { challenge_id: ch.id, code: totpAt(decodeBase32(factor.totp.secret), t.nowSeconds()) },
    bearer(session.access_token),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return { email, password, factor, aal2: (await res.json()) as Json };
}

/** A user with a verified TOTP factor and a set of recovery codes. */
async function userWithCodes(t: App, body?: Json) {
  const u = await userWithTotp(t);
  const res = await t.request('POST', '/factors/recovery-codes', body, bearer(u.aal2.access_token));
  expect(res.status, await res.clone().text()).toBe(200);
  return { ...u, set: (await res.json()) as Json };
}

const verifyCode = (t: TestApp, token: string, code: unknown) =>
  t.request('POST', '/factors/recovery-codes/verify', { code }, bearer(token));
const status = async (t: TestApp, token: string) =>
  t.request('GET', '/factors/recovery-codes', undefined, bearer(token));
const setRow = async (userId: string) =>
  (await db.orm.select().from(db.t.mfaRecoveryCodeSets).where(eq(db.t.mfaRecoveryCodeSets.userId, userId)))[0];

describe('recovery codes: settings', () => {
  test('off by default: generate and regenerate answer mfa_recovery_codes_enroll_not_enabled, verify its verify analogue', async () => {
    const t = await app({
      AUTHSVC_MFA_RECOVERY_CODES_ENROLL_ENABLED: 'false',
      AUTHSVC_MFA_RECOVERY_CODES_VERIFY_ENABLED: 'false',
    });
    expect(t.deps.config.mfa.recoveryCodes).toEqual({ enrollEnabled: false, verifyEnabled: false, count: 10 });
    const defaults = parseConfig({ ...BASE_ENV }, { local: true });
    expect(defaults.ok && defaults.config.mfa.recoveryCodes).toEqual({
      enrollEnabled: false,
      verifyEnabled: false,
      count: 10,
    });
    const { aal2 } = await userWithTotp(t);
    const h = bearer(aal2.access_token);
    const disabled = {
      status: 422,
      code: 'mfa_recovery_codes_enroll_not_enabled',
      message: 'MFA enroll is disabled for recovery codes',
    };
    expect(await errorOf(await t.request('POST', '/factors/recovery-codes', {}, h))).toEqual(disabled);
    expect(await errorOf(await t.request('POST', '/factors/recovery-codes/regenerate', undefined, h))).toEqual(
      disabled,
    );
    expect(await errorOf(await verifyCode(t, aal2.access_token, 'abcdefghij'))).toEqual({
      status: 422,
      code: 'mfa_recovery_codes_verify_not_enabled',
      message: 'MFA verification is disabled for recovery codes',
    });
    expect(await errorOf(await status(t, aal2.access_token))).toEqual({
      status: 404,
      code: 'mfa_factor_not_found',
      message: 'Factor not found',
    });
  });

  test('MFA_RECOVERY_CODES_COUNT: 5 to 20 (GOTRUE_ name too); out of bounds or not a number stops start-up', async () => {
    for (const bad of ['4', '21', '0', 'ten', '10.5']) {
      const r = parseConfig({ ...BASE_ENV, AUTHSVC_MFA_RECOVERY_CODES_COUNT: bad }, { local: true });
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.errors.join('\n')).toMatch(/MFA_RECOVERY_CODES_COUNT/);
    }
    const g = parseConfig({ ...BASE_ENV, GOTRUE_MFA_RECOVERY_CODES_COUNT: '20' }, { local: true });
    expect(g.ok && g.config.mfa.recoveryCodes.count).toBe(20);
    const t = await app({ AUTHSVC_MFA_RECOVERY_CODES_COUNT: '5' });
    const { set } = await userWithCodes(t);
    expect(set.total).toBe(5);
    expect(set.codes).toHaveLength(5);
  });
});

describe('recovery codes: generate and status', () => {
  test('aal2: codes shown once (10 distinct, 10 lower-case base32 characters), stored only as SHA-256; GET counts them', async () => {
    const t = await app();
    const { aal2, factor } = await userWithCodes(t).then(async (u) => {
      expect(Object.keys(u.set)).toEqual(['id', 'type', 'friendly_name', 'total', 'codes']);
      expect(u.set).toMatchObject({ type: 'recovery_code', friendly_name: 'Recovery codes', total: 10 });
      expect(new Set(u.set.codes).size).toBe(10);
      for (const c of u.set.codes) expect(c).toMatch(/^[a-z2-7]{10}$/);
      const rows = await db.orm.select().from(db.t.mfaRecoveryCodes).where(eq(db.t.mfaRecoveryCodes.setId, u.set.id));
      expect(rows.map((r) => r.codeHash).sort()).toEqual(
        u.set.codes.map((c: string) => sha256(`${u.set.id}:${c}`)).sort(),
      );
      expect(rows.every((r) => r.usedAt === null)).toBe(true);
      return u;
    });
    const res = await status(t, aal2.access_token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toEqual({ id: expect.any(String), type: 'recovery_code', total: 10, remaining: 10 });
    // Not a factor to supabase-js: user.factors still lists only the TOTP factor.
    const user = (await (await t.request('GET', '/user', undefined, bearer(aal2.access_token))).json()) as Json;
    expect(user.factors.map((f: Json) => f.id)).toEqual([factor.id]);
  });

  test('a friendly_name is kept; a second set is refused; the body may be empty', async () => {
    const t = await app();
    const { aal2, set } = await userWithCodes(t, { friendly_name: 'Printed sheet' });
    expect(set.friendly_name).toBe('Printed sheet');
    expect(
      await errorOf(await t.request('POST', '/factors/recovery-codes', undefined, bearer(aal2.access_token))),
    ).toMatchObject({ status: 422, code: 'mfa_verified_factor_exists' });
    const other = await userWithTotp(t);
    const res = await t.request('POST', '/factors/recovery-codes', undefined, bearer(other.aal2.access_token));
    expect(res.status).toBe(200);
  });

  test('aal1 is refused with insufficient_aal, with or without a verified factor; no bearer is 401; anonymous 403', async () => {
    const t = await app({ AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    const { session } = await signUpConfirmed(t, uniqueEmail('nofactor'));
    expect(await errorOf(await t.request('POST', '/factors/recovery-codes', {}, bearer(session.access_token)))).toEqual(
      { status: 403, code: 'insufficient_aal', message: 'AAL2 required to generate recovery codes' },
    );
    const { email, password } = await userWithTotp(t);
    const aal1 = await signIn(t, email, password);
    expect(
      await errorOf(await t.request('POST', '/factors/recovery-codes', {}, bearer(aal1.access_token))),
    ).toMatchObject({ status: 403, code: 'insufficient_aal' });
    expect((await t.request('GET', '/factors/recovery-codes')).status).toBe(401);
    const anon = (await (await t.request('POST', '/signup', {})).json()) as Json;
    expect(await errorOf(await status(t, anon.access_token))).toMatchObject({ status: 403, code: 'no_authorization' });
    expect(await errorOf(await verifyCode(t, anon.access_token, 'abcdefghij'))).toMatchObject({
      status: 403,
      code: 'no_authorization',
    });
  });
});

describe('recovery codes: verify', () => {
  test('aal1 → aal2: AMR mfa/recovery_code in the real token, same session, fresh refresh token; a code works once', async () => {
    const t = await app();
    const { email, password, set } = await userWithCodes(t);
    const aal1 = await signIn(t, email, password);
    expect(decodeJwt(aal1.access_token).aal).toBe('aal1');
    // A later second than the sign-in: the AMR order (newest first) is then visible.
    t.tick(5);
    const res = await verifyCode(t, aal1.access_token, set.codes[0]);
    expect(res.status, await res.clone().text()).toBe(200);
    const session = (await res.json()) as Json;
    const claims = decodeJwt(session.access_token) as Json;
    expect(claims.aal).toBe('aal2');
    expect(claims.session_id).toBe(decodeJwt(aal1.access_token).session_id);
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['mfa/recovery_code', 'password']);
    expect(session.refresh_token).not.toBe(aal1.refresh_token);
    const refreshed = (await (
      await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })
    ).json()) as Json;
    expect(decodeJwt(refreshed.access_token).aal).toBe('aal2');
    const row = (
      await db.orm
        .select()
        .from(db.t.sessions)
        .where(eq(db.t.sessions.id, String(claims.session_id)))
    )[0]!;
    expect(row).toMatchObject({ aal: 'aal2', factorId: set.id });

    expect(await (await status(t, session.access_token)).json()).toEqual({
      id: set.id,
      type: 'recovery_code',
      total: 10,
      remaining: 9,
    });
    const used = await db.orm
      .select()
      .from(db.t.mfaRecoveryCodes)
      .where(eq(db.t.mfaRecoveryCodes.codeHash, sha256(`${set.id}:${set.codes[0]}`)));
    expect(used[0]!.usedAt).toBeInstanceOf(Date);
    const again = await signIn(t, email, password);
    expect(await errorOf(await verifyCode(t, again.access_token, set.codes[0]))).toEqual({
      status: 422,
      code: 'mfa_verification_failed',
      message: 'Invalid recovery code entered',
    });
    expect(decodeJwt(again.access_token).aal).toBe('aal1');
    // The pre-MFA refresh token cannot refresh into aal2 (presenting it is reuse).
    expect(
      (await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: aal1.refresh_token })).status,
    ).not.toBe(200);
  });

  test('input is normalised: upper case, dashes and spaces are accepted', async () => {
    const t = await app();
    const { email, password, set } = await userWithCodes(t);
    const c1 = set.codes[1] as string;
    const c2 = set.codes[2] as string;
    for (const typed of [
      `${c1.slice(0, 5).toUpperCase()}-${c1.slice(5).toUpperCase()}`,
      ` ${c2.slice(0, 3)} ${c2.slice(3, 6)}-${c2.slice(6)}\t`,
    ]) {
      const aal1 = await signIn(t, email, password);
      const res = await verifyCode(t, aal1.access_token, typed);
      expect(res.status, typed).toBe(200);
    }
  });

  test('five wrong codes lock the set for fifteen minutes, the next five for thirty (a right code too); then a right code works and resets the count', async () => {
    const t = await app();
    const { email, password, set, aal2 } = await userWithCodes(t);
    const userId = String(decodeJwt(aal2.access_token).sub);
    const aal1 = await signIn(t, email, password);
    const wrong = ['aaaaaaaaaa', 'zzzzzzzzzz', 'not a code', '2222222222', 'x'];
    for (const [i, w] of wrong.entries()) {
      expect(await errorOf(await verifyCode(t, aal1.access_token, w))).toMatchObject({
        status: 422,
        code: 'mfa_verification_failed',
      });
      const row = await setRow(userId);
      if (i < 4) expect(row).toMatchObject({ failedVerificationCount: i + 1, verificationLockedUntil: null });
      else expect(row!.verificationLockedUntil!.getTime()).toBe(t.nowSeconds() * 1000 + 15 * 60 * 1000);
    }
    const locked = await errorOf(await verifyCode(t, aal1.access_token, set.codes[0]));
    expect(locked).toMatchObject({ status: 429, code: 'over_request_rate_limit' });
    expect(locked.message).toMatch(/900 seconds/);
    t.tick(14 * 60);
    expect((await verifyCode(t, aal1.access_token, set.codes[0])).status).toBe(429);
    t.tick(60 + 1);
    // Five more wrong in a row: a lock twice as long (failure-lock.ts).
    for (let i = 0; i < 4; i++) expect((await verifyCode(t, aal1.access_token, 'aaaaaaaaaa')).status).toBe(422);
    expect((await setRow(userId))!.failedVerificationCount).toBe(9);
    expect((await verifyCode(t, aal1.access_token, 'aaaaaaaaaa')).status).toBe(422);
    expect((await errorOf(await verifyCode(t, aal1.access_token, set.codes[0]))).message).toMatch(/1800 seconds/);
    t.tick(30 * 60 + 1);
    // One wrong, then right: the count restarts from zero.
    expect((await verifyCode(t, aal1.access_token, 'aaaaaaaaaa')).status).toBe(422);
    expect((await setRow(userId))!.failedVerificationCount).toBe(11);
    const ok = await verifyCode(t, aal1.access_token, set.codes[0]);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await setRow(userId)).toMatchObject({ failedVerificationCount: 0, verificationLockedUntil: null });
    // The locked-out attempts consumed nothing: nine left.
    expect(((await (await status(t, ((await ok.json()) as Json).access_token)).json()) as Json).remaining).toBe(9);
  });

  test('a user without recovery codes: 404 mfa_factor_not_found', async () => {
    const t = await app();
    const { session } = await signUpConfirmed(t, uniqueEmail('none'));
    expect(await errorOf(await verifyCode(t, session.access_token, 'abcdefghij'))).toMatchObject({
      status: 404,
      code: 'mfa_factor_not_found',
    });
  });

  test('supabase-js: listFactors ignores the set, the AAL after a recovery code is aal2 with mfa/recovery_code', async () => {
    const t = await app();
    const { email, password, set, factor } = await userWithCodes(t);
    const aal1 = await signIn(t, email, password);
    const session = (await (await verifyCode(t, aal1.access_token, set.codes[3])).json()) as Json;
    const client = supabaseClientFor(t.app);
    expect(
      (await client.auth.setSession({ access_token: session.access_token, refresh_token: session.refresh_token }))
        .error,
    ).toBeNull();
    const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
    expect(aal.data!.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method))).toContain(
      'mfa/recovery_code',
    );
    const list = await client.auth.mfa.listFactors();
    expect(list.error).toBeNull();
    expect(list.data!.all.map((f) => f.id)).toEqual([factor.id]);
    expect(list.data!.totp.map((f) => f.id)).toEqual([factor.id]);
  });
});

describe('recovery codes: regenerate and delete', () => {
  test('regenerate (aal2): same id, new codes, every old code dead, the lockout lifted; aal1 is 403', async () => {
    const t = await app();
    const { email, password, set, aal2 } = await userWithCodes(t);
    const userId = String(decodeJwt(aal2.access_token).sub);
    const aal1 = await signIn(t, email, password);
    expect(
      await errorOf(
        await t.request('POST', '/factors/recovery-codes/regenerate', undefined, bearer(aal1.access_token)),
      ),
    ).toEqual({ status: 403, code: 'insufficient_aal', message: 'AAL2 required to regenerate recovery codes' });
    for (let i = 0; i < 5; i++) await verifyCode(t, aal1.access_token, 'aaaaaaaaaa');
    expect((await setRow(userId))!.verificationLockedUntil).not.toBeNull();
    const res = await t.request('POST', '/factors/recovery-codes/regenerate', undefined, bearer(aal2.access_token));
    expect(res.status).toBe(200);
    const fresh = (await res.json()) as Json;
    expect(fresh).toMatchObject({ id: set.id, type: 'recovery_code', friendly_name: 'Recovery codes', total: 10 });
    expect(fresh.codes.filter((c: string) => set.codes.includes(c))).toEqual([]);
    expect(await setRow(userId)).toMatchObject({ failedVerificationCount: 0, verificationLockedUntil: null });
    expect((await verifyCode(t, aal1.access_token, set.codes[0])).status).toBe(422);
    expect((await verifyCode(t, aal1.access_token, fresh.codes[0])).status).toBe(200);
  });

  test('regenerate without a set is 404', async () => {
    const t = await app();
    const { aal2 } = await userWithTotp(t);
    expect(
      await errorOf(
        await t.request('POST', '/factors/recovery-codes/regenerate', undefined, bearer(aal2.access_token)),
      ),
    ).toMatchObject({ status: 404, code: 'mfa_factor_not_found' });
  });

  test('delete (aal2) → {id}; the sessions a recovery code upgraded go back to aal1; then 404; aal1 is 403', async () => {
    const t = await app();
    const { email, password, set } = await userWithCodes(t);
    const aal1 = await signIn(t, email, password);
    expect(
      await errorOf(await t.request('DELETE', '/factors/recovery-codes', undefined, bearer(aal1.access_token))),
    ).toMatchObject({ status: 403, code: 'insufficient_aal' });
    const upgraded = (await (await verifyCode(t, aal1.access_token, set.codes[0])).json()) as Json;
    const res = await t.request('DELETE', '/factors/recovery-codes', undefined, bearer(upgraded.access_token));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: set.id });
    expect(await db.orm.select().from(db.t.mfaRecoveryCodes).where(eq(db.t.mfaRecoveryCodes.setId, set.id))).toEqual(
      [],
    );
    const refreshed = (await (
      await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: upgraded.refresh_token })
    ).json()) as Json;
    const claims = decodeJwt(refreshed.access_token) as Json;
    expect(claims.aal).toBe('aal1');
    expect(claims.amr.map((a: Json) => a.method)).toEqual(['password']);
    const { aal2 } = await userWithTotp(t);
    expect(
      await errorOf(await t.request('DELETE', '/factors/recovery-codes', undefined, bearer(aal2.access_token))),
    ).toMatchObject({ status: 404, code: 'mfa_factor_not_found' });
    expect(await errorOf(await status(t, aal2.access_token))).toMatchObject({
      status: 404,
      code: 'mfa_factor_not_found',
    });
  });

  test('section 5 (security review 2026-12-01): unenrolling the last verified factor deletes the recovery codes; a factor enrolled later does not bring them back', async () => {
    const t = await app();
    const { email, password, factor, set, aal2 } = await userWithCodes(t);
    const userId = String(decodeJwt(aal2.access_token).sub);
    const byCode = (await (
      await verifyCode(t, (await signIn(t, email, password)).access_token, set.codes[0])
    ).json()) as Json;
    expect((await t.request('DELETE', `/factors/${factor.id}`, undefined, bearer(aal2.access_token))).status).toBe(200);
    expect(await setRow(userId)).toBeUndefined();
    expect(await db.orm.select().from(db.t.mfaRecoveryCodes).where(eq(db.t.mfaRecoveryCodes.setId, set.id))).toEqual(
      [],
    );
    // The session a recovery code upgraded is aal1 again, as after DELETE /factors/recovery-codes.
    const refreshed = (await (
      await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: byCode.refresh_token })
    ).json()) as Json;
    expect(decodeJwt(refreshed.access_token).aal).toBe('aal1');
    // A new factor: the old codes lift nothing.
    const again = await signIn(t, email, password);
    await addVerifiedTotp(t, again.access_token);
    const later = await signIn(t, email, password);
    expect(await errorOf(await verifyCode(t, later.access_token, set.codes[1]))).toMatchObject({
      status: 404,
      code: 'mfa_factor_not_found',
    });
  });

  test('section 5 (security review 2026-12-01): an admin deleting the last verified factor deletes the recovery codes; deleting another keeps them', async () => {
    const t = await app();
    const { factor, set, aal2 } = await userWithCodes(t);
    const userId = String(decodeJwt(aal2.access_token).sub);
    const second = await addVerifiedTotp(t, aal2.access_token, 'second');
    const { signJwt } = await import('../../src/crypto/jwt.ts');
    const admin = {
      authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 3600 })}`,
    };
    expect((await t.request('DELETE', `/admin/users/${userId}/factors/${factor.id}`, undefined, admin)).status).toBe(
      200,
    );
    expect(await setRow(userId)).toMatchObject({ id: set.id });
    expect((await t.request('DELETE', `/admin/users/${userId}/factors/${second}`, undefined, admin)).status).toBe(200);
    expect(await setRow(userId)).toBeUndefined();
  });
});

/** Enrols and verifies a TOTP factor with `token`'s session; the factor's id. */
async function addVerifiedTotp(t: App, token: string, name = 'totp'): Promise<string> {
  const factor = (await (
    await t.request('POST', '/factors', { factor_type: 'totp', friendly_name: name }, bearer(token))
  ).json()) as Json;
  t.tick(30);
  const ch = (await (
    await t.request('POST', `/factors/${factor.id}/challenge`, undefined, bearer(token))
  ).json()) as Json;
  const res = await t.request(
    'POST',
    `/factors/${factor.id}/verify`,
    { challenge_id: ch.id, code: totpAt(decodeBase32(factor.totp.secret), t.nowSeconds()) },
    bearer(token),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return factor.id;
}

describe('recovery codes: routes and bad input', () => {
  test('/factors/:id keeps its answers: a non-UUID id is 404 validation_failed, recovery-codes included where no route of its own', async () => {
    const t = await app();
    const { aal2 } = await userWithTotp(t);
    const h = bearer(aal2.access_token);
    for (const [method, path] of [
      ['POST', '/factors/not-a-uuid/verify'],
      ['DELETE', '/factors/not-a-uuid'],
      ['POST', '/factors/recovery-codes/challenge'],
    ] as const) {
      expect(await errorOf(await t.request(method, path, { code: '1' }, h)), path).toEqual({
        status: 404,
        code: 'validation_failed',
        message: 'factor_id must be an UUID',
      });
    }
  });

  test('wrong types, NUL, a huge code, an empty code, a long friendly_name: 4xx and nothing written', async () => {
    const t = await app();
    const { email, password, set, aal2 } = await userWithCodes(t);
    const userId = String(decodeJwt(aal2.access_token).sub);
    const aal1 = await signIn(t, email, password);
    expect(await errorOf(await verifyCode(t, aal1.access_token, 1234567890))).toMatchObject({ status: 400 });
    expect(await errorOf(await verifyCode(t, aal1.access_token, [set.codes[0]]))).toMatchObject({ status: 400 });
    expect(await errorOf(await verifyCode(t, aal1.access_token, `${set.codes[0]}\u0000`))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    expect(await errorOf(await verifyCode(t, aal1.access_token, ''))).toMatchObject({
      status: 400,
      code: 'validation_failed',
      message: 'Code needs to be non-empty',
    });
    expect(await errorOf(await verifyCode(t, aal1.access_token, ' - '))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    expect(
      await errorOf(await t.request('POST', '/factors/recovery-codes/verify', 'not json', bearer(aal1.access_token))),
    ).toMatchObject({ status: 400, code: 'bad_json' });
    expect(
      await errorOf(await t.request('POST', '/factors/recovery-codes/verify', undefined, bearer(aal1.access_token))),
    ).toMatchObject({ status: 400, code: 'bad_json' });
    expect((await setRow(userId))!.failedVerificationCount).toBe(0);
    // A huge code is a wrong code (counted), not a crash.
    expect(await errorOf(await verifyCode(t, aal1.access_token, set.codes[0].repeat(50_000)))).toMatchObject({
      status: 422,
      code: 'mfa_verification_failed',
    });
    expect((await setRow(userId))!.failedVerificationCount).toBe(1);

    const other = await userWithTotp(t);
    const h = bearer(other.aal2.access_token);
    expect(
      await errorOf(await t.request('POST', '/factors/recovery-codes', { friendly_name: 'x'.repeat(1025) }, h)),
    ).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(await errorOf(await t.request('POST', '/factors/recovery-codes', { friendly_name: 42 }, h))).toMatchObject({
      status: 400,
    });
    expect(
      await errorOf(await t.request('POST', '/factors/recovery-codes', { friendly_name: 'a\u0000b' }, h)),
    ).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(await errorOf(await t.request('POST', '/factors/recovery-codes', '[', h))).toMatchObject({
      status: 400,
      code: 'bad_json',
    });
    expect(await setRow(String(decodeJwt(other.aal2.access_token).sub))).toBeUndefined();
  });
});

describe('recovery codes: races', () => {
  test('two uses of one code at once: exactly one wins; four at once: one wins, three fail and are counted', async () => {
    const t = await app();
    const { email, password, set, aal2 } = await userWithCodes(t);
    const userId = String(decodeJwt(aal2.access_token).sub);
    for (const [n, code] of [
      [2, set.codes[0]],
      [4, set.codes[1]],
    ] as const) {
      // One aal1 session: a winner deletes the user's other aal1 sessions, which would blur the answer.
      const aal1 = await signIn(t, email, password);
      const answers = await Promise.all(Array.from({ length: n }, () => verifyCode(t, aal1.access_token, code)));
      const statuses = answers.map((r) => r.status).sort();
      expect(
        statuses.filter((s) => s === 200),
        `${n}`,
      ).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200)).toEqual(Array(n - 1).fill(422));
    }
    expect(((await (await status(t, aal2.access_token)).json()) as Json).remaining).toBe(8);
    expect((await setRow(userId))!.failedVerificationCount).toBe(3);
  });

  test('two generations at once: one set (the other 422 mfa_verified_factor_exists), its codes the ones that work', async () => {
    const t = await app();
    const { email, password, aal2 } = await userWithTotp(t);
    const answers = await Promise.all(
      [1, 2].map(() => t.request('POST', '/factors/recovery-codes', {}, bearer(aal2.access_token))),
    );
    const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, body: (await r.json()) as Json })));
    const won = bodies.filter((b) => b.status === 200);
    expect(won).toHaveLength(1);
    expect(bodies.filter((b) => b.status !== 200).map((b) => [b.status, b.body.code])).toEqual([
      [422, 'mfa_verified_factor_exists'],
    ]);
    const aal1 = await signIn(t, email, password);
    expect((await verifyCode(t, aal1.access_token, won[0]!.body.codes[0])).status).toBe(200);
  });
});
