// Figma (GoTrue: provider/figma.go): /v1/me; the email counts as verified.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';

export function figmaProvider(s: ProviderSettings): OAuthProvider {
  const authHost = chooseHost(s.url, 'www.figma.com');
  const api = chooseHost(s.url, 'api.figma.com');
  return standardProvider(s, {
    name: 'figma',
    authUrl: `${authHost}/oauth`,
    tokenUrl: `${api}/v1/oauth/token`,
    scopes: ['current_user:read'],
    async userInfo(ctx, token) {
      const u = obj(await getJson(ctx, `${api}/v1/me`, token.accessToken));
      const id = str(u.id);
      const email = str(u.email);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: api,
          sub: id,
          name: str(u.handle),
          email,
          email_verified: true,
          avatar_url: str(u.img_url),
          full_name: str(u.handle),
          provider_id: id,
        },
      };
    },
  });
}
