// A failure `npm run fuzz` found (issue 17) in manual linking, through the local GitHub fake.
import { eq } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { checkInvariants } from './fuzz/invariants.ts';
import { callback, useGithubFake } from './helpers/oauth-github.ts';

const h = useGithubFake();

describe('an anonymous user linking GitHub whose email is unverified', () => {
  // The identity was committed with the 422, but app_metadata.providers did not list it (a
  // user whose identities and providers disagree: the fuzzer's invariant).
  test('422 email_not_confirmed, the identity is kept and app_metadata lists it', async () => {
    const t = await h.app({ AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true', AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    h.emails = [{ email: h.emails[0]!.email, primary: true, verified: false }];
    const anon = (await (await t.request('POST', '/signup', {})).json()) as { access_token: string; user: { id: string } };
    const res = await t.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', undefined, { authorization: `Bearer ${anon.access_token}` });
    expect(res.status).toBe(200);
    const state = new URL(((await res.json()) as { url: string }).url).searchParams.get('state')!;
    const cb = await callback(t, { code: 'abcd-code', state });
    expect(cb.location.searchParams.get('error_code')).toBe('email_not_confirmed');
    const [user] = await h.db.orm.select().from(h.db.t.users).where(eq(h.db.t.users.id, anon.user.id));
    const identities = await h.db.orm.select().from(h.db.t.identities).where(eq(h.db.t.identities.userId, anon.user.id));
    expect(identities.map((i) => i.provider)).toEqual(['github']);
    expect(user!.rawAppMetaData).toMatchObject({ provider: 'github', providers: ['github'] });
    expect(await checkInvariants(h.db)).toEqual([]);
  });
});
