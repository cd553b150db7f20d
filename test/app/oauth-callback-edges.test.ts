// What a provider sends is untrusted, and where the browser goes is not the provider's choice:
// GitHub played by a local fake sends unstorable claims and addresses; client auth falls back from
// Basic to the form and remembers it; EXTERNAL_REDIRECT_URL; error redirects with a redirect_to
// off the allow list land on SITE_URL.
import { eq } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { authorize, callback, fragmentOf, signIn, useGithubFake } from '../helpers/oauth-github.ts';

type Json = Record<string, any>;
const h = useGithubFake();
const errorLines = (logs: string[]) => logs.filter((l) => JSON.parse(l).level === 'error');

describe('untrusted provider data', () => {
  test('NUL characters and unpaired surrogates in claims are dropped (U+FFFD for a lone surrogate): the user is created, nothing logged as an error', async () => {
    const t = await h.app();
    h.user = {
      ...h.user,
      name: 'Octo\u0000 Cat \ud800',
      login: `octo\u0000${h.n}`,
      avatar_url: 'https://avatars.example.com/\udfff',
    };
    const r = await signIn(t);
    expect(r.location.searchParams.get('error_description')).toBeNull();
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${fragmentOf(r.location).access_token}` })
    ).json()) as Json;
    expect(me.user_metadata).toMatchObject({
      name: 'Octo Cat \ufffd',
      full_name: 'Octo Cat \ufffd',
      user_name: `octo${h.n}`,
      avatar_url: 'https://avatars.example.com/\ufffd',
    });
    expect(me.identities[0].identity_data.preferred_username).toBe(`octo${h.n}`);
    expect(errorLines(t.logs)).toEqual([]);
  });

  test.each([
    ['a NUL', `evil\u0000${Date.now()}@example.com`],
    ['an unpaired surrogate', `\ud800${Date.now()}@example.com`],
    ['over 255 characters', `${'a'.repeat(250)}${Date.now()}@example.com`],
  ])(
    'a chosen provider address with %s: 400 email_address_invalid to the redirect target, nothing written',
    async (_what, bad) => {
      const t = await h.app();
      h.emails = [{ email: bad, primary: true, verified: true }];
      const r = await signIn(t);
      expect(`${r.location.origin}${r.location.pathname}`).toBe('https://app.example.com/done');
      expect(Object.fromEntries(r.location.searchParams)).toEqual({
        error: 'invalid_request',
        error_code: 'email_address_invalid',
        error_description: 'Email address from github is invalid',
      });
      expect(
        await h.db.orm
          .select()
          .from(h.db.t.identities)
          .where(eq(h.db.t.identities.providerId, String(h.user.id))),
      ).toEqual([]);
      expect(errorLines(t.logs)).toEqual([]);
    },
  );

  test('an unusable secondary address is dropped, never trimmed into another one: the primary signs in', async () => {
    const t = await h.app();
    const primary = uniqueEmail('primary');
    h.emails = [
      { email: `${primary}\u0000`, primary: false, verified: true },
      { email: primary, primary: true, verified: true },
    ];
    const r = await signIn(t);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${fragmentOf(r.location).access_token}` })
    ).json()) as Json;
    expect(me.email).toBe(primary.toLowerCase());
    expect(me.identities).toHaveLength(1);
  });

  test("a subject with a NUL is refused as an unusable profile (never trimmed into another account's id)", async () => {
    const t = await h.app();
    h.user = { ...h.user, id: `${h.user.id}\u0000` };
    const r = await signIn(t);
    expect(r.location.searchParams.get('error_description')).toBe('Error getting user profile from external provider');
    expect(
      await h.db.orm
        .select()
        .from(h.db.t.identities)
        .where(eq(h.db.t.identities.providerId, String(h.user.id).replace('\u0000', ''))),
    ).toEqual([]);
  });
});

describe('client authentication and destinations', () => {
  test('a token endpoint that refuses Basic: the form is tried next and remembered, so the next callback sends the form first', async () => {
    const t = await h.app();
    h.tokenRoute = (req) =>
      req.headers.authorization ? { status: 401, body: { error: 'invalid_client' } } : h.tokenAnswer;
    const tokenRequests = () => h.fake.requests.filter((r) => r.path === '/login/oauth/access_token');
    expect(fragmentOf((await signIn(t)).location).access_token).toBeTruthy();
    expect(
      tokenRequests().map((r) => [
        r.headers.authorization ?? 'none',
        r.form.client_id ?? 'none',
        r.form.client_secret ?? 'none',
      ]),
    ).toEqual([
      [`Basic ${btoa('gh-client:gh-secret')}`, 'none', 'none'],
      ['none', 'gh-client', 'gh-secret'],
    ]);
    h.fake.requests.length = 0;
    expect(fragmentOf((await signIn(t)).location).access_token).toBeTruthy();
    expect(tokenRequests()).toHaveLength(1);
    expect(tokenRequests()[0]!.headers.authorization).toBeUndefined();
    expect(tokenRequests()[0]!.form).toEqual({
      grant_type: 'authorization_code',
      code: 'abcd-code',
      redirect_uri: 'https://auth.example.com/callback',
      client_id: 'gh-client',
      client_secret: 'gh-secret',
    });
  });

  test('EXTERNAL_REDIRECT_URL takes every callback, with a session or with an error, whatever redirect_to says', async () => {
    const t = await h.app({ AUTHSVC_EXTERNAL_REDIRECT_URL: 'https://fixed.example.net/after' });
    const ok = await signIn(t);
    expect(`${ok.location.origin}${ok.location.pathname}`).toBe('https://fixed.example.net/after');
    expect(fragmentOf(ok.location).access_token).toBeTruthy();
    const state = (await authorize(t, 'provider=github&redirect_to=https://app.example.com/done')).searchParams.get(
      'state',
    )!;
    const refused = await callback(t, { state, error: 'access_denied', error_description: 'denied' });
    expect(`${refused.location.origin}${refused.location.pathname}`).toBe('https://fixed.example.net/after');
    expect(refused.location.searchParams.get('error')).toBe('access_denied');
  });

  test.each([
    'https://evil.com/.app.example.com/',
    'https://app.example.com.evil.com/done',
    'https://app.example.com@evil.com/done',
    'https://evil.com\\@app.example.com/done',
    'http://localhost:3000.evil.com/',
    '//evil.com/app.example.com',
  ])('an error redirect for redirect_to=%s goes to SITE_URL', async (target) => {
    const t = await h.app();
    const state = (await authorize(t, `provider=github&redirect_to=${encodeURIComponent(target)}`)).searchParams.get(
      'state',
    )!;
    const refused = await callback(t, { state, error: 'access_denied', error_description: 'denied' });
    expect(`${refused.location.origin}${refused.location.pathname}`).toBe('http://localhost:3000/');
    expect(Object.fromEntries(refused.location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'denied',
    });
    h.tokenAnswer = { status: 500, body: { error: 'server_error' } };
    const failed = await callback(t, {
      state: (await authorize(t, `provider=github&redirect_to=${encodeURIComponent(target)}`)).searchParams.get(
        'state',
      )!,
      code: 'abcd-code',
    });
    expect(`${failed.location.origin}${failed.location.pathname}`).toBe('http://localhost:3000/');
    expect(failed.location.searchParams.get('error_code')).toBe('unexpected_failure');
  });
});
