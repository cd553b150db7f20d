// Fields: one zod schema per variable over its resolved raw string, with its default and
// description (the table of docs/configuration.md), and whether authsvc acts on it yet.
import * as z from 'zod';
import { ALIASES, allowsBare } from './names.ts';
import { NOTIFICATIONS } from './notifications.ts';
import { type ConfigVariable, HOOK_KINDS, type HookKind, type NotificationKind, type ProviderName, PROVIDERS, type SendLimit, SMS_PROVIDERS, type Support } from './types.ts';
import { atLeast, integer, logLevel, nonNegativeNumber, oneOf, otpLength, parseBool, parseDatabaseUrl, parseDecryptionKeys, parseHookSecrets, parseHookUri, parseJwtKeys, parseChainIds, parseList, parseRequiredCharacters, parseRfc3339, parseSamlPrivateKey, parseSendLimit, parseTestOtp, parseTrustedHosts, parseUrl, seconds, secondsOr, sqlIdentifier, wholeSecondsOr } from './values.ts';

const rawValue = z.string().optional();

function report(ctx: z.RefinementCtx, e: unknown): void {
  // `continue` lets the object-level cross checks run even when a field failed.
  ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e), continue: true });
}

function opt<T>(parse: (raw: string) => T) {
  return rawValue.transform((raw, ctx): T | undefined => {
    if (raw === undefined) return undefined;
    try {
      return parse(raw);
    } catch (e) {
      report(ctx, e);
      return undefined;
    }
  });
}

function withDefault<T>(parse: (raw: string) => T, fallback: T) {
  return rawValue.transform((raw, ctx): T => {
    if (raw === undefined) return fallback;
    try {
      return parse(raw);
    } catch (e) {
      report(ctx, e);
      return fallback;
    }
  });
}

const text = () => opt((raw) => raw);
const textOr = (fallback: string) => withDefault((raw) => raw, fallback);
const bool = (fallback: boolean) => withDefault(parseBool, fallback);
const list = (fallback: string[] = []) => withDefault(parseList, fallback);

type Field<S extends z.ZodType> = { schema: S; default: string; description: string };
export const f = <S extends z.ZodType>(schema: S, def: string, description: string): Field<S> => ({ schema, default: def, description });

const DEFAULT_SEND_LIMIT: SendLimit = { count: 30, periodSeconds: 3600, form: 'window' };
const SUBJECTS = {
  INVITE: 'You have been invited', CONFIRMATION: 'Confirm Your Signup', RECOVERY: 'Reset Your Password',
  MAGIC_LINK: 'Your Magic Link', EMAIL_CHANGE: 'Confirm Email Change', REAUTHENTICATION: 'Confirm reauthentication',
} as const;

type Kind = Uppercase<NotificationKind>;
type NotificationFields = { [K in `MAILER_NOTIFICATIONS_${Kind}_ENABLED`]: Field<ReturnType<typeof bool>> }
  & { [K in `MAILER_SUBJECTS_${Kind}_NOTIFICATION`]: Field<ReturnType<typeof textOr>> }
  & { [K in `MAILER_TEMPLATES_${Kind}_NOTIFICATION`]: Field<ReturnType<typeof text>> };

function notificationFields(): NotificationFields {
  const out: Record<string, Field<z.ZodType>> = {};
  const all = Object.entries(NOTIFICATIONS);
  for (const [k, n] of all) out[`MAILER_NOTIFICATIONS_${k}_ENABLED`] = f(bool(false), 'false', `Email a notification ${n.when}.`);
  for (const [k, n] of all) out[`MAILER_SUBJECTS_${k}_NOTIFICATION`] = f(textOr(n.subject), n.subject, `Subject of ${n.what} notifications.`);
  for (const [k, n] of all) out[`MAILER_TEMPLATES_${k}_NOTIFICATION`] = f(text(), 'built-in', `URL of the HTML template of ${n.what} notifications.`);
  // The loops above write exactly the keys these mapped types list.
  return out as NotificationFields;
}

