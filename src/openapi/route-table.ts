// Every operation the app serves, as the OpenAPI document describes it. Request bodies are the zod
// schemas the handlers parse with (imported from the route files, so the two cannot drift);
// test/routes/openapi.test.ts holds this table equal to the Hono app's route list. A built function,
// not a constant: nothing here is evaluated until GET /openapi.json is first asked for.
import type * as z from 'zod';
import { CustomProviderBody } from '../admin/custom-providers.ts';
import { AdminUserBody, DeleteBody } from '../routes/admin-users.ts';
import { GenerateLinkBody } from '../routes/admin-generate-link.ts';
import { InviteBody } from '../routes/invite.ts';
import { AdminFactorBody, ChallengeBody, EnrollBody, RecoveryCodesBody, RecoveryVerifyBody, VerifyBody as FactorVerifyBody } from '../routes/mfa.ts';
import { ClientRegisterBody, ClientUpdateBody, ConsentBody, OAuthTokenBody, TokenStatusBody } from '../routes/oauth-server.ts';
import { MagicLinkBody, OtpBody, RecoverBody, ResendBody } from '../routes/otp.ts';
import { PasskeyOptionsBody, PasskeyUpdateBody, PasskeyVerifyBody } from '../routes/passkeys.ts';
import { SignupBody } from '../routes/signup.ts';
import { SsoBody } from '../routes/sso.ts';
import { SsoProviderBody } from '../sso/providers.ts';
import { IdTokenBody, PasswordBody, PkceBody, RefreshBody, Web3Body } from '../routes/token.ts';
import { UpdateBody } from '../routes/user.ts';
import { VerifyBody } from '../routes/verify.ts';

type Schema = Record<string, unknown>;
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Param {
  name: string;
  description?: string;
  required?: boolean;
  schema?: Schema;
}

export interface Reply {
  description: string;
  /** A component schema's name, or a schema. */
  schema?: string | Schema;
  headers?: Record<string, string>;
  /** GoTrue's error body (components.responses.ClientError), with this description. */
  error?: boolean;
}

export interface Operation {
  method: Method;
  /** OpenAPI form: `{param}`. */
  path: string;
  summary: string;
  tag: string;
  /** GoTrue's handler, where there is one. */
  gotrue?: string;
  auth?: 'user' | 'admin' | 'user-optional';
  /** The schema(s) the handler parses the JSON body with; several when a query parameter picks one. */
  body?: z.ZodObject | Record<string, z.ZodObject>;
  bodyOptional?: boolean;
  form?: Schema;
  query?: Param[];
  replies: Record<string, Reply>;
}

