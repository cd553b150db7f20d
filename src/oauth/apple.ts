// Sign in with Apple (GoTrue: provider/apple.go). Endpoints from the discovery document of
// https://appleid.apple.com (EXTERNAL_APPLE_URL is ignored, as in GoTrue). The authorize URL always
// asks for response_mode=form_post and, as GoTrue's, carries no forwarded parameters; Apple then
// POSTs code, state and, on first consent only, `user` (the name) to /callback. The user comes
// from the token response's ID token. The client secret is EXTERNAL_APPLE_SECRET (a JWT signed
// elsewhere, as GoTrue takes it) or one authsvc signs with EXTERNAL_APPLE_PRIVATE_KEY (apple-secret.ts).
import { appleClientSecret } from './apple-secret.ts';
import { obj, str } from './claims.ts';
import { authCodeUrl, exchangeCode, refreshAccessToken, type TokenEndpoint } from './oauth2.ts';
import { appleUser, unverifiedIssuer, verifyOidcToken } from './oidc.ts';
import type { OAuthContext, OAuthProvider, ProviderSettings } from './provider.ts';
import { ProviderError } from './provider-error.ts';

export const APPLE_ISSUERS = ['https://appleid.apple.com', 'https://account.apple.com'];

export function appleProvider(s: ProviderSettings): OAuthProvider {
  const clientId = s.clientIds[0] ?? '';
  // GetOAuthToken's extra form fields, and the client secret (given, or signed here) for both legs.
  const tokenEndpoint = async (ctx: OAuthContext): Promise<TokenEndpoint> => {
    const d = await ctx.oidc.discovery(ctx, APPLE_ISSUERS[0]!);
    const secret = await appleClientSecret(ctx, s);
    return { tokenUrl: d.token_endpoint, settings: { ...s, secret }, form: { client_id: clientId, secret } };
  };
  return {
    name: 'apple',
    async authorizationUrl(ctx, a) {
      const d = await ctx.oidc.discovery(ctx, APPLE_ISSUERS[0]!);
      return authCodeUrl({
        authUrl: d.authorization_endpoint,
        clientId,
        redirectUri: s.redirectUri,
        scopes: ['email', 'name'],
        state: a.state,
        params: [['response_mode', 'form_post']],
      });
    },
    async exchange(ctx, c) {
      return exchangeCode(ctx, { ...(await tokenEndpoint(ctx)), code: c.code });
    },
    async refresh(ctx, refreshToken) {
      return refreshAccessToken(ctx, await tokenEndpoint(ctx), refreshToken);
    },
    async userInfo(ctx, token, params) {
      if (!token.idToken) return { emails: [], claims: {} };
      const user = appleUser(
        await verifyOidcToken(ctx, token.idToken, {
          issuer: APPLE_ISSUERS[0]!,
          clientId,
          skipIssuerCheck: true,
          accessToken: token.accessToken,
        }),
      );
      const form = params.get('user');
      if (form) {
        // AppleProvider.ParseUser: a `user` that is not JSON fails the sign-in.
        let u: Record<string, unknown>;
        try {
          u = obj(JSON.parse(form));
        } catch {
          throw new ProviderError('apple: the user form field is not JSON');
        }
        const n = obj(u.name);
        const name = `${str(n.firstName)} ${str(n.lastName)}`.trim();
        user.claims.name = name;
        user.claims.full_name = name;
      }
      return user;
    },
    async verifyIdToken(ctx, idToken) {
      const issuer = unverifiedIssuer(idToken);
      if (!APPLE_ISSUERS.includes(issuer)) throw new ProviderError('not an Apple ID token issuer');
      const payload = await verifyOidcToken(ctx, idToken, { issuer, skipIssuerCheck: true });
      if (!APPLE_ISSUERS.includes(str(payload.iss))) throw new ProviderError('not an Apple ID token issuer');
      return { user: appleUser(payload), payload };
    },
  };
}