const STATIC_FIELDS = {
  SITE_URL: f(opt(parseUrl), 'required (local mode: http://localhost:3000)', 'Base URL of the site, used in emails. Any URL on its host is an allowed redirect_to.'),
  URI_ALLOW_LIST: f(list(), '', 'Comma-separated URLs also allowed as redirect_to; globs allowed in host and path.'),
  OPERATOR_TOKEN: f(text(), '', 'Multi-instance mode only (unsupported): secret shared with an operator.'),
  DISABLE_SIGNUP: f(bool(false), 'false', 'When true, new users can only be created by invitation or by an admin.'),

  API_HOST: f(textOr(''), '', 'Host name or address to listen on; empty means all interfaces.'),
  PORT: f(withDefault(integer(0, 65535), 8081), '8081', 'Port to listen on.'),
  API_ENDPOINT: f(text(), '', 'Multi-instance mode only (unsupported).'),
  API_EXTERNAL_URL: f(opt(parseUrl), 'required (local mode: http://localhost:<PORT>)', 'URL at which the service is reachable.'),
  REQUEST_ID_HEADER: f(text(), '', 'Incoming header from which the request ID is taken.'),
  API_MAX_REQUEST_DURATION: f(withDefault(seconds, 10), '10', 'Longest a request may run, in seconds or Go syntax (10s).'),
  CORS_ALLOWED_HEADERS: f(list(), '', 'Extra request headers allowed by CORS, comma-separated.'),

  DB_DRIVER: f(opt(oneOf(['postgres'])), 'required (local mode: postgres)', 'Must be postgres.'),
  DATABASE_URL: f(opt(parseDatabaseUrl), 'required (local mode: pglite://./.authsvc)', 'postgres:// or postgresql:// connection string; pglite://<directory> for the embedded database; memory:// for a throw-away one.'),
  DB_MAX_POOL_SIZE: f(withDefault(integer(0), 0), '0', 'Maximum open connections; 0 means unlimited.'),
  DB_NAMESPACE: f(withDefault(sqlIdentifier, 'auth'), 'auth', 'Postgres schema holding the tables.'),

  LOG_LEVEL: f(withDefault(logLevel, 'info'), 'info', 'panic, fatal, error, warn, info or debug.'),
  LOG_FILE: f(text(), '', 'Path of a log file.'),
  TRACING_ENABLED: f(bool(false), 'false', 'Enables trace export.'),
  TRACING_EXPORTER: f(withDefault(oneOf(['opentelemetry']), 'opentelemetry'), 'opentelemetry', 'Only opentelemetry is supported.'),
  METRICS_ENABLED: f(bool(false), 'false', 'Enables metrics export.'),
  METRICS_EXPORTER: f(withDefault(oneOf(['opentelemetry', 'prometheus']), 'opentelemetry'), 'opentelemetry', 'opentelemetry or prometheus.'),
  OTEL_EXPORTER_PROMETHEUS_HOST: f(textOr('0.0.0.0'), '0.0.0.0', 'Address the prometheus exporter listens on.'),
  OTEL_EXPORTER_PROMETHEUS_PORT: f(withDefault(integer(0, 65535), 9100), '9100', 'Port of the prometheus exporter (metrics at /).'),
  OTEL_RESOURCE_ATTRIBUTES: f(text(), '', 'Custom OpenTelemetry resource attributes.'),
  OTEL_SERVICE_NAME: f(text(), '', 'OpenTelemetry service name.'),
  OTEL_EXPORTER_OTLP_ENDPOINT: f(text(), '', 'OTLP collector endpoint.'),
  OTEL_EXPORTER_OTLP_PROTOCOL: f(text(), '', 'OTLP protocol.'),
  OTEL_EXPORTER_OTLP_HEADERS: f(text(), '', 'Headers sent to the OTLP collector.'),
  DEBUG: f(bool(false), 'false', 'More diagnostics from the telemetry SDK.'),

  JWT_SECRET: f(text(), 'required unless JWT_KEYS is set', 'HS256 secret used to sign tokens.'),
  JWT_EXP: f(withDefault(wholeSecondsOr(3600), 3600), '3600', 'Access-token lifetime in seconds.'),
  // 'authenticated', not GoTrue's empty default: every Supabase deployment sets it, and
  // PostgREST row-level security expects it.
  JWT_AUD: f(textOr('authenticated'), 'authenticated', 'Default audience (aud claim) of new users.'),
  JWT_ISSUER: f(text(), '', 'Issuer (iss) claim.'),
  JWT_KEY_ID: f(text(), '', 'kid of the key made from JWT_SECRET.'),
  JWT_KEYS: f(opt(parseJwtKeys), '', 'JSON array of private JWKs; exactly one has "sign" in key_ops.'),
  JWT_VALID_METHODS: f(list(), 'derived from the keys', 'Algorithms accepted when verifying, comma-separated.'),
  JWT_ADMIN_GROUP_NAME: f(textOr('admin'), 'admin', 'Name of the admin group.'),
  JWT_DEFAULT_GROUP_NAME: f(textOr('authenticated'), 'authenticated', 'Role (role claim) assigned to new users.'),
  JWT_ADMIN_ROLES: f(list(['service_role', 'supabase_admin']), 'service_role,supabase_admin', 'Roles whose bearer may call admin endpoints.'),

  EXTERNAL_EMAIL_ENABLED: f(bool(true), 'true', 'When false, email signup and sign-in are disabled.'),
  EXTERNAL_EMAIL_MAGIC_LINK_ENABLED: f(bool(true), 'true', 'When false, magic links and email OTP sign-in are disabled.'),
  EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: f(list(), '', 'If set, the only addresses email may be sent to, comma-separated.'),
  EXTERNAL_PHONE_ENABLED: f(bool(false), 'false', 'When false, phone signup and sign-in are disabled.'),
  EXTERNAL_ANONYMOUS_USERS_ENABLED: f(bool(false), 'false', 'Enables anonymous sign-in.'),
  EXTERNAL_REDIRECT_URL: f(opt(parseUrl), '', 'Where every OAuth callback sends the browser, ahead of redirect_to and SITE_URL (as GoTrue).'),
  EXTERNAL_FLOW_STATE_EXPIRY_DURATION: f(withDefault((raw) => Math.max(300, seconds(raw)), 300), '300', 'Lifetime in seconds, at least 300, of a flow state: an OAuth sign-in\'s state between /authorize and /callback, and a PKCE code until POST /token?grant_type=pkce.'),
  EXTERNAL_IOS_BUNDLE_ID: f(text(), '', 'iOS bundle ID accepted as one more audience of Apple ID tokens (POST /token?grant_type=id_token), as GoTrue.'),

  RATE_LIMIT_HEADER: f(text(), '', 'Header holding the client IP used for per-IP rate limits.'),
  RATE_LIMIT_STORE: f(withDefault(oneOf(['memory', 'postgres']), 'memory'), 'memory', 'Where rate-limit counters live: memory (one instance) or postgres (shared).'),
  RATE_LIMIT_EMAIL_SENT: f(withDefault(parseSendLimit, DEFAULT_SEND_LIMIT), '30', 'Emails per hour (N), or a bucket of N refilled one per duration (N/duration); 0 blocks all.'),
  RATE_LIMIT_SMS_SENT: f(withDefault(parseSendLimit, DEFAULT_SEND_LIMIT), '30', 'SMS per hour (N), or N/duration as for RATE_LIMIT_EMAIL_SENT.'),
  RATE_LIMIT_TOKEN_REFRESH: f(withDefault(nonNegativeNumber, 150), '150', '/token requests per IP per 5 minutes.'),
  RATE_LIMIT_VERIFY: f(withDefault(nonNegativeNumber, 30), '30', '/verify requests per IP per 5 minutes.'),
  RATE_LIMIT_OTP: f(withDefault(nonNegativeNumber, 30), '30', 'OTP-sending requests per IP per 5 minutes.'),
  RATE_LIMIT_ANONYMOUS_USERS: f(withDefault(nonNegativeNumber, 30), '30', 'Anonymous sign-ins per IP per hour.'),
  RATE_LIMIT_WEB3: f(withDefault(nonNegativeNumber, 30), '30', 'Web3 sign-ins (POST /token?grant_type=web3) per IP per 5 minutes, burst 30; this grant is not counted by RATE_LIMIT_TOKEN_REFRESH.'),
  RATE_LIMIT_SSO: f(withDefault(nonNegativeNumber, 30), '30', 'SSO sign-in starts (POST /sso) per IP per 5 minutes, burst 30.'),
  RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER: f(withDefault(nonNegativeNumber, 10), '10', 'OAuth dynamic client registrations (POST /oauth/clients/register) per IP per 5 minutes (burst 30).'),

  CONSOLE_ENABLED: f(opt(parseBool), 'true in local mode, else false', 'Serves the admin console (a browser client of the admin API) at /console/ and /auth/v1/console/; off, those paths answer 404. Not a GoTrue setting.'),

  OAUTH_SERVER_ENABLED: f(bool(false), 'false', 'Act as an OAuth 2.1 / OpenID Connect authorization server (/oauth/*, /admin/oauth/*, /user/oauth/*); off, those routes answer 404 feature_disabled.'),
  OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: f(bool(false), 'false', 'Anyone may register an OAuth client at POST /oauth/clients/register (RFC 7591; MCP clients need it); also adds registration_endpoint to discovery.'),
  OAUTH_SERVER_AUTHORIZATION_PATH: f(textOr(''), '', 'Path on SITE_URL of the app\'s consent page; /oauth/authorize redirects there with ?authorization_id=. Required for the authorization flow.'),
  OAUTH_SERVER_AUTHORIZATION_TTL: f(withDefault(seconds, 600), '10m', 'Lifetime of a pending authorization and of its authorization code.'),
  OAUTH_SERVER_DEFAULT_SCOPE: f(textOr('email'), 'email', 'Scope of an authorization request that names none.'),
  OAUTH_SERVER_CLIENT_ID_METADATA_DOCUMENTS: f(opt(parseBool), 'true in local mode, else false', 'authsvc: a client_id that is an https URL names a Client ID Metadata Document, fetched (through the outbound-request guard) and used as a public client (the MCP authorization spec\'s preferred registration); advertised as client_id_metadata_document_supported.'),
  OAUTH_SERVER_DYNAMIC_REGISTRATION_HOURLY_LIMIT: f(withDefault(integer(0), 1000), '1000', 'authsvc: most clients POST /oauth/clients/register creates in any hour, across every instance and whatever RATE_LIMIT_HEADER says (a bound on rows anyone can create); 0 for no bound.'),

  PASSWORD_MIN_LENGTH: f(withDefault(atLeast(6), 6), '6', 'Minimum password length in bytes; values below 6 count as 6.'),
  PASSWORD_REQUIRED_CHARACTERS: f(withDefault(parseRequiredCharacters, []), '', 'Character sets separated by ":"; a password needs one of each. "\\:" is a literal colon.'),
  PASSWORD_HIBP_ENABLED: f(bool(false), 'false', 'Refuse new passwords found in Have I Been Pwned (a k-anonymity range query: only 5 hex digits of the SHA-1 leave the server); the password grant reports them in weak_password.'),
  PASSWORD_HIBP_FAIL_CLOSED: f(bool(false), 'false', 'When Have I Been Pwned cannot be reached: refuse the password change with 500 (true) or allow it and log a warning (false).'),
  PASSWORD_HIBP_USER_AGENT: f(textOr('https://github.com/supabase/gotrue'), 'https://github.com/supabase/gotrue', 'User-Agent of the Have I Been Pwned look-ups.'),
  PASSWORD_HIBP_API_URL: f(withDefault(parseUrl, 'https://api.pwnedpasswords.com'), 'https://api.pwnedpasswords.com', 'Base URL of the Pwned Passwords range API (a mirror or proxy); authsvc only.'),

  AUDIT_LOG_DISABLE_POSTGRES: f(bool(false), 'false', 'Write no audit_log_entries rows; every audit entry is still logged as audit_event.'),
  CUSTOM_OAUTH_ENABLED: f(bool(true), 'true', 'Custom OAuth 2 / OIDC providers (custom:<id>) managed through /admin/custom-providers and usable at /authorize, /callback and the id_token grant.'),
  CUSTOM_OAUTH_MAX_PROVIDERS: f(withDefault(integer(0), 0), '0', 'Most custom providers that may exist; 0 is no limit.'),
  CUSTOM_OAUTH_EXTERNAL_URL: f(opt(parseUrl), 'API_EXTERNAL_URL', 'Base URL of the callback (<url>/callback) that custom providers redirect to.'),
  CUSTOM_OAUTH_TRUSTED_HOSTS: f(withDefault(parseTrustedHosts, []), '', 'host:port pairs, comma-separated, that custom providers may use although they are private, loopback or plain http (a local test issuer, an IdP inside your network); every other provider URL must be https on a public address. authsvc only.'),
  SAML_ENABLED: f(bool(false), 'false', 'SAML 2.0 single sign-on (/sso, /sso/saml/metadata, /sso/saml/acs); off, every /sso path answers 404 saml_provider_disabled. The admin API (/admin/sso/providers) works either way. Needs a runtime with node:crypto (Node, Bun, Deno; docs/sso-saml.md).'),
  SAML_PRIVATE_KEY: f(opt(parseSamlPrivateKey), '', 'Required when SAML_ENABLED: the SP\'s RSA key, standard base64 of its PKCS#1 DER (e = 65537, at least 2048 bits), as GoTrue takes it; signs AuthnRequests, and a self-signed certificate made from it is published in the SP metadata.'),
  SAML_PRIVATE_KEY_NEXT: f(opt(parseSamlPrivateKey), '', 'The next SP key during a rotation (as SAML_PRIVATE_KEY): its certificate is published in the metadata beside the current one.'),
  SAML_ALLOW_ENCRYPTED_ASSERTIONS: f(bool(false), 'false', 'Publish the SP key(s) for encryption in the metadata and accept encrypted assertions (RSA-OAEP key transport; AES-CBC or AES-GCM data), decrypted with SAML_PRIVATE_KEY, then SAML_PRIVATE_KEY_NEXT.'),
  SAML_RELAY_STATE_VALIDITY_PERIOD: f(withDefault(seconds, 120), '2m', 'How long after POST /sso the IdP\'s answer is accepted (the relay state\'s life).'),
  SAML_EXTERNAL_URL: f(opt(parseUrl), 'API_EXTERNAL_URL', 'Base URL of the SP: entity ID and metadata at <url>/sso/saml/metadata, ACS at <url>/sso/saml/acs.'),
  SAML_RATE_LIMIT_ASSERTION: f(withDefault(nonNegativeNumber, 15), '15', 'SAML responses (POST /sso/saml/acs) per IP per 5 minutes, burst 30.'),
  EXTERNAL_WEB3_SOLANA_ENABLED: f(bool(false), 'false', 'Sign in with Solana (POST /token?grant_type=web3, chain solana).'),
  EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION: f(withDefault(seconds, 600), '10m', 'How long after (or before) its Issued At a signed Solana message is accepted.'),
  EXTERNAL_WEB3_ETHEREUM_ENABLED: f(bool(false), 'false', 'Sign in with Ethereum (POST /token?grant_type=web3, chain ethereum, EIP-4361 messages).'),
  EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION: f(withDefault(seconds, 600), '10m', 'How long after (or before) its Issued At a signed Ethereum message is accepted.'),
  EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS: f(withDefault(parseChainIds, []), '', 'EIP-155 chain ids (the message\'s Chain ID) a signed Ethereum message may name, comma-separated (e.g. 1,8453); empty: any. authsvc only.'),
  MFA_CHALLENGE_EXPIRY_DURATION: f(withDefault((raw) => Math.max(300, seconds(raw)), 300), '300', 'Seconds a factor challenge may be verified; values below 300 count as 300.'),
  MFA_FACTOR_EXPIRY_DURATION: f(withDefault((raw) => Math.max(300, seconds(raw)), 300), '300s', 'Unverified factors never challenged and older than this are deleted at the next enrolment; an unverified WebAuthn factor older than this goes once its challenges expired (at least 300 s).'),
  MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY: f(withDefault(nonNegativeNumber, 15), '15', 'Factor challenges, and separately verifications, per IP per minute (burst 30).'),
  MFA_MAX_ENROLLED_FACTORS: f(withDefault(nonNegativeNumber, 10), '10', 'Most factors (verified or not) a user may have.'),
  MFA_MAX_VERIFIED_FACTORS: f(withDefault(integer(0), 10), '10', 'Most verified factors a user may have.'),
  MFA_TOTP_ENROLL_ENABLED: f(bool(true), 'true', 'Users may enrol TOTP factors.'),
  MFA_TOTP_VERIFY_ENABLED: f(bool(true), 'true', 'TOTP factors may be challenged and verified.'),
  MFA_PHONE_ENROLL_ENABLED: f(bool(false), 'false', 'Users may enrol phone (SMS/WhatsApp) factors.'),
  MFA_PHONE_VERIFY_ENABLED: f(bool(false), 'false', 'Phone factors may be challenged and verified.'),
  MFA_PHONE_OTP_LENGTH: f(withDefault(otpLength, 6), '6', 'Digits of a phone factor code, 6 to 10 (other values count as 6).'),
  MFA_PHONE_MAX_FREQUENCY: f(withDefault(secondsOr(60), 60), '1m', 'Shortest time between two codes texted for one phone factor.'),
  MFA_PHONE_TEMPLATE: f(textOr('Your code is {{ .Code }}'), 'Your code is {{ .Code }}', 'Text of a phone factor code.'),
  MFA_RECOVERY_CODES_ENROLL_ENABLED: f(bool(false), 'false', 'Users may generate MFA recovery codes (an aal2 session is needed).'),
  MFA_RECOVERY_CODES_VERIFY_ENABLED: f(bool(false), 'false', 'MFA recovery codes may be used to reach aal2.'),
  MFA_RECOVERY_CODES_COUNT: f(withDefault(integer(5, 20), 10), '10', 'Recovery codes in a set, 5 to 20 (other values stop start-up).'),
  MFA_WEB_AUTHN_ENROLL_ENABLED: f(bool(false), 'false', 'Users may enrol WebAuthn factors (security keys, platform authenticators); needs the WEBAUTHN_RP_* settings.'),
  MFA_WEB_AUTHN_VERIFY_ENABLED: f(bool(false), 'false', 'WebAuthn factors may be challenged and verified.'),
  WEBAUTHN_RP_ID: f(textOr(''), 'required for WebAuthn factors and passkeys', 'Relying party ID: the site\'s registrable domain (e.g. example.com), shared by WebAuthn factors and passkeys.'),
  WEBAUTHN_RP_DISPLAY_NAME: f(textOr(''), 'required for WebAuthn factors and passkeys', 'Relying party name shown by the browser or authenticator.'),
  WEBAUTHN_RP_ORIGINS: f(list(), 'required for WebAuthn factors and passkeys', 'Comma-separated origins (e.g. https://app.example.com) a WebAuthn ceremony may come from.'),
  WEBAUTHN_CHALLENGE_EXPIRY_DURATION: f(withDefault(secondsOr(300), 300), '5m', 'Lifetime of a passkey registration or sign-in challenge (WebAuthn factors use MFA_CHALLENGE_EXPIRY_DURATION).'),
  PASSKEY_ENABLED: f(bool(false), 'false', 'Enables passkeys: sign-in with a discoverable WebAuthn credential, and the /passkeys endpoints.'),
  PASSKEY_MAX_PASSKEYS_PER_USER: f(withDefault(integer(0), 10), '10', 'Most passkeys a user may register.'),
  PASSKEY_USER_VERIFICATION: f(withDefault(oneOf(['required', 'preferred', 'discouraged']), 'required'), 'required', 'User verification (PIN, biometrics) asked of passkeys, which sign in alone: required (a ceremony without it is refused), preferred or discouraged (GoTrue: preferred). WebAuthn MFA factors always use preferred.'),
  RATE_LIMIT_PASSKEY: f(withDefault(nonNegativeNumber, 30), '30', 'Passkey sign-in option requests per IP per 5 minutes.'),
  SECURITY_DB_ENCRYPTION_ENCRYPT: f(bool(false), 'false', 'Store TOTP secrets and phone factor codes encrypted (GoTrue\'s format: AES-256-GCM under a per-row HKDF-SHA256 key); values written plain or under an older key are re-encrypted when next verified.'),
  SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: f(textOr(''), 'required when encrypting', 'Id of the key new values are encrypted with; it must also be in SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS.'),
  SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: f(textOr(''), 'required when encrypting', 'The encryption key: 32 random bytes in unpadded base64url.'),
  SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: f(withDefault(parseDecryptionKeys, {}), '', 'Keys that open stored values, as id:key,id:key (each 32 bytes in unpadded base64url); read even when SECURITY_DB_ENCRYPTION_ENCRYPT is false, so values encrypted before stay readable.'),
  SESSIONS_TIMEBOX: f(withDefault(seconds, 0), '0', 'Longest life of a session from its sign-in (e.g. 24h); a refresh after it is refused with session_expired. 0: no limit.'),
  SESSIONS_SINGLE_PER_USER: f(bool(false), 'false', 'Only the most recently refreshed session of a user (per tag) may refresh; the others get session_expired.'),
  SESSIONS_TAGS: f(withDefault(parseList, []), '', 'Session tags, comma-separated: with SESSIONS_SINGLE_PER_USER one session per tag; untagged sessions count as the first.'),
  SESSIONS_ALLOW_LOW_AAL: f(withDefault(seconds, 0), '0', 'How long after its sign-in an aal1 session of a user with a verified MFA factor may still refresh (e.g. 24h); later refreshes get session_expired until a factor is verified. 0: no limit.'),
  SESSIONS_INACTIVITY_TIMEOUT: f(withDefault(seconds, 0), '0', 'Longest time between refreshes of a session (e.g. 8h); a refresh after it is refused with session_expired. 0: no limit.'),

  SECURITY_REFRESH_TOKEN_ROTATION_ENABLED: f(bool(true), 'true', 'Detect refresh-token reuse and revoke the whole family.'),
  // 10 s, not GoTrue's 0: GoTrue always re-answers the immediate predecessor, the spec only inside
  // this window, so 0 would sign out every client whose refresh response was lost (Supabase's hosted default is 10 s).
  SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: f(withDefault(seconds, 10), '10', 'Seconds during which the previous refresh token may be exchanged again for the same child; later reuse revokes the session\'s tokens.'),
  SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: f(bool(false), 'false', 'A password change needs a reauthentication nonce.'),
  SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD: f(bool(false), 'false', 'A password change needs the current password.'),
  SECURITY_MANUAL_LINKING_ENABLED: f(bool(false), 'false', 'Allow users to link identities themselves.'),
  SECURITY_SB_FORWARDED_FOR_ENABLED: f(bool(false), 'false', 'Take the client IP from the Sb-Forwarded-For header.'),
  SECURITY_CAPTCHA_ENABLED: f(bool(false), 'false', 'Check the captcha token on signup, /token (every grant type but refresh_token, pkce and id_token), /otp, /magiclink, /recover and /resend.'),
  SECURITY_CAPTCHA_PROVIDER: f(withDefault(oneOf(['hcaptcha', 'turnstile']), 'hcaptcha'), 'hcaptcha', 'hcaptcha or turnstile.'),
  SECURITY_CAPTCHA_SECRET: f(text(), 'required when captcha is enabled', 'Secret from the captcha provider.'),
  SECURITY_CAPTCHA_TIMEOUT: f(withDefault(secondsOr(10), 10), '10', 'Timeout of the captcha verification request.'),
  SECURITY_CAPTCHA_VERIFY_URL: f(opt(parseUrl), 'the provider\'s siteverify URL', 'Where captcha tokens are verified instead of the provider\'s public URL (a proxy, or a test\'s fake); authsvc only.'),

  SMTP_HOST: f(text(), 'required unless RESEND_API_KEY is set (local mode: none)', 'Mail server host.'),
  SMTP_PORT: f(withDefault(integer(1, 65535), 587), '587', 'Mail server port.'),
  SMTP_USER: f(text(), '', 'Mail server user name.'),
  SMTP_PASS: f(text(), '', 'Mail server password.'),
  SMTP_ADMIN_EMAIL: f(text(), 'required (local mode: admin@localhost)', 'From address of all emails.'),
  SMTP_SENDER_NAME: f(text(), 'SMTP_ADMIN_EMAIL', 'Sender name.'),
  SMTP_MAX_FREQUENCY: f(withDefault(secondsOr(900), 900), '900', 'Minimum seconds between confirmation or recovery emails to one user.'),
  RESEND_API_KEY: f(text(), '', 'Send email through Resend instead of SMTP.'),
  RESEND_BASE_URL: f(withDefault(parseUrl, 'https://api.resend.com'), 'https://api.resend.com', 'Resend API base URL.'),

  MAILER_AUTOCONFIRM: f(bool(false), 'false', 'When true, email addresses need no confirmation.'),
  MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: f(bool(false), 'false', 'Allow sign-in before the email address is confirmed.'),
  MAILER_SECURE_EMAIL_CHANGE_ENABLED: f(bool(true), 'true', 'An email change must be confirmed at both addresses.'),
  MAILER_OTP_EXP: f(withDefault(wholeSecondsOr(86400), 86400), '86400', 'Validity of an email link or OTP in seconds.'),
  MAILER_OTP_LENGTH: f(withDefault(otpLength, 6), '6', 'Digits of an email OTP, 6 to 10 (other values count as 6).'),
  MAILER_EXTERNAL_HOSTS: f(list(), '', 'Other host names under which the service is reachable, comma-separated.'),
  MAILER_URLPATHS_INVITE: f(textOr('/verify'), '/verify', 'URL path of invitation links.'),
  MAILER_URLPATHS_CONFIRMATION: f(textOr('/verify'), '/verify', 'URL path of confirmation links.'),
  MAILER_URLPATHS_RECOVERY: f(textOr('/verify'), '/verify', 'URL path of recovery and magic links.'),
  MAILER_URLPATHS_EMAIL_CHANGE: f(textOr('/verify'), '/verify', 'URL path of email-change links.'),
  MAILER_SUBJECTS_INVITE: f(textOr(SUBJECTS.INVITE), SUBJECTS.INVITE, 'Subject of invitation emails.'),
  MAILER_SUBJECTS_CONFIRMATION: f(textOr(SUBJECTS.CONFIRMATION), SUBJECTS.CONFIRMATION, 'Subject of confirmation emails.'),
  MAILER_SUBJECTS_RECOVERY: f(textOr(SUBJECTS.RECOVERY), SUBJECTS.RECOVERY, 'Subject of recovery emails.'),
  MAILER_SUBJECTS_MAGIC_LINK: f(textOr(SUBJECTS.MAGIC_LINK), SUBJECTS.MAGIC_LINK, 'Subject of magic-link emails.'),
  MAILER_SUBJECTS_EMAIL_CHANGE: f(textOr(SUBJECTS.EMAIL_CHANGE), SUBJECTS.EMAIL_CHANGE, 'Subject of email-change emails.'),
  MAILER_SUBJECTS_REAUTHENTICATION: f(textOr(SUBJECTS.REAUTHENTICATION), SUBJECTS.REAUTHENTICATION, 'Subject of reauthentication emails.'),
  MAILER_TEMPLATES_INVITE: f(text(), 'built-in', 'URL of the HTML template of invitation emails.'),
  MAILER_TEMPLATES_CONFIRMATION: f(text(), 'built-in', 'URL of the HTML template of confirmation emails.'),
  MAILER_TEMPLATES_RECOVERY: f(text(), 'built-in', 'URL of the HTML template of recovery emails.'),
  MAILER_TEMPLATES_MAGIC_LINK: f(text(), 'built-in', 'URL of the HTML template of magic-link emails.'),
  MAILER_TEMPLATES_EMAIL_CHANGE: f(text(), 'built-in', 'URL of the HTML template of email-change emails.'),
  MAILER_TEMPLATES_REAUTHENTICATION: f(text(), 'built-in', 'URL of the HTML template of reauthentication emails.'),

  // Account-change notifications (GoTrue's MAILER_NOTIFICATIONS_*): off by default; a failed send is only logged.
  ...notificationFields(),

  SMS_AUTOCONFIRM: f(bool(false), 'false', 'When true, phone numbers need no confirmation.'),
  SMS_MAX_FREQUENCY: f(withDefault(secondsOr(60), 60), '60', 'Minimum seconds between SMS OTPs to one user.'),
  SMS_OTP_EXP: f(withDefault(wholeSecondsOr(60), 60), '60', 'Validity of an SMS OTP in seconds.'),
  SMS_OTP_LENGTH: f(withDefault(otpLength, 6), '6', 'Digits of an SMS OTP, 6 to 10 (other values count as 6).'),
  SMS_PROVIDER: f(opt(oneOf(SMS_PROVIDERS)), '', `One of ${SMS_PROVIDERS.join(', ')}.`),
  SMS_TEMPLATE: f(textOr('Your code is {{ .Code }}'), 'Your code is {{ .Code }}', 'Text of the SMS.'),
  SMS_TEST_OTP: f(withDefault(parseTestOtp, {}), '', 'Fixed codes for test numbers: phone:otp,phone:otp (no SMS is sent).'),
  SMS_TEST_OTP_VALID_UNTIL: f(opt(parseRfc3339), '', 'RFC 3339 time from which SMS_TEST_OTP stops working; empty means never.'),
  INTERNAL_HTTP_TIMEOUT: f(withDefault(secondsOr(10), 10), '10', 'Timeout of each request to an SMS or OAuth provider, in seconds or Go syntax (GoTrue\'s GOTRUE_INTERNAL_HTTP_TIMEOUT).'),
  SMS_TWILIO_ACCOUNT_SID: f(text(), '', 'Twilio account SID.'),
  SMS_TWILIO_AUTH_TOKEN: f(text(), '', 'Twilio auth token.'),
  SMS_TWILIO_MESSAGE_SERVICE_SID: f(text(), '', 'Twilio message service SID or sender number.'),
  SMS_TWILIO_CONTENT_SID: f(text(), '', 'Twilio content template SID for WhatsApp codes (the code is variable 1).'),
  SMS_TWILIO_BASE_URL: f(withDefault(parseUrl, 'https://api.twilio.com'), 'https://api.twilio.com', 'Twilio API base URL (an edge location, or a proxy); authsvc only.'),
  SMS_TWILIO_VERIFY_ACCOUNT_SID: f(text(), '', 'Twilio Verify account SID.'),
  SMS_TWILIO_VERIFY_AUTH_TOKEN: f(text(), '', 'Twilio Verify auth token.'),
  SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: f(text(), '', 'Twilio Verify service SID.'),
  SMS_TWILIO_VERIFY_BASE_URL: f(withDefault(parseUrl, 'https://verify.twilio.com'), 'https://verify.twilio.com', 'Twilio Verify API base URL; authsvc only.'),
  SMS_MESSAGEBIRD_ACCESS_KEY: f(text(), '', 'MessageBird access key.'),
  SMS_MESSAGEBIRD_ORIGINATOR: f(text(), '', 'MessageBird originator: a phone number with + or a company name.'),
  SMS_MESSAGEBIRD_BASE_URL: f(withDefault(parseUrl, 'https://rest.messagebird.com'), 'https://rest.messagebird.com', 'MessageBird API base URL; authsvc only.'),
  SMS_TEXTLOCAL_API_KEY: f(text(), '', 'Textlocal API key.'),
  SMS_TEXTLOCAL_SENDER: f(text(), '', 'Textlocal sender.'),
  SMS_TEXTLOCAL_BASE_URL: f(withDefault(parseUrl, 'https://api.textlocal.in'), 'https://api.textlocal.in', 'Textlocal API base URL (GoTrue\'s India host; UK accounts use https://api.txtlocal.com); authsvc only.'),
  SMS_VONAGE_API_KEY: f(text(), '', 'Vonage API key.'),
  SMS_VONAGE_API_SECRET: f(text(), '', 'Vonage API secret.'),
  SMS_VONAGE_FROM: f(text(), '', 'Vonage sender.'),
  SMS_VONAGE_BASE_URL: f(withDefault(parseUrl, 'https://rest.nexmo.com'), 'https://rest.nexmo.com', 'Vonage SMS API base URL; authsvc only.'),
};

