// Facebook (GoTrue: provider/facebook.go): the Graph /me call carries appsecret_proof, the hex
// HMAC-SHA256 of the access token under the app secret; the email counts as verified. Limited
// Login ID tokens (issuer https://www.facebook.com) are accepted by the ID-token grant.
import { hex, hmacSha256, utf8 } from '../crypto/encoding.ts';
import { obj, str } from './claims.ts';
import { chooseHost, getJson, standardProvider } from './oauth2.ts';
import { facebookIdTokenUser, verifyOidcToken } from './oidc.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';

export const FACEBOOK_ISSUER = 'https://www.facebook.com';

export function facebookProvider(s: ProviderSettings): OAuthProvider {
  const authHost = chooseHost(s.url, 'www.facebook.com');
  const graph = chooseHost(s.url, 'graph.facebook.com');
  const profileUrl = `${graph}/me?fields=email,first_name,last_name,name,picture`;
  const provider = standardProvider(s, {
    name: 'facebook',
    authUrl: `${authHost}/dialog/oauth`,
    tokenUrl: `${graph}/oauth/access_token`,
    scopes: ['email'],
    async userInfo(ctx, token) {
      const proof = hex(hmacSha256(utf8(s.secret), utf8(token.accessToken)));
      const u = obj(await getJson(ctx, `${profileUrl}&appsecret_proof=${proof}`, token.accessToken));
      const name = `${str(u.first_name)} ${str(u.last_name)}`.trim();
      const picture = str(obj(obj(u.picture).data).url);
      const email = str(u.email);
      const id = str(u.id);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: profileUrl,
          sub: id,
          name,
          nickname: str(u.name),
          picture,
          slug: str(u.name),
          avatar_url: picture,
          full_name: name,
          provider_id: id,
        },
      };
    },
  });
  return {
    ...provider,
    async verifyIdToken(ctx, idToken) {
      const payload = await verifyOidcToken(ctx, idToken, { issuer: FACEBOOK_ISSUER });
      return { user: facebookIdTokenUser(payload), payload };
    },
  };
}
