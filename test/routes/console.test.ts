// The admin console as the server delivers it (routes/console.ts): the committed bundle is the
// one console/ builds to, it stays small and renders no HTML from strings, it is served with a
// strict CSP, ETags and the right types on both mounts, CONSOLE_ENABLED switches it (on in local
// mode only), and the admin endpoints it added: POST /admin/users/{id}/logout and
// GET /admin/users/{id}/sessions (GET /admin/config: admin-config.test.ts). The browser side is test/system/console-browser.test.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { inspectRoutes } from 'hono/dev';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CONSOLE_DIR, GENERATED, buildConsoleAssets, consoleModule, etagOf } from '../../scripts/build-console.ts';
import { CONSOLE_ASSETS } from '../../src/console/assets.generated.ts';
import { parseConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { CONSOLE_CSP, consoleRoutes } from '../../src/routes/console.ts';
import { BASE_ENV, buildTestApp, serviceRoleHeaders, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

const FILES: [string, string][] = [
  ['/console/', 'text/html; charset=utf-8'],
  ['/console/app.js', 'text/javascript; charset=utf-8'],
  ['/console/app.css', 'text/css; charset=utf-8'],
];

let db: Database;
let t: TestApp;
let admin: Record<string, string>;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  admin = await serviceRoleHeaders(t);
});
afterAll(async () => {
  await db?.close();
});

describe('the bundle', () => {
  test('src/console/assets.generated.ts is what console/ builds to now (npm run build:console)', async () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(await consoleModule());
    for (const a of await buildConsoleAssets()) expect(CONSOLE_ASSETS[a.name]?.etag).toBe(etagOf(a.body));
  }, 60_000);

  test('stays under 100 KB gzipped in all', () => {
    const sizes = Object.entries(CONSOLE_ASSETS).map(
      ([name, a]) => [name, gzipSync(a.body, { level: 9 }).length] as const,
    );
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
  test.each([[''], ['/auth/v1']])(
    '%s: each file with its type, the CSP, nosniff, an ETag and no-cache',
    async (prefix) => {
      for (const [path, type] of FILES) {
        const res = await t.app.request(prefix + path);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe(type);
        expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
        expect(CONSOLE_CSP).toBe(
          "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        );
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        expect(res.headers.get('cache-control')).toBe('no-cache');
        const name = path === '/console/' ? 'index.html' : path.slice('/console/'.length);
        expect(res.headers.get('etag')).toBe(CONSOLE_ASSETS[name]!.etag);
        expect(await res.text()).toBe(CONSOLE_ASSETS[name]!.body);
      }
    },
  );

  test('If-None-Match with the current ETag: 304 with no body; an old one: 200', async () => {
    const etag = CONSOLE_ASSETS['app.js']!.etag;
    const hit = await t.app.request('/console/app.js', { headers: { 'If-None-Match': `"old", W/${etag}` } });
    expect(hit.status).toBe(304);
    expect(await hit.text()).toBe('');
    expect(hit.headers.get('etag')).toBe(etag);
    expect((await t.app.request('/console/app.js', { headers: { 'If-None-Match': '"old"' } })).status).toBe(200);
  });

  test("/console and /auth/v1/console redirect to the slash (the page's links are relative)", async () => {
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
      'GET /console false',
      'GET /console/app.js false',
      'GET /console/app.css false',
    ]);
  });
});

