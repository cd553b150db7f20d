// GitLab (GoTrue: provider/gitlab.go). EXTERNAL_GITLAB_URL is a self-hosted root. The account's own
// email is primary and verified once GitLab confirmed it; the others of /user/emails are listed
// as unverified.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderEmail, ProviderSettings } from './provider.ts';

export function gitlabProvider(s: ProviderSettings): OAuthProvider {
  const host = chooseHost(s.url, 'gitlab.com');
  return standardProvider(s, {
    name: 'gitlab',
    authUrl: `${host}/oauth/authorize`,
    tokenUrl: `${host}/oauth/token`,
    scopes: ['read_user'],
    async userInfo(ctx, token) {
      const u = obj(await getJson(ctx, `${host}/api/v4/user`, token.accessToken));
      const list = await getJson(ctx, `${host}/api/v4/user/emails`, token.accessToken);
      const emails: ProviderEmail[] = [];
      for (const e of Array.isArray(list) ? list : []) {
        const email = str(obj(e).email);
        if (email) emails.push({ email, verified: false, primary: false });
      }
      if (str(u.email)) emails.push({ email: str(u.email), verified: str(u.confirmed_at) !== '', primary: true });
      const id = str(u.id);
      return {
        emails,
        claims: {
          iss: host,
          sub: id,
          name: str(u.name),
          picture: str(u.avatar_url),
          avatar_url: str(u.avatar_url),
          full_name: str(u.name),
          provider_id: id,
        },
      };
    },
  });
}
