// Apple, Google, Azure, Keycloak and Facebook: fakes with a discovery document, a JWKS of a key
// made here and ID tokens signed with it. Apple's and Google's hosts are fixed in GoTrue (their
// URL setting is ignored), Facebook's default hosts are used too: routedFetch sends those hosts to
// the fake. Azure is reached as a tenant URL on the real host, also routed.
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { expect } from 'vitest';
import { hex, hmacSha256, utf8 } from '../../src/crypto/encoding.ts';
import { type FakeProvider, type ProviderScenario, routedFetch, startFakeProvider } from './fake-oauth.ts';
import { CALLBACK, bearer, expectTokenRequest } from './oauth-scenarios-b.ts';

export interface SigningKey {
  jwk: JWK;
  sign(claims: Record<string, unknown>, opts?: { kid?: string; expiresIn?: string }): Promise<string>;
}

/** An RS256 key whose public half a fake serves as its JWKS. */
export async function signingKey(kid = 'test-key-1'): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return {
    jwk,
    sign(claims, opts = {}) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? kid })
        .setIssuedAt()
        .setExpirationTime(opts.expiresIn ?? '10m')
        .sign(privateKey);
    },
  };
}

/** OIDC at_hash of an access token (RS256: left half of SHA-256, base64url). */
export async function atHash(accessToken: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(accessToken)));
  return btoa(String.fromCharCode(...d.slice(0, 16)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function providerEnv(p: string, extra: Record<string, string> = {}): Record<string, string> {
  const x = `GOTRUE_EXTERNAL_${p.toUpperCase()}`;
  return {
    [`${x}_ENABLED`]: 'true',
    [`${x}_CLIENT_ID`]: `${p}-client`,
    [`${x}_SECRET`]: `${p}-secret`,
    [`${x}_REDIRECT_URI`]: CALLBACK,
    ...extra,
  };
}

/** Discovery and JWKS routes for `issuer` served under `prefix` of the fake. */
function oidcRoutes(
  fake: FakeProvider,
  issuer: string,
  prefix: string,
  key: SigningKey,
  endpoints: { auth: string; token: string; jwks: string },
) {
  fake.routes.set(`GET ${prefix}/.well-known/openid-configuration`, () => ({
    body: {
      issuer,
      authorization_endpoint: endpoints.auth,
      token_endpoint: endpoints.token,
      jwks_uri: endpoints.jwks,
      id_token_signing_alg_values_supported: ['RS256'],
    },
  }));
  fake.routes.set(`GET ${new URL(endpoints.jwks).pathname}`, () => ({ body: { keys: [key.jwk] } }));
}

export const GOOGLE_SUB = '110169484474386276334';
export const AZURE_TENANT = '9b2e6fd0-3f2e-4e3c-a3b8-111111111111';

export const SCENARIOS: ProviderScenario[] = [
  {
    provider: 'google',
    async start() {
      const key = await signingKey();
      const fake = await startFakeProvider();
      oidcRoutes(fake, 'https://accounts.google.com', '', key, {
        auth: 'https://accounts.google.com/o/oauth2/v2/auth',
        token: 'https://oauth2.googleapis.com/token',
        jwks: 'https://www.googleapis.com/oauth2/v3/certs',
      });
      fake.routes.set('POST /token', async (req) => {
        if (req.form.code !== 'google-code') return { status: 400, body: { error: 'invalid_grant' } };
        const idToken = await key.sign({
          iss: 'https://accounts.google.com',
          aud: 'google-client',
          sub: GOOGLE_SUB,
          azp: 'google-client',
          email: 'goo.gle@gmail.example',
          email_verified: true,
          at_hash: await atHash('ya29.google-token'),
          name: 'Goo Gle',
          picture: 'https://lh3.example/photo.jpg',
          given_name: 'Goo',
          family_name: 'Gle',
          hd: 'example.com',
        });
        return {
          body: {
            access_token: 'ya29.google-token',
            expires_in: 3599,
            scope: 'openid email profile',
            token_type: 'Bearer',
            id_token: idToken,
            refresh_token: '1//google-refresh',
          },
        };
      });
      return {
        fake,
        env: providerEnv('google'),
        fetch: routedFetch(fake, ['accounts.google.com', 'oauth2.googleapis.com', 'www.googleapis.com']),
      };
    },
    callback: { method: 'GET', params: { code: 'google-code' } },
    checkRequests(reqs, loc) {
      expect(`${loc.origin}${loc.pathname}`).toBe('https://accounts.google.com/o/oauth2/v2/auth');
      expect(Object.fromEntries(loc.searchParams)).toMatchObject({
        client_id: 'google-client',
        scope: 'email profile',
        response_type: 'code',
        redirect_uri: CALLBACK,
      });
      const token = reqs.find((r) => r.url === 'https://oauth2.googleapis.com/token');
      expectTokenRequest(token, 'google', '/token');
      expect(reqs.some((r) => r.url === 'https://www.googleapis.com/oauth2/v3/certs')).toBe(true);
    },
    expected: {
      sub: GOOGLE_SUB,
      email: 'goo.gle@gmail.example',
      emailVerified: true,
      providerToken: 'ya29.google-token',
      providerRefreshToken: '1//google-refresh',
      identityData: {
        iss: 'https://accounts.google.com',
        sub: GOOGLE_SUB,
        name: 'Goo Gle',
        picture: 'https://lh3.example/photo.jpg',
        avatar_url: 'https://lh3.example/photo.jpg',
        full_name: 'Goo Gle',
        provider_id: GOOGLE_SUB,
        custom_claims: { hd: 'example.com' },
        email: 'goo.gle@gmail.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'apple',
    async start() {
      const key = await signingKey('apple-key');
      const fake = await startFakeProvider();
      oidcRoutes(fake, 'https://appleid.apple.com', '', key, {
        auth: 'https://appleid.apple.com/auth/authorize',
        token: 'https://appleid.apple.com/auth/token',
        jwks: 'https://appleid.apple.com/auth/keys',
      });
      fake.routes.set('POST /auth/token', async (req) => {
        if (
          req.form.code !== 'apple-code' ||
          req.form.client_id !== 'apple-client' ||
          req.form.secret !== 'apple-secret'
        )
          return { status: 400, body: { error: 'invalid_client' } };
        const idToken = await key.sign({
          iss: 'https://appleid.apple.com',
          aud: 'apple-client',
          sub: '001234.abcdef0123456789.0123',
          email: 'x7y8z9@privaterelay.appleid.com',
          email_verified: 'true',
          is_private_email: 'true',
          auth_time: 1732500000,
          nonce_supported: true,
          at_hash: await atHash('apple-access'),
        });
        return {
          body: {
            access_token: 'apple-access',
            token_type: 'Bearer',
            expires_in: 3600,
            refresh_token: 'apple-refresh',
            id_token: idToken,
          },
        };
      });
      return { fake, env: providerEnv('apple'), fetch: routedFetch(fake, ['appleid.apple.com']) };
    },
    // Apple's form_post, with the name it sends on first consent only.
    callback: {
      method: 'POST',
      params: {
        code: 'apple-code',
        user: JSON.stringify({ name: { firstName: 'Ap', lastName: 'Ple' }, email: 'x7y8z9@privaterelay.appleid.com' }),
      },
    },
    checkRequests(reqs, loc) {
      expect(`${loc.origin}${loc.pathname}`).toBe('https://appleid.apple.com/auth/authorize');
      // GoTrue's Apple URL carries response_mode and nothing forwarded (redirect_to is not passed on).
      expect(Object.fromEntries(loc.searchParams)).toEqual({
        client_id: 'apple-client',
        redirect_uri: CALLBACK,
        response_mode: 'form_post',
        response_type: 'code',
        scope: 'email name',
        state: expect.any(String),
      });
      const token = reqs.find((r) => r.url === 'https://appleid.apple.com/auth/token')!;
      expect(token.form).toEqual({
        grant_type: 'authorization_code',
        code: 'apple-code',
        redirect_uri: CALLBACK,
        client_id: 'apple-client',
        secret: 'apple-secret',
      });
    },
    expected: {
      sub: '001234.abcdef0123456789.0123',
      email: 'x7y8z9@privaterelay.appleid.com',
      emailVerified: true,
      providerToken: 'apple-access',
      providerRefreshToken: 'apple-refresh',
      identityData: {
        iss: 'https://appleid.apple.com',
        sub: '001234.abcdef0123456789.0123',
        provider_id: '001234.abcdef0123456789.0123',
        name: 'Ap Ple',
        full_name: 'Ap Ple',
        custom_claims: { is_private_email: true, auth_time: 1732500000 },
        email: 'x7y8z9@privaterelay.appleid.com',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'azure',
    async start() {
      const key = await signingKey('azure-key');
      const fake = await startFakeProvider();
      const issuer = `https://login.microsoftonline.com/${AZURE_TENANT}/v2.0`;
      oidcRoutes(fake, issuer, `/${AZURE_TENANT}/v2.0`, key, {
        auth: `https://login.microsoftonline.com/${AZURE_TENANT}/oauth2/v2.0/authorize`,
        token: `https://login.microsoftonline.com/${AZURE_TENANT}/oauth2/v2.0/token`,
        jwks: `https://login.microsoftonline.com/${AZURE_TENANT}/discovery/v2.0/keys`,
      });
      fake.routes.set(`POST /${AZURE_TENANT}/oauth2/v2.0/token`, async (req) => {
        if (req.form.code !== 'azure-code') return { status: 400, body: { error: 'invalid_grant' } };
        const idToken = await key.sign({
          iss: issuer,
          aud: 'azure-client',
          sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
          oid: '00000000-0000-0000-66f3-3332eca7ea81',
          tid: AZURE_TENANT,
          name: 'Abe Lincoln',
          preferred_username: 'abeli@microsoft.example',
          email: 'abeli@microsoft.example',
          ver: '2.0',
          aio: 'xyz',
          uti: 'u1',
          rh: 'r1',
        });
        return {
          body: {
            access_token: 'azure-access',
            token_type: 'Bearer',
            expires_in: 3599,
            scope: 'openid',
            id_token: idToken,
          },
        };
      });
      return {
        fake,
        env: providerEnv('azure', { GOTRUE_EXTERNAL_AZURE_URL: `https://login.microsoftonline.com/${AZURE_TENANT}` }),
        fetch: routedFetch(fake, ['login.microsoftonline.com']),
      };
    },
    callback: { method: 'GET', params: { code: 'azure-code' } },
    checkRequests(reqs, loc) {
      expect(`${loc.origin}${loc.pathname}`).toBe(
        `https://login.microsoftonline.com/${AZURE_TENANT}/oauth2/v2.0/authorize`,
      );
      expect(loc.searchParams.get('scope')).toBe('openid');
      expectTokenRequest(
        reqs.find((r) => r.method === 'POST'),
        'azure',
        `/${AZURE_TENANT}/oauth2/v2.0/token`,
      );
    },
    expected: {
      // No xms_edov claim and an email present: verified, as GoTrue reads it.
      sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
      email: 'abeli@microsoft.example',
      emailVerified: true,
      providerToken: 'azure-access',
      identityData: {
        iss: `https://login.microsoftonline.com/${AZURE_TENANT}/v2.0`,
        sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
        provider_id: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
        preferred_username: 'abeli@microsoft.example',
        full_name: 'Abe Lincoln',
        custom_claims: {
          oid: '00000000-0000-0000-66f3-3332eca7ea81',
          tid: AZURE_TENANT,
          email: 'abeli@microsoft.example',
        },
        email: 'abeli@microsoft.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'keycloak',
    async start() {
      const fake = await startFakeProvider({
        'POST /realms/acme/protocol/openid-connect/token': (req) =>
          req.form.code === 'keycloak-code'
            ? {
                body: {
                  access_token: 'kc-access',
                  expires_in: 300,
                  refresh_token: 'kc-refresh',
                  token_type: 'Bearer',
                  scope: 'profile email',
                },
              }
            : { status: 400, body: { error: 'invalid_grant' } },
        'GET /realms/acme/protocol/openid-connect/userinfo': bearer('kc-access', {
          sub: 'f1d2-kc',
          email_verified: true,
          name: 'Kay Cloak',
          preferred_username: 'kay',
          given_name: 'Kay',
          family_name: 'Cloak',
          email: 'kay@keycloak.example',
          groups: ['admins'],
        }),
      });
      return { fake, env: providerEnv('keycloak', { GOTRUE_EXTERNAL_KEYCLOAK_URL: `${fake.base}/realms/acme/` }) };
    },
    callback: { method: 'GET', params: { code: 'keycloak-code' } },
    checkRequests(reqs, loc, fake) {
      expect(`${loc.origin}${loc.pathname}`).toBe(`${fake.base}/realms/acme/protocol/openid-connect/auth`);
      expect(loc.searchParams.get('scope')).toBe('profile email');
      expectTokenRequest(reqs[0], 'keycloak', '/realms/acme/protocol/openid-connect/token');
      // The realm's userinfo: a GET with the access token as Bearer and authsvc's User-Agent, nothing else of ours.
      expect(reqs).toHaveLength(2);
      expect(reqs[1]).toMatchObject({ method: 'GET', path: '/realms/acme/protocol/openid-connect/userinfo', body: '' });
      expect(reqs[1]!.headers.authorization).toBe('Bearer kc-access');
      expect(reqs[1]!.headers['user-agent']).toBe('authsvc/0.0.0-test');
      expect(reqs[1]!.headers['content-type']).toBeUndefined();
    },
    expected: {
      sub: 'f1d2-kc',
      email: 'kay@keycloak.example',
      emailVerified: true,
      providerToken: 'kc-access',
      providerRefreshToken: 'kc-refresh',
      identityData: {
        iss: '{base}/realms/acme',
        sub: 'f1d2-kc',
        name: 'Kay Cloak',
        email: 'kay@keycloak.example',
        email_verified: true,
        full_name: 'Kay Cloak',
        provider_id: 'f1d2-kc',
        custom_claims: { preferred_username: 'kay', given_name: 'Kay', family_name: 'Cloak', groups: ['admins'] },
        phone_verified: false,
      },
    },
  },
  {
    provider: 'facebook',
    async start() {
      const fake = await startFakeProvider({
        'POST /oauth/access_token': (req) =>
          req.form.code === 'facebook-code'
            ? { body: { access_token: 'fb-access', token_type: 'bearer', expires_in: 5183944 } }
            : { status: 400, body: { error: { message: 'bad code' } } },
        'GET /me': (req) => {
          const u = new URL(req.path, 'http://x');
          if (u.searchParams.get('appsecret_proof') !== hex(hmacSha256(utf8('facebook-secret'), utf8('fb-access'))))
            return { status: 400, body: { error: { message: 'bad proof' } } };
          return {
            body: {
              id: '10224',
              email: 'face@book.example',
              first_name: 'Face',
              last_name: 'Book',
              name: 'Facey',
              picture: {
                data: { height: 50, is_silhouette: false, url: 'https://platform-lookaside.example/p.jpg', width: 50 },
              },
            },
          };
        },
      });
      return {
        fake,
        env: providerEnv('facebook'),
        fetch: routedFetch(fake, ['www.facebook.com', 'graph.facebook.com']),
      };
    },
    callback: { method: 'GET', params: { code: 'facebook-code' } },
    checkRequests(reqs, loc) {
      expect(`${loc.origin}${loc.pathname}`).toBe('https://www.facebook.com/dialog/oauth');
      expect(loc.searchParams.get('scope')).toBe('email');
      expectTokenRequest(reqs[0], 'facebook', '/oauth/access_token');
      expect(reqs[1]!.url).toBe(
        `https://graph.facebook.com/me?fields=email,first_name,last_name,name,picture&appsecret_proof=${hex(hmacSha256(utf8('facebook-secret'), utf8('fb-access')))}`,
      );
    },
    expected: {
      sub: '10224',
      email: 'face@book.example',
      emailVerified: true,
      providerToken: 'fb-access',
      identityData: {
        iss: 'https://graph.facebook.com/me?fields=email,first_name,last_name,name,picture',
        sub: '10224',
        name: 'Face Book',
        nickname: 'Facey',
        picture: 'https://platform-lookaside.example/p.jpg',
        slug: 'Facey',
        avatar_url: 'https://platform-lookaside.example/p.jpg',
        full_name: 'Face Book',
        provider_id: '10224',
        email: 'face@book.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
];
