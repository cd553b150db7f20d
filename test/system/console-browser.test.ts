// The admin console in a real browser: Debian's Chromium (/usr/bin/chromium, or CHROMIUM_PATH)
// driven by playwright-core against the real app on a real port and database. It signs in with
// the service-role key, searches, creates a user whose metadata holds HTML and script payloads
// (they must show as text and run nothing), bans it, signs it out everywhere, reads the audit
// log, the settings (secrets masked) and health, and takes a screenshot of each screen, light
// and dark and at phone width: into a temporary directory, or into docs/console/ (the pictures
// docs/console.md shows) with UPDATE_CONSOLE_SCREENSHOTS=1, so a test run leaves the checkout
// as it was. No Chromium is a failure, never a skip: `.ci/run` installs it.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import type { AxeResults, RunOptions } from 'axe-core';
import { type BrowserContext, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { CONSOLE_CSP } from '../../src/routes/console.ts';
import { TEST_JWT_SECRET, buildTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { createTestIdp } from '../helpers/saml-idp.ts';
import { freePort } from '../helpers/free-port.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const UPDATE_SHOTS = process.env.UPDATE_CONSOLE_SCREENSHOTS === '1';
const SHOTS = UPDATE_SHOTS
  ? join(import.meta.dirname, '..', '..', 'docs', 'console')
  : mkdtempSync(join(tmpdir(), 'authsvc-console-shots-'));
const WAIT = 30_000;
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const XSS_IMG = '<img src=x onerror="window.__xss=1">';
const XSS_SCRIPT = '"><script>window.__xss=2</script>';

let db: Database;
let t: TestApp;
let server: ServerType;
let base: string;
let profile: string;
let context: BrowserContext;
let page: Page;
let serviceKey: string;
let xssUserId = '';

async function shot(name: string): Promise<void> {
  const png = await page.screenshot({ path: join(SHOTS, `${name}.png`) });
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
}
const main = () => page.locator('main');

// axe-core, evaluated in the page through the DevTools protocol (the console's CSP admits no
// injected script tag, and is left on).
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
async function axeViolations(): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: RunOptions): Promise<AxeResults> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    // A run that checked nothing would pass anything.
    if (!(r.passes.length > 10)) throw new Error(`axe-core checked only ${r.passes.length} rules`);
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? '',
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`);
}

async function signIn(): Promise<void> {
  // Keyboard only: the token field has the focus; Enter submits.
  await page.getByLabel('Service-role key or admin JWT').waitFor();
  await page.keyboard.type(serviceKey);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
}

const MISSING = `Chromium is not installed at ${CHROMIUM}: the console's browser tests need it. Install Debian's package (apt-get install -y chromium; .ci/run does this when it is missing) or set CHROMIUM_PATH.`;

// A failure, never a skip: without a browser these tests prove nothing.
test("Debian's Chromium is there to drive", () => {
  expect(existsSync(CHROMIUM), MISSING).toBe(true);
});

describe('the console in Chromium', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(MISSING);
    db = await openTestDb();
    t = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_CONSOLE_ENABLED: 'true',
      // The integrations' screens show only with their features on.
      AUTHSVC_SAML_ENABLED: 'true',
      AUTHSVC_SAML_PRIVATE_KEY: generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs1', format: 'der' })
        .toString('base64'),
      AUTHSVC_CUSTOM_OAUTH_ENABLED: 'true',
      AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
      AUTHSVC_JWT_ISSUER: 'http://localhost:9999',
    });
    serviceKey = await signJwt(t.deps.keys, {
      role: 'service_role',
      iss: 'supabase',
      exp: Math.floor(Date.now() / 1000) + 3600,
    });
    const admin = { authorization: `Bearer ${serviceKey}` };
    for (let i = 1; i <= 24; i++) {
      const res = await t.request(
        'POST',
        '/admin/users',
        {
          email: `person-${String(i).padStart(2, '0')}@example.com`,
          password: 'correct-horse-1',
          email_confirm: true,
          user_metadata: { name: `Person ${i}`, ...(i === 13 ? { full_name: 'Grace Hopper' } : {}) },
        },
        admin,
      );
      expect(res.status).toBe(200);
    }
    const port = await freePort();
    server = serve({ fetch: t.app.fetch, port, hostname: '127.0.0.1' });
    base = `http://127.0.0.1:${port}`;
    profile = mkdtempSync(join(tmpdir(), 'authsvc-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1200, height: 820 },
      locale: 'en-GB',
      timezoneId: 'UTC',
      colorScheme: 'light',
      timeout: 120_000,
    });
    context.setDefaultTimeout(WAIT);
    page = context.pages()[0] ?? (await context.newPage());
    mkdirSync(SHOTS, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    if (!UPDATE_SHOTS) rmSync(SHOTS, { recursive: true, force: true });
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    await db?.close();
  });

  test('is served with the strict CSP; a wrong token is refused; the service-role key signs in', async () => {
    const res = await page.goto(`${base}/console/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    expect(res?.headers()['x-content-type-options']).toBe('nosniff');
    await page.getByLabel('Service-role key or admin JWT').waitFor();
    await shot('signin-light');
    await page.getByLabel('Service-role key or admin JWT').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: WAIT }).toContain('not accepted');
    await page.getByLabel('Service-role key or admin JWT').fill('');
    await page.getByLabel('Service-role key or admin JWT').focus();
    await signIn();
    // Kept in memory only: nothing in storage or cookies.
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([
      0,
      0,
      '',
    ]);
    expect(await page.locator('#users-total').textContent()).toBe('24 in all');
    await shot('users-light');
  });

  test('searches by email and pages', async () => {
    await page.getByRole('searchbox', { name: 'Search by email or full name' }).fill('person-07');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('#users-total').textContent(), { timeout: WAIT }).toBe('1 in all');
    expect(await main().locator('tbody tr').allTextContents()).toEqual([
      expect.stringContaining('person-07@example.com'),
    ]);
    // GoTrue's filter also matches user_metadata.full_name, case aside.
    await page.getByRole('searchbox', { name: 'Search by email or full name' }).fill('hopper');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('#users-total').textContent(), { timeout: WAIT }).toBe('1 in all');
    expect(await main().locator('tbody tr').allTextContents()).toEqual([
      expect.stringContaining('person-13@example.com'),
    ]);
    await page.getByRole('searchbox', { name: 'Search by email or full name' }).fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByText('Page 1 of 2').count(), { timeout: WAIT }).toBe(1);
    await page.getByRole('button', { name: 'Next →' }).click();
    await page.getByText('Page 2 of 2').waitFor();
    expect(await main().locator('tbody tr').count()).toBe(4);
    // Oldest first: person-01 leads page 1.
    await page.getByRole('combobox', { name: 'Sort' }).selectOption('asc');
    await page.getByText('Page 1 of 2').waitFor();
    expect(await main().locator('tbody tr').first().textContent()).toContain('person-01@example.com');
  });

  test('creates a user whose metadata holds markup: it shows as text and runs nothing', async () => {
    const form = page.locator('#create-user');
    await form.locator('input[name=email]').fill('mallory@example.com');
    await form.locator('input[name=password]').fill('correct-horse-1');
    await form.getByLabel('User metadata (JSON)').fill(JSON.stringify({ name: XSS_IMG, bio: XSS_SCRIPT }));
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { name: 'mallory@example.com' }).waitFor();
    xssUserId = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    const shown = await page.locator('#user-metadata').textContent();
    expect(shown).toContain(XSS_IMG.replaceAll('"', '\\"'));
    expect(shown).toContain(XSS_SCRIPT.replaceAll('"', '\\"'));
    expect(await page.locator('#user-metadata').isVisible()).toBe(true);
    expect(await main().locator('img, script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    await shot('user-light');
  });

  test('bans the user (Escape cancels the confirmation), then signs it out everywhere', async () => {
    // A session of the user's own shows in the Sessions table, and is gone after "Sign out everywhere".
    const signedIn = await t.request(
      'POST',
      '/token?grant_type=password',
      { email: 'mallory@example.com', password: 'correct-horse-1' },
      { 'user-agent': 'mallory-agent/1' },
    );
    expect(signedIn.status).toBe(200);
    await page.evaluate(() => {
      location.hash = '#/users';
    });
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await page.evaluate((id) => {
      location.hash = `#/users/${encodeURIComponent(id)}`;
    }, xssUserId);
    await expect
      .poll(() => page.locator('#user-sessions').textContent(), { timeout: WAIT })
      .toContain('mallory-agent/1');
    await page.getByRole('combobox', { name: 'Ban duration' }).selectOption('24h');
    await page.getByRole('button', { name: 'Ban', exact: true }).click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect(
      (
        await (
          await t.request('GET', `/admin/users/${xssUserId}`, undefined, { authorization: `Bearer ${serviceKey}` })
        ).json()
      ).banned_until,
    ).toBeUndefined();

    await page.getByRole('button', { name: 'Ban', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Ban' }).click();
    await main().locator('.tag', { hasText: 'banned' }).waitFor();
    const banned = (await (
      await t.request('GET', `/admin/users/${xssUserId}`, undefined, { authorization: `Bearer ${serviceKey}` })
    ).json()) as { banned_until: string };
    expect(Date.parse(banned.banned_until) - Date.now()).toBeGreaterThan(23 * 3600_000);
    await page.getByRole('button', { name: 'Unban' }).waitFor();

    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Sign out everywhere' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent(), { timeout: WAIT })
      .toContain('Every session of the user is ended');
    await expect.poll(() => page.locator('#user-sessions').textContent(), { timeout: WAIT }).toContain('None.');
  });

  test('invites, sends a magic link, confirms, and deletes for good', async () => {
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.locator('#invite-user input[name=invite_email]').fill('invitee@example.com');
    await page.locator('#invite-user').getByRole('button', { name: 'Send invitation' }).click();
    // The status line comes with the list's re-render: wait for it before typing into the new form.
    await expect
      .poll(() => page.getByRole('status').textContent(), { timeout: WAIT })
      .toContain('Invitation sent to invitee@example.com');
    expect(t.mails.filter((m) => m.to === 'invitee@example.com').map((m) => m.kind)).toEqual(['invite']);
    await page.getByRole('searchbox', { name: 'Search by email or full name' }).fill('invitee');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'invitee@example.com' }).click();
    await page.getByRole('heading', { name: 'invitee@example.com' }).waitFor();
    expect(await main().locator('.tag', { hasText: 'unconfirmed' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Send magic link' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent(), { timeout: WAIT })
      .toContain('Magic link sent to invitee@example.com');
    expect(t.mails.filter((m) => m.to === 'invitee@example.com').map((m) => m.kind)).toEqual(['invite', 'magic_link']);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await main()
      .locator('.tag', { hasText: /^confirmed$/ })
      .waitFor();
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    await page.getByRole('button', { name: 'Delete (hard)' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete (hard)' }).click();
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    expect(
      (await t.request('GET', `/admin/users/${id}`, undefined, { authorization: `Bearer ${serviceKey}` })).status,
    ).toBe(404);
    await page.getByRole('searchbox', { name: 'Search by email or full name' }).fill('');
    await page.getByRole('button', { name: 'Search' }).click();
  });

  test("edits a user: JSON checked in the browser, the API's refusal shown in the form, one request per save", async () => {
    const puts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === 'PUT' && r.url().includes('/admin/users/')) puts.push(r.url());
    };
    page.on('request', onRequest);
    const admin = { authorization: `Bearer ${serviceKey}` };
    const found = (await (await t.request('GET', '/admin/users?filter=person-03', undefined, admin)).json()) as any;
    const id = found.users[0].id as string;
    await page.evaluate((u) => {
      location.hash = `#/users/${encodeURIComponent(u)}`;
    }, id);
    const form = page.locator('#edit-user');
    await form.waitFor();
    await form.getByLabel('User metadata (JSON)').fill('{"plan": ');
    await form.getByRole('button', { name: 'Save changes' }).click();
    expect(
      await form.getByLabel('User metadata (JSON)').evaluate((el) => (el as HTMLTextAreaElement).validationMessage),
    ).toContain('must be a JSON object');
    await form.locator('input[name=phone]').fill('not a number');
    await form.getByLabel('User metadata (JSON)').fill('{"plan": "pro"}');
    await form.getByRole('button', { name: 'Save changes' }).click();
    expect(puts).toEqual([]);
    await form.locator('input[name=phone]').fill('+14155550123');
    await form.getByLabel('App metadata (JSON)').fill('{"tier": 2}');
    await form.getByRole('button', { name: 'Save changes' }).dblclick();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: WAIT }).toContain('Saved.');
    expect(puts).toHaveLength(1);
    const saved = (await (await t.request('GET', `/admin/users/${id}`, undefined, admin)).json()) as any;
    expect(saved.user_metadata).toEqual({ plan: 'pro' });
    expect(saved.app_metadata).toMatchObject({ tier: 2 });
    expect(saved.phone).toBe('14155550123');
    // Another user's address: the API's 422 shows in the form, nothing changes.
    await page.locator('#edit-user input[name=email]').fill('person-04@example.com');
    await page.locator('#edit-user').getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('#edit-error').textContent(), { timeout: WAIT }).toContain('email_exists');
    expect(((await (await t.request('GET', `/admin/users/${id}`, undefined, admin)).json()) as any).email).toBe(
      'person-03@example.com',
    );
    page.off('request', onRequest);
  });

  test('removes an MFA factor and ends one of two sessions; generates a link that is shown, not sent', async () => {
    const admin = { authorization: `Bearer ${serviceKey}` };
    const signInAs = async () =>
      (await (
        await t.request('POST', '/token?grant_type=password', {
          email: 'person-05@example.com',
          password: 'correct-horse-1',
        })
      ).json()) as any;
    const one = await signInAs();
    const two = await signInAs();
    const enrolled = await t.request(
      'POST',
      '/factors',
      { factor_type: 'totp', friendly_name: 'phone app' },
      { authorization: `Bearer ${one.access_token}` },
    );
    expect(enrolled.status).toBe(200);
    const id = one.user.id as string;
    await page.evaluate((u) => {
      location.hash = `#/users/${encodeURIComponent(u)}`;
    }, id);
    await page.getByRole('button', { name: 'Remove factor phone app' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: WAIT }).toContain('factor is removed');
    expect(await (await t.request('GET', `/admin/users/${id}/factors`, undefined, admin)).json()).toEqual([]);

    const sessionOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).session_id;
    await expect.poll(() => page.locator('#user-sessions tbody tr').count(), { timeout: WAIT }).toBe(2);
    await page.locator('#user-sessions tbody tr').first().getByRole('button').click();
    await page.getByRole('dialog').getByRole('button', { name: 'End' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent(), { timeout: WAIT })
      .toContain('The session is ended');
    const left = (await (await t.request('GET', `/admin/users/${id}/sessions`, undefined, admin)).json()) as any[];
    // Newest first: the first row was the second sign-in.
    expect(left.map((s) => s.id)).toEqual([sessionOf(one.access_token)]);
    expect(sessionOf(two.access_token)).not.toBe(sessionOf(one.access_token));

    const mailsBefore = t.mails.length;
    await page.getByRole('combobox', { name: 'Link type' }).selectOption('recovery');
    await page.locator('#generate-link').getByRole('button', { name: 'Generate' }).click();
    const link = page.getByLabel('Generated link');
    await expect.poll(() => link.inputValue(), { timeout: WAIT }).toContain('type=recovery');
    expect(await link.inputValue()).toContain('/verify?token=');
    expect(t.mails.length).toBe(mailsBefore);
    // Gone once the page changes: it is kept nowhere.
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await page.goBack();
    await page.locator('#generate-link').waitFor();
    expect(await page.locator('#generated-link').textContent()).toBe('');
  });

  test('the create form sends nothing while empty or with a bad phone; a double click creates one user', async () => {
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === 'POST' && r.url().endsWith('/admin/users')) posts.push(r.url());
    };
    page.on('request', onRequest);
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    const form = page.locator('#create-user');
    await form.getByRole('button', { name: 'Create user' }).click();
    expect(
      await form.locator('input[name=email]').evaluate((el) => (el as HTMLInputElement).validationMessage),
    ).toContain('Enter an email address or a phone number');
    await form.locator('input[name=phone]').fill('12ab');
    await form.getByRole('button', { name: 'Create user' }).click();
    expect(posts).toEqual([]);
    await form.locator('input[name=phone]').fill('');
    await form.locator('input[name=email]').fill('double@example.com');
    await form.getByRole('button', { name: 'Create user' }).dblclick();
    await page.getByRole('heading', { name: 'double@example.com' }).waitFor();
    expect(posts).toHaveLength(1);
    page.off('request', onRequest);
  });

  test('reads and filters the audit log', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const table = page.locator('#audit-table');
    await expect.poll(() => table.textContent(), { timeout: WAIT }).toContain('user_modified');
    expect(await table.textContent()).toContain('mallory@example.com');
    await page.getByRole('combobox', { name: 'Filter on' }).selectOption('action');
    await page.getByRole('searchbox', { name: 'Filter text' }).fill('logout');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(async () => (await table.locator('tbody tr').allTextContents()).join('\n'), { timeout: WAIT })
      .toMatch(/logout[^\n]*mallory@example\.com/);
    for (const row of await table.locator('tbody tr').allTextContents()) expect(row).toContain('logout');
    await page.getByRole('searchbox', { name: 'Filter text' }).fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: WAIT }).toBeGreaterThan(2);
    await shot('audit-light');
    // At 1280 px no time, actor, target (an address or an id) or IP address breaks across lines.
    await page.setViewportSize({ width: 1280, height: 820 });
    const broken = await table.locator('td.nowrap').evaluateAll((cells) =>
      cells
        .filter((td) => {
          const range = document.createRange();
          range.selectNodeContents(td);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          return lines.size > 1;
        })
        .map((td) => td.textContent),
    );
    expect(broken).toEqual([]);
    expect(await table.locator('td.nowrap').count()).toBeGreaterThan(8);
    await page.setViewportSize({ width: 1200, height: 820 });
    // From a user's page: all of that user's entries.
    await page.evaluate((u) => {
      location.hash = `#/users/${encodeURIComponent(u)}`;
    }, xssUserId);
    await page.getByRole('link', { name: 'See all their entries' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(await page.getByRole('searchbox', { name: 'Filter text' }).inputValue()).toBe('mallory@example.com');
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: WAIT }).toBeGreaterThan(0);
    for (const row of await table.locator('tbody tr').allTextContents()) expect(row).toContain('mallory@example.com');
    await page.getByRole('combobox', { name: 'Filter on' }).selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
  });

  test("SSO providers: add from metadata XML (the API's refusal inline), edit the domains, delete", async () => {
    const admin = { authorization: `Bearer ${serviceKey}` };
    await page.getByRole('link', { name: 'SSO', exact: true }).click();
    await page.getByRole('heading', { name: 'SSO providers' }).waitFor();
    const form = page.locator('#add-sso');
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === 'POST' && r.url().endsWith('/admin/sso/providers')) posts.push(r.url());
    };
    page.on('request', onRequest);
    await form.getByRole('button', { name: 'Add provider' }).click();
    expect(posts).toEqual([]);
    await form.getByLabel('Metadata XML').fill('<not-metadata/>');
    await form.getByRole('button', { name: 'Add provider' }).click();
    await expect.poll(() => form.getByRole('alert').textContent(), { timeout: WAIT }).not.toBe('');
    const idp = createTestIdp('console-idp');
    await form.getByLabel('Metadata XML').fill(idp.metadataXml);
    await form.getByLabel('Domains').fill('console-sso.example.com');
    await form.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('heading', { name: idp.entityId }).waitFor();
    page.off('request', onRequest);
    const listed = (await (await t.request('GET', '/admin/sso/providers', undefined, admin)).json()) as any;
    expect(listed.items.map((p: any) => [p.saml.entity_id, p.domains.map((d: any) => d.domain)])).toEqual([
      [idp.entityId, ['console-sso.example.com']],
    ]);
    await page.locator('#edit-sso').getByLabel('Domains').fill('console-sso.example.com, second.example.com');
    await page.locator('#edit-sso').getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: WAIT }).toContain('Saved.');
    const saved = (await (
      await t.request('GET', `/admin/sso/providers/${listed.items[0].id}`, undefined, admin)
    ).json()) as any;
    expect(saved.domains.map((d: any) => d.domain).sort()).toEqual(['console-sso.example.com', 'second.example.com']);
    await shot('sso-light');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'SSO providers' }).waitFor();
    expect(((await (await t.request('GET', '/admin/sso/providers', undefined, admin)).json()) as any).items).toEqual(
      [],
    );
  });

  test('custom providers: add an OAuth 2 provider, its secret never shown; edit, disable, delete', async () => {
    const admin = { authorization: `Bearer ${serviceKey}` };
    await page.getByRole('link', { name: 'Providers', exact: true }).click();
    await page.getByRole('heading', { name: 'Custom OAuth and OIDC providers' }).waitFor();
    const form = page.locator('#add-provider');
    await form.getByRole('combobox', { name: 'Provider type' }).selectOption('oauth2');
    await form.getByLabel('Identifier').fill('custom:acme');
    await form.getByLabel('Name').fill('Acme');
    await form.getByLabel('Client ID').fill('acme-client');
    await form.getByLabel('Client secret').fill('acme-s3cret-value');
    await form.getByLabel('Scopes').fill('openid email');
    await form.getByLabel('Authorization URL').fill('https://id.acme.example/authorize');
    await form.getByLabel('Token URL').fill('https://id.acme.example/token');
    await form.getByLabel('Userinfo URL').fill('https://id.acme.example/userinfo');
    await form.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('heading', { name: 'custom:acme' }).waitFor();
    expect(await page.locator('body').textContent()).not.toContain('acme-s3cret-value');
    const stored = (await (
      await t.request('GET', '/admin/custom-providers/custom:acme', undefined, admin)
    ).json()) as any;
    expect(stored).toMatchObject({
      identifier: 'custom:acme',
      name: 'Acme',
      client_id: 'acme-client',
      provider_type: 'oauth2',
    });
    const edit = page.locator('#edit-provider');
    await edit.getByLabel('Name').fill('Acme Corp');
    await edit.getByLabel('Enabled').uncheck();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: WAIT }).toContain('Saved.');
    const updated = (await (
      await t.request('GET', '/admin/custom-providers/custom:acme', undefined, admin)
    ).json()) as any;
    expect([updated.name, updated.enabled]).toEqual(['Acme Corp', false]);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Custom OAuth and OIDC providers' }).waitFor();
    expect((await t.request('GET', '/admin/custom-providers/custom:acme', undefined, admin)).status).toBe(404);
  });

  test('OAuth clients: register a confidential client (its secret shown once), regenerate the secret, delete', async () => {
    const admin = { authorization: `Bearer ${serviceKey}` };
    await page.getByRole('link', { name: 'OAuth clients', exact: true }).click();
    await page.getByRole('heading', { name: 'OAuth clients' }).waitFor();
    const form = page.locator('#add-client');
    await form.getByLabel('Name').fill('Console App');
    await form.getByLabel('Redirect URIs').fill('https://app.example.com/callback');
    await form.getByRole('button', { name: 'Register' }).click();
    const secret = page.locator('#secret-once input');
    await expect.poll(() => secret.inputValue(), { timeout: WAIT }).not.toBe('');
    const first = await secret.inputValue();
    const clientId = (await page.locator('#new-client-id').textContent()) ?? '';
    const listed = (await (await t.request('GET', '/admin/oauth/clients', undefined, admin)).json()) as any;
    expect(listed.clients.map((c: any) => [c.client_id, c.client_name, c.client_type])).toEqual([
      [clientId, 'Console App', 'confidential'],
    ]);
    await page.getByRole('link', { name: 'Open the client' }).click();
    await page.getByRole('heading', { name: 'Console App' }).waitFor();
    expect(await page.locator('body').textContent()).not.toContain(first);
    await page.getByRole('button', { name: 'Regenerate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => page.locator('#secret-once input').inputValue(), { timeout: WAIT }).not.toBe('');
    expect(await page.locator('#secret-once input').inputValue()).not.toBe(first);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'OAuth clients' }).waitFor();
    expect((await t.request('GET', `/admin/oauth/clients/${clientId}`, undefined, admin)).status).toBe(404);
  });

  test('keyboard only: registers a public client and deletes it, the confirmation answered by keys', async () => {
    const admin = { authorization: `Bearer ${serviceKey}` };
    await page.getByRole('link', { name: 'OAuth clients', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'OAuth clients' }).waitFor();
    await page.locator('#add-client input[name=client_name]').focus();
    await page.keyboard.type('Keyboard App');
    await page.keyboard.press('Tab'); // the type
    await page.keyboard.press('ArrowDown'); // public
    await page.keyboard.press('Tab'); // redirect URIs
    await page.keyboard.type('https://kb.example.com/cb');
    await page.keyboard.press('Tab'); // authorization_code
    await page.keyboard.press('Tab'); // refresh_token
    await page.keyboard.press('Space'); // off
    await page.keyboard.press('Tab'); // Register
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Open the client' }).waitFor();
    const listed = (await (await t.request('GET', '/admin/oauth/clients', undefined, admin)).json()) as any;
    const made = listed.clients.find((c: any) => c.client_name === 'Keyboard App');
    expect([made?.client_type, made?.grant_types, made?.redirect_uris]).toEqual([
      'public',
      ['authorization_code'],
      ['https://kb.example.com/cb'],
    ]);
    expect(await page.locator('#secret-once').count()).toBe(0); // a public client has no secret
    await page.getByRole('link', { name: 'Open the client' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keyboard App' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    // The focus starts on Cancel; Tab reaches the action.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'OAuth clients' }).waitFor();
    expect((await t.request('GET', `/admin/oauth/clients/${made.client_id}`, undefined, admin)).status).toBe(404);
  });

  test('shows the settings with secrets masked, and health', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Effective configuration (secrets masked)' }).waitFor();
    const row = page.locator('tr', { has: page.locator('code', { hasText: /^JWT_SECRET$/ }) });
    expect(await row.locator('td').nth(1).textContent()).toBe('********');
    expect(await page.locator('body').textContent()).not.toContain(TEST_JWT_SECRET);
    expect(await page.locator('.chips').textContent()).toContain('email');
    await shot('settings-light');
    await page.getByRole('link', { name: 'Health' }).click();
    await expect
      .poll(() => page.locator('#health-status').textContent(), { timeout: WAIT })
      .toBe('Healthy: the database answers');
    expect(await main().textContent()).toContain(t.deps.version);
    await shot('health-light');
  });

  test('dark, and at phone width', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    const screens: [string, string, string][] = [
      ['users', '#/users', 'Users'],
      ['user', `#/users/${xssUserId}`, 'mallory@example.com'],
      ['audit', '#/audit', 'Audit log'],
      ['settings', '#/settings', 'Settings'],
      ['health', '#/health', 'Health'],
      ['sso', '#/sso', 'SSO providers'],
      ['providers', '#/providers', 'Custom OAuth and OIDC providers'],
      ['clients', '#/clients', 'OAuth clients'],
    ];
    const visit = async (hash: string, heading: string) => {
      await page.evaluate((h) => {
        location.hash = h;
      }, hash);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      await page.locator('.loading').waitFor({ state: 'detached' });
    };
    // Every screen, light and dark (and at phone width below): no serious or critical axe-core finding.
    await page.emulateMedia({ colorScheme: 'light' });
    for (const [name, hash, heading] of screens) {
      await visit(hash, heading);
      expect(await axeViolations(), `${name}, light`).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    for (const [name, hash, heading] of screens) {
      await visit(hash, heading);
      expect(await axeViolations(), `${name}, dark`).toEqual([]);
      await shot(`${name}-dark`);
    }
    // Dark colours really apply (the page is not light with a dark screenshot name).
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(17, 19, 24)');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'light' });
    for (const [name, hash, heading] of screens) {
      await visit(hash, heading);
      // Nothing wider than the phone's screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(390);
      expect(await axeViolations(), `${name}, phone`).toEqual([]);
      if (name === 'users' || name === 'user') await shot(`${name}-phone`);
    }
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByLabel('Service-role key or admin JWT').waitFor();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 1200, height: 820 });
    await shot('signin-dark');
    expect(await axeViolations(), 'sign-in, dark').toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  });

  test('under /auth/v1/console/ it calls the API under /auth/v1/', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${base}/auth/v1/console/`);
    const listed = page.waitForRequest((r) => new URL(r.url()).pathname === '/auth/v1/admin/users');
    await signIn();
    expect((await listed).headers().authorization).toBe(`Bearer ${serviceKey}`);
    expect(await page.locator('#users-total').textContent()).toMatch(/^\d+ in all$/);
  });
});