type Up = Uppercase<ProviderName>;
const PROVIDER_FLAGS = ['ENABLED', 'SKIP_NONCE_CHECK', 'EMAIL_OPTIONAL'] as const;
const PROVIDER_TEXTS = ['CLIENT_ID', 'SECRET', 'REDIRECT_URI', 'URL'] as const;
type ProviderFlagFields = { [K in `EXTERNAL_${Up}_${(typeof PROVIDER_FLAGS)[number]}`]: Field<ReturnType<typeof bool>> };
type ProviderTextFields = { [K in `EXTERNAL_${Up}_${(typeof PROVIDER_TEXTS)[number]}`]: Field<ReturnType<typeof text>> };

export const upper = <P extends ProviderName>(p: P) => p.toUpperCase() as Uppercase<P>;
export const GITLAB_URL = 'https://gitlab.com';

function providerFields(): ProviderFlagFields & ProviderTextFields {
  const out: Record<string, Field<z.ZodType>> = {};
  for (const p of PROVIDERS) {
    const x = `EXTERNAL_${upper(p)}`;
    out[`${x}_ENABLED`] = f(bool(false), 'false', `Enables sign-in with ${p}.`);
    out[`${x}_CLIENT_ID`] = f(text(), 'required when enabled', `OAuth2 client ID at ${p}.`);
    out[`${x}_SECRET`] = f(text(), 'required when enabled', `OAuth2 client secret at ${p}.`);
    out[`${x}_REDIRECT_URI`] = f(opt(parseUrl), 'required when enabled', `Callback URL registered at ${p}.`);
    out[`${x}_URL`] = p === 'keycloak'
      ? f(opt(parseUrl), 'required when enabled', 'Keycloak realm URL.')
      : f(opt(parseUrl), p === 'gitlab' ? GITLAB_URL : '', `Base URL of ${p} (self-hosted instances).`);
    out[`${x}_SKIP_NONCE_CHECK`] = f(bool(false), 'false', `Skip the nonce check of ${p} ID tokens.`);
    out[`${x}_EMAIL_OPTIONAL`] = f(bool(false), 'false', `Allow ${p} accounts without an email address.`);
  }
  // The loop above writes exactly the keys these mapped types list.
  return out as ProviderFlagFields & ProviderTextFields;
}

