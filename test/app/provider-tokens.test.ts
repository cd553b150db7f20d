// Providers' refresh tokens kept across flows (EXTERNAL_<P>_STORE_TOKENS, authsvc only): stored
// encrypted at sign-in, invitation-free linking (implicit and PKCE), kept when a later sign-in
// brings none, not stored with the setting off, and gone with the identity or the user.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decryptString, parseEncryptedString } from '../../src/crypto/encrypted-string.ts';
import type { Database } from '../../src/db/database.ts';
import { bearer, serviceRoleHeaders, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import {
  ENCRYPTION_KEY,
  nextUser,
  providerSignIn,
  type RefreshFakes,
  sessionFrom,
  startRefreshFakes,
} from '../helpers/fake-refresh-providers.ts';

type Json = Record<string, any>;
let db: Database;
let h: RefreshFakes;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  h = await startRefreshFakes();
  t = await h.app(db);
});
afterAll(async () => {
  await h?.fake.close();
  await db?.close();
});

const rowsOf = (userId: string) =>
  db.orm.select().from(db.t.identityProviderTokens).where(eq(db.t.identityProviderTokens.userId, userId));

async function me(accessToken: string): Promise<Json> {
  return (await (await t.request('GET', '/user', undefined, bearer(accessToken))).json()) as Json;
}

describe('stored at sign-in', () => {
  test('encrypted with the SECURITY_DB_ENCRYPTION key, bound to the row: never the plain token', async () => {
    const u = nextUser(h, 'google');
    const f = await sessionFrom(t, 'google');
    expect(f.provider_refresh_token).toBe(u.refreshToken);
    const user = await me(f.access_token!);
    const [row, ...more] = await rowsOf(user.id);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ provider: 'google', identityId: user.identities[0].identity_id });
    expect(row!.refreshToken).not.toContain(u.refreshToken);
    const es = parseEncryptedString(row!.refreshToken)!;
    expect(es.keyId).toBe('k1');
    expect(await decryptString(es, row!.id, { k1: ENCRYPTION_KEY })).toBe(u.refreshToken);
    await expect(decryptString(es, crypto.randomUUID(), { k1: ENCRYPTION_KEY })).rejects.toThrow();
  });

  test('a later sign-in with a new refresh token replaces it; one without keeps it', async () => {
    const u = nextUser(h, 'gitlab');
    const f = await sessionFrom(t, 'gitlab');
    const userId = (await me(f.access_token!)).id;
    const first = (await rowsOf(userId))[0]!;
    h.next.gitlab = { ...u, refreshToken: `${u.refreshToken}-rotated` };
    await sessionFrom(t, 'gitlab');
    const second = (await rowsOf(userId))[0]!;
    expect(second.id).not.toBe(first.id);
    expect(second.identityId).toBe(first.identityId);
    expect(await decryptString(parseEncryptedString(second.refreshToken)!, second.id, { k1: ENCRYPTION_KEY })).toBe(
      `${u.refreshToken}-rotated`,
    );
    h.next.gitlab = { ...u, refreshToken: undefined };
    await sessionFrom(t, 'gitlab');
    expect(await rowsOf(userId)).toEqual([second]);
  });

  test('with EXTERNAL_<P>_STORE_TOKENS off, nothing is stored (the fragment still carries the token)', async () => {
    const off = await h.app(db, { AUTHSVC_EXTERNAL_GOOGLE_STORE_TOKENS: 'false' });
    const u = nextUser(h, 'google');
    const f = await sessionFrom(off, 'google');
    expect(f.provider_refresh_token).toBe(u.refreshToken);
    expect(await rowsOf((await me(f.access_token!)).id)).toEqual([]);
  });
});

describe('stored at identity linking', () => {
  test('implicit: the linked identity gets its token', async () => {
    const { session } = await signUpConfirmed(t);
    const u = nextUser(h, 'gitlab');
    const loc = await providerSignIn(t, 'gitlab', { link: bearer(session.access_token) });
    expect(loc.hash).toContain('access_token');
    const [row] = await rowsOf(session.user.id);
    expect(row).toMatchObject({ provider: 'gitlab' });
    expect(await decryptString(parseEncryptedString(row!.refreshToken)!, row!.id, { k1: ENCRYPTION_KEY })).toBe(
      u.refreshToken,
    );
  });

  test('PKCE: stored when the code is exchanged, where the link is made', async () => {
    const { session } = await signUpConfirmed(t);
    const u = nextUser(h, 'google');
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const loc = await providerSignIn(t, 'google', {
      link: bearer(session.access_token),
      query: `&code_challenge=${challenge}&code_challenge_method=s256`,
    });
    const code = loc.searchParams.get('code')!;
    expect(code).toBeTruthy();
    expect(await rowsOf(session.user.id)).toEqual([]);
    const res = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: verifier });
    expect(res.status, await res.clone().text()).toBe(200);
    const [row] = await rowsOf(session.user.id);
    expect(await decryptString(parseEncryptedString(row!.refreshToken)!, row!.id, { k1: ENCRYPTION_KEY })).toBe(
      u.refreshToken,
    );
  });
});

describe('gone with the identity or the user', () => {
  async function linkedUser(): Promise<{ userId: string; accessToken: string; identityId: string }> {
    const { session } = await signUpConfirmed(t);
    nextUser(h, 'gitlab');
    await providerSignIn(t, 'gitlab', { link: bearer(session.access_token) });
    const user = await me(session.access_token);
    const identity = (user.identities as Json[]).find((i) => i.provider === 'gitlab')!;
    expect(await rowsOf(user.id)).toHaveLength(1);
    return { userId: user.id, accessToken: session.access_token, identityId: identity.identity_id };
  }

  test('unlinking the identity (DELETE /user/identities/{id}) deletes its token', async () => {
    const u = await linkedUser();
    const res = await t.request('DELETE', `/user/identities/${u.identityId}`, undefined, bearer(u.accessToken));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await rowsOf(u.userId)).toEqual([]);
  });

  test('deleting the user deletes its tokens: hard and soft', async () => {
    const admin = await serviceRoleHeaders(t);
    const hard = await linkedUser();
    expect((await t.request('DELETE', `/admin/users/${hard.userId}`, undefined, admin)).status).toBe(200);
    expect(await rowsOf(hard.userId)).toEqual([]);
    const soft = await linkedUser();
    const res = await t.request('DELETE', `/admin/users/${soft.userId}`, { should_soft_delete: true }, admin);
    expect(res.status).toBe(200);
    expect(await rowsOf(soft.userId)).toEqual([]);
    // The identity row stays (anonymised), its token does not.
    const identities = await db.orm.select().from(db.t.identities).where(eq(db.t.identities.id, soft.identityId));
    expect(identities).toHaveLength(1);
  });
});