const str = { type: 'string' };
const redirectTo: Param = { name: 'redirect_to', description: 'Where the link or redirect leads; honoured for SITE_URL\'s host or a URI_ALLOW_LIST match, else SITE_URL. Also read from a `redirect_to` header.' };
const paging: Param[] = [
  { name: 'page', description: 'Page number (default 1).', schema: { type: 'string', pattern: '^[0-9]+$' } },
  { name: 'per_page', description: 'Page size (default 50).', schema: { type: 'string', pattern: '^[0-9]+$' } },
];
const pagingHeaders = { Link: 'RFC 8288 links to the next and last pages.', 'X-Total-Count': 'Total rows matching.' };
const redirect = (description: string): Reply => ({ description, headers: { Location: 'The target.' } });
const json = (schema: string | Schema, description = 'OK'): Reply => ({ description, schema });
const empty = json('Empty');
const oneOf = (...names: string[]): Schema => ({ oneOf: names.map((n) => ({ $ref: `#/components/schemas/${n}` })) });
/** SAML SSO (routes/sso.ts, routes/admin-sso.ts); /sso* answers 404 saml_provider_disabled while SAML_ENABLED is off. */
function sso(): Operation[] {
  const off = 'While SAML_ENABLED is off: 404 `saml_provider_disabled`.';
  const provider = {
    type: 'object',
    description: 'GoTrue\'s SSOProvider: id, resource_id?, disabled (null or a boolean), allow_any_email_domain (authsvc\'s: may assert addresses outside its domains), saml {entity_id, metadata_xml? (not in lists), metadata_url?, attribute_mapping {keys?}, name_id_format?}, domains [{domain}], created_at, updated_at.',
  };
  const adminErrors: Record<string, Reply> = {
    400: { description: '`validation_failed`, `saml_metadata_fetch_failed`, `sso_domain_already_exists`, `saml_entity_id_mismatch`.', error: true },
    404: { description: '`sso_provider_not_found`.', error: true },
    422: { description: '`saml_idp_already_exists`, `conflict`.', error: true },
    501: { description: '`saml_not_supported_on_runtime` (Workers without node:crypto).', error: true },
  };
  const op = (o: Omit<Operation, 'tag'>): Operation => ({ ...o, tag: 'sso' });
  const admin = (o: Omit<Operation, 'tag' | 'auth'>): Operation => ({ ...o, tag: 'sso', auth: 'admin' });
  const idp = 'GoTrue: loadSSOProvider; `{idp_id}` is the uuid or `resource_<resource_id>`.';
  return [
    op({
      method: 'post', path: '/sso', summary: 'Start SAML SSO by provider id or email domain (auth-js signInWithSSO)', gotrue: 'SingleSignOn', body: SsoBody,
      replies: {
        200: json({ type: 'object', properties: { url: str } }, 'With skip_http_redirect: the IdP URL with the signed AuthnRequest.'),
        303: redirect('To the IdP with the signed AuthnRequest (HTTP-Redirect binding).'),
        400: { description: '`validation_failed`, `bad_json`, `captcha_failed`.', error: true },
        404: { description: `\`sso_provider_not_found\`, \`sso_provider_disabled\`. ${off}`, error: true },
        501: { description: '`saml_not_supported_on_runtime`.', error: true },
      },
    }),
    op({
      method: 'get', path: '/sso/saml/metadata', summary: 'The SP metadata (EntityDescriptor)', gotrue: 'SAMLMetadata',
      query: [{ name: 'download', description: '`true`: valid 5 years, as an attachment.', schema: { enum: ['true', 'false'] } }],
      replies: { 200: { description: 'application/xml.' }, 404: { description: off, error: true } },
    }),
    op({
      method: 'post', path: '/sso/saml/acs', summary: 'SAML assertion consumer service (HTTP-POST binding)', gotrue: 'SamlAcs',
      form: { type: 'object', properties: { SAMLResponse: str, RelayState: str } },
      replies: {
        302: redirect('To the redirect target with a session in the fragment, or `?code=` for PKCE.'),
        303: redirect('To SITE_URL with `error`, `error_code`, `error_description` in the query (every refusal; `saml_email_domain_not_allowed` for an address outside the provider\'s domains).'),
        404: { description: off, error: true }, 413: { description: '`request_entity_too_large`.', error: true },
        501: { description: '`saml_not_supported_on_runtime`.', error: true },
      },
    }),
    admin({
      method: 'get', path: '/admin/sso/providers', summary: 'List SSO providers', gotrue: 'adminSSOProvidersList',
      query: [{ name: 'resource_id' }, { name: 'resource_id_prefix' }], replies: { 200: json({ type: 'object', properties: { items: { type: 'array', items: provider } } }) },
    }),
    admin({ method: 'post', path: '/admin/sso/providers', summary: 'Add a SAML IdP from metadata XML or URL', gotrue: 'adminSSOProvidersCreate', body: SsoProviderBody, replies: { 201: json(provider, 'Created'), ...adminErrors } }),
    admin({ method: 'get', path: '/admin/sso/providers/{idp_id}', summary: `Get an SSO provider. ${idp}`, gotrue: 'adminSSOProvidersGet', replies: { 200: json(provider), ...adminErrors } }),
    admin({ method: 'put', path: '/admin/sso/providers/{idp_id}', summary: 'Update an SSO provider (domains replace the set; name_id_format left out clears it)', gotrue: 'adminSSOProvidersUpdate', body: SsoProviderBody, replies: { 200: json(provider), ...adminErrors } }),
    admin({ method: 'delete', path: '/admin/sso/providers/{idp_id}', summary: 'Delete an SSO provider', gotrue: 'adminSSOProvidersDelete', replies: { 200: json(provider, 'The deleted provider.'), ...adminErrors } }),
  ];
}

