// Bitbucket, Discord, Figma, GitLab, Notion and Spotify: fakes answering as each API does, with
// the exact requests GoTrue's provider files send (all of them honour EXTERNAL_<P>_URL).
import { expect } from 'vitest';
import { type FakeRoute, type ProviderScenario, type SeenRequest, startFakeProvider } from './fake-oauth.ts';

export const CALLBACK = 'https://auth.example.com/callback';
const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;

function env(p: string, url: string): Record<string, string> {
  const x = `GOTRUE_EXTERNAL_${p.toUpperCase()}`;
  return {
    [`${x}_ENABLED`]: 'true',
    [`${x}_CLIENT_ID`]: `${p}-client`,
    [`${x}_SECRET`]: `${p}-secret`,
    [`${x}_REDIRECT_URI`]: CALLBACK,
    [`${x}_URL`]: url,
  };
}

/** A token endpoint that checks the code and Basic client auth and answers `access_token`. */
export function tokenRoute(p: string, accessToken: string, extra: Record<string, unknown> = {}): FakeRoute {
  return (req) => {
    if (req.form.code !== `${p}-code` || req.headers.authorization !== basic(`${p}-client`, `${p}-secret`))
      return { status: 400, body: { error: 'invalid_grant' } };
    return { body: { access_token: accessToken, token_type: 'bearer', ...extra } };
  };
}

/** Bearer-protected JSON. */
export function bearer(token: string, body: unknown, headers: Record<string, string> = {}): FakeRoute {
  return (req) => {
    if (req.headers.authorization !== `Bearer ${token}`) return { status: 401, body: { message: 'bad token' } };
    for (const [k, v] of Object.entries(headers))
      if (req.headers[k.toLowerCase()] !== v) return { status: 400, body: { message: `missing ${k}` } };
    return { body };
  };
}

/** The token request GoTrue's x/oauth2 sends first. */
export function expectTokenRequest(r: SeenRequest | undefined, p: string, path: string): void {
  expect(r).toMatchObject({ method: 'POST', path });
  expect(r!.headers.authorization).toBe(basic(`${p}-client`, `${p}-secret`));
  expect(r!.headers['content-type']).toBe('application/x-www-form-urlencoded');
  expect(r!.form).toEqual({ grant_type: 'authorization_code', code: `${p}-code`, redirect_uri: CALLBACK });
}

/** The authorize redirect: host and path, and every query parameter. */
export function expectAuthorize(loc: URL, url: string, query: Record<string, string>): void {
  expect(`${loc.origin}${loc.pathname}`).toBe(url);
  expect(Object.fromEntries(loc.searchParams)).toEqual({
    ...query,
    state: expect.stringMatching(/^[0-9a-f-]{36}$/),
    redirect_to: 'https://app.example.com/done',
  });
}

const std = (p: string, scope?: string) => ({
  client_id: `${p}-client`,
  redirect_uri: CALLBACK,
  response_type: 'code',
  ...(scope !== undefined ? { scope } : {}),
});

