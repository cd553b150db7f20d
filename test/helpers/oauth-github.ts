// The GitHub fake the app-level OAuth tests share: a local provider reached through
// EXTERNAL_GITHUB_URL (GitHub Enterprise's layout), what it answers for the next sign-in, and the
// authorize → callback steps. `useGithubFake()` registers the hooks of one test file.
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, type TestApp, uniqueEmail } from './app.ts';
import { openTestDb } from './db.ts';
import { type FakeProvider, type FakeRoute, startFakeProvider } from './fake-oauth.ts';

type Json = Record<string, any>;

export const REDIRECT_URI = 'https://auth.example.com/callback';

export const GITHUB_ENV = {
  GOTRUE_EXTERNAL_GITHUB_ENABLED: 'true',
  GOTRUE_EXTERNAL_GITHUB_CLIENT_ID: 'gh-client',
  GOTRUE_EXTERNAL_GITHUB_SECRET: 'gh-secret',
  GOTRUE_EXTERNAL_GITHUB_REDIRECT_URI: REDIRECT_URI,
  AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**',
};

export interface GithubFake {
  db: Database;
  fake: FakeProvider;
  /** What GitHub answers for the next sign-in; reset before each test. */
  user: Json;
  emails: Json[];
  tokenAnswer: { status: number; body: unknown; headers?: Record<string, string> };
  /** Replaces the token endpoint for one test (slow, picky about client auth, …); reset before each test. */
  tokenRoute?: FakeRoute;
  /** Bumped before each test: `gho_token_<n>` is that test's access token. */
  n: number;
  app(env?: Record<string, string>, over?: Parameters<typeof buildTestApp>[2]): Promise<TestApp>;
}

export function useGithubFake(): GithubFake {
  const h = { n: 0 } as GithubFake;
  beforeAll(async () => {
    h.db = await openTestDb();
    h.fake = await startFakeProvider({
      'POST /login/oauth/access_token': (req) => (h.tokenRoute ? h.tokenRoute(req) : h.tokenAnswer),
      'GET /api/v3/user': () => ({ body: h.user }),
      'GET /api/v3/user/emails': () => ({ body: h.emails }),
    });
  });
  afterAll(async () => {
    await h.fake?.close();
    await h.db?.close();
  });
  beforeEach(() => {
    h.n += 1;
    const n = h.n;
    h.user = {
      id: 90_000 + n + Math.floor(Math.random() * 1e6),
      login: `octo${n}`,
      name: `Octo Cat ${n}`,
      avatar_url: `https://avatars.example.com/${n}`,
    };
    h.emails = [{ email: uniqueEmail('gh'), primary: true, verified: true }];
    h.tokenAnswer = {
      status: 200,
      body: { access_token: `gho_token_${n}`, token_type: 'bearer', scope: 'user:email' },
    };
    h.tokenRoute = undefined;
    h.fake.requests.length = 0;
  });
  h.app = (env = {}, over = {}) =>
    buildTestApp(h.db, { ...GITHUB_ENV, GOTRUE_EXTERNAL_GITHUB_URL: h.fake.base, ...env }, over);
  return h;
}

export async function authorize(t: TestApp, query: string, headers: Record<string, string> = {}): Promise<URL> {
  const res = await t.request('GET', `/authorize?${query}`, undefined, headers);
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

export async function callback(t: TestApp, params: Record<string, string>): Promise<{ status: number; location: URL }> {
  const res = await t.request('GET', `/callback?${new URLSearchParams(params)}`);
  return { status: res.status, location: new URL(res.headers.get('location')!) };
}

export async function signIn(t: TestApp, query = 'provider=github&redirect_to=https://app.example.com/done') {
  const state = (await authorize(t, query)).searchParams.get('state')!;
  return { state, ...(await callback(t, { code: 'abcd-code', state })) };
}

export const fragmentOf = (u: URL) => Object.fromEntries(new URLSearchParams(u.hash.slice(1)));
