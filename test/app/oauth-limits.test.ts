// External sign-in under pressure, GitHub (and for /authorize's failures Google and Twitter)
// played by local fakes: a provider that hangs (one budget for the whole callback, no second
// token request), racing callbacks (one token request), providers failing at /authorize (GoTrue's
// 400 "Unsupported provider: …"), old states deleted as GoTrue's cleanup does, and /authorize's
// own per-IP rate limit.
import { inArray } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { buildTestApp } from '../helpers/app.ts';
import { routedFetch, startFakeProvider } from '../helpers/fake-oauth.ts';
import { authorize, callback, fragmentOf, REDIRECT_URI, useGithubFake } from '../helpers/oauth-github.ts';

const h = useGithubFake();
const tokenRequests = () => h.fake.requests.filter((r) => r.path === '/login/oauth/access_token');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('time and replays', () => {
  test('a token endpoint that hangs: within 80% of API_MAX_REQUEST_DURATION the callback redirects with the error (no 504), one token request, no form retry', async () => {
    // A 4 s limit: the 0.8 s between the give-up at 80% and the 504 holds on a loaded machine.
    const t = await h.app({ AUTHSVC_API_MAX_REQUEST_DURATION: '4' });
    const state = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get(
      'state',
    )!;
    h.tokenRoute = () => new Promise(() => undefined);
    const started = Date.now();
    const cb = await callback(t, { code: 'abcd-code', state });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(cb.status).toBe(302);
    expect(`${cb.location.origin}${cb.location.pathname}`).toBe('https://app.example.com/done');
    expect(Object.fromEntries(cb.location.searchParams)).toEqual({
      error: 'server_error',
      error_code: 'unexpected_failure',
      error_description: 'Unable to exchange external code: abcd',
    });
    expect(tokenRequests()).toHaveLength(1);
    expect(tokenRequests()[0]!.headers.authorization).toMatch(/^Basic /);
  });

  test('a token request that runs past INTERNAL_HTTP_TIMEOUT is not sent again with the credentials in the form', async () => {
    const t = await h.app({ AUTHSVC_INTERNAL_HTTP_TIMEOUT: '1', AUTHSVC_API_MAX_REQUEST_DURATION: '10' });
    const state = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get(
      'state',
    )!;
    h.tokenRoute = () => new Promise(() => undefined);
    const cb = await callback(t, { code: 'abcd-code', state });
    expect(cb.location.searchParams.get('error_description')).toBe('Unable to exchange external code: abcd');
    expect(tokenRequests()).toHaveLength(1);
  });

  test("two callbacks racing with one state: only one reaches the provider's token endpoint; the other goes to SITE_URL", async () => {
    const t = await h.app();
    const state = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get(
      'state',
    )!;
    h.tokenRoute = async () => {
      await sleep(300);
      return h.tokenAnswer;
    };
    const both = await Promise.all([
      callback(t, { code: 'abcd-code', state }),
      callback(t, { code: 'abcd-code', state }),
    ]);
    expect(tokenRequests()).toHaveLength(1);
    expect(both.filter((r) => fragmentOf(r.location).access_token)).toHaveLength(1);
    const loser = both.find((r) => !fragmentOf(r.location).access_token)!;
    expect(loser.status).toBe(303);
    expect(`${loser.location.origin}${loser.location.pathname}`).toBe('http://localhost:3000/');
    expect(Object.fromEntries(loser.location.searchParams)).toEqual({
      error: 'invalid_request',
      error_code: 'bad_oauth_state',
      error_description: 'OAuth state not found or expired',
    });
  });

  test('PKCE: a callback replayed while the first still waits on the provider is refused as already used, and never reaches the provider', async () => {
    const t = await h.app();
    const query = `provider=github&redirect_to=https://app.example.com/done&code_challenge=${'c'.repeat(43)}&code_challenge_method=s256`;
    const state = (await authorize(t, query)).searchParams.get('state')!;
    h.tokenRoute = async () => {
      await sleep(300);
      return h.tokenAnswer;
    };
    const first = callback(t, { code: 'abcd-code', state });
    await sleep(100);
    const replay = await callback(t, { code: 'abcd-code', state });
    expect(replay.location.searchParams.get('error_code')).toBe('flow_state_already_used');
    expect((await first).location.searchParams.get('code')).toMatch(/^[0-9a-f-]{36}$/);
    expect(tokenRequests()).toHaveLength(1);
  });
});

