// A failure `npm run fuzz` found (issue 17) in manual linking, through the local GitHub fake.
import { eq } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { checkInvariants } from '../system/fuzz/invariants.ts';
import { callback, useGithubFake } from '../helpers/oauth-github.ts';

const h = useGithubFake();

describe('an anonymous user linking GitHub whose email is unverified', () => {
  // The identity was committed with a 422 while app_metadata.providers did not list it (the
  // fuzzer's invariant). Since review 2026-11-25 (H2) an unverified address never becomes the
  // account's: the link succeeds, the user keeps no address and stays anonymous.
  test('linked, listed in app_metadata, no address taken, still anonymous; the invariants hold', async () => {
    const t = await h.app({
      AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true',
      AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    });
    h.emails = [{ email: h.emails[0]!.email, primary: true, verified: false }];
    const anon = (await (await t.request('POST', '/signup', {})).json()) as {
      access_token: string;
      user: { id: string };
    };
    const res = await t.request(
      'GET',
      '/user/identities/authorize?provider=github&skip_http_redirect=true',
      undefined,
      { authorization: `Bearer ${anon.access_token}` },
    );
    expect(res.status).toBe(200);
    const state = new URL(((await res.json()) as { url: string }).url).searchParams.get('state')!;
    const cb = await callback(t, { code: 'abcd-code', state });
    expect(cb.location.searchParams.get('error_code')).toBeNull();
    expect(new URLSearchParams(cb.location.hash.slice(1)).get('access_token')).toBeTruthy();
    const [user] = await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.id, anon.user.id));
    const identities = await h.db.orm
      .select()
      .from(h.db.t.identities)
      .where(eq(h.db.t.identities.userId, anon.user.id));
    expect(identities.map((i) => i.provider)).toEqual(['github']);
    expect(user).toMatchObject({ email: null, isAnonymous: true });
    expect(user!.rawAppMetaData).toMatchObject({ provider: 'github', providers: ['github'] });
    expect(t.mails).toHaveLength(0);
    expect(await checkInvariants(h.db)).toEqual([]);
  });
});
