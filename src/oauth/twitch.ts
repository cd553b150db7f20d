// Twitch (GoTrue: provider/twitch.go): Helix /helix/users needs the Client-Id header beside the
// token; the user is the first of `data`; the email counts as verified.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';
import { ProviderError } from './provider-error.ts';

export function twitchProvider(s: ProviderSettings): OAuthProvider {
  const api = chooseHost(s.url, 'api.twitch.tv');
  const auth = chooseHost(s.url, 'id.twitch.tv');
  return standardProvider(s, {
    name: 'twitch',
    authUrl: `${auth}/oauth2/authorize`,
    tokenUrl: `${auth}/oauth2/token`,
    scopes: ['user:read:email'],
    async userInfo(ctx, token) {
      const body = obj(
        await getJson(ctx, `${api}/helix/users`, token.accessToken, { 'Client-Id': s.clientIds[0] ?? '' }),
      );
      const list = Array.isArray(body.data) ? body.data : [];
      if (list.length === 0) throw new ProviderError('unable to find user with twitch provider');
      const u = obj(list[0]);
      const id = str(u.id);
      const email = str(u.email);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: api,
          sub: id,
          picture: str(u.profile_image_url),
          name: str(u.login),
          nickname: str(u.display_name),
          custom_claims: {
            broadcaster_type: str(u.broadcaster_type),
            description: str(u.description),
            type: str(u.type),
            offline_image_url: str(u.offline_image_url),
            view_count: typeof u.view_count === 'number' ? u.view_count : 0,
          },
          slug: str(u.display_name),
          avatar_url: str(u.profile_image_url),
          full_name: str(u.login),
          provider_id: id,
        },
      };
    },
  });
}
