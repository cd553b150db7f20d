// Spotify (GoTrue: provider/spotify.go): /v1/me; the email is never counted as verified; the
// picture is the largest image.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';

export function spotifyProvider(s: ProviderSettings): OAuthProvider {
  const api = chooseHost(s.url, 'api.spotify.com/v1');
  const auth = chooseHost(s.url, 'accounts.spotify.com');
  return standardProvider(s, {
    name: 'spotify',
    authUrl: `${auth}/authorize`,
    tokenUrl: `${auth}/api/token`,
    scopes: ['user-read-email'],
    async userInfo(ctx, token) {
      const u = obj(await getJson(ctx, `${api}/me`, token.accessToken));
      const images = (Array.isArray(u.images) ? u.images : []).map(obj);
      let best = images[0];
      const area = (i: Record<string, unknown>) => (Number(i.height) || 0) * (Number(i.width) || 0);
      for (const i of images) if (best && area(i) > area(best)) best = i;
      const avatar = best ? str(best.url) : '';
      const email = str(u.email);
      const id = str(u.id);
      return {
        emails: email ? [{ email, verified: false, primary: true }] : [],
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
