// WorkOS SSO (GoTrue: provider/workos.go): no scopes; `workos_provider` goes out as WorkOS's
// `provider` (GoTrue keeps `provider` for itself); the profile arrives in the token response, so
// there is no user-info call. The email counts as verified.
import { obj, str } from './claims.ts';
import { authCodeUrl, chooseHost, exchangeCode, refreshAccessToken } from './oauth2.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';

export function workosProvider(s: ProviderSettings): OAuthProvider {
  const api = chooseHost(s.url, 'api.workos.com');
  return {
    name: 'workos',
    async authorizationUrl(_ctx, a) {
      const params = a.params.map(([k, v]): [string, string] => (k === 'workos_provider' ? ['provider', v] : [k, v]));
      return authCodeUrl({
        authUrl: `${api}/sso/authorize`,
        clientId: s.clientIds[0] ?? '',
        redirectUri: s.redirectUri,
        scopes: [],
        state: a.state,
        params,
      });
    },
    exchange(ctx, c) {
      return exchangeCode(ctx, { tokenUrl: `${api}/sso/token`, settings: s, code: c.code });
    },
    refresh(ctx, refreshToken) {
      return refreshAccessToken(ctx, { tokenUrl: `${api}/sso/token`, settings: s }, refreshToken);
    },
    async userInfo(_ctx, token) {
      const p = obj(token.raw.profile);
      const name = `${str(p.first_name)} ${str(p.last_name)}`.trim();
      const email = str(p.email);
      const id = str(p.id);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: api,
          sub: id,
          name,
          custom_claims: { connection_id: str(p.connection_id), organization_id: str(p.organization_id) },
          full_name: name,
          provider_id: id,
        },
      };
    },
  };
}
