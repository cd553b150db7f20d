// Google (GoTrue: provider/google.go): endpoints from the discovery document of
// https://accounts.google.com (EXTERNAL_GOOGLE_URL is ignored, as in GoTrue); the user from the ID
// token of the token response, else from the userinfo v2 endpoint.
import { obj, str } from './claims.ts';
import { authCodeUrl, exchangeCode, getJson, refreshAccessToken, withRequestScopes } from './oauth2.ts';
import { googleUser, verifyOidcToken } from './oidc.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';

export const GOOGLE_ISSUER = 'https://accounts.google.com';
/** go-oidc accepts Google's ID tokens that name their issuer without the scheme. */
const GOOGLE_ISSUER_ALIASES = ['accounts.google.com'];
export const GOOGLE_USERINFO = 'https://www.googleapis.com/userinfo/v2/me';

export function googleProvider(s: ProviderSettings): OAuthProvider {
  const clientId = s.clientIds[0] ?? '';
  return {
    name: 'google',
    async authorizationUrl(ctx, a) {
      const d = await ctx.oidc.discovery(ctx, GOOGLE_ISSUER);
      return authCodeUrl({
        authUrl: d.authorization_endpoint,
        clientId,
        redirectUri: s.redirectUri,
        scopes: withRequestScopes(['email', 'profile'], a.scopes),
        state: a.state,
        params: a.params,
      });
    },
    async exchange(ctx, c) {
      const d = await ctx.oidc.discovery(ctx, GOOGLE_ISSUER);
      return exchangeCode(ctx, { tokenUrl: d.token_endpoint, settings: s, code: c.code });
    },
    async refresh(ctx, refreshToken) {
      const d = await ctx.oidc.discovery(ctx, GOOGLE_ISSUER);
      return refreshAccessToken(ctx, { tokenUrl: d.token_endpoint, settings: s }, refreshToken);
    },
    async userInfo(ctx, token) {
      if (token.idToken)
        return googleUser(
          await verifyOidcToken(ctx, token.idToken, {
            issuer: GOOGLE_ISSUER,
            issuerAliases: GOOGLE_ISSUER_ALIASES,
            clientId,
            accessToken: token.accessToken,
          }),
        );
      const u = obj(await getJson(ctx, GOOGLE_USERINFO, token.accessToken));
      const email = str(u.email);
      const verified = u.verified_email === true || u.email_verified === true;
      return {
        emails: email ? [{ email, verified, primary: true }] : [],
        claims: {
          iss: GOOGLE_USERINFO,
          sub: str(u.id),
          name: str(u.name),
          picture: str(u.picture),
          email,
          email_verified: verified,
          avatar_url: str(u.picture),
          full_name: str(u.name),
          provider_id: str(u.id),
        },
      };
    },
    async verifyIdToken(ctx, idToken) {
      const payload = await verifyOidcToken(ctx, idToken, {
        issuer: GOOGLE_ISSUER,
        issuerAliases: GOOGLE_ISSUER_ALIASES,
      });
      return { user: googleUser(payload), payload };
    },
  };
}
