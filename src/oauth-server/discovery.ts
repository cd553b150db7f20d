// The authorization server's metadata (RFC 8414) and OpenID discovery document: one document
// for both, as GoTrue's WellKnownOpenID. GoTrue builds every URL on JWT_ISSUER (relative when it
// is unset); authsvc falls back to API_EXTERNAL_URL so the URLs stay usable.
import type { Config } from '../config/types.ts';
import { CLIENT_AUTH_METHODS } from './client-auth.ts';

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
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    // authsvc (GoTrue has neither): RFC 7009 revocation for every client, RFC 7662 introspection
    // for confidential ones.
    revocation_endpoint: `${base}/oauth/revoke`,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    introspection_endpoint: `${base}/oauth/introspect`,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS.filter((m) => m !== 'none'),
    claims_supported: [
      'sub',
      'aud',
      'iss',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'email',
      'email_verified',
      'phone_number',
      'phone_number_verified',
      'name',
      'given_name',
      'family_name',
      'middle_name',
      'nickname',
      'profile',
      'website',
      'gender',
      'birthdate',
      'zoneinfo',
      'locale',
      'picture',
      'preferred_username',
      'updated_at',
    ],
    // S256 only: authsvc refuses `plain` (GoTrue lists and accepts it).
    code_challenge_methods_supported: ['S256'],
    // RFC 9207: every authorization response names the issuer (it needs one to name).
    ...(config.jwt.issuer ? { authorization_response_iss_parameter_supported: true } : {}),
    // The client-id-metadata-document draft: an https client_id names the client's own metadata.
    ...(config.oauthServer.clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
  };
}
