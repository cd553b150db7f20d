// Every operation the app serves, as the OpenAPI document describes it. Request bodies are the zod
// schemas the handlers parse with (imported from the route files, so the two cannot drift);
// test/openapi.test.ts holds this table equal to the Hono app's route list. A built function,
// not a constant: nothing here is evaluated until GET /openapi.json is first asked for.
import type { z } from 'zod';
import { AdminUserBody, DeleteBody } from '../routes/admin-users.ts';
import { GenerateLinkBody } from '../routes/admin-generate-link.ts';
import { InviteBody } from '../routes/invite.ts';
import { AdminFactorBody, ChallengeBody, EnrollBody, RecoveryCodesBody, RecoveryVerifyBody, VerifyBody as FactorVerifyBody } from '../routes/mfa.ts';
import { MagicLinkBody, OtpBody, RecoverBody, ResendBody } from '../routes/otp.ts';
import { PasskeyOptionsBody, PasskeyUpdateBody, PasskeyVerifyBody } from '../routes/passkeys.ts';
import { SignupBody } from '../routes/signup.ts';
import { IdTokenBody, PasswordBody, PkceBody, RefreshBody } from '../routes/token.ts';
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
const disabled = (code: string): Record<string, Reply> => ({ 404: { description: `Always: 404 \`${code}\` (the feature is off in authsvc).`, error: true } });

/** Routes of features authsvc answers as GoTrue does when they are switched off (routes/feature-gates.ts). */
function gated(): Operation[] {
  const sso = disabled('saml_provider_disabled');
  const oauthServer = disabled('feature_disabled');
  const op = (method: Method, path: string, summary: string, replies: Record<string, Reply>, auth?: Operation['auth']): Operation =>
    ({ method, path, summary, tag: 'disabled', replies, ...(auth ? { auth } : {}) });
  return [
    op('post', '/sso', 'Start SAML SSO (any method under /sso answers the same)', sso),
    op('get', '/sso/saml/metadata', 'SAML metadata', sso),
    op('post', '/sso/saml/acs', 'SAML assertion consumer service', sso),
    op('get', '/oauth/authorize', 'OAuth 2.1 server: authorize (any method under /oauth answers the same)', oauthServer),
    op('post', '/oauth/token', 'OAuth 2.1 server: token', oauthServer),
    op('get', '/oauth/userinfo', 'OAuth 2.1 server: userinfo', oauthServer),
    op('get', '/.well-known/oauth-authorization-server', 'OAuth 2.1 server metadata', oauthServer),
    op('get', '/admin/oauth/clients', 'OAuth 2.1 server: list clients (any method under /admin/oauth)', oauthServer, 'admin'),
    op('post', '/admin/oauth/clients', 'OAuth 2.1 server: register a client', oauthServer, 'admin'),
    op('get', '/user/oauth/grants', 'OAuth 2.1 server: the user\'s grants (any method under /user/oauth)', oauthServer, 'user'),
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
      replies: { 200: json('Session'), 404: { description: '`mfa_factor_not_found`: the user has no recovery codes.', error: true }, 422: unprocessable('`mfa_verification_failed` or `mfa_recovery_codes_verify_not_enabled`.'), 429: unprocessable('`over_request_rate_limit`: five wrong codes lock the set for 15 minutes, or the per-IP limit.') },
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
      replies: { 200: json({ type: 'object', description: '{id, type, expires_at, webauthn?: {type: create|request, credential_options: {publicKey}}}' }), ...factorErrors, 422: unprocessable('Verification disabled for the factor type.'), 429: unprocessable('`over_sms_send_rate_limit` or `over_request_rate_limit`.') },
    }),
    op({
      method: 'post', path: '/factors/{factor_id}/verify', summary: 'Verify a challenge: the session becomes aal2', gotrue: 'VerifyFactor', body: FactorVerifyBody,
      replies: { 200: json('Session'), ...factorErrors, 422: unprocessable('`mfa_verification_failed`, `mfa_challenge_expired`, `mfa_ip_address_mismatch`, `mfa_factor_not_found` (unknown challenge).') },
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
    op({ method: 'post', path: '/admin/generate_link', summary: 'Generate an email link without sending it', gotrue: 'adminGenerateLink', body: GenerateLinkBody, replies: { 200: json('GeneratedLink') } }),
    op({
      method: 'get', path: '/admin/audit', summary: 'Audit log', gotrue: 'adminAuditLog',
      query: [...paging, { name: 'query', description: '`scope:text`, scope one of author, action, type.' }],
      replies: { 200: { ...json({ type: 'array', items: { $ref: '#/components/schemas/AuditEntry' } }), headers: pagingHeaders } },
    }),
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
      replies: { 200: json('UrlResponse', 'With skip_http_redirect=true.'), 302: redirect('To the provider.') },
    },
    { method: 'delete', path: '/user/identities/{identity_id}', summary: 'Unlink an identity', tag: 'user', gotrue: 'DeleteIdentity', auth: 'user', replies: { 200: empty } },
  ];
}

export function routeTable(): Operation[] {
  return [
    { method: 'get', path: '/health', summary: 'Liveness, with a database ping', tag: 'health', gotrue: 'HealthCheck', replies: { 200: json('Health') } },
    { method: 'get', path: '/settings', summary: 'Public settings: enabled providers, signup, autoconfirm', tag: 'health', gotrue: 'Settings', replies: { 200: json('Settings') } },
    { method: 'get', path: '/.well-known/openid-configuration', summary: 'OpenID discovery document', tag: 'health', gotrue: 'WellKnownOpenID', replies: { 200: json('OpenIdConfiguration') } },
    { method: 'get', path: '/.well-known/jwks.json', summary: 'Public signing keys', tag: 'health', gotrue: 'WellKnownJwks', replies: { 200: json('Jwks') } },
    { method: 'get', path: '/openapi.json', summary: 'This document', tag: 'health', replies: { 200: json('OpenApiDocument') } },
    { method: 'post', path: '/signup', summary: 'Sign up with email or phone and a password; anonymously with neither', tag: 'auth', gotrue: 'Signup', body: SignupBody, query: [redirectTo], replies: { 200: json('SessionOrUser') } },
    {
      method: 'post', path: '/token', summary: 'Sign in / refresh: password, refresh_token, pkce or id_token grant', tag: 'auth', gotrue: 'Token', auth: 'user-optional',
      query: [{ name: 'grant_type', required: true, schema: { enum: ['password', 'refresh_token', 'pkce', 'id_token', 'web3'] } }],
      body: { password: PasswordBody, refresh_token: RefreshBody, pkce: PkceBody, id_token: IdTokenBody },
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
    ...gated(),
  ];
}
