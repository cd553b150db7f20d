// Issue 11 end to end: a magic link requested with a redirect_to whose host the browser reads
// as evil.com must not carry the session there; an allow-listed redirect_to still gets it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

const SITE_URL = 'http://localhost:3000';
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

/** Signs a user up, requests a magic link with `redirectTo` in the query, follows the mailed link. */
async function followMagicLink(t: TestApp, redirectTo: string): Promise<{ mailRedirect: string; location: string }> {
  const email = uniqueEmail();
  expect((await t.request('POST', '/signup', { email, password: 'secret-pw-1' })).status).toBe(200);
  const res = await t.request('POST', `/magiclink?redirect_to=${encodeURIComponent(redirectTo)}`, { email });
  expect(res.status).toBe(200);
  const mail = t.mails.at(-1)!;
  expect(mail).toMatchObject({ kind: 'magic_link', to: email });
  const link = new URL(mail.confirmationUrl);
  const v = await t.request('GET', `${link.pathname}${link.search}`);
  expect(v.status).toBe(303);
  return { mailRedirect: mail.redirectTo, location: v.headers.get('location')! };
}

describe('redirect_to through a magic link (issue 11)', () => {
  test('a host WHATWG reads as evil.com falls back to SITE_URL', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_URI_ALLOW_LIST: 'https://*.example.com/**',
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    });
    const attack = 'https://evil%2ecom?.example.com/?x=1';
    expect(new URL(attack).hostname).toBe('evil.com'); // what a browser would visit
    const { mailRedirect, location } = await followMagicLink(t, attack);
    expect(mailRedirect).toBe(SITE_URL);
    expect(location.startsWith(`${SITE_URL}#`)).toBe(true);
    expect(location).toContain('access_token=');
    expect(location).not.toContain('evil');
    expect(new URL(location).hostname).toBe('localhost');
  });

  test('an allow-listed redirect_to is honoured, with the session in the fragment', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_URI_ALLOW_LIST: 'https://*.example.com/**',
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    });
    const { mailRedirect, location } = await followMagicLink(t, 'https://app.example.com/cb');
    expect(mailRedirect).toBe('https://app.example.com/cb');
    expect(location.startsWith('https://app.example.com/cb#')).toBe(true);
    expect(new URLSearchParams(location.split('#')[1]).get('access_token')).toBeTruthy();
    expect(location).toContain('#access_token=');
  });

  test('a redirect_to with + or %xx reaches the browser unchanged (the link escapes it)', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_URI_ALLOW_LIST: 'https://*.example.com/**',
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    });
    for (const target of ['https://app.example.com/a+b', 'https://app.example.com/p%2Fq']) {
      const { location } = await followMagicLink(t, target);
      expect(location.startsWith(`${target}#`), location).toBe(true);
    }
  });
});
