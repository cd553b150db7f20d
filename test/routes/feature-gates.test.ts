// Features not built yet answer as GoTrue does when they are switched off, and the OpenID
// discovery document is served.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import { buildTestApp, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';

type Json = Record<string, any>;
let db: Database;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true', GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
});
afterAll(async () => {
  await db?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const admin = async () =>
  bearer(await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 }));

async function expectError(res: Response, status: number, code: string, msg: string): Promise<void> {
  expect({ status: res.status, body: await res.json() }).toEqual({
    status,
    body: { code: status, error_code: code, msg },
  });
  expect(res.headers.get('x-sb-error-code')).toBe(code);
}

describe('switched-off features', () => {
  test('SAML SSO: 404 saml_provider_disabled', async () => {
    for (const [method, path] of [
      ['POST', '/sso'],
      ['GET', '/sso/saml/metadata'],
      ['POST', '/sso/saml/acs'],
      ['POST', '/auth/v1/sso'],
    ] as const) {
      await expectError(
        await t.request(method, path, method === 'POST' ? { domain: 'example.com' } : undefined),
        404,
        'saml_provider_disabled',
        'SAML 2.0 is disabled',
      );
    }
  });

  test('Web3: POST /token?grant_type=web3 is 422 web3_provider_disabled', async () => {
    await expectError(
      await t.request('POST', '/token?grant_type=web3', { chain: 'solana', message: 'm', signature: 's' }),
      422,
      'web3_provider_disabled',
      'Web3 provider is disabled',
    );
  });

  test('passkeys: 404 passkey_disabled, before any authentication', async () => {
    for (const [method, path] of [
      ['POST', '/passkeys/authentication/options'],
      ['POST', '/passkeys/registration/options'],
      ['GET', '/passkeys'],
      ['DELETE', '/passkeys/3f1c'],
    ] as const) {
      await expectError(await t.request(method, path), 404, 'passkey_disabled', 'Passkeys are disabled');
    }
  });

  test('OAuth server: 404 feature_disabled (admin routes still need an admin)', async () => {
    await expectError(
      await t.request('GET', '/admin/oauth/clients', undefined, await admin()),
      404,
      'feature_disabled',
      'OAuth server is disabled',
    );
    expect((await t.request('GET', '/admin/oauth/clients')).status).toBe(401);
    for (const path of ['/oauth/authorize?client_id=x', '/oauth/userinfo', '/.well-known/oauth-authorization-server']) {
      await expectError(await t.request('GET', path), 404, 'feature_disabled', 'OAuth server is disabled');
    }
    await expectError(await t.request('POST', '/oauth/token', {}), 404, 'feature_disabled', 'OAuth server is disabled');
  });

  test('MFA: switched-off factor types are refused (WebAuthn always, phone by default, TOTP when turned off), unknown factors are not found, anonymous users are refused; supabase-js sees the same', async () => {
    const u = await signUpConfirmed(t);
    const auth = bearer(u.session.access_token);
    const totpOff = await buildTestApp(db, { AUTHSVC_MFA_TOTP_ENROLL_ENABLED: 'false' });
    await expectError(
      await totpOff.request('POST', '/factors', { factor_type: 'totp' }, auth),
      422,
      'mfa_totp_enroll_not_enabled',
      'MFA enroll is disabled for TOTP',
    );
    await expectError(
      await t.request('POST', '/factors', { factor_type: 'webauthn' }, auth),
      422,
      'mfa_webauthn_enroll_not_enabled',
      'MFA enroll is disabled for WebAuthn',
    );
    await expectError(
      await t.request('POST', '/factors', { factor_type: 'phone', phone: '+15555550100' }, auth),
      422,
      'mfa_phone_enroll_not_enabled',
      'MFA enroll is disabled for Phone',
    );
    await expectError(
      await t.request('POST', '/factors', { factor_type: 'sms' }, auth),
      400,
      'validation_failed',
      'factor_type needs to be totp, phone, or webauthn',
    );
    const id = crypto.randomUUID();
    await expectError(
      await t.request('POST', `/factors/${id}/challenge`, {}, auth),
      404,
      'mfa_factor_not_found',
      'Factor not found',
    );
    await expectError(
      await t.request('POST', `/factors/${id}/verify`, { challenge_id: id, code: '123456' }, auth),
      404,
      'mfa_factor_not_found',
      'Factor not found',
    );
    await expectError(
      await t.request('DELETE', `/factors/${id}`, undefined, auth),
      404,
      'mfa_factor_not_found',
      'Factor not found',
    );
    await expectError(
      await t.request('DELETE', '/factors/not-a-uuid', undefined, auth),
      404,
      'validation_failed',
      'factor_id must be an UUID',
    );
    expect((await t.request('POST', '/factors', { factor_type: 'totp' })).status).toBe(401);
    const anon = (await (await t.request('POST', '/signup', {})).json()) as Json;
    await expectError(
      await t.request('POST', '/factors', { factor_type: 'totp' }, bearer(anon.access_token)),
      403,
      'no_authorization',
      'Anonymous user not allowed to perform these actions',
    );
    // The admin view: no factors.
    const listed = await t.request('GET', `/admin/users/${u.session.user.id}/factors`, undefined, await admin());
    expect({ status: listed.status, body: await listed.json() }).toEqual({ status: 200, body: [] });
    await expectError(
      await t.request('DELETE', `/admin/users/${u.session.user.id}/factors/${id}`, undefined, await admin()),
      404,
      'mfa_factor_not_found',
      'Factor not found',
    );

    // Through supabase-js: the client surfaces GoTrue's code.
    const sb = supabaseClientFor(t.app);
    await sb.auth.setSession({ access_token: u.session.access_token, refresh_token: u.session.refresh_token });
    const { error } = await sb.auth.mfa.enroll({ factorType: 'phone', phone: '+15555550100' });
    expect(error).toMatchObject({ status: 422, code: 'mfa_phone_enroll_not_enabled' });
  });
});

