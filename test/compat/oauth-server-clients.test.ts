// The OAuth 2.1 / OIDC provider driven by the client libraries third parties use (issue 40): the
// certified relying-party library openid-client 6 (on oauth4webapi) and the MCP TypeScript SDK's
// OAuth client (`auth()` with an OAuthClientProvider), against the real app served over HTTP on
// 127.0.0.1, with a small MCP resource server beside it. The test plays the app's consent page.
import { type ServerType, serve } from '@hono/node-server';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { freePort } from '../helpers/free-port.ts';

type Json = Record<string, any>;
const RP_REDIRECT = 'https://rp.example.com/callback';
const MCP_REDIRECT = 'http://127.0.0.1:33419/callback';
const DOC_URL = 'https://mcp-client.example.net/client.json';

let db: Database;
let t: TestApp;
let issuer: string;
let server: ServerType;
let rs: Server;
let resource: string;

/** deps.fetch: the MCP client's metadata document is answered here (nothing else leaves the machine). */
const fetchWithDoc = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = input instanceof Request ? input.url : String(input);
  if (url === DOC_URL) {
    return Response.json({
      client_id: DOC_URL,
      client_name: 'MCP client (CIMD)',
      redirect_uris: [MCP_REDIRECT],
      token_endpoint_auth_method: 'none',
    });
  }
  return globalThis.fetch(input, init);
}) as typeof fetch;

beforeAll(async () => {
  db = await openTestDb();
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'e2e', alg: 'ES256', key_ops: ['sign', 'verify'] };
  t = await buildTestApp(
    db,
    {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_JWT_ISSUER: issuer,
      AUTHSVC_API_EXTERNAL_URL: issuer,
      AUTHSVC_JWT_KEYS: JSON.stringify([jwk]),
      AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
      AUTHSVC_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
      AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
    },
    { fetch: fetchWithDoc, resolveHost: async () => ['93.184.216.34'] },
  );
  // Globals left alone: the SDK tells fetch's Response by `instanceof`, which node-server's own would break.
  server = serve({ fetch: t.app.fetch, port, hostname: '127.0.0.1', overrideGlobalObjects: false });
  // The MCP server: protected-resource metadata naming authsvc, and one tool behind a token for its own URL.
  const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));
  rs = createServer(async (req, res) => {
    const url = new URL(req.url!, resource);
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          resource,
          authorization_servers: [issuer],
          scopes_supported: ['openid', 'email', 'offline_access'],
          bearer_methods_supported: ['header'],
        }),
      );
      return;
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    try {
      const { payload } = await jwtVerify(token ?? '', jwks, { issuer, audience: resource });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ result: { content: [{ type: 'text', text: `hello ${payload.sub}` }] } }));
    } catch {
      res.statusCode = 401;
      res.setHeader(
        'www-authenticate',
        `Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', resource)}"`,
      );
      res.end();
    }
  });
  await new Promise<void>((r) => rs.listen(0, '127.0.0.1', r));
  resource = `http://127.0.0.1:${(rs.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  rs?.closeAllConnections();
  await new Promise((r) => rs?.close(r));
  await db?.close();
});

const adminHeaders = async () => ({
  authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 })}`,
});

/** The app's consent page: follows /oauth/authorize to it, approves as the user, returns where the browser goes next. */
async function consentAs(userToken: string, authorizationUrl: URL | string): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const id = new URL(res.headers.get('location')!).searchParams.get('authorization_id');
  expect(id).toBeTruthy();
  const headers = { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' };
  const details = (await (await fetch(`${issuer}/oauth/authorizations/${id}`, { headers })).json()) as Json;
  if (details.redirect_url) return new URL(details.redirect_url);
  const decided = await fetch(`${issuer}/oauth/authorizations/${id}/consent`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ action: 'approve' }),
  });
  expect(decided.status).toBe(200);
  return new URL(((await decided.json()) as Json).redirect_url);
}