/** authsvc as an OAuth 2.1 / OIDC provider (routes/oauth-server.ts); 404 feature_disabled while OAUTH_SERVER_ENABLED is off. */
function oauthServer(): Operation[] {
  const off = 'While OAUTH_SERVER_ENABLED is off: 404 `feature_disabled`.';
  const op = (o: Omit<Operation, 'tag'>): Operation => ({ ...o, tag: 'oauth-server' });
  const client = json({ type: 'object', description: 'GoTrue\'s OAuthServerClientResponse: client_id, client_secret (on creation and regeneration only), client_type, redirect_uris, token_endpoint_auth_method, grant_types, response_types, client_name?, client_uri?, logo_uri?, registration_type, created_at, updated_at.' });
  const oauthError = { description: 'RFC 6749 §5.2 error body `{error, error_description}`: invalid_request, invalid_client (401 with a Basic challenge after HTTP Basic), invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope, invalid_target, server_error.', error: true };
  const clientErrors: Record<string, Reply> = { 404: { description: `\`oauth_client_not_found\`. ${off}`, error: true } };
  const authorizeQuery: Param[] = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'resource', 'code_challenge', 'code_challenge_method', 'nonce']
    .map((name) => ({ name, ...(name === 'client_id' || name === 'redirect_uri' || name.startsWith('code_challenge') ? { required: true } : {}) }));
  const form = { type: 'object', properties: Object.fromEntries(Object.keys(OAuthTokenBody.shape).map((k) => [k, { type: 'string' }])) };
  const tokenStatusForm = { type: 'object', properties: Object.fromEntries(Object.keys(TokenStatusBody.shape).map((k) => [k, { type: 'string' }])) };
  return [
    op({ method: 'get', path: '/.well-known/oauth-authorization-server', summary: 'Authorization server metadata (RFC 8414)', gotrue: 'WellKnownOpenID', replies: { 200: json('OpenIdConfiguration'), 404: { description: off, error: true } } }),
    op({ method: 'get', path: '/.well-known/oauth-authorization-server/{issuer_path}', summary: 'The same metadata where RFC 8414 puts it for an issuer with a path (e.g. /auth/v1)', gotrue: 'WellKnownOpenID', replies: { 200: json('OpenIdConfiguration'), 404: { description: off, error: true } } }),
    op({ method: 'post', path: '/oauth/clients/register', summary: 'Dynamic client registration (RFC 7591; OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION)', gotrue: 'OAuthServerClientDynamicRegister', body: ClientRegisterBody, replies: { 201: client, 403: { description: '`oauth_dynamic_client_registration_disabled`.', error: true } } }),
    op({ method: 'get', path: '/oauth/authorize', summary: 'Start an authorization (PKCE S256 required): redirect to the consent page', gotrue: 'OAuthServerAuthorize', query: authorizeQuery, replies: { 302: redirect('To SITE_URL + OAUTH_SERVER_AUTHORIZATION_PATH?authorization_id=…, or back to the client with ?error=….') } }),
    op({ method: 'get', path: '/oauth/authorizations/{authorization_id}', summary: 'The request the consent page shows (or {redirect_url} when already granted)', gotrue: 'OAuthServerGetAuthorization', auth: 'user', replies: { 200: json({ type: 'object', description: '{authorization_id, redirect_uri, client, user, scope, resource?} or {redirect_url}.' }), 404: { description: '`oauth_authorization_not_found`.', error: true } } }),
    op({ method: 'post', path: '/oauth/authorizations/{authorization_id}/consent', summary: 'Approve or deny the request', gotrue: 'OAuthServerConsent', auth: 'user', body: ConsentBody, replies: { 200: json({ type: 'object', description: '{redirect_url}: the client\'s redirect URI with ?code=&state= or ?error=access_denied.' }), 404: { description: '`oauth_authorization_not_found`.', error: true } } }),
    op({ method: 'post', path: '/oauth/token', summary: 'Exchange a code or refresh token (client_secret_basic, client_secret_post or none)', gotrue: 'OAuthToken', form, replies: { 200: json({ type: 'object', description: '{access_token, expires_in, id_token?, refresh_token, token_type}.' }), 400: oauthError } }),
    op({ method: 'post', path: '/oauth/revoke', summary: 'Revoke a token the client holds (RFC 7009): its OAuth session ends; 200 for any token (not a GoTrue route)', form: tokenStatusForm, replies: { 200: { description: 'Revoked, or not a token of this client.' }, 400: oauthError, 401: oauthError } }),
    op({ method: 'post', path: '/oauth/introspect', summary: 'Whether a token is live, for a confidential client (RFC 7662; not a GoTrue route)', form: tokenStatusForm, replies: { 200: json({ type: 'object', description: '{active, scope?, client_id?, sub?, aud?, exp?, iat?, iss?, token_type?}; only {active: false} for a token that is not live.' }), 400: oauthError, 401: oauthError } }),
    op({ method: 'get', path: '/oauth/userinfo', summary: 'OIDC UserInfo: claims the session\'s scopes grant', gotrue: 'OAuthUserInfo', auth: 'user', replies: { 200: json({ type: 'object', description: '{sub} and the OIDC §5.4 claims of the scopes (email, email_verified, profile claims, phone_number, phone_number_verified), plus GoTrue\'s user_metadata, phone, phone_verified.' }), 401: { description: 'RFC 6750 `invalid_token` with a Bearer challenge: missing, expired, revoked or ended-session token, or an ID token.', error: true }, 403: { description: 'RFC 6750 `insufficient_scope`: a client\'s token without `openid`.', error: true } } }),
    op({ method: 'get', path: '/user/oauth/grants', summary: 'The clients the user has granted access', gotrue: 'UserListOAuthGrants', auth: 'user', replies: { 200: json({ type: 'array', items: { type: 'object' } }) } }),
    op({ method: 'delete', path: '/user/oauth/grants', summary: 'Revoke a grant: its consent and the client\'s sessions', gotrue: 'UserRevokeOAuthGrant', auth: 'user', query: [{ name: 'client_id', required: true }], replies: { 204: { description: 'Revoked.' }, 404: { description: '`oauth_consent_not_found`.', error: true } } }),
    op({ method: 'post', path: '/admin/oauth/clients', summary: 'Register a client', gotrue: 'AdminOAuthServerClientRegister', auth: 'admin', body: ClientRegisterBody, replies: { 201: client } }),
    op({ method: 'get', path: '/admin/oauth/clients', summary: 'List clients (newest first; {} when none)', gotrue: 'OAuthServerClientList', auth: 'admin', replies: { 200: json({ type: 'object', description: '{clients: [...]}' }) } }),
    op({ method: 'get', path: '/admin/oauth/clients/{client_id}', summary: 'Get a client', gotrue: 'OAuthServerClientGet', auth: 'admin', replies: { 200: client, ...clientErrors } }),
    op({ method: 'put', path: '/admin/oauth/clients/{client_id}', summary: 'Update a client', gotrue: 'OAuthServerClientUpdate', auth: 'admin', body: ClientUpdateBody, replies: { 200: client, ...clientErrors } }),
    op({ method: 'delete', path: '/admin/oauth/clients/{client_id}', summary: 'Delete a client (soft; its sessions end)', gotrue: 'OAuthServerClientDelete', auth: 'admin', replies: { 204: { description: 'Deleted.' }, ...clientErrors } }),
    op({ method: 'post', path: '/admin/oauth/clients/{client_id}/regenerate_secret', summary: 'Regenerate a confidential client\'s secret', gotrue: 'OAuthServerClientRegenerateSecret', auth: 'admin', replies: { 200: client, ...clientErrors } }),
  ];
}

