// LinkedIn, GoTrue's legacy `linkedin` provider (provider/linkedin.go): the profile from /v2/me
// with a projection, the email from /v2/emailAddress; names are read in their preferred locale;
// the email counts as verified.
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';
import { ProviderError } from './provider-error.ts';

/** GoTrue's GetName: localized[<language>_<country>]. */
function localizedName(v: unknown): string {
  const name = obj(v);
  const locale = obj(name.preferredLocale);
  return str(obj(name.localized)[`${str(locale.language)}_${str(locale.country)}`]);
}

export function linkedinProvider(s: ProviderSettings): OAuthProvider {
  const api = chooseHost(s.url, 'api.linkedin.com');
  return standardProvider(s, {
    name: 'linkedin',
    authUrl: `${api}/oauth/v2/authorization`,
    tokenUrl: `${api}/oauth/v2/accessToken`,
    scopes: ['r_emailaddress', 'r_liteprofile'],
    async userInfo(ctx, token) {
      const u = obj(
        await getJson(
          ctx,
          `${api}/v2/me?projection=(id,firstName,lastName,profilePicture(displayImage~:playableStreams))`,
          token.accessToken,
        ),
      );
      const e = obj(
        await getJson(ctx, `${api}/v2/emailAddress?q=members&projection=(elements*(handle~))`, token.accessToken),
      );
      const elements = Array.isArray(e.elements) ? e.elements : [];
      if (elements.length === 0) throw new ProviderError('linkedin: no email element in the answer');
      const email = str(obj(obj(elements[0])['handle~']).emailAddress);
      const images = obj(obj(obj(u.profilePicture)['displayImage~'])).elements;
      const first = Array.isArray(images) && images.length > 0 ? obj(images[0]).identifiers : undefined;
      const avatar = Array.isArray(first) && first.length > 0 ? str(obj(first[0]).identifier) : '';
      const name = `${localizedName(u.firstName)} ${localizedName(u.lastName)}`.trim();
      const id = str(u.id);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: api,
          sub: id,
          name,
          picture: avatar,
          email,
          email_verified: true,
          avatar_url: avatar,
          full_name: name,
          provider_id: id,
        },
      };
    },
  });
}
