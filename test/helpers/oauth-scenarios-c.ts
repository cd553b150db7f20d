// LinkedIn (legacy), Slack (legacy), Twitch, WorkOS and Twitter (OAuth 1.0a): fakes answering as
// each API does. The Twitter fake checks every HMAC-SHA1 signature itself, with its own code.
import { hmac } from '@noble/hashes/hmac.js';
import { sha1 } from '@noble/hashes/legacy.js';
import { expect } from 'vitest';
import { type FakeRoute, type ProviderScenario, type SeenRequest, startFakeProvider } from './fake-oauth.ts';
import { CALLBACK, bearer, expectTokenRequest, tokenRoute } from './oauth-scenarios-b.ts';

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

const pct = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The OAuth 1.0a Authorization header's parameters, decoded. */
export function oauthParams(req: SeenRequest): Record<string, string> {
  const h = String(req.headers.authorization ?? '');
  if (!h.startsWith('OAuth ')) return {};
  return Object.fromEntries(
    [...h.slice(6).matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1]!, decodeURIComponent(m[2]!)]),
  );
}

/** Recomputes the request's HMAC-SHA1 signature (RFC 5849 §3.4) with the secrets the fake knows. */
export function signatureValid(
  req: SeenRequest,
  baseUrl: string,
  consumerSecret: string,
  tokenSecret: string,
): boolean {
  const oauth = oauthParams(req);
  const query = new URL(req.path, 'http://x').searchParams;
  const params: [string, string][] = [...Object.entries(oauth).filter(([k]) => k !== 'oauth_signature'), ...query];
  const norm = params
    .map(([k, v]) => `${pct(k)}=${pct(v)}`)
    .sort()
    .join('&');
  const base = `${req.method}&${pct(baseUrl + new URL(req.path, 'http://x').pathname)}&${pct(norm)}`;
  const mac = hmac(
    sha1,
    new TextEncoder().encode(`${pct(consumerSecret)}&${pct(tokenSecret)}`),
    new TextEncoder().encode(base),
  );
  return btoa(String.fromCharCode(...mac)) === oauth.oauth_signature;
}