type HookFields = { [K in `HOOK_${HookKind}_ENABLED`]: Field<ReturnType<typeof bool>> }
  & { [K in `HOOK_${HookKind}_URI`]: Field<ReturnType<typeof text>> }
  & { [K in `HOOK_${HookKind}_SECRETS`]: Field<ReturnType<typeof list>> };

function hookFields(): HookFields {
  const out: Record<string, Field<z.ZodType>> = {};
  for (const kind of HOOK_KINDS) {
    const what = kind.toLowerCase().replaceAll('_', ' ');
    out[`HOOK_${kind}_ENABLED`] = f(bool(false), 'false', `Calls the ${what} hook (docs/hooks.md).`);
    out[`HOOK_${kind}_URI`] = f(opt(parseHookUri), '', `The ${what} hook: pg-functions://<db>/<schema>/<function>, https://… (http:// only on localhost).`);
    out[`HOOK_${kind}_SECRETS`] = f(withDefault(parseHookSecrets, []), '', `Standard Webhooks secrets of the ${what} hook (v1,whsec_<base64>), several separated by |; the HTTP request is signed with each.`);
  }
  // The loop above writes exactly the keys these mapped types list.
  return out as HookFields;
}

const FIELDS = { ...STATIC_FIELDS, ...providerFields(), ...hookFields() };
export type FieldName = keyof typeof FIELDS;
export const FIELD_NAMES = Object.keys(FIELDS) as FieldName[];