function mfa(): Operation[] {
  const factorErrors: Record<string, Reply> = { 404: { description: '`mfa_factor_not_found`, or `validation_failed` for an id that is not a UUID.', error: true } };
  const unprocessable = (description: string): Reply => ({ description, error: true });
  const factor = { type: 'object', description: 'A factor (GoTrue models.Factor): id, created_at, updated_at, status, friendly_name?, factor_type, phone, last_challenged_at.' };
  const op = (o: Omit<Operation, 'tag' | 'auth'>, auth: Operation['auth'] = 'user'): Operation => ({ ...o, tag: 'mfa', auth });
  return [
    op({
      method: 'post', path: '/factors', summary: 'Enrol a TOTP, phone or WebAuthn factor', gotrue: 'EnrollFactor', body: EnrollBody,
      replies: { 200: json({ type: 'object', description: '{id, type, friendly_name, totp?: {qr_code, secret, uri}, phone?}' }), 403: { description: '`insufficient_aal`: a verified factor exists and the session is aal1.', error: true }, 422: unprocessable('Type disabled, name conflict, too many factors, or a verified phone factor exists.') },
    }),
    op({
      method: 'get', path: '/factors/recovery-codes', summary: 'The user\'s recovery-code set: codes in all and unused',
      replies: { 200: json({ type: 'object', description: '{id, type: "recovery_code", total, remaining}' }), 404: { description: '`mfa_factor_not_found`: the user has no recovery codes.', error: true } },
    }),
    op({
      method: 'post', path: '/factors/recovery-codes', summary: 'Generate recovery codes (aal2; shown once)', body: RecoveryCodesBody, bodyOptional: true,
      replies: { 200: json({ type: 'object', description: '{id, type, friendly_name, total, codes}' }), 403: { description: '`insufficient_aal`.', error: true }, 422: unprocessable('`mfa_recovery_codes_enroll_not_enabled`, or `mfa_verified_factor_exists` (the user has a set).') },
    }),
    op({
      method: 'post', path: '/factors/recovery-codes/verify', summary: 'Use a recovery code: the session becomes aal2 (AMR mfa/recovery_code)', body: RecoveryVerifyBody,
      replies: { 200: json('Session'), 404: { description: '`mfa_factor_not_found`: the user has no recovery codes.', error: true }, 422: unprocessable('`mfa_verification_failed` or `mfa_recovery_codes_verify_not_enabled`.'), 429: unprocessable('`over_request_rate_limit`: five wrong codes in a row lock the set (15 minutes, doubling with each lock, up to a day), or the per-IP limit.') },
    }),
    op({
      method: 'post', path: '/factors/recovery-codes/regenerate', summary: 'Replace the recovery codes (aal2): earlier codes stop working',
      replies: { 200: json({ type: 'object', description: '{id, type, friendly_name, total, codes}' }), 403: { description: '`insufficient_aal`.', error: true }, 404: { description: '`mfa_factor_not_found`.', error: true }, 422: unprocessable('`mfa_recovery_codes_enroll_not_enabled`.') },
    }),
    op({
      method: 'delete', path: '/factors/recovery-codes', summary: 'Delete the recovery codes (aal2)',
      replies: { 200: json({ type: 'object', properties: { id: str } }), 403: { description: '`insufficient_aal`.', error: true }, 404: { description: '`mfa_factor_not_found`.', error: true } },
    }),
    op({
      method: 'post', path: '/factors/{factor_id}/challenge', summary: 'Challenge a factor (a phone factor is texted a code; a WebAuthn factor gets creation or request options)', gotrue: 'ChallengeFactor', body: ChallengeBody, bodyOptional: true,
      replies: { 200: json({ type: 'object', description: '{id, type, expires_at, webauthn?: {type: create|request, credential_options: {publicKey}}}' }), ...factorErrors, 403: unprocessable('`insufficient_aal`: an unverified factor, a verified one exists and the session is aal1.'), 422: unprocessable('Verification disabled for the factor type.'), 429: unprocessable('`over_sms_send_rate_limit`, `over_request_rate_limit`, or `mfa_factor_locked` (five wrong codes in a row).') },
    }),
    op({
      method: 'post', path: '/factors/{factor_id}/verify', summary: 'Verify a challenge: the session becomes aal2', gotrue: 'VerifyFactor', body: FactorVerifyBody,
      replies: { 200: json('Session'), ...factorErrors, 403: unprocessable('`insufficient_aal` (an unverified factor, a verified one exists, the session is aal1), `otp_expired` (Twilio Verify refused the code), `mfa_verification_rejected` (hook).'), 422: unprocessable('`mfa_verification_failed`, `mfa_challenge_expired`, `mfa_ip_address_mismatch`, `mfa_factor_not_found` (unknown challenge).'), 429: unprocessable('`mfa_factor_locked`: five wrong codes in a row lock a TOTP or phone factor (a minute, doubling with each lock, up to a day); the right code is refused meanwhile. Or the per-IP limit (`over_request_rate_limit`).') },
    }),
    op({
      method: 'delete', path: '/factors/{factor_id}', summary: 'Unenrol a factor (a verified one needs aal2)', gotrue: 'UnenrollFactor',
      replies: { 200: json({ type: 'object', properties: { id: str } }), ...factorErrors, 422: unprocessable('`insufficient_aal`.') },
    }),
    op({ method: 'get', path: '/admin/users/{user_id}/factors', summary: 'A user\'s factors (`[]` when none)', gotrue: 'adminUserGetFactors', replies: { 200: json({ type: 'array', items: factor }) } }, 'admin'),
    op({ method: 'put', path: '/admin/users/{user_id}/factors/{factor_id}', summary: 'Rename a factor, or change a phone factor\'s number', gotrue: 'adminUserUpdateFactor', body: AdminFactorBody, replies: { 200: json(factor), ...factorErrors } }, 'admin'),
    op({ method: 'delete', path: '/admin/users/{user_id}/factors/{factor_id}', summary: 'Delete a user\'s factor', gotrue: 'adminUserDeleteFactor', replies: { 200: json(factor), ...factorErrors } }, 'admin'),
  ];
}

