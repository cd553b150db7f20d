// Discord (GoTrue: provider/discord.go): /users/@me; the avatar URL is built as Discord's CDN
// documents it (animated hashes start with a_; no avatar: the default one by discriminator mod 5).
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';
import { ProviderError } from './provider-error.ts';

export function discordProvider(s: ProviderSettings): OAuthProvider {
  const api = `${chooseHost(s.url, 'discord.com')}/api`;
  return standardProvider(s, {
    name: 'discord',
    authUrl: `${api}/oauth2/authorize`,
    tokenUrl: `${api}/oauth2/token`,
    scopes: ['email', 'identify'],
    async userInfo(ctx, token) {
      const u = obj(await getJson(ctx, `${api}/users/@me`, token.accessToken));
      const id = str(u.id);
      const avatar = str(u.avatar);
      const discriminator = str(u.discriminator);
      let avatarUrl: string;
      if (avatar === '') {
        // Go's strconv.Atoi: an absent or non-numeric discriminator is an error.
        if (!/^[+-]?\d+$/.test(discriminator))
          throw new ProviderError('discord: the user has no avatar and no numeric discriminator');
        avatarUrl = `https://cdn.discordapp.com/embed/avatars/${Math.abs(Number.parseInt(discriminator, 10) % 5)}.png`;
      } else {
        avatarUrl = `https://cdn.discordapp.com/avatars/${id}/${avatar}.${avatar.startsWith('a_') ? 'gif' : 'png'}`;
      }
      const email = str(u.email);
      return {
        emails: email ? [{ email, verified: u.verified === true, primary: true }] : [],
        claims: {
          iss: api,
          sub: id,
          name: `${str(u.username)}#${discriminator}`,
          picture: avatarUrl,
          custom_claims: { global_name: str(u.global_name) },
          avatar_url: avatarUrl,
          full_name: str(u.username),
          provider_id: id,
        },
      };
    },
  });
}
