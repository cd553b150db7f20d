// POST /user/identities/{provider}/token (routes/external.ts, authsvc only): the stored refresh
// token traded at the provider's token endpoint for a fresh access token. Google and GitLab are
// fakes (test/helpers/fake-refresh-providers.ts) that record each refresh request.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { decryptString, parseEncryptedString } from '../../src/crypto/encrypted-string.ts';
import type { Database } from '../../src/db/database.ts';
import { bearer, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import {
  ENCRYPTION_KEY,
  nextUser,
  type RefreshFakes,
  type RefreshProvider,
  sessionFrom,
  startRefreshFakes,
} from '../helpers/fake-refresh-providers.ts';
import { verifiedTotp } from '../helpers/totp-factor.ts';

type Json = Record<string, any>;
let db: Database;
let h: RefreshFakes;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  h = await startRefreshFakes();
  t = await h.app(db, { AUTHSVC_LOG_LEVEL: 'debug' });
});
afterAll(async () => {
  await h?.fake.close();
  await db?.close();
});
beforeEach(() => {
  h.refresh = (p, req) => ({
    body: { access_token: `${p}-fresh-for-${req.form.refresh_token}`, token_type: 'Bearer', expires_in: 3599 },
  });
  h.fake.requests.length = 0;
});

const basic = (p: string) => `Basic ${btoa(`${p}-client:${p}-secret`)}`;

async function storedToken(userId: string): Promise<string | undefined> {
  const [row] = await db.orm
    .select()
    .from(db.t.identityProviderTokens)
    .where(eq(db.t.identityProviderTokens.userId, userId));
  return row && decryptString(parseEncryptedString(row.refreshToken)!, row.id, { k1: ENCRYPTION_KEY });
}

/** A user signed in with `p` (its refresh token stored): the session and the refresh token. */
async function signedIn(p: RefreshProvider): Promise<{ token: string; userId: string; refresh: string }> {
  const u = nextUser(h, p);
  const f = await sessionFrom(t, p);
  const me = (await (await t.request('GET', '/user', undefined, bearer(f.access_token!))).json()) as Json;
  return { token: f.access_token!, userId: me.id, refresh: u.refreshToken! };
}

const refresh = (p: string, token: string, app = t) =>
  app.request('POST', `/user/identities/${p}/token`, undefined, bearer(token));