/** Passkeys (routes/passkeys.ts): every /passkeys route answers 404 `passkey_disabled` while PASSKEY_ENABLED is off. */
function passkeys(): Operation[] {
  const off = { description: '`passkey_disabled`: PASSKEY_ENABLED is off; or `validation_failed` "Passkey not found".', error: true };
  const failed = { description: '`webauthn_challenge_not_found`, `webauthn_challenge_expired`, `webauthn_verification_failed` or `validation_failed`.', error: true };
  const item = { type: 'object', description: '{id, friendly_name?, created_at, last_used_at?}' };
  const options = json({ type: 'object', description: '{challenge_id, options (PublicKeyCredential creation or request options), expires_at}' });
  const op = (o: Omit<Operation, 'tag'>): Operation => ({ ...o, tag: 'passkeys' });
  return [
    op({ method: 'post', path: '/passkeys/authentication/options', summary: 'Passkey sign-in options (discoverable: no user named)', gotrue: 'PasskeyAuthenticationOptions', body: PasskeyOptionsBody, bodyOptional: true, replies: { 200: options, 404: off, 429: { description: '`over_request_rate_limit` (RATE_LIMIT_PASSKEY).', error: true } } }),
    op({ method: 'post', path: '/passkeys/authentication/verify', summary: 'Sign in with a passkey assertion: an aal1 session (AMR passkey)', gotrue: 'PasskeyAuthenticationVerify', body: PasskeyVerifyBody, replies: { 200: json('Session'), 400: failed, 403: { description: '`email_not_confirmed`, `phone_not_confirmed` or `user_banned`.', error: true }, 404: off } }),
    op({ method: 'post', path: '/passkeys/registration/options', summary: 'Passkey registration options for the signed-in user', gotrue: 'PasskeyRegistrationOptions', auth: 'user', replies: { 200: options, 403: { description: '`insufficient_aal` (MFA on, session aal1).', error: true }, 404: off, 422: { description: '`too_many_passkeys`, or `validation_failed` for SSO users.', error: true } } }),
    op({ method: 'post', path: '/passkeys/registration/verify', summary: 'Register a passkey from an attestation', gotrue: 'PasskeyRegistrationVerify', auth: 'user', body: PasskeyVerifyBody, replies: { 200: json({ type: 'object', description: '{id, friendly_name, created_at}' }), 400: failed, 403: { description: '`insufficient_aal`.', error: true }, 404: off, 422: { description: '`too_many_passkeys` or `webauthn_credential_exists`.', error: true } } }),
    op({ method: 'get', path: '/passkeys', summary: 'The signed-in user\'s passkeys, oldest first', gotrue: 'PasskeyList', auth: 'user', replies: { 200: json({ type: 'array', items: item }), 404: off } }),
    op({ method: 'patch', path: '/passkeys/{passkey_id}', summary: 'Rename a passkey', gotrue: 'PasskeyUpdate', auth: 'user', body: PasskeyUpdateBody, replies: { 200: json(item), 404: off } }),
    op({ method: 'delete', path: '/passkeys/{passkey_id}', summary: 'Delete a passkey (aal2 when MFA is on)', gotrue: 'PasskeyDelete', auth: 'user', replies: { 204: { description: 'Deleted.' }, 403: { description: '`insufficient_aal`.', error: true }, 404: off } }),
    op({ method: 'get', path: '/admin/users/{user_id}/passkeys', summary: 'A user\'s passkeys', gotrue: 'AdminPasskeyList', auth: 'admin', replies: { 200: json({ type: 'array', items: item }), 404: { description: '`user_not_found`.', error: true } } }),
    op({ method: 'delete', path: '/admin/users/{user_id}/passkeys/{passkey_id}', summary: 'Delete a user\'s passkey', gotrue: 'AdminPasskeyDelete', auth: 'admin', replies: { 204: { description: 'Deleted.' }, 404: { description: '`user_not_found`, or `validation_failed` "Passkey not found".', error: true } } }),
  ];
}

