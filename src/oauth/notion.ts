// Notion (GoTrue: provider/notion.go): no scopes; the user is the bot's owner in /v1/users/me,
// read with the Notion-Version header; the email counts as verified. The token request relies on
// the Basic-first client authentication, which is what Notion wants.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';

export const NOTION_VERSION = '2021-08-16';

export function notionProvider(s: ProviderSettings): OAuthProvider {
  const host = chooseHost(s.url, 'api.notion.com');
  return standardProvider(s, {
    name: 'notion',
    authUrl: `${host}/v1/oauth/authorize`,
    tokenUrl: `${host}/v1/oauth/token`,
    scopes: [],
    acceptsScopes: false,
    async userInfo(ctx, token) {
      const body = obj(
        await getJson(ctx, `${host}/v1/users/me`, token.accessToken, { 'Notion-Version': NOTION_VERSION }),
      );
      const user = obj(obj(obj(body.bot).owner).user);
      const email = str(obj(user.person).email);
      const id = str(user.id);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: host,
          sub: id,
          name: str(user.name),
          picture: str(user.avatar_url),
          avatar_url: str(user.avatar_url),
          full_name: str(user.name),
          provider_id: id,
        },
      };
    },
  });
}