const SHAPE = Object.fromEntries(FIELD_NAMES.map((name) => [name, FIELDS[name].schema])) as { [K in FieldName]: (typeof FIELDS)[K]['schema'] };
export const FLAT_SCHEMA = z.object(SHAPE);
export type Flat = z.output<typeof FLAT_SCHEMA>;

function describeVariable(name: string, description: string): string {
  const aliases = ALIASES[name] ?? [];
  const also = [...(aliases.length > 0 ? [`as ${aliases.join(' or ')}`] : []), ...(allowsBare(name) ? ['without a prefix'] : [])];
  return also.length === 0 ? description : `${description} Also read ${also.join(', and ')}.`;
}

const ID_TOKEN_PROVIDERS = ['APPLE', 'AZURE', 'FACEBOOK', 'GOOGLE', 'KEYCLOAK'];

/** The settings accepted but not acted on yet, and why (see Support). */
export function support(name: FieldName): Support {
  const no = (because: string, refuse = false): Support => ({ built: false, refuse, because });
  if (name === 'OPERATOR_TOKEN' || name === 'API_ENDPOINT') return no('multi-instance mode is not supported');
  if (name === 'MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS') return no('sign-in before confirming the address is not built (authsvc stays strict)');
  if (name === 'MAILER_EXTERNAL_HOSTS') return no('links in emails always use API_EXTERNAL_URL');
  // As in GoTrue: Apple and Google are always reached at their own hosts, and only ID-token
  // providers have a nonce to skip.
  if (name === 'EXTERNAL_APPLE_URL' || name === 'EXTERNAL_GOOGLE_URL') return no('ignored, as GoTrue ignores it: the provider is reached at its own host');
  const nonce = /^EXTERNAL_([A-Z]+)_SKIP_NONCE_CHECK$/.exec(name);
  if (nonce && !ID_TOKEN_PROVIDERS.includes(nonce[1]!)) return no('only apple, azure, facebook, google and keycloak ID tokens carry a nonce');
  return { built: true };
}

