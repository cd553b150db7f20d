// Microsoft Entra ID / Azure (GoTrue: provider/azure.go). EXTERNAL_AZURE_URL names a tenant
// authority (default the `common` one); a tenant-specific or CIAM URL fixes the ID token's
// issuer. The user comes only from the ID token, whose issuer is read from the token, must be an
// Azure (or CIAM) issuer, and names the discovery document that holds its keys.
import { chooseHost, standardProvider } from './oauth2.ts';
import { azureUser, unverifiedIssuer, verifyOidcToken } from './oidc.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';
import { ProviderError } from './provider-error.ts';

const AZURE_ISSUER = /^https:\/\/login[.]microsoftonline[.]com\/([^/]+)\/v2[.]0\/?$/;
const CIAM_ISSUER = /^https:\/\/[a-z0-9-]+[.]ciamlogin[.]com\/([^/]+)\/v2[.]0\/?$/;
const COMMON = [
  'https://login.microsoftonline.com/common/v2.0',
  'https://login.microsoftonline.com/organizations/v2.0',
];

/** The issuers POST /token?grant_type=id_token accepts as Azure's (GoTrue's IsAzureIssuer prefixes). */
export const isAzureIdTokenIssuer = (iss: string) =>
  iss.startsWith('https://login.microsoftonline.com/') || iss.startsWith('https://sts.windows.net/');

export function azureProvider(s: ProviderSettings): OAuthProvider {
  const clientId = s.clientIds[0] ?? '';
  const authHost = chooseHost(s.url, 'login.microsoftonline.com/common');
  let expectedIssuer = s.url ? `${authHost}/v2.0` : '';
  if ((!AZURE_ISSUER.test(expectedIssuer) && !CIAM_ISSUER.test(expectedIssuer)) || COMMON.includes(expectedIssuer))
    expectedIssuer = '';
  const base = standardProvider(s, {
    name: 'azure',
    authUrl: `${authHost}/oauth2/v2.0/authorize`,
    tokenUrl: `${authHost}/oauth2/v2.0/token`,
    scopes: ['openid'],
    async userInfo(ctx, token) {
      if (!token.idToken) throw new ProviderError('azure: no OIDC ID token present in response');
      const issuer = unverifiedIssuer(token.idToken);
      // GoTrue only refuses a non-Azure issuer when a CIAM tenant is configured; any issuer outside
      // Azure and CIAM is refused here, so no other host's keys can vouch for a token.
      if (!AZURE_ISSUER.test(issuer) && !CIAM_ISSUER.test(issuer))
        throw new ProviderError('azure: ID token issuer not valid');
      if (CIAM_ISSUER.test(expectedIssuer) && !CIAM_ISSUER.test(issuer))
        throw new ProviderError('azure: ID token issuer not valid');
      if (expectedIssuer && issuer !== expectedIssuer)
        throw new ProviderError('azure: ID token issuer does not match the expected issuer');
      return azureUser(await verifyOidcToken(ctx, token.idToken, { issuer, clientId, accessToken: token.accessToken }));
    },
  });
  return {
    ...base,
    async verifyIdToken(ctx, idToken) {
      const issuer = unverifiedIssuer(idToken);
      if (!isAzureIdTokenIssuer(issuer)) throw new ProviderError('not an Azure ID token issuer');
      const payload = await verifyOidcToken(ctx, idToken, { issuer });
      return { user: azureUser(payload), payload };
    },
  };
}
