// POST /token?grant_type=id_token (GoTrue: token_oidc.go IdTokenGrant): a native app hands over
// the ID token Apple, Google, Azure, Facebook or Keycloak gave it; authsvc checks it against the
// issuer's keys and the configured client ids, then signs the user in (or links the identity to
// the signed-in user) exactly as the OAuth callback does.
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { base64url, utf8 } from '../crypto/encoding.ts';
import type { Deps } from '../deps.ts';
import { badRequest, OAuthApiError, validationFailed } from '../core/errors.ts';
import { APPLE_ISSUERS } from '../oauth/apple.ts';
import { isAzureIdTokenIssuer as isAzureIssuer } from '../oauth/azure.ts';
import { enabledProvider, oauthContext } from '../oauth/context.ts';
import type { OAuthProvider, ProviderSettings } from '../oauth/provider.ts';
import { FACEBOOK_ISSUER } from '../oauth/facebook.ts';
import { GOOGLE_ISSUER } from '../oauth/google.ts';
import { signInExternal } from '../accounts/external-accounts.ts';
import { type LinkTarget, linkIdentityExternal } from '../accounts/external-link.ts';
import { externalGrant } from './external-grant.ts';
import { customClient, lookupCustomProvider } from '../accounts/custom-provider.ts';
import { identityFromUser, providerBudget } from './external.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';

export interface IdTokenParams {
  id_token?: string;
  access_token?: string;
  nonce?: string;
  provider?: string;
  client_id?: string;
  issuer?: string;
}

function tokenIssuer(idToken: string, provider: string): string {
  try {
    return String(decodeJwt(idToken).iss ?? '');
  } catch {
    throw badRequest(
      'validation_failed',
      `Unable to detect issuer in ID token for ${provider === 'apple' ? 'Apple' : 'Azure'} provider`,
    );
  }
}

/** getProvider: which provider the request means, and the issuer named in GoTrue's messages. */
function resolve(
  deps: Deps,
  p: IdTokenParams,
  idToken: string,
): { name: 'apple' | 'google' | 'azure' | 'facebook' | 'keycloak'; issuer: string } {
  const issuer = p.issuer ?? '';
  const keycloakUrl = deps.config.external.providers.keycloak.url?.replace(/\/+$/, '');
  if (p.provider === 'apple' || APPLE_ISSUERS.includes(issuer)) {
    const detected = tokenIssuer(idToken, 'apple');
    if (!APPLE_ISSUERS.includes(detected))
      throw validationFailed('Detected ID token issuer is not an Apple ID token issuer');
    if (issuer && issuer !== detected) throw validationFailed('Provided issuer does not match ID token issuer');
    return { name: 'apple', issuer: detected };
  }
  if (p.provider === 'google' || issuer === GOOGLE_ISSUER) return { name: 'google', issuer: GOOGLE_ISSUER };
  if (p.provider === 'azure' || isAzureIssuer(issuer)) {
    const detected = tokenIssuer(idToken, 'azure');
    if (!isAzureIssuer(detected)) throw validationFailed('Detected ID token issuer is not an Azure ID token issuer');
    if (issuer && issuer !== detected) throw validationFailed('Provided issuer does not match ID token issuer');
    return { name: 'azure', issuer: detected };
  }
  if (p.provider === 'facebook' || issuer === FACEBOOK_ISSUER) return { name: 'facebook', issuer: FACEBOOK_ISSUER };
  if (p.provider === 'keycloak' || (keycloakUrl && issuer === keycloakUrl))
    return { name: 'keycloak', issuer: keycloakUrl ?? '' };
  // GoTrue's EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS (arbitrary issuers) is deprecated upstream and not offered.
  throw validationFailed(`Custom OIDC provider "${p.provider ?? ''}" not allowed`);
}

type Found = { provider: OAuthProvider & Required<Pick<OAuthProvider, 'verifyIdToken'>>; settings: ProviderSettings };

function builtIn(deps: Deps, p: IdTokenParams, idToken: string): { name: string; found: Found } {
  const { name, issuer } = resolve(deps, p, idToken);
  const found = enabledProvider(deps.config, name);
  const verifyIdToken = found?.provider.verifyIdToken;
  if (!found || !verifyIdToken) throw badRequest('provider_disabled', `Provider (issuer "${issuer}") is not enabled`);
  return { name, found: { provider: { ...found.provider, verifyIdToken }, settings: found.settings } };
}

