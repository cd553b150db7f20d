// Start-up configuration: GoTrue's variables (GOTRUE_X) keep working, AUTHSVC_X wins over them, and
// every problem is reported at once so an operator fixes a config in one pass, not one per restart.
import type * as z from 'zod';
import { FIELD_NAMES, type FieldName, type Flat, FLAT_SCHEMA, GITLAB_URL, unbuiltSettings, upper } from './fields.ts';
import { allowsBare, candidateKeys, label, resolve } from './names.ts';
import { type Config, type ConfigResult, HOOK_KINDS, type HookConfig, type HookKind, type HookTarget, type ProviderConfig, type ProviderName, PROVIDERS, type SmsProviderName, type Support } from './types.ts';
import { algorithmOf, DEFAULT_DATA_DIR, isDbEncryptionKey } from './values.ts';

const SMS_CREDENTIALS: Record<SmsProviderName, string[]> = {
  twilio: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_MESSAGE_SERVICE_SID'],
  twilio_verify: ['TWILIO_VERIFY_ACCOUNT_SID', 'TWILIO_VERIFY_AUTH_TOKEN', 'TWILIO_VERIFY_MESSAGE_SERVICE_SID'],
  messagebird: ['MESSAGEBIRD_ACCESS_KEY', 'MESSAGEBIRD_ORIGINATOR'],
  textlocal: ['TEXTLOCAL_API_KEY', 'TEXTLOCAL_SENDER'],
  vonage: ['VONAGE_API_KEY', 'VONAGE_API_SECRET', 'VONAGE_FROM'],
};

const providerNeeds = (p: ProviderName) => ['CLIENT_ID', 'SECRET', 'REDIRECT_URI', ...(p === 'keycloak' ? ['URL'] : [])];

