// Provider paths the end-to-end scenarios do not take, on the same fakes: Google without an ID
// token in the token answer (userinfo v2, as GoTrue falls back), and Azure refusing an ID token
// from a tenant other than the one EXTERNAL_AZURE_URL names.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { base64url, utf8 } from '../../src/crypto/encoding.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import type { ProviderScenario } from '../helpers/fake-oauth.ts';
import { AZURE_TENANT, SCENARIOS } from '../helpers/oauth-scenarios-oidc.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const scenario = (p: string) => SCENARIOS.find((s) => s.provider === p)!;

/** /authorize then /callback with the scenario's code; the callback's redirect. */
async function signIn(s: ProviderScenario, env: Record<string, string>, fetch?: typeof globalThis.fetch): Promise<URL> {
  const t = await buildTestApp(
    db,
    { ...env, AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**' },
    fetch ? { fetch } : {},
  );
  const started = await t.request('GET', `/authorize?provider=${s.provider}&redirect_to=https://app.example.com/done`);
  const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
  const res = await t.request('GET', `/callback?${new URLSearchParams({ ...s.callback.params, state })}`);
  expect(res.status).toBe(302);
  const loc = new URL(res.headers.get('location')!);
  if (loc.hash.includes('access_token')) {
    const f = Object.fromEntries(new URLSearchParams(loc.hash.slice(1)));
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
    ).json()) as Json;
    loc.searchParams.set('me', JSON.stringify(me));
  }
  return loc;
}

describe('Google', () => {
  test('no id_token in the token answer: the user comes from userinfo v2 with the access token as Bearer; no keys are fetched', async () => {
    const s = scenario('google');
    const { fake, env, fetch } = await s.start();
    try {
      fake.routes.set('POST /token', () => ({
        body: { access_token: 'ya29.no-id-token', token_type: 'Bearer', expires_in: 3599, scope: 'email profile' },
      }));
      fake.routes.set('GET /userinfo/v2/me', (req) =>
        req.headers.authorization === 'Bearer ya29.no-id-token'
          ? {
              body: {
                id: '1098765',
                email: 'Fall.Back@gmail.example',
                verified_email: true,
                name: 'Fall Back',
                given_name: 'Fall',
                family_name: 'Back',
                picture: 'https://lh3.example/fb.jpg',
                locale: 'en',
              },
            }
          : { status: 401, body: { error: 'invalid_token' } },
      );
      const loc = await signIn(s, env, fetch);
      expect(loc.searchParams.get('error_description')).toBeNull();
      const userinfo = fake.requests.filter((r) => r.url === 'https://www.googleapis.com/userinfo/v2/me');
      expect(userinfo).toHaveLength(1);
      expect(userinfo[0]).toMatchObject({ method: 'GET', body: '' });
      expect(userinfo[0]!.headers.authorization).toBe('Bearer ya29.no-id-token');
      expect(fake.requests.some((r) => r.url === 'https://www.googleapis.com/oauth2/v3/certs')).toBe(false);
      const me = JSON.parse(loc.searchParams.get('me')!) as Json;
      expect(me.email).toBe('fall.back@gmail.example');
      expect(me.identities[0].identity_data).toEqual({
        iss: 'https://www.googleapis.com/userinfo/v2/me',
        sub: '1098765',
        name: 'Fall Back',
        picture: 'https://lh3.example/fb.jpg',
        email: 'Fall.Back@gmail.example',
        email_verified: true,
        avatar_url: 'https://lh3.example/fb.jpg',
        full_name: 'Fall Back',
        provider_id: '1098765',
        phone_verified: false,
      });
    } finally {
      await fake.close();
    }
  });
});

describe('Azure', () => {
  const unsignedToken = (claims: Record<string, unknown>) =>
    `${base64url(utf8(JSON.stringify({ alg: 'RS256', kid: 'azure-key' })))}.${base64url(utf8(JSON.stringify(claims)))}.c2lnbmF0dXJl`;

  test.each([
    ['another tenant', 'https://login.microsoftonline.com/00000000-1111-2222-3333-444444444444/v2.0'],
    ['a host outside Azure', 'https://login.evil.example/v2.0'],
    ['a CIAM tenant', 'https://acme.ciamlogin.com/00000000-1111-2222-3333-444444444444/v2.0'],
  ])(
    'an ID token from %s than EXTERNAL_AZURE_URL names is refused in the callback, before any discovery or key is fetched',
    async (_what, iss) => {
      const s = scenario('azure');
      const { fake, env, fetch } = await s.start();
      try {
        fake.routes.set(`POST /${AZURE_TENANT}/oauth2/v2.0/token`, () => ({
          body: {
            access_token: 'azure-access',
            token_type: 'Bearer',
            id_token: unsignedToken({ iss, aud: 'azure-client', sub: 'intruder', email: 'x@evil.example' }),
          },
        }));
        const loc = await signIn(s, env, fetch);
        expect(`${loc.origin}${loc.pathname}`).toBe('https://app.example.com/done');
        expect(Object.fromEntries(loc.searchParams)).toEqual({
          error: 'server_error',
          error_code: 'unexpected_failure',
          error_description: 'Error getting user profile from external provider',
        });
        expect(fake.requests.filter((r) => r.method === 'GET')).toEqual([]);
      } finally {
        await fake.close();
      }
    },
  );
});
