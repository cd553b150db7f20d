// Bitbucket (GoTrue: provider/bitbucket.go). GoTrue asks for `account email` whatever the request's
// `scopes` say; emails come from /2.0/user/emails with Bitbucket's own flags.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderEmail, ProviderSettings } from './provider.ts';

export function bitbucketProvider(s: ProviderSettings): OAuthProvider {
  const authHost = chooseHost(s.url, 'bitbucket.org');
  const api = `${chooseHost(s.url, 'api.bitbucket.org')}/2.0`;
  return standardProvider(s, {
    name: 'bitbucket',
    authUrl: `${authHost}/site/oauth2/authorize`,
    tokenUrl: `${authHost}/site/oauth2/access_token`,
    scopes: ['account', 'email'],
    acceptsScopes: false,
    async userInfo(ctx, token) {
      const u = obj(await getJson(ctx, `${api}/user`, token.accessToken));
      const list = obj(await getJson(ctx, `${api}/user/emails`, token.accessToken));
      const emails: ProviderEmail[] = [];
      for (const e of Array.isArray(list.values) ? list.values : []) {
        const row = obj(e);
        if (str(row.email))
          emails.push({ email: str(row.email), verified: row.is_confirmed === true, primary: row.is_primary === true });
      }
      const id = str(u.uuid);
      const avatar = str(obj(u.avatar).href);
      return {
        emails,
        claims: {
          iss: api,
          sub: id,
          name: str(u.display_name),
          picture: avatar,
          avatar_url: avatar,
          full_name: str(u.display_name),
          provider_id: id,
        },
      };
    },
  });
}