/** The admin console's files (routes/console.ts; CONSOLE_ENABLED, else 404 not_found). */
function consolePages(): Operation[] {
  const page = (path: string, what: string): Operation => ({
    method: 'get', path, summary: `Admin console: ${what} (not a GoTrue route)`, tag: 'console',
    replies: { 200: { description: `${what}; ETag, Cache-Control: no-cache, a strict Content-Security-Policy.` }, 304: { description: 'If-None-Match names the current ETag.' }, 404: { description: '`not_found`: CONSOLE_ENABLED is false.', error: true } },
  });
  return [
    { ...page('/console', 'the page (text/html)'), replies: { ...page('/console', 'the page (text/html)').replies, 301: redirect('From /console to /console/.') } },
    page('/console/app.js', 'its script'),
    page('/console/app.css', 'its style sheet'),
  ];
}

function admin(): Operation[] {
  const op = (o: Omit<Operation, 'tag' | 'auth'>): Operation => ({ ...o, tag: 'admin', auth: 'admin' });
  return [
    op({ method: 'post', path: '/invite', summary: 'Invite a user by email', gotrue: 'Invite', body: InviteBody, query: [redirectTo], replies: { 200: json('User') } }),
    op({
      method: 'get', path: '/admin/users', summary: 'List users', gotrue: 'adminUsers',
      query: [...paging, { name: 'sort', description: '`created_at [asc|desc]`.' }, { name: 'filter', description: 'Substring of the email or name.' }],
      replies: { 200: { ...json('UserList'), headers: pagingHeaders } },
    }),
    op({ method: 'post', path: '/admin/users', summary: 'Create a user', gotrue: 'adminUserCreate', body: AdminUserBody, replies: { 200: json('User') } }),
    op({ method: 'post', path: '/admin/users/{user_id}', summary: 'Create the user with this id (not a GoTrue route)', body: AdminUserBody, replies: { 200: json('User') } }),
    op({ method: 'get', path: '/admin/users/{user_id}', summary: 'Get a user', gotrue: 'adminUserGet', replies: { 200: json('User') } }),
    op({ method: 'put', path: '/admin/users/{user_id}', summary: 'Update a user', gotrue: 'adminUserUpdate', body: AdminUserBody, replies: { 200: json('User') } }),
    op({ method: 'delete', path: '/admin/users/{user_id}', summary: 'Delete a user (hard, or soft with should_soft_delete)', gotrue: 'adminUserDelete', body: DeleteBody, bodyOptional: true, replies: { 200: empty } }),
    op({ method: 'post', path: '/admin/users/{user_id}/logout', summary: 'End every session of the user (not a GoTrue route)', replies: { 204: { description: 'Signed out.' }, 404: { description: '`user_not_found`.', error: true } } }),
    op({ method: 'get', path: '/admin/users/{user_id}/sessions', summary: 'The user\'s sessions, newest first (not a GoTrue route; no tokens or keys)', replies: { 200: { description: 'Sessions: id, created_at, updated_at, refreshed_at, aal, factor_id, not_after, user_agent, ip, oauth_client_id, tag.', schema: { type: 'array', items: { type: 'object' } } }, 404: { description: '`user_not_found`.', error: true } } }),
    op({
      method: 'get', path: '/admin/config', summary: 'The effective configuration, secrets masked, and the instance\'s start time (not a GoTrue route)',
      replies: { 200: json({ type: 'object', required: ['started_at', 'variables'], properties: { started_at: { type: 'string', format: 'date-time' }, variables: { type: 'array', items: { type: 'object', required: ['name', 'value', 'secret', 'set'] } } } }) },
    }),
    op({ method: 'post', path: '/admin/generate_link', summary: 'Generate an email link without sending it', gotrue: 'adminGenerateLink', body: GenerateLinkBody, replies: { 200: json('GeneratedLink') } }),
    op({
      method: 'get', path: '/admin/audit', summary: 'Audit log', gotrue: 'adminAuditLog',
      query: [...paging, { name: 'query', description: '`scope:text`, scope one of author, action, type.' }],
      replies: { 200: { ...json({ type: 'array', items: { $ref: '#/components/schemas/AuditEntry' } }), headers: pagingHeaders } },
    }),
    ...customProviders(op),
  ];
}

