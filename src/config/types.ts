// The configuration's shape: the Config object the rest of authsvc reads, the provider list, and
// what parsing returns. Every duration is in seconds.

export const PROVIDERS = [
  'apple', 'azure', 'bitbucket', 'discord', 'facebook', 'figma', 'github', 'gitlab', 'google',
  'keycloak', 'linkedin', 'notion', 'spotify', 'slack', 'twitch', 'twitter', 'workos',
] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** GoTrue's native SMS providers (sms_provider.GetSmsProvider); nothing else is accepted. */
export const SMS_PROVIDERS = ['twilio', 'twilio_verify', 'messagebird', 'textlocal', 'vonage'] as const;
export type SmsProviderName = (typeof SMS_PROVIDERS)[number];

/** GoTrue's hook kinds (HookConfiguration), as in HOOK_<KIND>_ENABLED / _URI / _SECRETS. */
export const HOOK_KINDS = [
  'MFA_VERIFICATION_ATTEMPT', 'PASSWORD_VERIFICATION_ATTEMPT', 'CUSTOM_ACCESS_TOKEN', 'SEND_EMAIL', 'SEND_SMS',
  'BEFORE_USER_CREATED', 'AFTER_USER_CREATED',
] as const;
export type HookKind = (typeof HOOK_KINDS)[number];
/** Where a hook is called: an HTTP(S) endpoint (Standard Webhooks) or a Postgres function. */
export type HookTarget = { transport: 'http'; url: string } | { transport: 'pg'; schema: string; fn: string };
/**
 * One hook. `target` is unset when the URI is empty or of another scheme (an enabled hook so
 * configured fails each call, as in GoTrue). `secrets`: the `|`-separated HOOK_<KIND>_SECRETS.
 */
export type HookConfig = { enabled: boolean; uri: string; target?: HookTarget; secrets: string[] };

export type LogLevel = 'panic' | 'fatal' | 'error' | 'warn' | 'info' | 'debug';
export type SendLimit = { count: number; periodSeconds: number; form: 'window' | 'bucket' };
export type ProviderConfig = {
  enabled: boolean; clientId?: string; secret?: string; redirectUri?: string; url?: string;
  skipNonceCheck: boolean; emailOptional: boolean;
};
type Credentials = { accountSid?: string; authToken?: string; messageServiceSid?: string };