/** token_oidc.go's `custom:` case: an enabled OIDC custom provider; audiences are its client id and acceptable_client_ids. */
async function customIdTokenProvider(deps: Deps, identifier: string): Promise<{ name: string; found: Found }> {
  const looked = await lookupCustomProvider(deps, identifier);
  if ('missing' in looked) {
    if (looked.missing === 'feature') throw validationFailed('Custom OAuth providers are disabled');
    if (looked.missing === 'unknown') throw validationFailed(`Custom provider "${identifier}" not found`);
    throw badRequest('provider_disabled', `Custom provider "${identifier}" is disabled`);
  }
  if (looked.row.providerType !== 'oidc') throw validationFailed(`Provider "${identifier}" is not an OIDC provider`);
  const client = await customClient(deps, looked.row);
  const verifyIdToken = client.provider.verifyIdToken;
  if (!verifyIdToken) throw validationFailed(`Provider "${identifier}" is not an OIDC provider`);
  return { name: identifier, found: { provider: { ...client.provider, verifyIdToken }, settings: client.settings } };
}

/** OIDC at_hash: the left half of the access token's hash under the ID token's algorithm. */
async function atHash(accessToken: string, alg: string): Promise<string> {
  const bits = alg.endsWith('512') ? 'SHA-512' : alg.endsWith('384') ? 'SHA-384' : 'SHA-256';
  const digest = new Uint8Array(await crypto.subtle.digest(bits, utf8(accessToken)));
  return base64url(digest.slice(0, digest.length / 2));
}

async function sha256Hex(s: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(s)));
  return [...d].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** `link`: POST /token?grant_type=id_token&link_identity=true, the bearer's user and session the identity joins. */
export async function idTokenGrant(
  deps: Deps,
  p: IdTokenParams,
  aud: string,
  meta: RequestMeta,
  link?: LinkTarget,
): Promise<TokenResponse> {
  const idToken = p.id_token ?? '';
  if (!idToken) throw new OAuthApiError('invalid request', 'id_token required');
  if (!p.provider && (!p.client_id || !p.issuer))
    throw new OAuthApiError('invalid request', 'provider or client_id and issuer required');
  const { name, found } = p.provider?.startsWith('custom:')
    ? await customIdTokenProvider(deps, p.provider)
    : builtIn(deps, p, idToken);
  let verified;
  try {
    verified = await found.provider.verifyIdToken(oauthContext(deps, providerBudget(deps)), idToken);
  } catch (err) {
    throw new OAuthApiError('invalid request', 'Bad ID token', err);
  }
  const { payload } = verified;
  if (p.access_token && typeof payload.at_hash === 'string') {
    const alg = decodeProtectedHeader(idToken).alg ?? 'RS256';
    if ((await atHash(p.access_token, alg)) !== payload.at_hash)
      throw new OAuthApiError('invalid request', 'Bad ID token');
  }
  if (!payload.sub) throw new OAuthApiError('invalid request', 'Missing sub claim in id_token');
  const audiences = Array.isArray(payload.aud)
    ? payload.aud.map(String)
    : payload.aud === undefined
      ? []
      : [String(payload.aud)];
  // GoTrue also accepts EXTERNAL_IOS_BUNDLE_ID for Apple (native Sign in with Apple names the app's bundle).
  const bundle = name === 'apple' ? deps.config.external.iosBundleId : undefined;
  const accepted = bundle ? [...found.settings.clientIds, bundle] : found.settings.clientIds;
  if (!accepted.some((id) => audiences.includes(id))) {
    // Go prints the slice as [a b].
    throw new OAuthApiError('invalid request', `Unacceptable audience in id_token: [${audiences.join(' ')}]`);
  }
  // Facebook Limited Login tokens carry a nonce nobody can pass back; GoTrue skips the check.
  if (!(found.settings.skipNonceCheck || name === 'facebook')) {
    const tokenNonce = typeof payload.nonce === 'string' ? payload.nonce : '';
    const given = p.nonce ?? '';
    if (Boolean(tokenNonce) !== Boolean(given))
      throw new OAuthApiError('invalid request', 'Passed nonce and nonce in id_token should either both exist or not.');
    if (tokenNonce && (await sha256Hex(given)) !== tokenNonce)
      throw new OAuthApiError('invalid nonce', 'Nonces mismatch');
  }
  const identity = identityFromUser(name, verified.user, found.settings.emailOptional);
  return externalGrant(deps, aud, meta, 'oauth', (c) =>
    link ? linkIdentityExternal(c, identity, link) : signInExternal(c, identity),
  );
}