export const SCENARIOS: ProviderScenario[] = [
  {
    provider: 'linkedin',
    async start() {
      const fake = await startFakeProvider({
        'POST /oauth/v2/accessToken': tokenRoute('linkedin', 'li-token', { expires_in: 5184000 }),
        'GET /v2/me': bearer('li-token', {
          id: 'yrZCpj2Z12',
          localizedFirstName: 'Lin',
          firstName: { localized: { en_US: 'Lin' }, preferredLocale: { country: 'US', language: 'en' } },
          lastName: { localized: { en_US: 'Kedin' }, preferredLocale: { country: 'US', language: 'en' } },
          profilePicture: {
            'displayImage~': { elements: [{ identifiers: [{ identifier: 'https://media.licdn.example/pic.jpg' }] }] },
          },
        }),
        'GET /v2/emailAddress': bearer('li-token', {
          elements: [{ handle: 'urn:li:emailAddress:3775708763', 'handle~': { emailAddress: 'lin@linkedin.example' } }],
        }),
      });
      return { fake, env: env('linkedin', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'linkedin-code' } },
    checkRequests(reqs, loc, fake) {
      expect(`${loc.origin}${loc.pathname}`).toBe(`${fake.base}/oauth/v2/authorization`);
      expect(loc.searchParams.get('scope')).toBe('r_emailaddress r_liteprofile');
      expectTokenRequest(reqs[0], 'linkedin', '/oauth/v2/accessToken');
      expect(reqs.slice(1).map((r) => decodeURIComponent(r.path))).toEqual([
        '/v2/me?projection=(id,firstName,lastName,profilePicture(displayImage~:playableStreams))',
        '/v2/emailAddress?q=members&projection=(elements*(handle~))',
      ]);
    },
    expected: {
      sub: 'yrZCpj2Z12',
      email: 'lin@linkedin.example',
      emailVerified: true,
      providerToken: 'li-token',
      identityData: {
        iss: '{base}',
        sub: 'yrZCpj2Z12',
        name: 'Lin Kedin',
        picture: 'https://media.licdn.example/pic.jpg',
        email: 'lin@linkedin.example',
        email_verified: true,
        avatar_url: 'https://media.licdn.example/pic.jpg',
        full_name: 'Lin Kedin',
        provider_id: 'yrZCpj2Z12',
        phone_verified: false,
      },
    },
  },
  {
    provider: 'slack',
    async start() {
      const fake = await startFakeProvider({
        'POST /api/oauth.access': tokenRoute('slack', 'xoxp-slack'),
        'GET /api/openid.connect.userInfo': bearer('xoxp-slack', {
          ok: true,
          sub: 'U0R7JM',
          'https://slack.com/user_id': 'U0R7JM',
          'https://slack.com/team_id': 'T0R7GR',
          email: 'krane@slack.example',
          email_verified: true,
          name: 'krane',
          picture: 'https://secure.gravatar.example/krane.png',
          given_name: 'Bront',
          locale: 'en-US',
        }),
      });
      return { fake, env: env('slack', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'slack-code' } },
    checkRequests(reqs, loc, fake) {
      expect(`${loc.origin}${loc.pathname}`).toBe(`${fake.base}/oauth/authorize`);
      expect(loc.searchParams.get('scope')).toBe('profile email openid');
      expectTokenRequest(reqs[0], 'slack', '/api/oauth.access');
      expect(reqs).toHaveLength(2);
      expect(reqs[1]).toMatchObject({ method: 'GET', path: '/api/openid.connect.userInfo', body: '' });
      expect(reqs[1]!.headers.authorization).toBe('Bearer xoxp-slack');
      expect(reqs[1]!.headers['user-agent']).toBe('authsvc/0.0.0-test');
      expect(reqs[1]!.headers['content-type']).toBeUndefined();
    },
    expected: {
      sub: 'U0R7JM',
      email: 'krane@slack.example',
      emailVerified: true,
      providerToken: 'xoxp-slack',
      identityData: {
        iss: '{base}/api',
        sub: 'U0R7JM',
        name: 'krane',
        picture: 'https://secure.gravatar.example/krane.png',
        custom_claims: { 'https://slack.com/team_id': 'T0R7GR' },
        avatar_url: 'https://secure.gravatar.example/krane.png',
        full_name: 'krane',
        provider_id: 'U0R7JM',
        email: 'krane@slack.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'twitch',
    async start() {
      const fake = await startFakeProvider({
        'POST /oauth2/token': tokenRoute('twitch', 'tw-access', {
          refresh_token: 'tw-refresh',
          expires_in: 14346,
          scope: ['user:read:email'],
        }),
        'GET /helix/users': bearer(
          'tw-access',
          {
            data: [
              {
                id: '141981764',
                login: 'twitchdev',
                display_name: 'TwitchDev',
                type: '',
                broadcaster_type: 'partner',
                description: 'Supporting third-party developers',
                profile_image_url: 'https://static-cdn.example/profile.png',
                offline_image_url: 'https://static-cdn.example/offline.png',
                view_count: 5980557,
                email: 'dev@twitch.example',
                created_at: '2016-12-14T20:32:28Z',
              },
            ],
          },
          { 'Client-Id': 'twitch-client' },
        ),
      });
      return { fake, env: env('twitch', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'twitch-code' } },
    checkRequests(reqs, loc, fake) {
      expect(`${loc.origin}${loc.pathname}`).toBe(`${fake.base}/oauth2/authorize`);
      expect(loc.searchParams.get('scope')).toBe('user:read:email');
      expectTokenRequest(reqs[0], 'twitch', '/oauth2/token');
      expect(reqs[1]!.headers['client-id']).toBe('twitch-client');
    },
    expected: {
      sub: '141981764',
      email: 'dev@twitch.example',
      emailVerified: true,
      providerToken: 'tw-access',
      providerRefreshToken: 'tw-refresh',
      identityData: {
        iss: '{base}',
        sub: '141981764',
        picture: 'https://static-cdn.example/profile.png',
        name: 'twitchdev',
        nickname: 'TwitchDev',
        custom_claims: {
          broadcaster_type: 'partner',
          description: 'Supporting third-party developers',
          type: '',
          offline_image_url: 'https://static-cdn.example/offline.png',
          view_count: 5980557,
        },
        slug: 'TwitchDev',
        avatar_url: 'https://static-cdn.example/profile.png',
        full_name: 'twitchdev',
        provider_id: '141981764',
        email: 'dev@twitch.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  {
    provider: 'workos',
    async start() {
      const fake = await startFakeProvider({
        'POST /sso/token': tokenRoute('workos', 'wos-access', {
          profile: {
            object: 'profile',
            id: 'prof_01DMC79VCBZ0NY2099737PSVF1',
            connection_id: 'conn_01E4ZCR3C56J083X43JQXF3JK5',
            organization_id: 'org_01EHWNCE74X7JSDV0X3SZ3KJNY',
            connection_type: 'OktaSAML',
            email: 'todd@foo-corp.example',
            first_name: 'Todd',
            last_name: 'Rundgren',
            idp_id: '00u1a0ufowBJlzPlk357',
            raw_attributes: {},
          },
        }),
      });
      return { fake, env: env('workos', fake.base) };
    },
    callback: { method: 'GET', params: { code: 'workos-code' } },
    checkRequests(reqs, loc, fake) {
      expect(`${loc.origin}${loc.pathname}`).toBe(`${fake.base}/sso/authorize`);
      expect(loc.searchParams.get('scope')).toBeNull();
      expectTokenRequest(reqs[0], 'workos', '/sso/token');
      expect(reqs).toHaveLength(1); // the profile came with the token: no user-info call
    },
    expected: {
      sub: 'prof_01DMC79VCBZ0NY2099737PSVF1',
      email: 'todd@foo-corp.example',
      emailVerified: true,
      providerToken: 'wos-access',
      identityData: {
        iss: '{base}',
        sub: 'prof_01DMC79VCBZ0NY2099737PSVF1',
        name: 'Todd Rundgren',
        custom_claims: {
          connection_id: 'conn_01E4ZCR3C56J083X43JQXF3JK5',
          organization_id: 'org_01EHWNCE74X7JSDV0X3SZ3KJNY',
        },
        full_name: 'Todd Rundgren',
        provider_id: 'prof_01DMC79VCBZ0NY2099737PSVF1',
        email: 'todd@foo-corp.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  },
  twitterScenario(),
];

function twitterScenario(): ProviderScenario {
  let base = '';
  const refuse = { status: 401, body: 'signature invalid' };
  const routes: Record<string, FakeRoute> = {
    'GET /oauth/request_token': (req) => {
      const p = oauthParams(req);
      if (
        !signatureValid(req, base, 'twitter-secret', '') ||
        p.oauth_consumer_key !== 'twitter-client' ||
        !p.oauth_callback?.startsWith(`${CALLBACK}?state=`)
      )
        return refuse;
      return {
        body: 'oauth_token=req-token&oauth_token_secret=req-secret&oauth_callback_confirmed=true',
        headers: { 'content-type': 'text/html' },
      };
    },
    'GET /oauth/access_token': (req) => {
      const p = oauthParams(req);
      // GoTrue keeps no request-token secret: the request is signed with an empty one.
      if (
        !signatureValid(req, base, 'twitter-secret', '') ||
        p.oauth_token !== 'req-token' ||
        p.oauth_verifier !== 'tw-verifier'
      )
        return refuse;
      return {
        body: 'oauth_token=6253282-acc&oauth_token_secret=acc-secret&user_id=6253282&screen_name=twitterapi',
        headers: { 'content-type': 'text/html' },
      };
    },
    'GET /1.1/account/verify_credentials.json': (req) => {
      const p = oauthParams(req);
      if (!signatureValid(req, base, 'twitter-secret', 'acc-secret') || p.oauth_token !== '6253282-acc') return refuse;
      return {
        body: {
          id: 6253282,
          id_str: '6253282',
          name: 'Twitter API',
          screen_name: 'TwitterAPI',
          profile_image_url_https: 'https://pbs.twimg.example/normal.png',
          email: 'api@twitter.example',
          verified: true,
        },
      };
    },
  };
  return {
    provider: 'twitter',
    async start() {
      const fake = await startFakeProvider(routes);
      base = fake.base;
      return { fake, env: env('twitter', fake.base) };
    },
    callback: { method: 'GET', params: { oauth_token: 'req-token', oauth_verifier: 'tw-verifier' } },
    checkRequests(reqs, loc, fake) {
      expect(loc.href).toBe(`${fake.base}/oauth/authenticate?oauth_token=req-token`);
      expect(reqs.map((r) => r.path.split('?')[0])).toEqual([
        '/oauth/request_token',
        '/oauth/access_token',
        '/1.1/account/verify_credentials.json',
      ]);
      expect(Object.fromEntries(new URL(reqs[2]!.path, 'http://x').searchParams)).toEqual({
        include_email: 'true',
        include_entities: 'false',
        skip_status: 'true',
      });
      expect(oauthParams(reqs[0]!)).toMatchObject({ oauth_signature_method: 'HMAC-SHA1', oauth_version: '1.0' });
    },
    expected: {
      sub: '6253282',
      email: 'api@twitter.example',
      emailVerified: true,
      providerToken: '6253282-acc',
      identityData: {
        iss: '{base}/1.1/account/verify_credentials.json',
        sub: '6253282',
        name: 'Twitter API',
        picture: 'https://pbs.twimg.example/normal.png',
        preferred_username: 'TwitterAPI',
        user_name: 'TwitterAPI',
        full_name: 'Twitter API',
        avatar_url: 'https://pbs.twimg.example/normal.png',
        provider_id: '6253282',
        email: 'api@twitter.example',
        email_verified: true,
        phone_verified: false,
      },
    },
  };
}
