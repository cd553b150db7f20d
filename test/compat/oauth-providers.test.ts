// Every provider of EXTERNAL_<P>_* through the real app: /authorize → the provider's fake →
// /callback → a session whose user and identity hold what GoTrue would store. The scenarios
// (fake routes, the user-info shape each provider really returns, the expected identity) live
// next to each provider group's own tests in test/helpers/oauth-scenarios-*.ts. Every run goes
// once under MAILER_AUTOCONFIRM and once without it, where each provider's email_verified mapping
// decides between a session and a confirmation email; every request carries authsvc's User-Agent.
import { desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROVIDERS } from '../../src/config/kinds.ts';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { type FakeProvider, type ProviderScenario, startFakeProvider } from '../helpers/fake-oauth.ts';
import { SCENARIOS as GROUP_B } from '../helpers/oauth-scenarios-b.ts';
import { SCENARIOS as GROUP_C } from '../helpers/oauth-scenarios-c.ts';
import { SCENARIOS as GROUP_OIDC } from '../helpers/oauth-scenarios-oidc.ts';

type Json = Record<string, any>;
let db: Database;
/** The runs without MAILER_AUTOCONFIRM get their own database: an identity from the other run would sign straight in. */
let strictDb: Database;
beforeAll(async () => {
  db = await openTestDb();
  strictDb = await openTestDb();
});
afterAll(async () => {
  await db?.close();
  await strictDb?.close();
});

const GITHUB: ProviderScenario = {
  provider: 'github',
  async start() {
    const fake = await startFakeProvider({
      'POST /login/oauth/access_token': () => ({
        body: 'access_token=gho_e2e&scope=user%3Aemail&token_type=bearer',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      'GET /api/v3/user': () => ({
        body: {
          login: 'e2e-octo',
          id: 4242,
          avatar_url: 'https://avatars.example.com/4242',
          name: 'E2E Octo',
          email: null,
        },
      }),
      'GET /api/v3/user/emails': () => ({
        body: [
          { email: 'secondary-e2e@example.com', primary: false, verified: true, visibility: null },
          { email: 'Octo-E2E@example.com', primary: true, verified: true, visibility: 'public' },
        ],
      }),
    });
    return {
      fake,
      env: {
        GOTRUE_EXTERNAL_GITHUB_ENABLED: 'true',
        GOTRUE_EXTERNAL_GITHUB_CLIENT_ID: 'gh-id',
        GOTRUE_EXTERNAL_GITHUB_SECRET: 'gh-secret',
        GOTRUE_EXTERNAL_GITHUB_REDIRECT_URI: 'https://auth.example.com/callback',
        GOTRUE_EXTERNAL_GITHUB_URL: fake.base,
      },
    };
  },
  callback: { method: 'GET', params: { code: 'gh-code' } },
  checkRequests(reqs, loc, fake) {
    expect(`${loc.origin}${loc.pathname}`).toBe(`${fake.base}/login/oauth/authorize`);
    expect(Object.fromEntries(loc.searchParams)).toEqual({
      client_id: 'gh-id',
      redirect_uri: 'https://auth.example.com/callback',
      response_type: 'code',
      scope: 'user:email',
      state: expect.stringMatching(/^[0-9a-f-]{36}$/),
      redirect_to: 'https://app.example.com/done',
    });
    expect(reqs.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /login/oauth/access_token',
      'GET /api/v3/user',
      'GET /api/v3/user/emails',
    ]);
    expect(reqs[0]!.headers.authorization).toBe(`Basic ${btoa('gh-id:gh-secret')}`);
    expect(reqs[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(reqs[0]!.form).toEqual({
      grant_type: 'authorization_code',
      code: 'gh-code',
      redirect_uri: 'https://auth.example.com/callback',
    });
    for (const r of reqs.slice(1)) expect(r.headers.authorization).toBe('Bearer gho_e2e');
  },
  expected: {
    sub: '4242',
    email: 'Octo-E2E@example.com',
    emailVerified: true,
    providerToken: 'gho_e2e',
    identityData: {
      iss: '{base}/api/v3',
      sub: '4242',
      name: 'E2E Octo',
      preferred_username: 'e2e-octo',
      avatar_url: 'https://avatars.example.com/4242',
      full_name: 'E2E Octo',
      provider_id: '4242',
      user_name: 'e2e-octo',
      email: 'Octo-E2E@example.com',
      email_verified: true,
      phone_verified: false,
    },
  },
};

/** `{base}` in the expected strings stands for the fake's URL. */
function withBase(v: unknown, base: string): unknown {
  if (typeof v === 'string') return v.replaceAll('{base}', base);
  if (Array.isArray(v)) return v.map((x) => withBase(x, base));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withBase(x, base)]));
  return v;
}

const ALL = [GITHUB, ...GROUP_OIDC, ...GROUP_B, ...GROUP_C];

test('every provider of the configuration has a scenario', () => {
  expect(ALL.map((s) => s.provider).sort()).toEqual([...PROVIDERS].sort());
});

