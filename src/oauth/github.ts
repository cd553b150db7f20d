// GitHub (GoTrue: provider/github.go). EXTERNAL_GITHUB_URL points at GitHub Enterprise, whose
// API then lives under <url>/api/v3. Emails come from /user/emails with GitHub's own flags.
import { obj, str } from './claims.ts';
import { authCodeUrl, chooseHost, exchangeCode, getJson, refreshAccessToken, withRequestScopes } from './oauth2.ts';
import type { OAuthProvider, ProviderEmail, ProviderSettings } from './provider.ts';

export function githubProvider(s: ProviderSettings): OAuthProvider {
  const authHost = chooseHost(s.url, 'github.com');
  let apiHost = chooseHost(s.url, 'api.github.com');
  if (!apiHost.endsWith('api.github.com')) apiHost += '/api/v3';
  return {
    name: 'github',
    async authorizationUrl(_ctx, a) {
      return authCodeUrl({
        authUrl: `${authHost}/login/oauth/authorize`,
        clientId: s.clientIds[0]!,
        redirectUri: s.redirectUri,
        scopes: withRequestScopes(['user:email'], a.scopes),
        state: a.state,
        params: a.params,
      });
    },
    exchange(ctx, c) {
      return exchangeCode(ctx, { tokenUrl: `${authHost}/login/oauth/access_token`, settings: s, code: c.code });
    },
    // Only GitHub Apps with expiring user tokens return a refresh token; OAuth Apps' tokens never expire.
    refresh(ctx, refreshToken) {
      return refreshAccessToken(ctx, { tokenUrl: `${authHost}/login/oauth/access_token`, settings: s }, refreshToken);
    },
    async userInfo(ctx, token) {
      const u = obj(await getJson(ctx, `${apiHost}/user`, token.accessToken));
      const id = str(u.id);
      const list = await getJson(ctx, `${apiHost}/user/emails`, token.accessToken);
      const emails: ProviderEmail[] = [];
      for (const e of Array.isArray(list) ? list : []) {
        const row = obj(e);
        if (str(row.email))
          emails.push({ email: str(row.email), verified: row.verified === true, primary: row.primary === true });
      }
      return {
        emails,
        claims: {
          iss: apiHost,
          sub: id,
          name: str(u.name),
          preferred_username: str(u.login),
          avatar_url: str(u.avatar_url),
          full_name: str(u.name),
          provider_id: id,
          user_name: str(u.login),
        },
      };
    },
  };
}
