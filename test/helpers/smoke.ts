// The runtime smoke suite: the same HTTP conversation against authsvc on any runtime (Node,
// workerd, Bun, Deno). `lastMail` returns what the runtime's mailer was handed for an address.
import { expect } from 'vitest';

export interface SmokeTarget {
  baseUrl: string;
  /** The confirmation email handed to the mailer for `email` (link and code), however the runtime exposes it. */
  lastMail(email: string): Promise<{ link: string; code?: string }>;
}

type Json = Record<string, any>;

async function call(
  t: SmokeTarget,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, headers: res.headers };
}

/** Runs the whole conversation; fails with the first unexpected answer. */
export async function runSmoke(t: SmokeTarget): Promise<void> {
  const email = `smoke-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = 'smoke-password-1';

  const health = await call(t, 'GET', '/health');
  expect(health.status).toBe(200);
  expect(health.body.name).toBe('GoTrue');

  // The OpenAPI document, built on its first request from the zod schemas (z.toJSONSchema).
  const api = await call(t, 'GET', '/openapi.json');
  expect(api.status).toBe(200);
  expect(api.body.openapi).toBe('3.1.1');
  expect(api.body.info.version).toBe(health.body.version);
  expect(api.body.paths['/token'].post.requestBody.content['application/json'].schema.anyOf).toHaveLength(5);

  // One error body, in GoTrue's legacy shape.
  const bad = await call(t, 'POST', '/token?grant_type=password', { email, password });
  expect(bad.status).toBe(400);
  expect(bad.body).toEqual({ code: 400, error_code: 'invalid_credentials', msg: 'Invalid login credentials' });
  expect(bad.headers.get('x-sb-error-code')).toBe('invalid_credentials');

  // Signup without autoconfirm: the confirmation is handed to the mailer, its link signs in.
  const signup = await call(t, 'POST', '/signup', { email, password });
  expect(signup.status, JSON.stringify(signup.body)).toBe(200);
  expect(signup.body.email).toBe(email);
  const mail = await t.lastMail(email);
  const link = new URL(mail.link);
  const verified = await fetch(`${t.baseUrl}/verify${link.search}`, { redirect: 'manual' });
  expect(verified.status).toBe(303);
  const frag = new URLSearchParams((verified.headers.get('location') ?? '').split('#')[1] ?? '');
  expect(frag.get('access_token')).toBeTruthy();

  // Password sign-in, get user, refresh, logout.
  const signIn = await call(t, 'POST', '/token?grant_type=password', { email, password });
  expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
  expect(signIn.body.weak_password).toBeNull();
  const auth = { authorization: `Bearer ${signIn.body.access_token}` };
  const me = await call(t, 'GET', '/user', undefined, auth);
  expect(me.status).toBe(200);
  expect(me.body.email).toBe(email);
  const refreshed = await call(t, 'POST', '/token?grant_type=refresh_token', {
    refresh_token: signIn.body.refresh_token,
  });
  expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
  expect(refreshed.body.refresh_token).not.toBe(signIn.body.refresh_token);
  const logout = await call(t, 'POST', '/logout', undefined, {
    authorization: `Bearer ${refreshed.body.access_token}`,
  });
  expect(logout.status).toBe(204);
  const after = await call(t, 'POST', '/token?grant_type=refresh_token', {
    refresh_token: refreshed.body.refresh_token,
  });
  expect(after.status).toBe(400);
  expect(after.body.error_code).toBe('refresh_token_not_found');
}