/** authorize → the fake → callback; the callback's redirect. */
async function run(
  s: ProviderScenario,
  database: Database,
  env: Record<string, string>,
  fake: FakeProvider,
  fetch?: typeof globalThis.fetch,
) {
  const name = s.provider;
  const t: TestApp = await buildTestApp(
    database,
    { ...env, AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**' },
    fetch ? { fetch } : {},
  );
  const started = await t.request('GET', `/authorize?provider=${name}&redirect_to=https://app.example.com/done`);
  expect(started.status).toBe(302);
  const authorizeLocation = new URL(started.headers.get('location')!);
  // The state is the newest flow_state row of this provider (Twitter carries it inside its own callback URL).
  const [flow] = await database.orm
    .select()
    .from(database.t.flowState)
    .where(eq(database.t.flowState.providerType, name))
    .orderBy(desc(database.t.flowState.createdAt))
    .limit(1);
  const params = new URLSearchParams({ ...s.callback.params, state: flow!.id });
  const res =
    s.callback.method === 'GET'
      ? await t.request('GET', `/callback?${params}`)
      : await t.request('POST', '/callback', params.toString(), {
          'content-type': 'application/x-www-form-urlencoded',
        });
  expect(res.status).toBe(302);
  // authsvc/<version> on every request to the provider (GitHub's API refuses requests without a User-Agent).
  expect(fake.requests.length).toBeGreaterThan(0);
  for (const r of fake.requests) expect(r.headers['user-agent'], r.url ?? r.path).toBe('authsvc/0.0.0-test');
  return { t, authorizeLocation, loc: new URL(res.headers.get('location')!) };
}

describe.each(ALL.map((s) => [s.provider, s] as const))('%s', (name, s) => {
  test('authorize → callback → session, identity as GoTrue stores it', async () => {
    const { fake, env, fetch } = await s.start();
    try {
      const { t, authorizeLocation, loc } = await run(
        s,
        db,
        { ...env, AUTHSVC_MAILER_AUTOCONFIRM: 'true' },
        fake,
        fetch,
      );
      expect(loc.searchParams.get('error_description')).toBeNull();
      expect(`${loc.origin}${loc.pathname}`).toBe('https://app.example.com/done');
      const f = Object.fromEntries(new URLSearchParams(loc.hash.slice(1)));
      expect(f.provider_token).toBe(s.expected.providerToken);
      expect(f.provider_refresh_token).toBe(s.expected.providerRefreshToken);

      s.checkRequests?.(fake.requests, authorizeLocation, fake);

      const me = (await (
        await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
      ).json()) as Json;
      // An address the provider does not vouch for is no account's address, MAILER_AUTOCONFIRM
      // or not (GoTrue confirms it here: review 2026-11-25, H2); identity_data keeps it.
      expect(me.email).toBe(s.expected.emailVerified ? (s.expected.email?.toLowerCase() ?? '') : '');
      expect(me.app_metadata.providers).toContain(name);
      const identity = me.identities.find((i: Json) => i.provider === name);
      expect(identity.id).toBe(s.expected.sub);
      expect(identity.identity_data).toEqual(withBase(s.expected.identityData, fake.base));
      expect(identity.identity_data.email_verified).toBe(s.expected.emailVerified);
    } finally {
      await fake.close();
    }
  });

  test("without MAILER_AUTOCONFIRM the provider's email_verified decides: a confirmed user, or a confirmation email and no session", async () => {
    const { fake, env, fetch } = await s.start();
    try {
      const { t, loc } = await run(s, strictDb, env, fake, fetch);
      if (s.expected.emailVerified) {
        expect(loc.searchParams.get('error_description')).toBeNull();
        const f = Object.fromEntries(new URLSearchParams(loc.hash.slice(1)));
        const me = (await (
          await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.access_token}` })
        ).json()) as Json;
        expect(me.email).toBe(s.expected.email?.toLowerCase() ?? '');
        expect(me.email_confirmed_at).toBeTruthy();
        expect(me.identities.find((i: Json) => i.provider === name).identity_data.email_verified).toBe(true);
      } else {
        expect(Object.fromEntries(loc.searchParams)).toEqual({
          error: 'access_denied',
          error_code: 'provider_email_needs_verification',
          error_description: `Unverified email with ${name}. A confirmation email has been sent to your ${name} email`,
        });
        expect(loc.hash).not.toContain('access_token');
        expect(t.mails.at(-1)).toMatchObject({ kind: 'confirmation', to: s.expected.email!.toLowerCase() });
        // Pending until confirmed: not users.email yet (H2).
        const users = await strictDb.orm
          .select()
          .from(strictDb.t.users)
          .where(eq(strictDb.t.users.emailChange, s.expected.email!.toLowerCase()));
        expect(users.map((u) => u.email)).toEqual([null]);
      }
    } finally {
      await fake.close();
    }
  });
});

test('the providers whose email arrives unverified (as GoTrue maps them)', () => {
  expect(ALL.filter((s) => !s.expected.emailVerified).map((s) => s.provider)).toEqual(['spotify']);
});