/** Every supported variable, unprefixed (read as AUTHSVC_X, then GOTRUE_X). Feeds docs/configuration.md. */
export const CONFIG_VARIABLES: readonly ConfigVariable[] = FIELD_NAMES.map((name) => ({
  name,
  default: FIELDS[name].default,
  description: describeVariable(name, FIELDS[name].description) + notBuiltNote(support(name)),
  support: support(name),
}));

function notBuiltNote(s: Support): string {
  if (s.built) return '';
  return ` Not acted on yet (${s.because}): ${s.refuse ? 'start-up stops when it is set' : 'a warning names it when it is set'}.`;
}

/** The problems (refused settings) and warnings about settings given a value authsvc does not act on. */
export function unbuiltSettings(
  values: Map<FieldName, string>, sources: Map<string, string>, parsed: Flat, supportOf: (name: FieldName) => Support = support,
): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const defaults = FLAT_SCHEMA.parse({}, { jitless: true });
  for (const name of FIELD_NAMES) {
    const s = supportOf(name);
    if (s.built || !values.has(name)) continue;
    // A value equal to the default (e.g. TRACING_ENABLED=false) changes nothing.
    if (JSON.stringify(parsed[name]) === JSON.stringify(defaults[name])) continue;
    const key = sources.get(name) ?? name;
    if (s.refuse) errors.push(`${key}: ${s.because}; authsvc refuses to start rather than run without it (unset it to start).`);
    else warnings.push(`${key} is set, but ${s.because}: it has no effect.`);
  }
  return { errors, warnings };
}