describe('POST /user/identities/{provider}/token', () => {
  test("200: the provider's fresh access token, from grant_type=refresh_token with the stored token and the client credentials", async () => {
    const u = await signedIn('google');
    const res = await refresh('google', u.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      provider_token: `google-fresh-for-${u.refresh}`,
      provider_expires_in: 3599,
    });
    const [sent, ...more] = h.refreshes('google');
    expect(more).toEqual([]);
    expect(sent!.url).toBe('https://oauth2.googleapis.com/token');
    // The client authenticated as at the code exchange (HTTP Basic, remembered for the token URL).
    expect(sent!.headers.authorization).toBe(basic('google'));
    expect(sent!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(sent!.form).toEqual({ grant_type: 'refresh_token', refresh_token: u.refresh });
    // Not rotated: the stored token stays.
    expect(await storedToken(u.userId)).toBe(u.refresh);
  });

  test('a rotated refresh token (GitLab) is stored and used next; no expires_in is null', async () => {
    const u = await signedIn('gitlab');
    h.refresh = () => ({ body: { access_token: 'gl-fresh-1', refresh_token: 'gl-rotated-1', token_type: 'bearer' } });
    const res = await refresh('gitlab', u.token);
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 200,
      body: { provider_token: 'gl-fresh-1', provider_expires_in: null },
    });
    expect(h.refreshes('gitlab')[0]!.form).toEqual({ grant_type: 'refresh_token', refresh_token: u.refresh });
    expect(h.refreshes('gitlab')[0]!.headers.authorization).toBe(basic('gitlab'));
    expect(await storedToken(u.userId)).toBe('gl-rotated-1');
    h.refresh = () => ({ body: { access_token: 'gl-fresh-2', token_type: 'bearer', expires_in: '7200' } });
    expect(await (await refresh('gitlab', u.token)).json()).toEqual({
      provider_token: 'gl-fresh-2',
      provider_expires_in: 7200,
    });
    expect(h.refreshes('gitlab')[1]!.form.refresh_token).toBe('gl-rotated-1');
  });

  test('400 provider_token_refresh_failed when the provider refuses: its error and description, nothing of the token; the token stays', async () => {
    const u = await signedIn('google');
    h.refresh = () => ({
      status: 400,
      body: { error: 'invalid_client', error_description: 'The OAuth client was deleted.' },
    });
    const res = await refresh('google', u.token);
    const text = await res.text();
    expect({ status: res.status, body: JSON.parse(text) }).toEqual({
      status: 400,
      body: {
        code: 400,
        error_code: 'provider_token_refresh_failed',
        msg: 'google refused to refresh the token: invalid_client (The OAuth client was deleted.)',
      },
    });
    expect(text).not.toContain(u.refresh);
    expect(await storedToken(u.userId)).toBe(u.refresh);
  });

  test('invalid_grant: 400, and the stored token is deleted; the next call is 404 no_provider_token', async () => {
    const u = await signedIn('gitlab');
    h.refresh = () => ({ status: 400, body: { error: 'invalid_grant', error_description: 'Token was revoked' } });
    const res = await refresh('gitlab', u.token);
    expect({ status: res.status, body: await res.json() }).toMatchObject({
      status: 400,
      body: {
        error_code: 'provider_token_refresh_failed',
        msg: 'gitlab refused to refresh the token: invalid_grant (Token was revoked)',
      },
    });
    expect(await storedToken(u.userId)).toBeUndefined();
    const again = await refresh('gitlab', u.token);
    expect({ status: again.status, body: await again.json() }).toEqual({
      status: 404,
      body: { code: 404, error_code: 'no_provider_token', msg: 'No gitlab refresh token is stored for this user' },
    });
    expect(h.refreshes('gitlab')).toHaveLength(1);
  });

  test('404 no_provider_token: no such identity, nothing stored, an unknown provider, or STORE_TOKENS off', async () => {
    const { session } = await signUpConfirmed(t);
    for (const p of ['google', 'gitlab', 'twitter', 'nope']) {
      const res = await refresh(p, session.access_token);
      expect({ p, status: res.status, code: ((await res.json()) as Json).error_code }).toEqual({
        p,
        status: 404,
        code: 'no_provider_token',
      });
    }
    // Google's token is stored, but this app no longer keeps Google's tokens.
    const u = await signedIn('google');
    const off = await h.app(db, { AUTHSVC_EXTERNAL_GOOGLE_STORE_TOKENS: 'false' });
    expect((await refresh('google', u.token, off)).status).toBe(404);
    expect(h.refreshes('google')).toEqual([]);
  });

  test('401 insufficient_aal while a verified factor exists and the session is aal1; aal2 may', async () => {
    const u = await signedIn('google');
    const { aal2 } = await verifiedTotp(t, u.token);
    const aal1 = await sessionFrom(t, 'google');
    const res = await refresh('google', aal1.access_token!);
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 401,
      body: {
        code: 401,
        error_code: 'insufficient_aal',
        msg: 'AAL2 session is required to use a provider token when MFA is enabled.',
      },
    });
    expect(h.refreshes('google')).toEqual([]);
    expect((await refresh('google', aal2.access_token)).status).toBe(200);
  });

  test('the refresh token and the provider answer never reach the logs', async () => {
    const u = await signedIn('gitlab');
    h.refresh = () => ({ body: { access_token: 'gl-secret-access', refresh_token: 'gl-secret-rotated' } });
    await refresh('gitlab', u.token);
    h.refresh = () => ({ status: 503, body: 'upstream down gl-secret-body' });
    const failed = await refresh('gitlab', u.token);
    expect({ status: failed.status, body: await failed.json() }).toMatchObject({
      status: 500,
      body: { error_code: 'unexpected_failure', msg: 'Unable to refresh the provider token' },
    });
    const logs = t.logs.join('\n');
    expect(logs).toContain('token refresh answered HTTP 503');
    for (const secret of [u.refresh, 'gl-secret-access', 'gl-secret-rotated', 'gl-secret-body']) {
      expect(logs).not.toContain(secret);
    }
  });
});