describe('provider failures at /authorize', () => {
  const google = {
    GOTRUE_EXTERNAL_GOOGLE_ENABLED: 'true',
    GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID: 'g',
    GOTRUE_EXTERNAL_GOOGLE_SECRET: 's',
    GOTRUE_EXTERNAL_GOOGLE_REDIRECT_URI: REDIRECT_URI,
  };
  const twitter = (url: string) => ({
    GOTRUE_EXTERNAL_TWITTER_ENABLED: 'true',
    GOTRUE_EXTERNAL_TWITTER_CLIENT_ID: 'tw',
    GOTRUE_EXTERNAL_TWITTER_SECRET: 's',
    GOTRUE_EXTERNAL_TWITTER_REDIRECT_URI: REDIRECT_URI,
    GOTRUE_EXTERNAL_TWITTER_URL: url,
  });

  test('discovery failing (Google), a request token refused (Twitter), discovery hanging: 400 "Unsupported provider: …" as GoTrue, no state left', async () => {
    const idp = await startFakeProvider({
      'GET /.well-known/openid-configuration': () => ({ status: 503, body: 'down' }),
      'GET /oauth/request_token': () => ({ status: 401, body: 'bad consumer' }),
    });
    try {
      const t = await buildTestApp(
        h.db,
        { ...google, ...twitter(idp.base) },
        { fetch: routedFetch(idp, ['accounts.google.com']) },
      );
      const before = (await h.db.orm.select().from(h.db.t.flowState)).length;
      const g = await t.request('GET', '/authorize?provider=google');
      expect(g.status).toBe(400);
      expect(await g.json()).toEqual({
        code: 400,
        error_code: 'validation_failed',
        msg: 'Unsupported provider: https://accounts.google.com/.well-known/openid-configuration answered HTTP 503',
      });
      const tw = await t.request('GET', '/authorize?provider=twitter');
      expect(tw.status).toBe(400);
      expect(await tw.json()).toEqual({
        code: 400,
        error_code: 'validation_failed',
        msg: 'Unsupported provider: twitter request token answered HTTP 401',
      });

      idp.routes.set('GET /.well-known/openid-configuration', () => new Promise(() => undefined));
      const slow = await buildTestApp(
        h.db,
        { ...google, AUTHSVC_API_MAX_REQUEST_DURATION: '2' },
        { fetch: routedFetch(idp, ['accounts.google.com']) },
      );
      const hung = await slow.request('GET', '/authorize?provider=google');
      expect(hung.status).toBe(400);
      expect((await hung.json()).msg).toBe(
        'Unsupported provider: fetching https://accounts.google.com/.well-known/openid-configuration failed: no answer in time',
      );
      expect((await h.db.orm.select().from(h.db.t.flowState)).length).toBe(before);
    } finally {
      await idp.close();
    }
  });
});

describe('cleanup and rate limit', () => {
  test('/authorize deletes flow_state and oauth_client_states rows over a day old, at most 100 a call, and keeps younger ones', async () => {
    const t = await h.app();
    const at = (hours: number) => new Date(Date.now() - hours * 3600_000);
    const row = (createdAt: Date) => ({
      id: crypto.randomUUID(),
      providerType: 'github',
      authenticationMethod: 'oauth',
      createdAt,
      updatedAt: createdAt,
    });
    const old = Array.from({ length: 105 }, () => row(at(25)));
    const young = row(at(23));
    await h.db.orm.insert(h.db.t.flowState).values([...old, young]);
    const oldClient = { id: crypto.randomUUID(), providerType: 'x', codeVerifier: 'v', createdAt: at(25) };
    const youngClient = { id: crypto.randomUUID(), providerType: 'x', codeVerifier: 'v', createdAt: at(1) };
    await h.db.orm.insert(h.db.t.oauthClientStates).values([oldClient, youngClient]);
    const left = async () =>
      (
        await h.db.orm
          .select()
          .from(h.db.t.flowState)
          .where(
            inArray(
              h.db.t.flowState.id,
              [...old, young].map((r) => r.id),
            ),
          )
      ).length;

    await authorize(t, 'provider=github');
    expect(await left()).toBe(6);
    const clients = await h.db.orm
      .select()
      .from(h.db.t.oauthClientStates)
      .where(inArray(h.db.t.oauthClientStates.id, [oldClient.id, youngClient.id]));
    expect(clients.map((c) => c.id)).toEqual([youngClient.id]);
    await authorize(t, 'provider=github');
    expect(await left()).toBe(1);
  });

  test('/authorize has its own per-IP bucket (GoTrue has none): the 31st request from one address is refused, another address and /token go on', async () => {
    const t = await h.app({ AUTHSVC_RATE_LIMIT_HEADER: 'X-Forwarded-For' });
    const from = (ip: string) => t.request('GET', '/authorize?provider=github', undefined, { 'x-forwarded-for': ip });
    for (let i = 0; i < 30; i++) expect((await from('203.0.113.7')).status).toBe(302);
    const refused = await from('203.0.113.7');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      code: 429,
      error_code: 'over_request_rate_limit',
      msg: 'Request rate limit reached',
    });
    expect((await from('203.0.113.8')).status).toBe(302);
    const token = await t.request(
      'POST',
      '/token?grant_type=password',
      { email: 'nobody@example.com', password: 'x' },
      { 'x-forwarded-for': '203.0.113.7' },
    );
    expect(token.status).toBe(400);
  });
});
