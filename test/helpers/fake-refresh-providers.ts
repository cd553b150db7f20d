// Google and GitLab as one local fake, both returning refresh tokens, for the stored provider
// tokens (EXTERNAL_<P>_STORE_TOKENS) and POST /user/identities/{provider}/token. Google's fixed
// hosts reach the fake through routedFetch; GitLab is reached as a self-hosted root
// (EXTERNAL_GITLAB_URL = <fake>/gitlab). Each sign-in's user and tokens are set per test; the
// refresh grant is answered by `refresh`, replaceable per test.
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { expect } from 'vitest';
import { buildTestApp, type TestApp } from './app.ts';
import type { Database } from '../../src/db/database.ts';
import { type FakeAnswer, type FakeProvider, routedFetch, type SeenRequest, startFakeProvider } from './fake-oauth.ts';

type Json = Record<string, any>;
export const CALLBACK = 'https://auth.example.com/callback';
/** SECURITY_DB_ENCRYPTION_* key k1 (32 bytes, unpadded base64url). */
export const ENCRYPTION_KEY = 'Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo';
export type RefreshProvider = 'google' | 'gitlab';

export interface NextUser {
  sub: string;
  email: string;
  accessToken: string;
  /** Left out of the token answer when undefined. */
  refreshToken?: string;
}

export interface RefreshFakes {
  fake: FakeProvider;
  fetch: typeof fetch;
  /** What the next sign-in with each provider answers. */
  next: Record<RefreshProvider, NextUser>;
  /** The refresh grant's answer; the default rotates nothing and answers `<provider>-fresh-<n>`. */
  refresh: (p: RefreshProvider, req: SeenRequest) => FakeAnswer | Promise<FakeAnswer>;
  /** The refresh-grant requests each provider received. */
  refreshes(p: RefreshProvider): SeenRequest[];
  app(db: Database, env?: Record<string, string>): Promise<TestApp>;
}

const defaultRefresh = (p: RefreshProvider, req: SeenRequest): FakeAnswer => ({
  body: { access_token: `${p}-fresh-for-${req.form.refresh_token}`, token_type: 'Bearer', expires_in: 3599 },
});

export const providerEnv = (p: RefreshProvider, url?: string): Record<string, string> => {
  const x = `GOTRUE_EXTERNAL_${p.toUpperCase()}`;
  return {
    [`${x}_ENABLED`]: 'true',
    [`${x}_CLIENT_ID`]: `${p}-client`,
    [`${x}_SECRET`]: `${p}-secret`,
    [`${x}_REDIRECT_URI`]: CALLBACK,
    [`AUTHSVC_EXTERNAL_${p.toUpperCase()}_STORE_TOKENS`]: 'true',
    ...(url ? { [`${x}_URL`]: url } : {}),
  };
};

export const ENCRYPTION_ENV = {
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1',
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: ENCRYPTION_KEY,
  AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${ENCRYPTION_KEY}`,
};

function tokenAnswer(u: NextUser, extra: Json = {}): FakeAnswer {
  return {
    body: {
      access_token: u.accessToken,
      token_type: 'Bearer',
      expires_in: 3599,
      ...(u.refreshToken ? { refresh_token: u.refreshToken } : {}),
      ...extra,
    },
  };
}

export async function startRefreshFakes(): Promise<RefreshFakes> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'google-key', alg: 'RS256', use: 'sig' };
  const h = {} as RefreshFakes;
  h.refresh = defaultRefresh;
  h.next = {} as RefreshFakes['next'];
  const grant = (p: RefreshProvider, code: (req: SeenRequest) => Promise<FakeAnswer>) => async (req: SeenRequest) =>
    req.form.grant_type === 'refresh_token' ? h.refresh(p, req) : code(req);
  h.fake = await startFakeProvider({
    'GET /.well-known/openid-configuration': () => ({
      body: {
        issuer: 'https://accounts.google.com',
        authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
        token_endpoint: 'https://oauth2.googleapis.com/token',
        jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
      },
    }),
    'GET /oauth2/v3/certs': () => ({ body: { keys: [jwk] } }),
    'POST /token': grant('google', async () => {
      const u = h.next.google;
      const idToken = await new SignJWT({ email: u.email, email_verified: true, azp: 'google-client' })
        .setProtectedHeader({ alg: 'RS256', kid: 'google-key' })
        .setIssuer('https://accounts.google.com')
        .setAudience('google-client')
        .setSubject(u.sub)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(privateKey);
      return tokenAnswer(u, { id_token: idToken });
    }),
    'POST /gitlab/oauth/token': grant('gitlab', async () => tokenAnswer(h.next.gitlab)),
    'GET /gitlab/api/v4/user': () => ({
      body: { id: Number(h.next.gitlab.sub), name: 'Git Lab', email: h.next.gitlab.email, confirmed_at: '2030-01-01' },
    }),
    'GET /gitlab/api/v4/user/emails': () => ({ body: [] }),
  });
  h.fetch = routedFetch(h.fake, ['accounts.google.com', 'oauth2.googleapis.com', 'www.googleapis.com']);
  h.refreshes = (p) =>
    h.fake.requests.filter(
      (r) => r.form.grant_type === 'refresh_token' && (p === 'gitlab') === r.path.startsWith('/gitlab/'),
    );
  h.app = (db, env = {}) =>
    buildTestApp(
      db,
      {
        ...providerEnv('google'),
        ...providerEnv('gitlab', `${h.fake.base}/gitlab`),
        ...ENCRYPTION_ENV,
        AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**',
        AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true',
        AUTHSVC_MAILER_AUTOCONFIRM: 'true',
        ...env,
      },
      { fetch: h.fetch },
    );
  return h;
}

let n = 0;
/** A fresh user for the next sign-in with `p`: unique subject, address and tokens. */
export function nextUser(h: RefreshFakes, p: RefreshProvider, refresh = true): NextUser {
  n += 1;
  const id = `${Date.now() % 1e9}${n}${Math.floor(Math.random() * 1e4)}`;
  h.next[p] = {
    sub: id,
    email: `${p}-${id}@example.com`,
    accessToken: `${p}-access-${id}`,
    refreshToken: refresh ? `${p}-refresh-${id}` : undefined,
  };
  return h.next[p];
}

/** /authorize (or the linking URL, with `headers`) then /callback: the redirect's location. */
export async function providerSignIn(
  t: TestApp,
  p: RefreshProvider,
  opts: { link?: Record<string, string>; query?: string } = {},
): Promise<URL> {
  const query = `provider=${p}&redirect_to=https://app.example.com/done${opts.query ?? ''}`;
  const started = opts.link
    ? await t.request('GET', `/user/identities/authorize?${query}`, undefined, opts.link)
    : await t.request('GET', `/authorize?${query}`);
  expect(started.status, await started.clone().text()).toBe(302);
  const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
  const res = await t.request('GET', `/callback?${new URLSearchParams({ code: `${p}-code`, state })}`);
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

/** A sign-in that must give a session: its fragment. */
export async function sessionFrom(t: TestApp, p: RefreshProvider): Promise<Record<string, string>> {
  const loc = await providerSignIn(t, p);
  const f = Object.fromEntries(new URLSearchParams(loc.hash.slice(1)));
  expect(f.access_token, loc.href).toBeTruthy();
  return f;
}