function customProviders(op: (o: Omit<Operation, 'tag' | 'auth'>) => Operation): Operation[] {
  const provider = {
    type: 'object',
    description: 'A custom provider (GoTrue models.CustomOAuthProvider): id, provider_type, identifier, name, client_id, acceptable_client_ids, scopes, pkce_enabled, attribute_mapping, custom_claims_allowlist, authorization_params, enabled, email_optional, issuer?, discovery_url?, skip_nonce_check, discovery_document?, authorization_url?, token_url?, userinfo_url?, jwks_uri?, created_at, updated_at; never the client secret.',
  };
  const errors: Record<string, Reply> = {
    400: { description: '`validation_failed` (a check, or a URL refused by the SSRF guard), `conflict`, `over_custom_provider_quota`.', error: true },
    404: { description: '`custom_provider_not_found`, or `feature_disabled` when CUSTOM_OAUTH_ENABLED is false.', error: true },
  };
  return [
    op({
      method: 'get', path: '/admin/custom-providers', summary: 'List custom OAuth/OIDC providers', gotrue: 'adminCustomOAuthProvidersList',
      query: [{ name: 'type', schema: { enum: ['oauth2', 'oidc'] } }], replies: { 200: json({ type: 'object', properties: { providers: { type: 'array', items: provider } } }), ...errors },
    }),
    op({ method: 'post', path: '/admin/custom-providers', summary: 'Add a custom OAuth/OIDC provider', gotrue: 'adminCustomOAuthProviderCreate', body: CustomProviderBody, replies: { 201: json(provider, 'Created'), ...errors } }),
    op({ method: 'get', path: '/admin/custom-providers/{identifier}', summary: 'Get a custom provider', gotrue: 'adminCustomOAuthProviderGet', replies: { 200: json(provider), ...errors } }),
    op({ method: 'put', path: '/admin/custom-providers/{identifier}', summary: 'Update a custom provider (fields given only)', gotrue: 'adminCustomOAuthProviderUpdate', body: CustomProviderBody, replies: { 200: json(provider), ...errors } }),
    op({ method: 'delete', path: '/admin/custom-providers/{identifier}', summary: 'Delete a custom provider', gotrue: 'adminCustomOAuthProviderDelete', replies: { 204: { description: 'Deleted.' }, ...errors } }),
  ];
}

function external(): Operation[] {
  const provider: Param = { name: 'provider', required: true, description: 'The OAuth provider (github, google, …).' };
  const authorizeQuery: Param[] = [
    provider, redirectTo, { name: 'scopes', description: 'Extra scopes, space-separated.' },
    { name: 'code_challenge', description: 'PKCE challenge.' }, { name: 'code_challenge_method', schema: { enum: ['s256', 'plain', 'S256'] } },
    { name: 'invite_token' },
  ];
  const callbackQuery: Param[] = [{ name: 'state' }, { name: 'code' }, { name: 'error' }, { name: 'error_description' }];
  const done = { 302: redirect('To the redirect target, with a session, a PKCE code or an error.'), 303: redirect('To SITE_URL with an error: the state was not usable.') };
  return [
    { method: 'get', path: '/authorize', summary: 'Sign in with an OAuth provider: redirect to it', tag: 'oauth', gotrue: 'ExternalProviderRedirect', query: authorizeQuery, replies: { 302: redirect('To the provider.') } },
    { method: 'get', path: '/callback', summary: 'The provider\'s redirect back', tag: 'oauth', gotrue: 'ExternalProviderCallback', query: callbackQuery, replies: done },
    {
      method: 'post', path: '/callback', summary: 'The provider\'s form POST back (Apple\'s form_post)', tag: 'oauth', gotrue: 'ExternalProviderCallback',
      query: callbackQuery, form: { type: 'object', properties: { state: str, code: str, user: str, error: str, error_description: str } }, replies: done,
    },
    {
      method: 'get', path: '/user/identities/authorize', summary: 'Link an OAuth identity to the signed-in user', tag: 'user', gotrue: 'LinkIdentity', auth: 'user',
      query: [...authorizeQuery, { name: 'skip_http_redirect', description: '`true`: answer the URL as JSON.', schema: { enum: ['true', 'false'] } }],
      replies: {
        200: json('UrlResponse', 'With skip_http_redirect=true.'), 302: redirect('To the provider.'),
        401: { description: '`insufficient_aal`: a verified factor exists and the session is aal1 (checked again when the link completes).', error: true },
      },
    },
    {
      method: 'delete', path: '/user/identities/{identity_id}', summary: 'Unlink an identity (aal2 when MFA is on)', tag: 'user', gotrue: 'DeleteIdentity', auth: 'user',
      replies: { 200: empty, 401: { description: '`insufficient_aal`: a verified factor exists and the session is aal1.', error: true } },
    },
  ];
}