describe('CONSOLE_ENABLED', () => {
  test('on in local mode, off otherwise, unless set', () => {
    const parse = (env: Record<string, string>, local: boolean) => {
      const r = parseConfig(
        { ...BASE_ENV, AUTHSVC_SMTP_HOST: 'smtp.example.com', AUTHSVC_SMTP_ADMIN_EMAIL: 'a@example.com', ...env },
        { local },
      );
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

describe('POST /admin/users/{user_id}/logout', () => {
  test('ends every session of the user: its refresh tokens stop working; recorded as logout', async () => {
    const u = await signUpConfirmed(t);
    const second = (await (
      await t.request('POST', '/token?grant_type=password', { email: u.email, password: u.password })
    ).json()) as Record<string, any>;
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
      expect({ status: r.status, code: ((await r.json()) as Record<string, unknown>).error_code }).toEqual({
        status: 403,
        code: 'session_not_found',
      });
    }
    const audit = (await (
      await t.request('GET', `/admin/audit?query=${encodeURIComponent('action:logout')}`, undefined, admin)
    ).json()) as any[];
    expect(audit.some((e) => e.payload.traits?.user_id === id && e.payload.actor_username === 'service_role')).toBe(
      true,
    );
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

describe('DELETE /admin/users/{user_id}/sessions/{session_id}', () => {
  test("ends that session only: its refresh token stops working, the other session's goes on; recorded as logout", async () => {
    const u = await signUpConfirmed(t);
    const second = (await (
      await t.request('POST', '/token?grant_type=password', { email: u.email, password: u.password })
    ).json()) as Record<string, any>;
    const id = u.session.user.id as string;
    const sessionOf = (jwt: string) =>
      JSON.parse(atob(jwt.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).session_id;
    const first = sessionOf(u.session.access_token);
    expect((await t.request('DELETE', `/admin/users/${id}/sessions/${first}`)).status).toBe(401);
    expect((await t.request('DELETE', `/admin/users/${id}/sessions/${first}`, undefined, admin)).status).toBe(204);
    const ended = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: u.session.refresh_token,
    });
    expect(ended.status).toBe(400);
    const goesOn = await t.request('POST', '/token?grant_type=refresh_token', { refresh_token: second.refresh_token });
    expect(goesOn.status).toBe(200);
    const left = (await (await t.request('GET', `/admin/users/${id}/sessions`, undefined, admin)).json()) as {
      id: string;
    }[];
    expect(left.map((s) => s.id)).toEqual([sessionOf(second.access_token)]);
    const audit = (await (
      await t.request('GET', `/admin/audit?query=${encodeURIComponent('action:logout')}`, undefined, admin)
    ).json()) as any[];
    expect(
      audit.some((e) => e.payload.traits?.session_id === first && e.payload.actor_username === 'service_role'),
    ).toBe(true);
  });

  test("another user's session, an unknown one, a malformed id: 404, and nothing is ended", async () => {
    const a = await signUpConfirmed(t);
    const b = await signUpConfirmed(t);
    const bSession = JSON.parse(
      atob(b.session.access_token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')),
    ).session_id;
    const wrongUser = await t.request(
      'DELETE',
      `/admin/users/${a.session.user.id}/sessions/${bSession}`,
      undefined,
      admin,
    );
    expect(wrongUser.status).toBe(404);
    expect(await wrongUser.json()).toMatchObject({ error_code: 'session_not_found' });
    const stillThere = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: b.session.refresh_token,
    });
    expect(stillThere.status).toBe(200);
    const unknownUser = await t.request(
      'DELETE',
      `/admin/users/${crypto.randomUUID()}/sessions/${bSession}`,
      undefined,
      admin,
    );
    expect(await unknownUser.json()).toMatchObject({ error_code: 'user_not_found' });
    const bad = await t.request('DELETE', `/admin/users/${a.session.user.id}/sessions/nope`, undefined, admin);
    expect(bad.status).toBe(404);
    expect(await bad.json()).toMatchObject({ error_code: 'validation_failed' });
  });
});

describe('GET /admin/users/{user_id}/sessions', () => {
  test("the user's sessions, newest first, with where they were made; no key or token; empty once signed out", async () => {
    const u = await signUpConfirmed(t);
    const id = u.session.user.id as string;
    const second = await t.request(
      'POST',
      '/token?grant_type=password',
      { email: u.email, password: u.password },
      { 'user-agent': 'console-test/2' },
    );
    expect(second.status).toBe(200);
    expect((await t.request('GET', `/admin/users/${id}/sessions`)).status).toBe(401);
    const res = await t.request('GET', `/admin/users/${id}/sessions`, undefined, admin);
    expect(res.status).toBe(200);
    const list = (await res.json()) as Record<string, unknown>[];
    const stored = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, id));
    expect(list.map((s) => s.id).sort()).toEqual(stored.map((s) => s.id).sort());
    expect(list).toHaveLength(2);
    expect(Date.parse(String(list[0]!.created_at))).toBeGreaterThanOrEqual(Date.parse(String(list[1]!.created_at)));
    expect(list[0]).toMatchObject({ aal: 'aal1', user_agent: 'console-test/2' });
    expect(Object.keys(list[0]!).sort()).toEqual([
      'aal',
      'created_at',
      'factor_id',
      'id',
      'ip',
      'not_after',
      'oauth_client_id',
      'refreshed_at',
      'tag',
      'updated_at',
      'user_agent',
    ]);
    expect(JSON.stringify(list)).not.toContain(u.session.refresh_token);
    await t.request('POST', `/admin/users/${id}/logout`, undefined, admin);
    expect(await (await t.request('GET', `/admin/users/${id}/sessions`, undefined, admin)).json()).toEqual([]);
    const unknown = await t.request('GET', `/admin/users/${crypto.randomUUID()}/sessions`, undefined, admin);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error_code: 'user_not_found' });
  });
});
