// Keycloak (GoTrue: provider/keycloak.go): EXTERNAL_KEYCLOAK_URL is the realm URL (required);
// the user from the realm's userinfo endpoint, every non-standard claim kept in custom_claims.
// ID tokens of the realm are accepted by the ID-token grant.
import { obj, str } from './claims.ts';
import { getJson, standardProvider } from './oauth2.ts';
import { genericUser, verifyOidcToken } from './oidc.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';
import { ProviderError } from './provider-error.ts';

const STANDARD = new Set(['name', 'sub', 'email', 'email_verified']);

export function keycloakProvider(s: ProviderSettings): OAuthProvider {
  const realm = (s.url ?? '').replace(/\/+$/, '');
  const base = `${realm}/protocol/openid-connect`;
  const provider = standardProvider(s, {
    name: 'keycloak',
    authUrl: `${base}/auth`,
    tokenUrl: `${base}/token`,
    scopes: ['profile', 'email'],
    async userInfo(ctx, token) {
      if (!realm) throw new ProviderError('unable to find URL for the Keycloak provider');
      const u = obj(await getJson(ctx, `${base}/userinfo`, token.accessToken));
      const custom: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(u)) if (!STANDARD.has(k)) custom[k] = v;
      const email = str(u.email);
      const verified = u.email_verified === true;
      return {
        emails: email ? [{ email, verified, primary: true }] : [],
        claims: {
          iss: realm,
          sub: str(u.sub),
          name: str(u.name),
          email,
          email_verified: verified,
          custom_claims: custom,
          full_name: str(u.name),
          provider_id: str(u.sub),
        },
      };
    },
  });
  return {
    ...provider,
    async verifyIdToken(ctx, idToken) {
      const payload = await verifyOidcToken(ctx, idToken, { issuer: realm });
      return { user: genericUser(payload), payload };
    },
  };
}