export function routeTable(): Operation[] {
  return [
    { method: 'get', path: '/health', summary: 'Liveness, with a database ping', tag: 'health', gotrue: 'HealthCheck', replies: { 200: json('Health') } },
    { method: 'get', path: '/settings', summary: 'Public settings: enabled providers, signup, autoconfirm', tag: 'health', gotrue: 'Settings', replies: { 200: json('Settings') } },
    { method: 'get', path: '/.well-known/openid-configuration', summary: 'OpenID discovery document', tag: 'health', gotrue: 'WellKnownOpenID', replies: { 200: json('OpenIdConfiguration') } },
    { method: 'get', path: '/.well-known/jwks.json', summary: 'Public signing keys', tag: 'health', gotrue: 'WellKnownJwks', replies: { 200: json('Jwks') } },
    { method: 'get', path: '/openapi.json', summary: 'This document', tag: 'health', replies: { 200: json('OpenApiDocument') } },
    ...consolePages(),
    { method: 'post', path: '/signup', summary: 'Sign up with email or phone and a password; anonymously with neither', tag: 'auth', gotrue: 'Signup', body: SignupBody, query: [redirectTo], replies: { 200: json('SessionOrUser') } },
    {
      method: 'post', path: '/token', summary: 'Sign in / refresh: password, refresh_token, pkce, id_token or web3 grant', tag: 'auth', gotrue: 'Token', auth: 'user-optional',
      query: [{ name: 'grant_type', required: true, schema: { enum: ['password', 'refresh_token', 'pkce', 'id_token', 'web3'] } }],
      body: { password: PasswordBody, refresh_token: RefreshBody, pkce: PkceBody, id_token: IdTokenBody, web3: Web3Body },
      replies: {
        200: json('Session'),
        400: { description: 'GoTrue\'s error body; id_token linking without a token answers the OAuth shape.', schema: oneOf('ErrorLegacy', 'Error2024', 'OAuthError') },
      },
    },
    {
      method: 'post', path: '/logout', summary: 'Sign out', tag: 'auth', gotrue: 'Logout', auth: 'user',
      query: [{ name: 'scope', schema: { enum: ['global', 'local', 'others'], default: 'global' } }], replies: { 204: { description: 'Signed out.' } },
    },
    {
      method: 'post', path: '/verify', summary: 'Verify an email/SMS code or a token hash', tag: 'auth', gotrue: 'Verify', body: VerifyBody,
      replies: { 200: json(oneOf('VerifiedSession', 'EmailChangeHalf'), 'A session (with the verified type, except for SMS codes), or the first half of a secure email change.') },
    },
    {
      method: 'get', path: '/verify', summary: 'Follow an email link (a HEAD does not consume it)', tag: 'auth', gotrue: 'Verify',
      query: [{ name: 'type', required: true }, { name: 'token', required: true }, redirectTo],
      replies: { 303: redirect('To the redirect target: a session or message in the fragment, a PKCE code in the query, or an error in both.') },
    },
    { method: 'post', path: '/recover', summary: 'Send a password-recovery email', tag: 'passwordless', gotrue: 'Recover', body: RecoverBody, query: [redirectTo], replies: { 200: empty } },
    { method: 'post', path: '/magiclink', summary: 'Send a magic link', tag: 'passwordless', gotrue: 'MagicLink', body: MagicLinkBody, query: [redirectTo], replies: { 200: empty } },
    { method: 'post', path: '/otp', summary: 'Send a one-time code by email or SMS', tag: 'passwordless', gotrue: 'Otp', body: OtpBody, query: [redirectTo], replies: { 200: json('MessageId', 'Empty for email; the SMS message id for phone.') } },
    { method: 'post', path: '/resend', summary: 'Resend a signup, email-change, SMS or phone-change code', tag: 'passwordless', gotrue: 'Resend', body: ResendBody, query: [redirectTo], replies: { 200: json('MessageId') } },
    { method: 'get', path: '/user', summary: 'The signed-in user', tag: 'user', gotrue: 'UserGet', auth: 'user', replies: { 200: json('User') } },
    { method: 'put', path: '/user', summary: 'Update the signed-in user', tag: 'user', gotrue: 'UserUpdate', auth: 'user', body: UpdateBody, query: [redirectTo], replies: { 200: json('User') } },
    { method: 'get', path: '/reauthenticate', summary: 'Send a reauthentication nonce', tag: 'user', gotrue: 'Reauthenticate', auth: 'user', replies: { 200: json('MessageId') } },
    ...external(),
    ...admin(),
    ...mfa(),
    ...passkeys(),
    ...oauthServer(),
    ...sso(),
  ];
}
