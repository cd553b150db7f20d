// A small OAuth 2.1 client for the authorization-server tests: PKCE (S256), the authorize
// redirect, the consent hand-off as an app's consent page does it, and the token endpoint in
// every client-authentication method. It speaks HTTP to the app like any third-party client.
import { createHash, randomBytes } from 'node:crypto';
import type { TestApp } from './app.ts';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: string;
  redirect_uris: string[];
}

export interface AuthorizeOptions {
  redirectUri?: string;
  scope?: string;
  state?: string;
  resource?: string;
  nonce?: string;
  pkce?: Pkce | null;
  method?: string;
  extra?: Record<string, string>;
}

export function authorizePath(client: RegisteredClient, o: AuthorizeOptions = {}): { path: string; pkce?: Pkce } {
  const p = o.pkce === null ? undefined : (o.pkce ?? pkce());
  const q = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: o.redirectUri ?? client.redirect_uris[0]!,
    response_type: 'code',
  });
  if (o.scope !== undefined) q.set('scope', o.scope);
  if (o.state !== undefined) q.set('state', o.state);
  if (o.resource !== undefined) q.set('resource', o.resource);
  if (o.nonce !== undefined) q.set('nonce', o.nonce);
  if (p) {
    q.set('code_challenge', p.challenge);
    q.set('code_challenge_method', o.method ?? 'S256');
  }
  for (const [k, v] of Object.entries(o.extra ?? {})) q.set(k, v);
  return { path: `/oauth/authorize?${q}`, pkce: p };
}

/** GET /oauth/authorize; the authorization_id from the redirect to the consent page. */
export async function startAuthorization(
  t: TestApp,
  client: RegisteredClient,
  o: AuthorizeOptions = {},
): Promise<{ authorizationId: string; pkce: Pkce }> {
  const { path, pkce: p } = authorizePath(client, o);
  const res = await t.app.request(path);
  if (res.status !== 302) throw new Error(`authorize: ${res.status} ${await res.text()}`);
  const location = new URL(res.headers.get('location')!);
  const id = location.searchParams.get('authorization_id');
  if (!id) throw new Error(`authorize redirected elsewhere: ${location}`);
  return { authorizationId: id, pkce: p! };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The consent page: reads the request, approves (or denies) with the user's access token. */
export async function consent(
  t: TestApp,
  authorizationId: string,
  userToken: string,
  action: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const details = await t.app.request(`/oauth/authorizations/${authorizationId}`, { headers: bearer(userToken) });
  if (details.status !== 200) throw new Error(`details: ${details.status} ${await details.text()}`);
  const body = (await details.json()) as Record<string, string>;
  if (body.redirect_url) return new URL(body.redirect_url);
  const res = await t.app.request(`/oauth/authorizations/${authorizationId}/consent`, {
    method: 'POST',
    headers: { ...bearer(userToken), 'content-type': 'application/json' },
    body: JSON.stringify({ action }),
  });
  if (res.status !== 200) throw new Error(`consent: ${res.status} ${await res.text()}`);
  return new URL(((await res.json()) as { redirect_url: string }).redirect_url);
}

/** POST /oauth/token as a form, authenticating as the client registered (basic, post or none). */
export async function tokenRequest(
  t: TestApp,
  client: RegisteredClient,
  params: Record<string, string>,
  opts: { secret?: string; method?: string } = {},
): Promise<Response> {
  const method = opts.method ?? client.token_endpoint_auth_method;
  const secret = opts.secret ?? client.client_secret ?? '';
  // A real client sends the redirect URI it authorized with (RFC 6749 §4.1.3); `redirect_uri: ''` sends none.
  const sent =
    params.grant_type === 'authorization_code' && !('redirect_uri' in params)
      ? { ...params, redirect_uri: client.redirect_uris[0]! }
      : params;
  const form = new URLSearchParams(Object.entries(sent).filter(([k, v]) => !(k === 'redirect_uri' && v === '')));
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (method === 'client_secret_basic') {
    headers.authorization = `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}`;
  } else {
    form.set('client_id', client.client_id);
    if (method === 'client_secret_post') form.set('client_secret', secret);
  }
  return t.app.request('/oauth/token', { method: 'POST', headers, body: form.toString() });
}

/** authorize → consent → code. */
export async function authorizationCode(
  t: TestApp,
  client: RegisteredClient,
  userToken: string,
  o: AuthorizeOptions = {},
): Promise<{ code: string; pkce: Pkce; redirect: URL }> {
  const started = await startAuthorization(t, client, o);
  const redirect = await consent(t, started.authorizationId, userToken);
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code: ${redirect}`);
  return { code, pkce: started.pkce, redirect };
}
