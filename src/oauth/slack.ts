// Slack, GoTrue's legacy `slack` provider (provider/slack.go): the token from /api/oauth.access,
// the user from /api/openid.connect.userInfo; the email counts as verified.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';

export function slackProvider(s: ProviderSettings): OAuthProvider {
  const host = chooseHost(s.url, 'slack.com');
  const api = `${host}/api`;
  return standardProvider(s, {
    name: 'slack',
    authUrl: `${host}/oauth/authorize`,
    tokenUrl: `${api}/oauth.access`,
    scopes: ['profile', 'email', 'openid'],
    async userInfo(ctx, token) {
      const u = obj(await getJson(ctx, `${api}/openid.connect.userInfo`, token.accessToken));
      const id = str(u['https://slack.com/user_id']);
      const email = str(u.email);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: api,
          sub: id,
          name: str(u.name),
          picture: str(u.picture),
          custom_claims: { 'https://slack.com/team_id': str(u['https://slack.com/team_id']) },
          avatar_url: str(u.picture),
          full_name: str(u.name),
          provider_id: id,
        },
      };
    },
  });
}
