// The authorization server's metadata (RFC 8414) and OpenID discovery document: one document
// for both, as GoTrue's WellKnownOpenID. GoTrue builds every URL on JWT_ISSUER (relative when it
// is unset); authsvc falls back to API_EXTERNAL_URL so the URLs stay usable.
import type { Config } from '../config/types.ts';

export function serverMetadata(config: Config, algorithms: string[]): Record<string, unknown> {
  const base = (config.jwt.issuer || config.api.externalUrl).replace(/\/+$/, '');
  return {
    issuer: config.jwt.issuer ?? '',
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    userinfo_endpoint: `${base}/oauth/userinfo`,
    ...(config.oauthServer.allowDynamicRegistration ? { registration_endpoint: `${base}/oauth/clients/register` } : {}),
    scopes_supported: ['openid', 'profile', 'email', 'phone', 'offline_access'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    subject_types_supported: ['public'],
    // The algorithms this server signs and accepts (GoTrue lists a fixed RS256, HS256, ES256).
    id_token_signing_alg_values_supported: algorithms,
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    claims_supported: [
      'sub', 'aud', 'iss', 'exp', 'iat', 'auth_time', 'nonce', 'email', 'email_verified', 'phone_number',
      'phone_number_verified', 'name', 'picture', 'preferred_username', 'updated_at',
    ],
    // S256 only: authsvc refuses `plain` (GoTrue lists and accepts it).
    code_challenge_methods_supported: ['S256'],
  };
}
