// The admin console as the server delivers it (routes/console.ts): the committed bundle is the
// one console/ builds to, it stays small and renders no HTML from strings, it is served with a
// strict CSP, ETags and the right types on both mounts, CONSOLE_ENABLED switches it (on in local
// mode only), and the two admin endpoints it added: GET /admin/config (secrets masked) and
// POST /admin/users/{id}/logout, and GET /admin/users/{id}/sessions. The browser side is test/system/console-browser.test.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { inspectRoutes } from 'hono/dev';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CONSOLE_DIR, GENERATED, buildConsoleAssets, consoleModule, etagOf } from '../../scripts/build-console.ts';
import { CONSOLE_ASSETS } from '../../src/console/assets.generated.ts';
import { isSecretSetting } from '../../src/config/effective.ts';
import { FIELD_NAMES } from '../../src/config/fields.ts';
import { parseConfig } from '../../src/config/config.ts';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { CONSOLE_CSP, consoleRoutes } from '../../src/routes/console.ts';
import { BASE_ENV, buildTestApp, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

const FILES: [string, string][] = [['/console/', 'text/html; charset=utf-8'], ['/console/app.js', 'text/javascript; charset=utf-8'], ['/console/app.css', 'text/css; charset=utf-8']];

let db: Database;
let t: TestApp;
let admin: Record<string, string>;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  admin = { authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 })}` };
});
afterAll(async () => { await db?.close(); });

describe('the bundle', () => {
  test('src/console/assets.generated.ts is what console/ builds to now (npm run build:console)', async () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(await consoleModule());
    for (const a of await buildConsoleAssets()) expect(CONSOLE_ASSETS[a.name]?.etag).toBe(etagOf(a.body));
  }, 60_000);

  test('stays under 100 KB gzipped in all', () => {
    const sizes = Object.entries(CONSOLE_ASSETS).map(([name, a]) => [name, gzipSync(a.body, { level: 9 }).length] as const);
    const total = sizes.reduce((n, [, s]) => n + s, 0);
    console.log(`console assets gzipped: ${sizes.map(([n, s]) => `${n} ${s} B`).join(', ')}; total ${total} B`);
    expect(total).toBeLessThan(100 * 1024);
  });

  test('builds no HTML from strings: no innerHTML, outerHTML, insertAdjacentHTML, document.write, eval', () => {
    const sources = readdirSync(join(CONSOLE_DIR, 'src')).map((f) => readFileSync(join(CONSOLE_DIR, 'src', f), 'utf8'));
    for (const text of [...sources, CONSOLE_ASSETS['app.js']!.body]) {
      expect(text).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(|srcdoc/);
    }
    // No inline script or style in the page (the CSP would refuse them anyway).
    const html = CONSOLE_ASSETS['index.html']!.body;
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\son\w+=|style=/i);
  });
});

describe('GET /console/', () => {
  test.each([[''], ['/auth/v1']])('%s: each file with its type, the CSP, nosniff, an ETag and no-cache', async (prefix) => {
    for (const [path, type] of FILES) {
      const res = await t.app.request(prefix + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(CONSOLE_CSP).toBe("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const name = path === '/console/' ? 'index.html' : path.slice('/console/'.length);
      expect(res.headers.get('etag')).toBe(CONSOLE_ASSETS[name]!.etag);
      expect(await res.text()).toBe(CONSOLE_ASSETS[name]!.body);
    }
  });

  test('If-None-Match with the current ETag: 304 with no body; an old one: 200', async () => {
    const etag = CONSOLE_ASSETS['app.js']!.etag;
    const hit = await t.app.request('/console/app.js', { headers: { 'If-None-Match': `"old", W/${etag}` } });
    expect(hit.status).toBe(304);
    expect(await hit.text()).toBe('');
    expect(hit.headers.get('etag')).toBe(etag);
    expect((await t.app.request('/console/app.js', { headers: { 'If-None-Match': '"old"' } })).status).toBe(200);
  });

  test('/console and /auth/v1/console redirect to the slash (the page\'s links are relative)', async () => {
    for (const p of ['/console', '/auth/v1/console']) {
      const res = await t.app.request(p);
      expect(res.status).toBe(301);
      expect(res.headers.get('location')).toBe(`${p}/`);
    }
    expect((await t.app.request('/console/nothing.js')).status).toBe(404);
  });

  test('is three GET routes and no middleware: no other path runs any of it', () => {
    const routes = inspectRoutes(consoleRoutes.app);
    expect(routes.map((r) => `${r.method} ${r.path} ${r.isMiddleware}`)).toEqual([
      'GET /console false', 'GET /console/app.js false', 'GET /console/app.css false',
    ]);
  });
});

describe('CONSOLE_ENABLED', () => {
  test('on in local mode, off otherwise, unless set', () => {
    const parse = (env: Record<string, string>, local: boolean) => {
      const r = parseConfig({ ...BASE_ENV, AUTHSVC_SMTP_HOST: 'smtp.example.com', AUTHSVC_SMTP_ADMIN_EMAIL: 'a@example.com', ...env }, { local });
      if (!r.ok) throw new Error(r.errors.join('\n'));
      return r.config.console.enabled;
    };
    expect(parse({}, true)).toBe(true);
    expect(parse({}, false)).toBe(false);
    expect(parse({ AUTHSVC_CONSOLE_ENABLED: 'true' }, false)).toBe(true);
    expect(parse({ GOTRUE_CONSOLE_ENABLED: 'false' }, true)).toBe(false);
  });

  test('off: every console path answers the 404 of an unknown path', async () => {
    const off = await buildTestApp(db, { AUTHSVC_CONSOLE_ENABLED: 'false' });
    for (const path of ['/console', '/console/', '/console/app.js', '/auth/v1/console/app.css']) {
      const res = await off.app.request(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 404, error_code: 'not_found' });
      expect(res.headers.get('content-security-policy')).toBeNull();
    }
  });
});

describe('GET /admin/config', () => {
  const SECRETS: Record<string, string> = {
    AUTHSVC_SMTP_PASS: 'smtp-pass-marker-1', AUTHSVC_RESEND_API_KEY: 're_marker_2', AUTHSVC_EXTERNAL_GITHUB_ENABLED: 'true',
    AUTHSVC_EXTERNAL_GITHUB_CLIENT_ID: 'gh-client', AUTHSVC_EXTERNAL_GITHUB_REDIRECT_URI: 'http://localhost:9999/callback', AUTHSVC_EXTERNAL_GITHUB_SECRET: 'gh-secret-marker-3',
    AUTHSVC_SECURITY_CAPTCHA_SECRET: 'captcha-marker-4', AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'twilio-marker-5',
    AUTHSVC_OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otlp-marker-6', AUTHSVC_SMS_TEST_OTP: '15550001111:123987',
    AUTHSVC_HOOK_SEND_EMAIL_ENABLED: 'true', AUTHSVC_HOOK_SEND_EMAIL_URI: 'https://hooks.example.com/send?apikey=hook-query-marker-9&v=2',
    AUTHSVC_HOOK_SEND_EMAIL_SECRETS: 'v1,whsec_c2VjcmV0LW1hcmtlci03LWhvb2stMDEyMzQ1Njc4OWFiY2RlZg==',
    AUTHSVC_OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:url-pass-marker-8@otel.example.com',
  };

  test('admin only: 401 without a token, 403 with a user\'s', async () => {
    expect((await t.request('GET', '/admin/config')).status).toBe(401);
    const u = await signUpConfirmed(t);
    expect((await t.request('GET', '/admin/config', undefined, { authorization: `Bearer ${u.session.access_token}` })).status).toBe(403);
  });

  test('every setting by name; secrets masked, URL passwords removed; other values as parsed', async () => {
    const app = await buildTestApp(db, SECRETS);
    const res = await app.request('GET', '/admin/config', undefined, admin);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const text = await res.text();
    for (const marker of ['smtp-pass-marker-1', 're_marker_2', 'gh-secret-marker-3', 'captcha-marker-4', 'twilio-marker-5', 'otlp-marker-6', '123987', 'c2VjcmV0LW1hcmtlci03LWhvb2st', 'url-pass-marker-8', 'hook-query-marker-9', BASE_ENV.AUTHSVC_JWT_SECRET!]) {
      expect(text).not.toContain(marker);
    }
    const body = JSON.parse(text) as { started_at: string; variables: { name: string; value: unknown; secret: boolean; set: boolean }[] };
    const v = Object.fromEntries(body.variables.map((x) => [x.name, x]));
    expect(body.variables.map((x) => x.name)).toEqual(FIELD_NAMES);
    expect(v.JWT_SECRET).toEqual({ name: 'JWT_SECRET', value: '********', secret: true, set: true });
    expect(v.SMTP_PASS).toMatchObject({ value: '********', secret: true });
    expect(v.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY).toEqual({ name: 'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY', value: null, secret: true, set: false });
    expect(v.OTEL_EXPORTER_OTLP_ENDPOINT!.value).toBe('https://collector:********@otel.example.com');
    expect(v.SITE_URL).toEqual({ name: 'SITE_URL', value: 'http://localhost:3000', secret: false, set: true });
    expect(v.EXTERNAL_GITHUB_CLIENT_ID!.value).toBe('gh-client');
    expect(v.HOOK_SEND_EMAIL_URI!.value).toBe('https://hooks.example.com/send?apikey=********&v=********');
    expect(v.CONSOLE_ENABLED).toMatchObject({ value: null, set: false });
    expect(Date.parse(body.started_at)).toBeLessThanOrEqual(Date.now());
  });

  test('a database URL is shown without its password', async () => {
    const parsed = parseConfig({ ...BASE_ENV, DATABASE_URL: 'postgres://authsvc:db-pass-marker@db.example.com:5432/auth', AUTHSVC_SMTP_HOST: 'smtp.example.com', AUTHSVC_SMTP_ADMIN_EMAIL: 'a@example.com' });
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    const { maskedSettings } = await import('../../src/config/effective.ts');
    const shown = maskedSettings(parsed.config).find((s) => s.name === 'DATABASE_URL');
    expect(shown?.value).toBe('postgres://authsvc:********@db.example.com:5432/auth');
  });

  test('every setting named like a credential is classed secret', () => {
    const NOT_SECRET = new Set(['JWT_KEY_ID', 'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID', 'SECURITY_CAPTCHA_PROVIDER']);
    const credentialLike = FIELD_NAMES.filter((n) => /SECRET|PASS(?!KEY|WORD_)|_KEYS?(_|$)|TOKEN|HEADERS$|_OTP$/.test(n) && !/^RATE_LIMIT_|CORS_ALLOWED_HEADERS|TOKEN_(ROTATION|REUSE)|_ENABLED$|_URI$/.test(n));
    expect(credentialLike.length).toBeGreaterThan(20);
    for (const name of credentialLike) expect({ name, secret: isSecretSetting(name) }).toEqual({ name, secret: !NOT_SECRET.has(name) });
  });
});

describe('POST /admin/users/{user_id}/logout', () => {
  test('ends every session of the user: its refresh tokens stop working; recorded as logout', async () => {
    const u = await signUpConfirmed(t);
    const second = await (await t.request('POST', '/token?grant_type=password', { email: u.email, password: u.password })).json() as Record<string, any>;
    const id = u.session.user.id as string;
    expect((await t.request('POST', `/admin/users/${id}/logout`)).status).toBe(401);
    const res = await t.request('POST', `/admin/users/${id}/logout`, undefined, admin);
    expect(res.status).toBe(204);
    for (const token of [u.session.refresh_token, second.refresh_token]) {
      const r = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: token });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ error_code: 'refresh_token_not_found' });
    }
    // As docs/console.md says: the access tokens already issued are refused by authsvc from now on.
    for (const token of [u.session.access_token, second.access_token]) {
      const r = await t.request('GET', '/user', undefined, { authorization: `Bearer ${token}` });
      expect({ status: r.status, code: (await r.json() as Record<string, unknown>).error_code }).toEqual({ status: 403, code: 'session_not_found' });
    }
    const audit = await (await t.request('GET', `/admin/audit?query=${encodeURIComponent('action:logout')}`, undefined, admin)).json() as any[];
    expect(audit.some((e) => e.payload.traits?.user_id === id && e.payload.actor_username === 'service_role')).toBe(true);
  });

  test('an unknown user: 404 user_not_found; a malformed id: 404 as GET does', async () => {
    const res = await t.request('POST', `/admin/users/${crypto.randomUUID()}/logout`, undefined, admin);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error_code: 'user_not_found' });
    const bad = await t.request('POST', '/admin/users/not-a-uuid/logout', undefined, admin);
    const get = await t.request('GET', '/admin/users/not-a-uuid', undefined, admin);
    expect(bad.status).toBe(get.status);
  });
});

describe('GET /admin/users/{user_id}/sessions', () => {
  test('the user\'s sessions, newest first, with where they were made; no key or token; empty once signed out', async () => {
    const u = await signUpConfirmed(t);
    const id = u.session.user.id as string;
    const second = await t.request('POST', '/token?grant_type=password', { email: u.email, password: u.password }, { 'user-agent': 'console-test/2' });
    expect(second.status).toBe(200);
    expect((await t.request('GET', `/admin/users/${id}/sessions`)).status).toBe(401);
    const res = await t.request('GET', `/admin/users/${id}/sessions`, undefined, admin);
    expect(res.status).toBe(200);
    const list = await res.json() as Record<string, unknown>[];
    const stored = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, id));
    expect(list.map((s) => s.id).sort()).toEqual(stored.map((s) => s.id).sort());
    expect(list).toHaveLength(2);
    expect(Date.parse(String(list[0]!.created_at))).toBeGreaterThanOrEqual(Date.parse(String(list[1]!.created_at)));
    expect(list[0]).toMatchObject({ aal: 'aal1', user_agent: 'console-test/2' });
    expect(Object.keys(list[0]!).sort()).toEqual(['aal', 'created_at', 'factor_id', 'id', 'ip', 'not_after', 'oauth_client_id', 'refreshed_at', 'tag', 'updated_at', 'user_agent']);
    expect(JSON.stringify(list)).not.toContain(u.session.refresh_token);
    await t.request('POST', `/admin/users/${id}/logout`, undefined, admin);
    expect(await (await t.request('GET', `/admin/users/${id}/sessions`, undefined, admin)).json()).toEqual([]);
    const unknown = await t.request('GET', `/admin/users/${crypto.randomUUID()}/sessions`, undefined, admin);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error_code: 'user_not_found' });
  });
});