describe('openid-client 6 as a relying party', () => {
  test('discovery, client_secret_basic, code + PKCE + nonce with iss, ID token, userinfo, refresh, introspection, revocation', async () => {
    const created = (await (
      await fetch(`${issuer}/admin/oauth/clients`, {
        method: 'POST',
        headers: { ...(await adminHeaders()), 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Certified RP', redirect_uris: [RP_REDIRECT] }),
      })
    ).json()) as Json;
    const config = await oidc.discovery(
      new URL(issuer),
      created.client_id,
      undefined,
      oidc.ClientSecretBasic(created.client_secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    expect(config.serverMetadata()).toMatchObject({ issuer, authorization_response_iss_parameter_supported: true });
    const user = await signUpConfirmed(t);
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: RP_REDIRECT,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
    });
    const callback = await consentAs(user.session.access_token, url);
    expect(callback.searchParams.get('iss')).toBe(issuer);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedNonce: nonce,
      expectedState: state,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({
      iss: issuer,
      aud: created.client_id,
      sub: user.session.user.id,
      email: user.email,
      email_verified: true,
      nonce,
    });
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, email: user.email, email_verified: true, name: user.email });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toMatchObject({
      active: true,
      client_id: created.client_id,
      sub: claims.sub,
      token_type: 'Bearer',
    });
    await oidc.tokenRevocation(config, refreshed.refresh_token!);
    expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toEqual({ active: false });
    // The dead refresh token is an OAuth error the library can read.
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
      code: 'OAUTH_RESPONSE_BODY_ERROR',
      error: 'invalid_grant',
    });
    // A wrong secret: invalid_client, answered 401 to a Basic attempt.
    const wrong = await oidc.discovery(new URL(issuer), created.client_id, undefined, oidc.ClientSecretBasic('wrong'), {
      execute: [oidc.allowInsecureRequests],
    });
    const refused = (await oidc
      .refreshTokenGrant(wrong, tokens.refresh_token!)
      .catch((e: unknown) => e)) as oidc.WWWAuthenticateChallengeError;
    expect(refused).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
    expect({ status: refused.status, scheme: refused.cause[0]?.scheme, body: await refused.response.json() }).toEqual({
      status: 401,
      scheme: 'basic',
      body: { error: 'invalid_client', error_description: 'invalid client credentials' },
    });
  });

  test('dynamic registration of a confidential client (RFC 7591 answer openid-client accepts), then a sign-in with it', async () => {
    const config = await oidc.dynamicClientRegistration(
      new URL(issuer),
      {
        redirect_uris: [RP_REDIRECT],
        token_endpoint_auth_method: 'client_secret_post',
        client_name: 'Self-registered RP',
      },
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    );
    const meta = config.clientMetadata();
    expect(meta).toMatchObject({ client_secret_expires_at: 0, client_id_issued_at: expect.any(Number) });
    const user = await signUpConfirmed(t);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: RP_REDIRECT,
      scope: 'email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const tokens = await oidc.authorizationCodeGrant(config, await consentAs(user.session.access_token, url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    // Not the user's session at authsvc (security review 2026-12-01, H1).
    const own = await fetch(`${issuer}/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(own.status).toBe(403);
  });
});

/** An MCP client's state, as a desktop client keeps it between runs. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  lastAuthorizationUrl: URL | undefined;
  invalidated: string[] = [];
  constructor(readonly clientMetadataUrl?: string) {}
  get redirectUrl() {
    return MCP_REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP test client',
      redirect_uris: [MCP_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.lastAuthorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    this.invalidated.push(scope);
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
  }
}

/** auth() until AUTHORIZED: the user consents in between, as in the browser. */
async function signIn(provider: MemoryProvider, userToken: string): Promise<void> {
  expect(await auth(provider, { serverUrl: resource })).toBe('REDIRECT');
  const callback = await consentAs(userToken, provider.lastAuthorizationUrl!);
  expect(await auth(provider, { serverUrl: resource, authorizationCode: callback.searchParams.get('code')! })).toBe(
    'AUTHORIZED',
  );
}

async function callTool(token: string): Promise<Response> {
  return fetch(resource, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{"method":"tools/call"}',
  });
}

describe("the MCP TypeScript SDK's OAuth client", () => {
  test("registers, authorizes for the MCP server's URL, calls the tool, refreshes; a dead grant makes it discard its tokens", async () => {
    const provider = new MemoryProvider();
    const user = await signUpConfirmed(t);
    await signIn(provider, user.session.access_token);
    expect(provider.info?.client_id).toMatch(/^[0-9a-f-]{36}$/);
    const first = provider.saved!;
    const tool = await callTool(first.access_token);
    expect(await tool.json()).toEqual({
      result: { content: [{ type: 'text', text: `hello ${user.session.user.id}` }] },
    });
    // With tokens held, auth() refreshes them (one-time refresh tokens: the old one is dead at once).
    expect(await auth(provider, { serverUrl: resource })).toBe('AUTHORIZED');
    expect(provider.saved!.refresh_token).not.toBe(first.refresh_token);
    expect((await callTool(provider.saved!.access_token)).status).toBe(200);
    // The user revokes the grant: invalid_grant, so the SDK drops its tokens and starts a new authorization.
    const grants = await fetch(`${issuer}/user/oauth/grants?client_id=${provider.info!.client_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${user.session.access_token}` },
    });
    expect(grants.status).toBe(204);
    expect(await auth(provider, { serverUrl: resource })).toBe('REDIRECT');
    expect(provider.invalidated).toEqual(['tokens']);
    expect(provider.saved).toBeUndefined();
  });

  test('a deleted client is invalid_client: the SDK registers again', async () => {
    const provider = new MemoryProvider();
    const user = await signUpConfirmed(t);
    await signIn(provider, user.session.access_token);
    const oldId = provider.info!.client_id;
    const deleted = await fetch(`${issuer}/admin/oauth/clients/${oldId}`, {
      method: 'DELETE',
      headers: await adminHeaders(),
    });
    expect(deleted.status).toBe(204);
    expect(await auth(provider, { serverUrl: resource })).toBe('REDIRECT');
    expect(provider.invalidated).toEqual(['all']);
    expect(provider.info?.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(provider.info?.client_id).not.toBe(oldId);
  });

  test('with a Client ID Metadata Document (clientMetadataUrl) instead of registration', async () => {
    const provider = new MemoryProvider(DOC_URL);
    const user = await signUpConfirmed(t);
    await signIn(provider, user.session.access_token);
    expect(provider.info?.client_id).toBe(DOC_URL);
    const { payload } = await jwtVerify(
      provider.saved!.access_token,
      createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`)),
      { audience: resource },
    );
    expect(payload.client_id).toBe(DOC_URL);
    expect((await callTool(provider.saved!.access_token)).status).toBe(200);
  });
});