/** Every duration is in seconds. */
export interface Config {
  local: boolean;
  siteUrl: string; uriAllowList: string[]; operatorToken?: string; disableSignup: boolean;
  api: { host: string; port: number; endpoint?: string; externalUrl: string; requestIdHeader?: string; maxRequestDuration: number; corsAllowedHeaders: string[] };
  db: { driver: 'postgres'; kind: 'postgres' | 'pglite' | 'memory'; url: string; dataDir?: string; maxPoolSize: number; namespace: string };
  log: { level: LogLevel; file?: string };
  tracing: { enabled: boolean; exporter: 'opentelemetry' };
  metrics: { enabled: boolean; exporter: 'opentelemetry' | 'prometheus'; prometheusHost: string; prometheusPort: number };
  otel: { resourceAttributes?: string; serviceName?: string; exporterOtlpEndpoint?: string; exporterOtlpProtocol?: string; exporterOtlpHeaders?: string };
  debug: boolean;
  jwt: { secret?: string; exp: number; aud: string; issuer?: string; keyId?: string; keys?: JsonWebKey[]; validMethods: string[]; adminGroupName: string; defaultGroupName: string; adminRoles: string[] };
  external: {
    email: { enabled: boolean; magicLinkEnabled: boolean; authorizedAddresses: string[] };
    phone: { enabled: boolean };
    anonymousUsers: { enabled: boolean };
    redirectUrl?: string; flowStateExpiry: number; iosBundleId?: string;
    providers: Record<ProviderName, ProviderConfig>;
  };
  rateLimit: { header?: string; store: 'memory' | 'postgres'; emailSent: SendLimit; smsSent: SendLimit; tokenRefresh: number; verify: number; otp: number; anonymousUsers: number; sso: number; samlAssertion: number; web3: number; mfaChallengeAndVerify: number; passkey: number; oauthClientRegister: number };
  /** CUSTOM_OAUTH_*: providers added at run time (custom:<id>). */
  customOAuth: { enabled: boolean; maxProviders: number; externalUrl?: string; trustedHosts: string[] };
  /** SAML 2.0 SP (GoTrue's conf/saml.go); the keys as standard base64 PKCS#1 DER. */
  saml: { enabled: boolean; privateKey?: string; privateKeyNext?: string; allowEncryptedAssertions: boolean; relayStateValidity: number; externalUrl?: string };
  /** EXTERNAL_WEB3_*: wallet sign-in; validity in seconds; Ethereum chain ids canonical decimal, empty: any. */
  web3: { solana: { enabled: boolean; maxValidity: number }; ethereum: { enabled: boolean; maxValidity: number; chainIds: string[] } };
  password: {
    minLength: number; requiredCharacters: string[];
    hibp: { enabled: boolean; failClosed: boolean; userAgent: string; apiUrl: string };
  };
  security: {
    refreshTokenRotationEnabled: boolean; refreshTokenReuseInterval: number; updatePasswordRequireReauthentication: boolean;
    updatePasswordRequireCurrentPassword: boolean; manualLinkingEnabled: boolean; sbForwardedForEnabled: boolean;
    /** SECURITY_DB_ENCRYPTION_*: GoTrue's encrypted strings for factor secrets and phone codes. */
    dbEncryption: { encrypt: boolean; encryptionKeyId: string; encryptionKey: string; decryptionKeys: Record<string, string> };
    captcha: { enabled: boolean; provider: 'hcaptcha' | 'turnstile'; secret?: string; timeout: number; verifyUrl?: string };
  };
  mfa: {
    challengeExpiry: number; factorExpiry: number;
    maxEnrolledFactors: number; maxVerifiedFactors: number;
    totp: { enrollEnabled: boolean; verifyEnabled: boolean };
    phone: { enrollEnabled: boolean; verifyEnabled: boolean; otpLength: number; maxFrequency: number; template: string };
    recoveryCodes: { enrollEnabled: boolean; verifyEnabled: boolean; count: number };
    webauthn: { enrollEnabled: boolean; verifyEnabled: boolean };
  };
  /** The relying party of WebAuthn factors and passkeys; empty values are refused at request time. */
  webauthn: { rpId: string; rpDisplayName: string; rpOrigins: string[]; challengeExpiry: number };
  /** userVerification: what passkey ceremonies ask for; `required` also refuses a response without it. */
  passkey: { enabled: boolean; maxPerUser: number; userVerification: 'required' | 'preferred' | 'discouraged' };
  /**
   * Every setting as parsed (FIELD_NAMES → value, secrets included) and the names that were set
   * (local-mode defaults count as set): read only by maskedSettings (config/effective.ts).
   */
  effective?: { values: Readonly<Record<string, unknown>>; set: ReadonlySet<string> };
  /** CONSOLE_ENABLED (default: on in local mode only). */
  console: { enabled: boolean };
  hooks: Record<HookKind, HookConfig>;
  /** OAUTH_SERVER_*: authsvc as an OAuth 2.1 / OIDC provider. */
  oauthServer: {
    enabled: boolean; allowDynamicRegistration: boolean; authorizationPath: string; authorizationTtl: number; defaultScope: string;
    /** OAUTH_SERVER_DYNAMIC_REGISTRATION_HOURLY_LIMIT; 0 is no limit. */
    dynamicRegistrationHourlyLimit: number;
    /** OAUTH_SERVER_CLIENT_ID_METADATA_DOCUMENTS (default: on in local mode only). */
    clientIdMetadataDocuments: boolean;
  };
  /** Seconds; 0 is no limit. */
  sessions: { timebox: number; inactivityTimeout: number; allowLowAal: number; singlePerUser: boolean; tags: string[] };
  auditLog: { disablePostgres: boolean };
  smtp: { host?: string; port: number; user?: string; pass?: string; adminEmail: string; senderName?: string; maxFrequency: number };
  resend: { apiKey?: string; baseUrl: string };
  mailer: {
    transport: 'smtp' | 'resend' | 'log'; autoconfirm: boolean; allowUnverifiedEmailSignIns: boolean; secureEmailChangeEnabled: boolean;
    otpExp: number; otpLength: number; externalHosts: string[];
    urlPaths: { invite: string; confirmation: string; recovery: string; emailChange: string };
    subjects: { invite: string; confirmation: string; recovery: string; magicLink: string; emailChange: string; reauthentication: string } & Record<`${NotificationKind}_notification`, string>;
    templates: { invite?: string; confirmation?: string; recovery?: string; magicLink?: string; emailChange?: string; reauthentication?: string } & Partial<Record<`${NotificationKind}_notification`, string>>;
    /** MAILER_NOTIFICATIONS_<KIND>_ENABLED. */
    notifications: Record<NotificationKind, boolean>;
  };
  sms: {
    autoconfirm: boolean; maxFrequency: number; otpExp: number; otpLength: number; provider?: SmsProviderName; template: string;
    testOtp: Record<string, string>; testOtpValidUntil?: string;
    /** INTERNAL_HTTP_TIMEOUT: one provider request. */
    httpTimeout: number;
    twilio: Credentials & { contentSid?: string; baseUrl: string }; twilioVerify: Credentials & { baseUrl: string };
    messagebird: { accessKey?: string; originator?: string; baseUrl: string };
    textlocal: { apiKey?: string; sender?: string; baseUrl: string };
    vonage: { apiKey?: string; apiSecret?: string; from?: string; baseUrl: string };
  };
}

/**
 * `notices`: local-mode defaults that were chosen. `warnings`: prefixed variables that name no
 * setting (a GoTrue setting authsvc does not have, or a typo); they have no effect.
 */
export type ConfigResult = { ok: true; config: Config; notices: string[]; warnings: string[] } | { ok: false; errors: string[] };
/**
 * Whether authsvc acts on a setting. A setting it accepts (GoTrue's name, so a configuration
 * carried over does not fail) but does not act on yet must say so when it is given a value that
 * differs from its default: start-up stops for a security setting (running without it would be
 * running less protected than the operator asked), and logs a warning naming it otherwise.
 */
export type Support = { built: true } | { built: false; refuse: boolean; because: string };
export type ConfigVariable = { name: string; default: string; description: string; support: Support };

/** The account-change notifications, by GoTrue's names (`<kind>_notification` is the email's action type). */
export const NOTIFICATION_KINDS = ['password_changed', 'email_changed', 'phone_changed', 'identity_linked', 'identity_unlinked', 'mfa_factor_enrolled', 'mfa_factor_unenrolled',
  // authsvc's own: GoTrue has no passkey notifications.
  'passkey_added', 'passkey_removed'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];
