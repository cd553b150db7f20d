// authsvc as an OAuth 2.1 / OpenID Connect authorization server (OAUTH_SERVER_*).
import { bool, opt, textOr, withDefault, setting } from '../setting.ts';
import { integer, parseBool, seconds } from '../values.ts';

export const oauthServer = {
  oauthServer: {
    enabled: setting(
      'OAUTH_SERVER_ENABLED',
      bool(false),
      'false',
      'Act as an OAuth 2.1 / OpenID Connect authorization server (/oauth/*, /admin/oauth/*, /user/oauth/*); off, those routes answer 404 feature_disabled.',
    ),
    allowDynamicRegistration: setting(
      'OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION',
      bool(false),
      'false',
      'Anyone may register an OAuth client at POST /oauth/clients/register (RFC 7591; MCP clients need it); also adds registration_endpoint to discovery.',
    ),
    authorizationPath: setting(
      'OAUTH_SERVER_AUTHORIZATION_PATH',
      textOr(''),
      '',
      "Path on SITE_URL of the app's consent page; /oauth/authorize redirects there with ?authorization_id=. Required for the authorization flow.",
    ),
    authorizationTtl: setting(
      'OAUTH_SERVER_AUTHORIZATION_TTL',
      withDefault(seconds, 600),
      '10m',
      'Lifetime of a pending authorization and of its authorization code.',
    ),
    defaultScope: setting(
      'OAUTH_SERVER_DEFAULT_SCOPE',
      textOr('email'),
      'email',
      'Scope of an authorization request that names none.',
    ),
    clientIdMetadataDocuments: setting(
      'OAUTH_SERVER_CLIENT_ID_METADATA_DOCUMENTS',
      opt(parseBool),
      'true in local mode, else false',
      "authsvc: a client_id that is an https URL names a Client ID Metadata Document, fetched (through the outbound-request guard) and used as a public client (the MCP authorization spec's preferred registration); advertised as client_id_metadata_document_supported.",
    ).map((v, local) => v ?? local),
    dynamicRegistrationHourlyLimit: setting(
      'OAUTH_SERVER_DYNAMIC_REGISTRATION_HOURLY_LIMIT',
      withDefault(integer(0), 1000),
      '1000',
      'authsvc: most clients POST /oauth/clients/register creates in any hour, across every instance and whatever RATE_LIMIT_HEADER says (a bound on rows anyone can create); 0 for no bound.',
    ),
  },
};
