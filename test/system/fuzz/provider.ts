// A GitHub that answers oddly, reached through deps.fetch (the machine's edge): the fuzzed
// /callback requests carry real states from /authorize, and the provider's token, user and
// email answers cycle through hostile shapes (untrusted provider data).
export const GITHUB_BASE = 'http://github.fuzz.invalid';

export const PROVIDER_ENV: Record<string, string> = {
  GOTRUE_EXTERNAL_GITHUB_ENABLED: 'true',
  GOTRUE_EXTERNAL_GITHUB_CLIENT_ID: 'gh-client',
  GOTRUE_EXTERNAL_GITHUB_SECRET: 'gh-secret',
  GOTRUE_EXTERNAL_GITHUB_REDIRECT_URI: 'http://localhost:9999/callback',
  GOTRUE_EXTERNAL_GITHUB_URL: GITHUB_BASE,
};

type Answer = { status: number; body: unknown };
const ok = (body: unknown): Answer => ({ status: 200, body });

const TOKENS: Answer[] = [
  ok({ access_token: 'gho_fuzz', token_type: 'bearer', scope: 'user:email' }),
  ok({ access_token: 'gho_fuzz', token_type: 'bearer' }),
  ok({}),
  ok({ access_token: 123 }),
  ok({ access_token: '' }),
  ok({ error: 'bad_verification_code' }),
  ok([]),
  ok('text'),
  { status: 500, body: { message: 'down' } },
  { status: 401, body: 'nope' },
  ok({ access_token: 'x'.repeat(100_000) }),
  ok({ access_token: 'gho_fuzz', expires_in: 'soon', refresh_token: { a: 1 } }),
];

let n = 0;
const users = (): unknown[] => [
  { id: 1000 + n, login: `octo${n}`, name: 'Octo Cat', avatar_url: 'https://avatars.example.com/1' },
  { id: `${2000 + n}`, login: 'a\u0000b', name: 'nul\u0000name' },
  { id: 3000 + n, login: '\ud800', name: 'x\udc00y', email: 'lone\ud800@example.com' },
  { id: null, login: null },
  { id: -1, login: 'neg' },
  { id: 1e300, login: 'huge' },
  { id: 4000 + n, login: 'l'.repeat(10_000), name: 'n'.repeat(100_000) },
  { id: 5000 + n, login: 'o', email: `${'e'.repeat(300)}@example.com` },
  { id: 6000 + n, login: 'p', avatar_url: 'javascript:alert(1)', __proto__: { admin: true } },
  { id: { nested: true }, login: ['x'] },
  [],
  'string',
  null,
  { id: 7000 + n, login: 'q', name: 'Zoë 😀', email: 'zoë@bücher.example' },
];
const emails = (): unknown[] => [
  [{ email: `gh-${n}@example.com`, primary: true, verified: true }],
  [{ email: `gh-${n}@example.com`, primary: true, verified: false }],
  [{ email: 'nul\u0000@example.com', primary: true, verified: true }],
  [{ email: `${'e'.repeat(300)}@example.com`, primary: true, verified: true }],
  [{ email: 'not-an-email', primary: true, verified: true }],
  [{ email: 'fuzz-seed-0@example.com', primary: true, verified: true }],
  [{ email: null, primary: 'yes', verified: 1 }],
  [],
  {},
  'x',
  [null, 1, 'a'],
  [
    { email: `A-${n}@EXAMPLE.COM`, primary: true, verified: true },
    { email: `b-${n}@example.com`, primary: true, verified: true },
  ],
  [{ email: 'zoë@bücher.example', primary: true, verified: true }],
];

const respond = (a: Answer) =>
  new Response(typeof a.body === 'string' ? a.body : JSON.stringify(a.body), {
    status: a.status,
    headers: { 'content-type': 'application/json' },
  });

/** deps.fetch: the odd GitHub for its URLs; nothing else leaves the process. */
export function providerFetch(): typeof globalThis.fetch {
  const counts: Record<string, number> = {};
  return async (input: RequestInfo | URL) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (url.origin !== GITHUB_BASE) return new Response('{"message":"no network in the fuzz run"}', { status: 503 });
    n += 1;
    // Each endpoint cycles on its own counter; half the token answers are good ones.
    const k = (counts[url.pathname] ?? 0) + 1;
    counts[url.pathname] = k;
    if (url.pathname === '/login/oauth/access_token')
      return respond(TOKENS[k % 2 === 0 ? 0 : (k >> 1) % TOKENS.length]!);
    if (url.pathname === '/api/v3/user') {
      const u = users();
      return respond(ok(u[k % u.length]));
    }
    if (url.pathname === '/api/v3/user/emails') {
      const e = emails();
      return respond(ok(e[k % e.length]));
    }
    return new Response('not found', { status: 404 });
  };
}