describe('GET /.well-known/openid-configuration', () => {
  test('issuer is JWT_ISSUER; URLs, jwks_uri and the accepted algorithms', async () => {
    const issued = await buildTestApp(db, { AUTHSVC_JWT_ISSUER: 'https://project.example.com/auth/v1/' });
    const res = await issued.request('GET', '/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const doc = (await res.json()) as Json;
    const document = (base: string, issuer: string, more: Json = {}) => ({
      issuer,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      scopes_supported: ['openid', 'profile', 'email', 'phone', 'offline_access'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['HS256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint: `${base}/oauth/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint: `${base}/oauth/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      claims_supported: [
        'sub',
        'aud',
        'iss',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'email',
        'email_verified',
        'phone_number',
        'phone_number_verified',
        'name',
        'given_name',
        'family_name',
        'middle_name',
        'nickname',
        'profile',
        'website',
        'gender',
        'birthdate',
        'zoneinfo',
        'locale',
        'picture',
        'preferred_username',
        'updated_at',
      ],
      code_challenge_methods_supported: ['S256'],
      // Local mode (the tests' config): Client ID Metadata Documents are on.
      client_id_metadata_document_supported: true,
      ...more,
    });
    // The whole document: a field added, dropped or renamed shows here.
    expect(doc).toEqual(
      document('https://project.example.com/auth/v1', 'https://project.example.com/auth/v1/', {
        authorization_response_iss_parameter_supported: true,
      }),
    );
    // Without JWT_ISSUER the URLs use API_EXTERNAL_URL (GoTrue's would be relative), and no `iss` is promised.
    const plain = (await (await t.request('GET', '/auth/v1/.well-known/openid-configuration')).json()) as Json;
    expect(plain).toEqual(document('http://localhost:9999', ''));
  });
});