function crossCheck(c: Flat, ctx: z.RefinementCtx, local: boolean, isSet: (name: FieldName) => boolean): void {
  const problem = (name: string, message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
  const required = (name: FieldName, when = '') => {
    if (!isSet(name)) problem(name, `is required${when}`);
  };
  // Local mode has already filled these in, so they only fire outside it.
  for (const name of ['SITE_URL', 'API_EXTERNAL_URL', 'DB_DRIVER', 'DATABASE_URL', 'SMTP_ADMIN_EMAIL'] as const) required(name);
  if (!isSet('JWT_KEYS')) required('JWT_SECRET', ' (or set JWT_KEYS)');
  if (!local && !isSet('RESEND_API_KEY')) required('SMTP_HOST', ' unless RESEND_API_KEY is set');
  if (c.SAML_ENABLED) required('SAML_PRIVATE_KEY', ' when SAML_ENABLED is true');
  if (c.SECURITY_CAPTCHA_ENABLED) required('SECURITY_CAPTCHA_SECRET', ' when SECURITY_CAPTCHA_ENABLED is true');
  // GoTrue's DatabaseEncryptionConfiguration.Validate (the decryption keys are checked as they parse).
  if (c.SECURITY_DB_ENCRYPTION_ENCRYPT) {
    const id = c.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID;
    if (id === '') problem('SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID', 'is required when SECURITY_DB_ENCRYPTION_ENCRYPT is true');
    if (!isDbEncryptionKey(c.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY)) {
      problem('SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY', 'must be 256 bits of unpadded base64url when SECURITY_DB_ENCRYPTION_ENCRYPT is true');
    }
    if (id !== '' && !c.SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS[id]) {
      problem('SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS', `must also hold the encryption key (id "${id}")`);
    }
  }
  if (c.MAILER_AUTOCONFIRM && c.MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS) {
    problem('MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS', 'cannot be true while MAILER_AUTOCONFIRM is true');
  }
  // GoTrue checks these when it first sends (Validate in configuration.go); here start-up says so.
  const sms = c.SMS_PROVIDER;
  if (sms) for (const need of SMS_CREDENTIALS[sms]) required(`SMS_${need}` as FieldName, ` when SMS_PROVIDER is ${sms}`);
  for (const p of PROVIDERS) {
    const x = `EXTERNAL_${upper(p)}` as const;
    if (!c[`${x}_ENABLED`]) continue;
    for (const need of providerNeeds(p)) {
      const name = `${x}_${need}`;
      if (!isSet(name as FieldName)) problem(name, `is required when ${x}_ENABLED is true`);
    }
  }
}

function localDefaults(values: Map<FieldName, string>, notices: string[]): void {
  const fill = (name: FieldName, value: string, why: string) => {
    if (values.has(name)) return;
    values.set(name, value);
    notices.push(`${name} is not set: ${why}.`);
  };
  const rawPort = values.get('PORT')?.trim() ?? '';
  const port = /^\d+$/.test(rawPort) ? rawPort : '8081';
  fill('SITE_URL', 'http://localhost:3000', 'using http://localhost:3000');
  fill('API_EXTERNAL_URL', `http://localhost:${port}`, `using http://localhost:${port}`);
  fill('DB_DRIVER', 'postgres', 'using postgres');
  fill('DATABASE_URL', `pglite://${DEFAULT_DATA_DIR}`, `using the embedded database in ${DEFAULT_DATA_DIR}`);
  fill('SMTP_ADMIN_EMAIL', 'admin@localhost', 'sending email from admin@localhost');
  if (!values.has('SMTP_HOST') && !values.has('RESEND_API_KEY')) {
    notices.push('Neither SMTP_HOST nor RESEND_API_KEY is set: emails are written to the log instead of being sent.');
  }
}

let knownKeys: Set<string> | undefined;

/**
 * AUTHSVC_ and GOTRUE_ variables that are set but name no setting, sorted. `adapterVariables` are
 * the runtime adapter's own (read outside this module). Names only: values may be secrets.
 */
export function unknownVariables(env: Record<string, string | undefined>, adapterVariables: readonly string[] = []): string[] {
  knownKeys ??= new Set(FIELD_NAMES.flatMap((name) => candidateKeys(name, false)));
  const adapter = new Set(adapterVariables);
  return Object.keys(env)
    .filter((key) => /^(AUTHSVC|GOTRUE)_/.test(key) && env[key] !== undefined && env[key] !== '' && !knownKeys!.has(key) && !adapter.has(key))
    .sort();
}

/**
 * Settings set under their bare name where only AUTHSVC_/GOTRUE_ is read (`JWT_SECRET=…` instead
 * of `AUTHSVC_JWT_SECRET=…`), and the prefixed name is not set: each has no effect, which is easy
 * to miss (GoTrue ignores them silently too). Names only, sorted.
 */
export function unprefixedSettings(env: Record<string, string | undefined>): string[] {
  return FIELD_NAMES.filter((name) => !allowsBare(name) && env[name] !== undefined && env[name] !== '' && !resolve(env, name, false)).sort();
}

/** Parses the flat environment map. Never throws for bad input: every problem is in `errors`. */
export function parseConfig(
  env: Record<string, string | undefined>,
  opts: { local?: boolean; adapterVariables?: readonly string[]; /** Tests: another support table (fields.ts). */ support?: (name: FieldName) => Support } = {},
): ConfigResult {
  const local = opts.local === true;
  const values = new Map<FieldName, string>();
  const sources = new Map<string, string>();
  for (const name of FIELD_NAMES) {
    const found = resolve(env, name, allowsBare(name));
    if (!found) continue;
    values.set(name, found.value);
    sources.set(name, found.key);
  }
  const notices: string[] = [];
  if (local) localDefaults(values, notices);

  const schema = FLAT_SCHEMA.superRefine((c, ctx) => crossCheck(c, ctx, local, (name) => values.has(name)));
  // jitless: parsed once per start, so zod's compiled fast path (a 225 KB function for this schema) would only cost memory.
  const result = schema.safeParse(Object.fromEntries(values), { jitless: true });
  if (!result.success) {
    const errors = result.error.issues.map((issue) => {
      const name = issue.path[0];
      if (typeof name !== 'string') return issue.message;
      const key = sources.get(name);
      return key === undefined ? `${label(name)} ${issue.message}` : `${key}: ${issue.message}`;
    });
    return { ok: false, errors };
  }
  const unbuilt = unbuiltSettings(values, sources, result.data, opts.support);
  if (unbuilt.errors.length > 0) return { ok: false, errors: unbuilt.errors };
  const warnings = [
    ...unbuilt.warnings,
    ...unknownVariables(env, opts.adapterVariables).map((key) => `${key} is set, but authsvc has no such setting: it has no effect.`),
    ...unprefixedSettings(env).map((name) => `${name} is set without a prefix, so it has no effect: authsvc reads AUTHSVC_${name} (or GOTRUE_${name}).`),
  ];
  // GoTrue limits per IP only with a header to key on; behind a proxy that header must be named.
  if (!local && !values.has('RATE_LIMIT_HEADER') && !result.data.SECURITY_SB_FORWARDED_FOR_ENABLED) {
    warnings.push('RATE_LIMIT_HEADER is not set: per-IP rate limits are off until it names the header in which your proxy passes the client IP (e.g. X-Forwarded-For).');
  }
  const rpWarning = webauthnWarning(result.data);
  if (rpWarning) warnings.push(rpWarning);
  return { ok: true, config: { ...build(result.data, local), effective: { values: result.data, set: new Set(values.keys()) } }, notices, warnings };
}

/**
 * GoTrue's WebAuthnConfiguration.Validate only warns at start-up: the service starts, and each
 * WebAuthn or passkey request then fails until the relying party is configured.
 */
function webauthnWarning(c: Flat): string | undefined {
  if (!c.PASSKEY_ENABLED && !c.MFA_WEB_AUTHN_ENROLL_ENABLED && !c.MFA_WEB_AUTHN_VERIFY_ENABLED) return undefined;
  const missing = [
    ...(c.WEBAUTHN_RP_ID === '' ? ['WEBAUTHN_RP_ID'] : []),
    ...(c.WEBAUTHN_RP_DISPLAY_NAME === '' ? ['WEBAUTHN_RP_DISPLAY_NAME'] : []),
    ...(c.WEBAUTHN_RP_ORIGINS.length === 0 ? ['WEBAUTHN_RP_ORIGINS'] : []),
  ];
  if (missing.length === 0) return undefined;
  return `WebAuthn factors or passkeys are enabled but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: their requests fail with 500 until ${missing.length === 1 ? 'it is' : 'they are'}.`;
}

function build(c: Flat, local: boolean): Config {
  // Presence of these was checked by crossCheck; the fallbacks only satisfy the type checker.
  const db = c.DATABASE_URL ?? { kind: 'pglite', url: `pglite://${DEFAULT_DATA_DIR}`, dataDir: DEFAULT_DATA_DIR };
  const keys = c.JWT_KEYS;
  const derivedMethods = keys ? [...new Set(keys.map(algorithmOf).filter((a) => a !== undefined))] : ['HS256'];
  const providers = Object.fromEntries(PROVIDERS.map((p) => {
    const x = `EXTERNAL_${upper(p)}` as const;
    const provider: ProviderConfig = {
      enabled: c[`${x}_ENABLED`],
      clientId: c[`${x}_CLIENT_ID`],
      secret: c[`${x}_SECRET`],
      redirectUri: c[`${x}_REDIRECT_URI`],
      url: c[`${x}_URL`] ?? (p === 'gitlab' ? GITLAB_URL : undefined),
      skipNonceCheck: c[`${x}_SKIP_NONCE_CHECK`],
      emailOptional: c[`${x}_EMAIL_OPTIONAL`],
    };
    return [p, provider];
  })) as Record<ProviderName, ProviderConfig>;

  return {
    local,
    siteUrl: c.SITE_URL ?? '',
    uriAllowList: c.URI_ALLOW_LIST,
    operatorToken: c.OPERATOR_TOKEN,
    disableSignup: c.DISABLE_SIGNUP,
    api: {
      host: c.API_HOST, port: c.PORT, endpoint: c.API_ENDPOINT, externalUrl: c.API_EXTERNAL_URL ?? '',
      requestIdHeader: c.REQUEST_ID_HEADER, maxRequestDuration: c.API_MAX_REQUEST_DURATION, corsAllowedHeaders: c.CORS_ALLOWED_HEADERS,
    },
    db: { driver: 'postgres', kind: db.kind, url: db.url, dataDir: db.dataDir, maxPoolSize: c.DB_MAX_POOL_SIZE, namespace: c.DB_NAMESPACE },
    log: { level: c.LOG_LEVEL, file: c.LOG_FILE },
    tracing: { enabled: c.TRACING_ENABLED, exporter: c.TRACING_EXPORTER },
    metrics: {
      enabled: c.METRICS_ENABLED, exporter: c.METRICS_EXPORTER,
      prometheusHost: c.OTEL_EXPORTER_PROMETHEUS_HOST, prometheusPort: c.OTEL_EXPORTER_PROMETHEUS_PORT,
    },
    otel: {
      resourceAttributes: c.OTEL_RESOURCE_ATTRIBUTES, serviceName: c.OTEL_SERVICE_NAME, exporterOtlpEndpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT,
      exporterOtlpProtocol: c.OTEL_EXPORTER_OTLP_PROTOCOL, exporterOtlpHeaders: c.OTEL_EXPORTER_OTLP_HEADERS,
    },
    debug: c.DEBUG,
    jwt: {
      secret: c.JWT_SECRET, exp: c.JWT_EXP, aud: c.JWT_AUD, issuer: c.JWT_ISSUER, keyId: c.JWT_KEY_ID, keys,
      validMethods: c.JWT_VALID_METHODS.length > 0 ? c.JWT_VALID_METHODS : derivedMethods,
      adminGroupName: c.JWT_ADMIN_GROUP_NAME, defaultGroupName: c.JWT_DEFAULT_GROUP_NAME, adminRoles: c.JWT_ADMIN_ROLES,
    },
    external: {
      email: { enabled: c.EXTERNAL_EMAIL_ENABLED, magicLinkEnabled: c.EXTERNAL_EMAIL_MAGIC_LINK_ENABLED, authorizedAddresses: c.EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES },
      phone: { enabled: c.EXTERNAL_PHONE_ENABLED },
      anonymousUsers: { enabled: c.EXTERNAL_ANONYMOUS_USERS_ENABLED },
      redirectUrl: c.EXTERNAL_REDIRECT_URL,
      flowStateExpiry: c.EXTERNAL_FLOW_STATE_EXPIRY_DURATION,
      iosBundleId: c.EXTERNAL_IOS_BUNDLE_ID,
      providers,
    },
    rateLimit: {
      header: c.RATE_LIMIT_HEADER, store: c.RATE_LIMIT_STORE, emailSent: c.RATE_LIMIT_EMAIL_SENT, smsSent: c.RATE_LIMIT_SMS_SENT,
      tokenRefresh: c.RATE_LIMIT_TOKEN_REFRESH, verify: c.RATE_LIMIT_VERIFY, otp: c.RATE_LIMIT_OTP,
      anonymousUsers: c.RATE_LIMIT_ANONYMOUS_USERS, sso: c.RATE_LIMIT_SSO, samlAssertion: c.SAML_RATE_LIMIT_ASSERTION, web3: c.RATE_LIMIT_WEB3,
      mfaChallengeAndVerify: c.MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY, passkey: c.RATE_LIMIT_PASSKEY,
      oauthClientRegister: c.RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER,
    },
    oauthServer: {
      enabled: c.OAUTH_SERVER_ENABLED, allowDynamicRegistration: c.OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION,
      authorizationPath: c.OAUTH_SERVER_AUTHORIZATION_PATH, authorizationTtl: c.OAUTH_SERVER_AUTHORIZATION_TTL,
      defaultScope: c.OAUTH_SERVER_DEFAULT_SCOPE, dynamicRegistrationHourlyLimit: c.OAUTH_SERVER_DYNAMIC_REGISTRATION_HOURLY_LIMIT,
      clientIdMetadataDocuments: c.OAUTH_SERVER_CLIENT_ID_METADATA_DOCUMENTS ?? local,
    },
    customOAuth: {
      enabled: c.CUSTOM_OAUTH_ENABLED, maxProviders: c.CUSTOM_OAUTH_MAX_PROVIDERS, externalUrl: c.CUSTOM_OAUTH_EXTERNAL_URL,
      trustedHosts: c.CUSTOM_OAUTH_TRUSTED_HOSTS,
    },
    saml: {
      enabled: c.SAML_ENABLED, privateKey: c.SAML_PRIVATE_KEY, privateKeyNext: c.SAML_PRIVATE_KEY_NEXT,
      allowEncryptedAssertions: c.SAML_ALLOW_ENCRYPTED_ASSERTIONS, relayStateValidity: c.SAML_RELAY_STATE_VALIDITY_PERIOD,
      externalUrl: c.SAML_EXTERNAL_URL,
    },
    web3: {
      solana: { enabled: c.EXTERNAL_WEB3_SOLANA_ENABLED, maxValidity: c.EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION },
      ethereum: {
        enabled: c.EXTERNAL_WEB3_ETHEREUM_ENABLED, maxValidity: c.EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION, chainIds: c.EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS,
      },
    },
    password: {
      minLength: c.PASSWORD_MIN_LENGTH, requiredCharacters: c.PASSWORD_REQUIRED_CHARACTERS,
      hibp: { enabled: c.PASSWORD_HIBP_ENABLED, failClosed: c.PASSWORD_HIBP_FAIL_CLOSED, userAgent: c.PASSWORD_HIBP_USER_AGENT, apiUrl: c.PASSWORD_HIBP_API_URL },
    },
    hooks: Object.fromEntries(HOOK_KINDS.map((k) => [k, hookConfig(c[`HOOK_${k}_ENABLED`], c[`HOOK_${k}_URI`], c[`HOOK_${k}_SECRETS`])])) as Record<HookKind, HookConfig>,
    sessions: {
      timebox: c.SESSIONS_TIMEBOX, inactivityTimeout: c.SESSIONS_INACTIVITY_TIMEOUT, allowLowAal: c.SESSIONS_ALLOW_LOW_AAL,
      singlePerUser: c.SESSIONS_SINGLE_PER_USER, tags: c.SESSIONS_TAGS,
    },
    auditLog: { disablePostgres: c.AUDIT_LOG_DISABLE_POSTGRES },
    mfa: {
      challengeExpiry: c.MFA_CHALLENGE_EXPIRY_DURATION, factorExpiry: c.MFA_FACTOR_EXPIRY_DURATION,
      maxEnrolledFactors: c.MFA_MAX_ENROLLED_FACTORS, maxVerifiedFactors: c.MFA_MAX_VERIFIED_FACTORS,
      totp: { enrollEnabled: c.MFA_TOTP_ENROLL_ENABLED, verifyEnabled: c.MFA_TOTP_VERIFY_ENABLED },
      phone: {
        enrollEnabled: c.MFA_PHONE_ENROLL_ENABLED, verifyEnabled: c.MFA_PHONE_VERIFY_ENABLED, otpLength: c.MFA_PHONE_OTP_LENGTH,
        maxFrequency: c.MFA_PHONE_MAX_FREQUENCY, template: c.MFA_PHONE_TEMPLATE,
      },
      recoveryCodes: {
        enrollEnabled: c.MFA_RECOVERY_CODES_ENROLL_ENABLED, verifyEnabled: c.MFA_RECOVERY_CODES_VERIFY_ENABLED, count: c.MFA_RECOVERY_CODES_COUNT,
      },
      webauthn: { enrollEnabled: c.MFA_WEB_AUTHN_ENROLL_ENABLED, verifyEnabled: c.MFA_WEB_AUTHN_VERIFY_ENABLED },
    },
    webauthn: {
      rpId: c.WEBAUTHN_RP_ID, rpDisplayName: c.WEBAUTHN_RP_DISPLAY_NAME, rpOrigins: c.WEBAUTHN_RP_ORIGINS,
      challengeExpiry: c.WEBAUTHN_CHALLENGE_EXPIRY_DURATION,
    },
    console: { enabled: c.CONSOLE_ENABLED ?? local },
    passkey: { enabled: c.PASSKEY_ENABLED, maxPerUser: c.PASSKEY_MAX_PASSKEYS_PER_USER, userVerification: c.PASSKEY_USER_VERIFICATION },
    security: {
      refreshTokenRotationEnabled: c.SECURITY_REFRESH_TOKEN_ROTATION_ENABLED,
      refreshTokenReuseInterval: c.SECURITY_REFRESH_TOKEN_REUSE_INTERVAL,
      updatePasswordRequireReauthentication: c.SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION,
      updatePasswordRequireCurrentPassword: c.SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD,
      manualLinkingEnabled: c.SECURITY_MANUAL_LINKING_ENABLED,
      sbForwardedForEnabled: c.SECURITY_SB_FORWARDED_FOR_ENABLED,
      dbEncryption: {
        encrypt: c.SECURITY_DB_ENCRYPTION_ENCRYPT, encryptionKeyId: c.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID,
        encryptionKey: c.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY, decryptionKeys: c.SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS,
      },
      captcha: {
        enabled: c.SECURITY_CAPTCHA_ENABLED, provider: c.SECURITY_CAPTCHA_PROVIDER,
        secret: c.SECURITY_CAPTCHA_SECRET, timeout: c.SECURITY_CAPTCHA_TIMEOUT, verifyUrl: c.SECURITY_CAPTCHA_VERIFY_URL,
      },
    },
    smtp: {
      host: c.SMTP_HOST, port: c.SMTP_PORT, user: c.SMTP_USER, pass: c.SMTP_PASS, adminEmail: c.SMTP_ADMIN_EMAIL ?? '',
      senderName: c.SMTP_SENDER_NAME, maxFrequency: c.SMTP_MAX_FREQUENCY,
    },
    resend: { apiKey: c.RESEND_API_KEY, baseUrl: c.RESEND_BASE_URL },
    mailer: {
      // An explicit RESEND_API_KEY is an authsvc-only choice, so it beats SMTP settings carried over from GoTrue.
      transport: c.RESEND_API_KEY ? 'resend' : c.SMTP_HOST ? 'smtp' : 'log',
      autoconfirm: c.MAILER_AUTOCONFIRM,
      allowUnverifiedEmailSignIns: c.MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS,
      secureEmailChangeEnabled: c.MAILER_SECURE_EMAIL_CHANGE_ENABLED,
      otpExp: c.MAILER_OTP_EXP,
      otpLength: c.MAILER_OTP_LENGTH,
      externalHosts: c.MAILER_EXTERNAL_HOSTS,
      urlPaths: {
        invite: c.MAILER_URLPATHS_INVITE, confirmation: c.MAILER_URLPATHS_CONFIRMATION,
        recovery: c.MAILER_URLPATHS_RECOVERY, emailChange: c.MAILER_URLPATHS_EMAIL_CHANGE,
      },
      subjects: {
        invite: c.MAILER_SUBJECTS_INVITE, confirmation: c.MAILER_SUBJECTS_CONFIRMATION, recovery: c.MAILER_SUBJECTS_RECOVERY,
        magicLink: c.MAILER_SUBJECTS_MAGIC_LINK, emailChange: c.MAILER_SUBJECTS_EMAIL_CHANGE, reauthentication: c.MAILER_SUBJECTS_REAUTHENTICATION,
        password_changed_notification: c.MAILER_SUBJECTS_PASSWORD_CHANGED_NOTIFICATION,
        email_changed_notification: c.MAILER_SUBJECTS_EMAIL_CHANGED_NOTIFICATION,
        phone_changed_notification: c.MAILER_SUBJECTS_PHONE_CHANGED_NOTIFICATION,
        identity_linked_notification: c.MAILER_SUBJECTS_IDENTITY_LINKED_NOTIFICATION,
        identity_unlinked_notification: c.MAILER_SUBJECTS_IDENTITY_UNLINKED_NOTIFICATION,
        mfa_factor_enrolled_notification: c.MAILER_SUBJECTS_MFA_FACTOR_ENROLLED_NOTIFICATION,
        mfa_factor_unenrolled_notification: c.MAILER_SUBJECTS_MFA_FACTOR_UNENROLLED_NOTIFICATION,
        passkey_added_notification: c.MAILER_SUBJECTS_PASSKEY_ADDED_NOTIFICATION,
        passkey_removed_notification: c.MAILER_SUBJECTS_PASSKEY_REMOVED_NOTIFICATION,
      },
      templates: {
        invite: c.MAILER_TEMPLATES_INVITE, confirmation: c.MAILER_TEMPLATES_CONFIRMATION, recovery: c.MAILER_TEMPLATES_RECOVERY,
        magicLink: c.MAILER_TEMPLATES_MAGIC_LINK, emailChange: c.MAILER_TEMPLATES_EMAIL_CHANGE, reauthentication: c.MAILER_TEMPLATES_REAUTHENTICATION,
        password_changed_notification: c.MAILER_TEMPLATES_PASSWORD_CHANGED_NOTIFICATION,
        email_changed_notification: c.MAILER_TEMPLATES_EMAIL_CHANGED_NOTIFICATION,
        phone_changed_notification: c.MAILER_TEMPLATES_PHONE_CHANGED_NOTIFICATION,
        identity_linked_notification: c.MAILER_TEMPLATES_IDENTITY_LINKED_NOTIFICATION,
        identity_unlinked_notification: c.MAILER_TEMPLATES_IDENTITY_UNLINKED_NOTIFICATION,
        mfa_factor_enrolled_notification: c.MAILER_TEMPLATES_MFA_FACTOR_ENROLLED_NOTIFICATION,
        mfa_factor_unenrolled_notification: c.MAILER_TEMPLATES_MFA_FACTOR_UNENROLLED_NOTIFICATION,
        passkey_added_notification: c.MAILER_TEMPLATES_PASSKEY_ADDED_NOTIFICATION,
        passkey_removed_notification: c.MAILER_TEMPLATES_PASSKEY_REMOVED_NOTIFICATION,
      },
      notifications: {
        password_changed: c.MAILER_NOTIFICATIONS_PASSWORD_CHANGED_ENABLED,
        email_changed: c.MAILER_NOTIFICATIONS_EMAIL_CHANGED_ENABLED,
        phone_changed: c.MAILER_NOTIFICATIONS_PHONE_CHANGED_ENABLED,
        identity_linked: c.MAILER_NOTIFICATIONS_IDENTITY_LINKED_ENABLED,
        identity_unlinked: c.MAILER_NOTIFICATIONS_IDENTITY_UNLINKED_ENABLED,
        mfa_factor_enrolled: c.MAILER_NOTIFICATIONS_MFA_FACTOR_ENROLLED_ENABLED,
        mfa_factor_unenrolled: c.MAILER_NOTIFICATIONS_MFA_FACTOR_UNENROLLED_ENABLED,
        passkey_added: c.MAILER_NOTIFICATIONS_PASSKEY_ADDED_ENABLED,
        passkey_removed: c.MAILER_NOTIFICATIONS_PASSKEY_REMOVED_ENABLED,
      },
    },
    sms: {
      autoconfirm: c.SMS_AUTOCONFIRM, maxFrequency: c.SMS_MAX_FREQUENCY, otpExp: c.SMS_OTP_EXP, otpLength: c.SMS_OTP_LENGTH,
      provider: c.SMS_PROVIDER, template: c.SMS_TEMPLATE, testOtp: c.SMS_TEST_OTP, testOtpValidUntil: c.SMS_TEST_OTP_VALID_UNTIL,
      httpTimeout: c.INTERNAL_HTTP_TIMEOUT,
      twilio: {
        accountSid: c.SMS_TWILIO_ACCOUNT_SID, authToken: c.SMS_TWILIO_AUTH_TOKEN, messageServiceSid: c.SMS_TWILIO_MESSAGE_SERVICE_SID,
        contentSid: c.SMS_TWILIO_CONTENT_SID, baseUrl: c.SMS_TWILIO_BASE_URL,
      },
      twilioVerify: {
        accountSid: c.SMS_TWILIO_VERIFY_ACCOUNT_SID, authToken: c.SMS_TWILIO_VERIFY_AUTH_TOKEN,
        messageServiceSid: c.SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID, baseUrl: c.SMS_TWILIO_VERIFY_BASE_URL,
      },
      messagebird: { accessKey: c.SMS_MESSAGEBIRD_ACCESS_KEY, originator: c.SMS_MESSAGEBIRD_ORIGINATOR, baseUrl: c.SMS_MESSAGEBIRD_BASE_URL },
      textlocal: { apiKey: c.SMS_TEXTLOCAL_API_KEY, sender: c.SMS_TEXTLOCAL_SENDER, baseUrl: c.SMS_TEXTLOCAL_BASE_URL },
      vonage: { apiKey: c.SMS_VONAGE_API_KEY, apiSecret: c.SMS_VONAGE_API_SECRET, from: c.SMS_VONAGE_FROM, baseUrl: c.SMS_VONAGE_BASE_URL },
    },
  };
}

/** A hook's setting with its URI resolved to a transport (the URI was checked by parseHookUri). */
function hookConfig(enabled: boolean, uri: string | undefined, secrets: string[]): HookConfig {
  let target: HookTarget | undefined;
  if (uri) {
    const u = new URL(uri);
    const scheme = u.protocol.slice(0, -1).toLowerCase();
    if (scheme === 'pg-functions') {
      const [, schema, fn] = u.pathname.split('/');
      target = { transport: 'pg', schema: schema!, fn: fn! };
    } else {
      target = { transport: 'http', url: uri };
    }
  }
  return { enabled, uri: uri ?? '', ...(target ? { target } : {}), secrets };
}