export const SCENARIOS: ProviderScenario[] = [
  {
    provider: 'bitbucket',
    async start() {
      const fake = await startFakeProvider({
        'POST /site/oauth2/access_token': tokenRoute('bitbucket', 'bb-token'),
        'GET /2.0/user': bearer('bb-token', {
          uuid: '{b1e5-bb}',
          display_name: 'Bit Bucket',
          avatar: { href: 'https://bitbucket.example/avatar.png' },
          nickname: 'bb',
        }),
        'GET /2.0/user/emails': bearer('bb-token', {
          values: [
            { email: 'bb-old@example.com', is_primary: false, is_confirmed: false, type: 'email' },
            { email: 'BB@example.com', is_primary: true, is_confirmed: true, type: 'email' },
          ],
        }),
      });
      return { fake, env: env('bitbucket', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'bitbucket-code' } },
    checkRequests(reqs, loc, fake) {
      // GoTrue asks for `account email` whatever `scopes` say.
      expectAuthorize(loc, `${fake.base}/site/oauth2/authorize`, std('bitbucket', 'account email'));
      expectTokenRequest(reqs[0], 'bitbucket', '/site/oauth2/access_token');
      expect(reqs.slice(1).map((r) => r.path)).toEqual(['/2.0/user', '/2.0/user/emails']);
    },
    expected: {
      sub: '{b1e5-bb}',
      email: 'BB@example.com',
      emailVerified: true,
      providerToken: 'bb-token',
      identityData: {
        iss: '{base}/2.0',
        sub: '{b1e5-bb}',
        name: 'Bit Bucket',
        picture: 'https://bitbucket.example/avatar.png',
        avatar_url: 'https://bitbucket.example/avatar.png',
        full_name: 'Bit Bucket',
        provider_id: '{b1e5-bb}',
        email: 'BB@example.com',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'discord',
    async start() {
      const fake = await startFakeProvider({
        'POST /api/oauth2/token': tokenRoute('discord', 'dc-token', {
          refresh_token: 'dc-refresh',
          expires_in: 604800,
          scope: 'email identify',
        }),
        'GET /api/users/@me': bearer('dc-token', {
          id: '80351110224678912',
          username: 'nelly',
          discriminator: '1337',
          global_name: 'Nelly',
          avatar: 'a_8342729096ea3675442027381ff50dfe',
          verified: true,
          email: 'nelly@discord.example',
          flags: 64,
          mfa_enabled: true,
          locale: 'en-US',
        }),
      });
      return { fake, env: env('discord', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'discord-code' } },
    checkRequests(reqs, loc, fake) {
      expectAuthorize(loc, `${fake.base}/api/oauth2/authorize`, std('discord', 'email identify'));
      expectTokenRequest(reqs[0], 'discord', '/api/oauth2/token');
      expect(reqs[1]).toMatchObject({ method: 'GET', path: '/api/users/@me' });
    },
    expected: {
      sub: '80351110224678912',
      email: 'nelly@discord.example',
      emailVerified: true,
      providerToken: 'dc-token',
      providerRefreshToken: 'dc-refresh',
      identityData: {
        iss: '{base}/api',
        sub: '80351110224678912',
        name: 'nelly#1337',
        picture: 'https://cdn.discordapp.com/avatars/80351110224678912/a_8342729096ea3675442027381ff50dfe.gif',
        avatar_url: 'https://cdn.discordapp.com/avatars/80351110224678912/a_8342729096ea3675442027381ff50dfe.gif',
        custom_claims: { global_name: 'Nelly' },
        full_name: 'nelly',
        provider_id: '80351110224678912',
        email: 'nelly@discord.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'figma',
    async start() {
      const fake = await startFakeProvider({
        'POST /v1/oauth/token': tokenRoute('figma', 'fg-token', {
          user_id_string: '1234',
          expires_in: 7776000,
          refresh_token: 'fg-refresh',
        }),
        'GET /v1/me': bearer('fg-token', {
          id: '1234',
          email: 'figma@example.com',
          handle: 'Fig Ma',
          img_url: 'https://figma.example/img.png',
        }),
      });
      return { fake, env: env('figma', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'figma-code' } },
    checkRequests(reqs, loc, fake) {
      expectAuthorize(loc, `${fake.base}/oauth`, std('figma', 'current_user:read'));
      expectTokenRequest(reqs[0], 'figma', '/v1/oauth/token');
      expect(reqs[1]!.path).toBe('/v1/me');
    },
    expected: {
      sub: '1234',
      email: 'figma@example.com',
      emailVerified: true,
      providerToken: 'fg-token',
      providerRefreshToken: 'fg-refresh',
      identityData: {
        iss: '{base}',
        sub: '1234',
        name: 'Fig Ma',
        email: 'figma@example.com',
        email_verified: true,
        avatar_url: 'https://figma.example/img.png',
        full_name: 'Fig Ma',
        provider_id: '1234',
        phone_verified: false,
      },
    },
  },
  {
    provider: 'gitlab',
    async start() {
      const fake = await startFakeProvider({
        'POST /oauth/token': tokenRoute('gitlab', 'gl-token', {
          refresh_token: 'gl-refresh',
          scope: 'read_user',
          created_at: 1607635748,
        }),
        'GET /api/v4/user': bearer('gl-token', {
          id: 1,
          username: 'john_smith',
          name: 'John Smith',
          state: 'active',
          avatar_url: 'https://gitlab.example/uploads/avatar.png',
          email: 'john@gitlab.example',
          confirmed_at: '2012-05-23T09:05:22Z',
          two_factor_enabled: true,
        }),
        'GET /api/v4/user/emails': bearer('gl-token', [
          { id: 1, email: 'john-other@gitlab.example', confirmed_at: '2021-03-26T19:07:56.248Z' },
        ]),
      });
      return { fake, env: env('gitlab', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'gitlab-code' } },
    checkRequests(reqs, loc, fake) {
      expectAuthorize(loc, `${fake.base}/oauth/authorize`, std('gitlab', 'read_user'));
      expectTokenRequest(reqs[0], 'gitlab', '/oauth/token');
      expect(reqs.slice(1).map((r) => r.path)).toEqual(['/api/v4/user', '/api/v4/user/emails']);
    },
    expected: {
      sub: '1',
      email: 'john@gitlab.example',
      emailVerified: true,
      providerToken: 'gl-token',
      providerRefreshToken: 'gl-refresh',
      identityData: {
        iss: '{base}',
        sub: '1',
        name: 'John Smith',
        picture: 'https://gitlab.example/uploads/avatar.png',
        avatar_url: 'https://gitlab.example/uploads/avatar.png',
        full_name: 'John Smith',
        provider_id: '1',
        email: 'john@gitlab.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'notion',
    async start() {
      const fake = await startFakeProvider({
        'POST /v1/oauth/token': tokenRoute('notion', 'nt-token', {
          bot_id: 'bot-1',
          workspace_name: 'Acme',
          owner: { type: 'user' },
        }),
        'GET /v1/users/me': bearer(
          'nt-token',
          {
            object: 'user',
            id: 'bot-1',
            type: 'bot',
            bot: {
              owner: {
                type: 'user',
                user: {
                  object: 'user',
                  id: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
                  name: 'Avo Cado',
                  avatar_url: 'https://notion.example/avo.png',
                  type: 'person',
                  person: { email: 'avo@example.org' },
                },
              },
            },
          },
          { 'Notion-Version': '2021-08-16' },
        ),
      });
      return { fake, env: env('notion', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'notion-code' } },
    checkRequests(reqs, loc, fake) {
      expectAuthorize(loc, `${fake.base}/v1/oauth/authorize`, std('notion'));
      expectTokenRequest(reqs[0], 'notion', '/v1/oauth/token');
      expect(reqs[1]!.headers['notion-version']).toBe('2021-08-16');
    },
    expected: {
      sub: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
      email: 'avo@example.org',
      emailVerified: true,
      providerToken: 'nt-token',
      identityData: {
        iss: '{base}',
        sub: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
        name: 'Avo Cado',
        picture: 'https://notion.example/avo.png',
        avatar_url: 'https://notion.example/avo.png',
        full_name: 'Avo Cado',
        provider_id: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
        email: 'avo@example.org',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'spotify',
    async start() {
      const fake = await startFakeProvider({
        'POST /api/token': tokenRoute('spotify', 'sp-token', {
          scope: 'user-read-email',
          expires_in: 3600,
          refresh_token: 'sp-refresh',
        }),
        'GET /me': bearer('sp-token', {
          country: 'SE',
          display_name: 'Spot Ify',
          email: 'spot@example.com',
          id: 'spotify-user-1',
          product: 'premium',
          type: 'user',
          images: [
            { url: 'https://i.scdn.example/small.jpg', height: 64, width: 64 },
            { url: 'https://i.scdn.example/large.jpg', height: 300, width: 300 },
          ],
        }),
      });
      return { fake, env: env('spotify', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'spotify-code' } },
    checkRequests(reqs, loc, fake) {
      expectAuthorize(loc, `${fake.base}/authorize`, std('spotify', 'user-read-email'));
      expectTokenRequest(reqs[0], 'spotify', '/api/token');
      expect(reqs[1]!.path).toBe('/me');
    },
    expected: {
      // Spotify never vouches for the address (GoTrue marks it unverified).
      sub: 'spotify-user-1',
      email: 'spot@example.com',
      emailVerified: false,
      providerToken: 'sp-token',
      providerRefreshToken: 'sp-refresh',
      identityData: {
        iss: '{base}',
        sub: 'spotify-user-1',
        name: 'Spot Ify',
        picture: 'https://i.scdn.example/large.jpg',
        avatar_url: 'https://i.scdn.example/large.jpg',
        full_name: 'Spot Ify',
        provider_id: 'spotify-user-1',
        email: 'spot@example.com',
        email_verified: false,
        phone_verified: false,
      },
    },
  },
];
