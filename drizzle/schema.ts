// Table definitions. The Postgres schema name comes from DB_NAMESPACE at run time, so tables
// are built by a factory. The SQL in migrations/ is written by hand (a `{{namespace}}` template);
// test/units/migrate.test.ts keeps these definitions equal to what the migrations create.
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  customType,
  boolean,
  doublePrecision,
  inet,
  integer,
  json,
  jsonb,
  pgSchema,
  smallint,
  text,
  timestamp,
  unique,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';

const tz = { withTimezone: true, mode: 'date' } as const;

/** bytea as Uint8Array (PGlite and node-postgres hand back bytes; a text form `\\x…` is read too). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array | string }>({
  dataType: () => 'bytea',
  fromDriver: (v) => {
    if (typeof v !== 'string') return new Uint8Array(v);
    const hex = v.startsWith('\\x') ? v.slice(2) : v;
    return Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
  },
});
const noTz = { withTimezone: false, mode: 'date' } as const;

export function createTables(namespace: string) {
  const s = pgSchema(namespace);

  const aalLevel = s.enum('aal_level', ['aal1', 'aal2', 'aal3']);
  const factorType = s.enum('factor_type', ['totp', 'webauthn', 'phone']);
  const factorStatus = s.enum('factor_status', ['unverified', 'verified']);
  const codeChallengeMethod = s.enum('code_challenge_method', ['s256', 'plain']);
  const oneTimeTokenType = s.enum('one_time_token_type', [
    'confirmation_token',
    'reauthentication_token',
    'recovery_token',
    'email_change_token_new',
    'email_change_token_current',
    'phone_change_token',
  ]);

  const users = s.table('users', {
    instanceId: uuid('instance_id'),
    id: uuid('id').primaryKey(),
    aud: varchar('aud', { length: 255 }),
    role: varchar('role', { length: 255 }),
    email: varchar('email', { length: 255 }),
    encryptedPassword: varchar('encrypted_password', { length: 255 }),
    emailConfirmedAt: timestamp('email_confirmed_at', tz),
    invitedAt: timestamp('invited_at', tz),
    confirmationToken: varchar('confirmation_token', { length: 255 }),
    confirmationSentAt: timestamp('confirmation_sent_at', tz),
    recoveryToken: varchar('recovery_token', { length: 255 }),
    recoverySentAt: timestamp('recovery_sent_at', tz),
    emailChangeTokenNew: varchar('email_change_token_new', { length: 255 }),
    emailChange: varchar('email_change', { length: 255 }),
    emailChangeSentAt: timestamp('email_change_sent_at', tz),
    lastSignInAt: timestamp('last_sign_in_at', tz),
    rawAppMetaData: jsonb('raw_app_meta_data').$type<Record<string, unknown>>(),
    rawUserMetaData: jsonb('raw_user_meta_data').$type<Record<string, unknown>>(),
    isSuperAdmin: boolean('is_super_admin'),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    phone: text('phone').unique(),
    phoneConfirmedAt: timestamp('phone_confirmed_at', tz),
    phoneChange: text('phone_change').default(''),
    phoneChangeToken: varchar('phone_change_token', { length: 255 }).default(''),
    phoneChangeSentAt: timestamp('phone_change_sent_at', tz),
    confirmedAt: timestamp('confirmed_at', tz).generatedAlwaysAs(sql`LEAST(email_confirmed_at, phone_confirmed_at)`),
    emailChangeTokenCurrent: varchar('email_change_token_current', { length: 255 }).default(''),
    emailChangeConfirmStatus: smallint('email_change_confirm_status').default(0),
    bannedUntil: timestamp('banned_until', tz),
    reauthenticationToken: varchar('reauthentication_token', { length: 255 }).default(''),
    reauthenticationSentAt: timestamp('reauthentication_sent_at', tz),
    isSsoUser: boolean('is_sso_user').notNull().default(false),
    deletedAt: timestamp('deleted_at', tz),
    isAnonymous: boolean('is_anonymous').notNull().default(false),
  });

  const identities = s.table('identities', {
    providerId: text('provider_id').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    identityData: jsonb('identity_data').notNull().$type<Record<string, unknown>>(),
    provider: text('provider').notNull(),
    lastSignInAt: timestamp('last_sign_in_at', tz),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    email: text('email').generatedAlwaysAs(sql`lower(identity_data ->> 'email')`),
    id: uuid('id').primaryKey().defaultRandom(),
  });

  // Providers' refresh tokens, encrypted (migration 0017, authsvc's own).
  const identityProviderTokens = s.table('identity_provider_tokens', {
    id: uuid('id').primaryKey(),
    identityId: uuid('identity_id')
      .notNull()
      .unique('identity_provider_tokens_identity_id_key')
      .references(() => identities.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    refreshToken: text('refresh_token').notNull(),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', tz).notNull().defaultNow(),
  });

  // OAuth 2.1 server (migration 0009; GoTrue's tables).
  const oauthRegistrationType = s.enum('oauth_registration_type', ['dynamic', 'manual']);
  const oauthClientType = s.enum('oauth_client_type', ['public', 'confidential']);
  const oauthAuthorizationStatus = s.enum('oauth_authorization_status', ['pending', 'approved', 'denied', 'expired']);
  const oauthResponseType = s.enum('oauth_response_type', ['code']);

  const oauthClients = s.table('oauth_clients', {
    id: uuid('id').primaryKey(),
    /** base64url(SHA-256(secret)), GoTrue's format; NULL for public clients. */
    clientSecretHash: text('client_secret_hash'),
    registrationType: oauthRegistrationType('registration_type').notNull(),
    /** Comma-joined, as GoTrue stores them. */
    redirectUris: text('redirect_uris').notNull(),
    grantTypes: text('grant_types').notNull(),
    clientName: text('client_name'),
    clientUri: text('client_uri'),
    logoUri: text('logo_uri'),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', tz).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', tz),
    clientType: oauthClientType('client_type').notNull().default('confidential'),
    tokenEndpointAuthMethod: text('token_endpoint_auth_method').notNull(),
    /** authsvc (0016): the https client_id of a Client ID Metadata Document client, and when to fetch it again. */
    clientIdMetadataUrl: text('client_id_metadata_url').unique('oauth_clients_metadata_url_key'),
    metadataExpiresAt: timestamp('metadata_expires_at', tz),
  });

  const oauthConsents = s.table(
    'oauth_consents',
    {
      id: uuid('id').primaryKey(),
      userId: uuid('user_id')
        .notNull()
        .references(() => users.id, { onDelete: 'cascade' }),
      clientId: uuid('client_id')
        .notNull()
        .references(() => oauthClients.id, { onDelete: 'cascade' }),
      /** Space-joined. */
      scopes: text('scopes').notNull(),
      grantedAt: timestamp('granted_at', tz).notNull().defaultNow(),
      revokedAt: timestamp('revoked_at', tz),
    },
    (t) => [unique('oauth_consents_user_client_unique').on(t.userId, t.clientId)],
  );

  const sessions = s.table('sessions', {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    factorId: uuid('factor_id'),
    aal: aalLevel('aal'),
    notAfter: timestamp('not_after', tz),
    refreshedAt: timestamp('refreshed_at', noTz),
    userAgent: text('user_agent'),
    ip: inet('ip'),
    tag: text('tag'),
    refreshTokenHmacKey: text('refresh_token_hmac_key'),
    refreshTokenCounter: bigint('refresh_token_counter', { mode: 'number' }),
    // OAuth server sessions (migration 0009): the client, its granted scopes and (authsvc) the
    // RFC 8707 resource its access tokens are for.
    oauthClientId: uuid('oauth_client_id').references(() => oauthClients.id, { onDelete: 'cascade' }),
    scopes: text('scopes'),
    resource: text('resource'),
  });

  const oauthAuthorizations = s.table('oauth_authorizations', {
    id: uuid('id').primaryKey(),
    authorizationId: text('authorization_id').notNull().unique(),
    clientId: uuid('client_id')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    scope: text('scope').notNull(),
    state: text('state'),
    resource: text('resource'),
    codeChallenge: text('code_challenge'),
    codeChallengeMethod: codeChallengeMethod('code_challenge_method'),
    responseType: oauthResponseType('response_type').notNull().default('code'),
    status: oauthAuthorizationStatus('status').notNull().default('pending'),
    authorizationCode: text('authorization_code').unique(),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', tz).notNull(),
    approvedAt: timestamp('approved_at', tz),
    nonce: text('nonce'),
    // authsvc: the session the code was exchanged for (a second use of the code ends it).
    sessionId: uuid('session_id'),
  });

  const refreshTokens = s.table('refresh_tokens', {
    instanceId: uuid('instance_id'),
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** SHA-256 hex of the token (GoTrue stores the token itself). */
    token: varchar('token', { length: 255 }).unique(),
    userId: varchar('user_id', { length: 255 }),
    revoked: boolean('revoked'),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    /** SHA-256 hex of the parent token. */
    parent: varchar('parent', { length: 255 }),
    sessionId: uuid('session_id').references(() => sessions.id, { onDelete: 'cascade' }),
  });

  const mfaAmrClaims = s.table('mfa_amr_claims', {
    sessionId: uuid('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', tz).notNull(),
    updatedAt: timestamp('updated_at', tz).notNull(),
    authenticationMethod: text('authentication_method').notNull(),
    id: uuid('id').primaryKey(),
  });

  const mfaFactors = s.table('mfa_factors', {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    friendlyName: text('friendly_name'),
    factorType: factorType('factor_type').notNull(),
    status: factorStatus('status').notNull(),
    createdAt: timestamp('created_at', tz).notNull(),
    updatedAt: timestamp('updated_at', tz).notNull(),
    secret: text('secret'),
    phone: text('phone'),
    lastChallengedAt: timestamp('last_challenged_at', tz).unique(),
    webAuthnCredential: jsonb('web_authn_credential'),
    webAuthnAaguid: uuid('web_authn_aaguid'),
    lastWebauthnChallengeData: jsonb('last_webauthn_challenge_data'),
    // authsvc: the RFC 6238 step of the last TOTP code accepted (replay check; migration 0005).
    lastTotpStep: bigint('last_totp_step', { mode: 'number' }),
    // authsvc: wrong TOTP/phone codes in a row and the lock they earned (migration 0013).
    failedVerificationCount: integer('failed_verification_count').notNull().default(0),
    verificationLockedUntil: timestamp('verification_locked_until', tz),
  });

  const mfaChallenges = s.table('mfa_challenges', {
    id: uuid('id').primaryKey(),
    factorId: uuid('factor_id')
      .notNull()
      .references(() => mfaFactors.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', tz).notNull(),
    verifiedAt: timestamp('verified_at', tz),
    ipAddress: inet('ip_address').notNull(),
    otpCode: text('otp_code'),
    webAuthnSessionData: jsonb('web_authn_session_data'),
  });

  // authsvc: MFA recovery codes (migration 0006; GoTrue keeps a set as an mfa_factors row).
  const mfaRecoveryCodeSets = s.table('mfa_user_recovery_code_sets', {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .unique()
      .references(() => users.id, { onDelete: 'cascade' }),
    friendlyName: text('friendly_name').notNull(),
    failedVerificationCount: integer('failed_verification_count').notNull().default(0),
    verificationLockedUntil: timestamp('verification_locked_until', tz),
    createdAt: timestamp('created_at', tz).notNull(),
    updatedAt: timestamp('updated_at', tz).notNull(),
  });

  const mfaRecoveryCodes = s.table(
    'mfa_user_recovery_codes',
    {
      id: uuid('id').primaryKey(),
      setId: uuid('set_id')
        .notNull()
        .references(() => mfaRecoveryCodeSets.id, { onDelete: 'cascade' }),
      codeHash: text('code_hash').notNull(),
      createdAt: timestamp('created_at', tz).notNull(),
      usedAt: timestamp('used_at', tz),
    },
    (t) => [unique().on(t.setId, t.codeHash)],
  );

  // Passkeys (migration 0007): GoTrue's tables as its 20260302000000_add_passkeys has them.
  const webauthnCredentials = s.table('webauthn_credentials', {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: bytea('credential_id').notNull(),
    publicKey: bytea('public_key').notNull(),
    attestationType: text('attestation_type').notNull().default(''),
    aaguid: uuid('aaguid'),
    signCount: bigint('sign_count', { mode: 'number' }).notNull().default(0),
    transports: jsonb('transports').notNull().default(sql`'[]'::jsonb`),
    backupEligible: boolean('backup_eligible').notNull().default(false),
    backedUp: boolean('backed_up').notNull().default(false),
    friendlyName: text('friendly_name').notNull().default(''),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', tz).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', tz),
  });

  const webauthnChallenges = s.table('webauthn_challenges', {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    challengeType: text('challenge_type', { enum: ['signup', 'registration', 'authentication'] }).notNull(),
    sessionData: jsonb('session_data').notNull(),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', tz).notNull(),
  });

  const oneTimeTokens = s.table('one_time_tokens', {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenType: oneTimeTokenType('token_type').notNull(),
    tokenHash: text('token_hash').notNull(),
    relatesTo: text('relates_to').notNull(),
    createdAt: timestamp('created_at', noTz).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', noTz).notNull().defaultNow(),
    // authsvc: SHA-256 of the mailed link token (migration 0004); NULL on rows GoTrue wrote.
    linkHash: text('link_hash'),
  });

  const flowState = s.table('flow_state', {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id'),
    authCode: text('auth_code'),
    codeChallengeMethod: codeChallengeMethod('code_challenge_method'),
    codeChallenge: text('code_challenge'),
    providerType: text('provider_type').notNull(),
    providerAccessToken: text('provider_access_token'),
    providerRefreshToken: text('provider_refresh_token'),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    authenticationMethod: text('authentication_method').notNull(),
    authCodeIssuedAt: timestamp('auth_code_issued_at', tz),
    inviteToken: text('invite_token'),
    referrer: text('referrer'),
    oauthClientStateId: uuid('oauth_client_state_id'),
    linkingTargetId: uuid('linking_target_id'),
    emailOptional: boolean('email_optional').notNull().default(false),
    // authsvc: a PKCE identity-linking callback's identity, linked at the code exchange (migration 0004).
    linkingIdentity: jsonb('linking_identity'),
    // authsvc: the session that started a manual link, checked when the link completes (migration 0015).
    linkingSessionId: uuid('linking_session_id'),
  });
  const oauthClientStates = s.table('oauth_client_states', {
    id: uuid('id').primaryKey(),
    providerType: text('provider_type').notNull(),
    codeVerifier: text('code_verifier'),
    createdAt: timestamp('created_at', tz).notNull(),
  });

  // Custom OAuth/OIDC providers (migration 0011).
  const customOAuthProviders = s.table('custom_oauth_providers', {
    id: uuid('id').primaryKey().defaultRandom(),
    providerType: text('provider_type').$type<'oauth2' | 'oidc'>().notNull(),
    identifier: text('identifier').notNull().unique('custom_oauth_providers_identifier_key'),
    name: text('name').notNull(),
    clientId: text('client_id').notNull(),
    clientSecret: text('client_secret').notNull(),
    acceptableClientIds: text('acceptable_client_ids').array().notNull().default(sql`'{}'`),
    scopes: text('scopes').array().notNull().default(sql`'{}'`),
    pkceEnabled: boolean('pkce_enabled').notNull().default(true),
    attributeMapping: jsonb('attribute_mapping').$type<Record<string, unknown>>().notNull().default({}),
    authorizationParams: jsonb('authorization_params').$type<Record<string, string>>().notNull().default({}),
    enabled: boolean('enabled').notNull().default(true),
    emailOptional: boolean('email_optional').notNull().default(false),
    issuer: text('issuer'),
    discoveryUrl: text('discovery_url'),
    skipNonceCheck: boolean('skip_nonce_check').notNull().default(false),
    cachedDiscovery: jsonb('cached_discovery').$type<Record<string, unknown>>(),
    discoveryCachedAt: timestamp('discovery_cached_at', tz),
    authorizationUrl: text('authorization_url'),
    tokenUrl: text('token_url'),
    userinfoUrl: text('userinfo_url'),
    jwksUri: text('jwks_uri'),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', tz).notNull().defaultNow(),
    customClaimsAllowlist: text('custom_claims_allowlist').array().notNull().default(sql`'{}'`),
  });

  // SAML SSO (migration 0012, GoTrue's tables; saml_used_assertions is authsvc's).
  const ssoProviders = s.table('sso_providers', {
    id: uuid('id').primaryKey(),
    resourceId: text('resource_id'),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    disabled: boolean('disabled'),
    // authsvc: the provider may assert addresses outside its sso_domains (migration 0015; NULL = false).
    allowAnyEmailDomain: boolean('allow_any_email_domain'),
  });
  const ssoDomains = s.table('sso_domains', {
    id: uuid('id').primaryKey(),
    ssoProviderId: uuid('sso_provider_id').notNull(),
    domain: text('domain').notNull(),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
  });
  const samlProviders = s.table('saml_providers', {
    id: uuid('id').primaryKey(),
    ssoProviderId: uuid('sso_provider_id').notNull(),
    entityId: text('entity_id').notNull(),
    metadataXml: text('metadata_xml').notNull(),
    metadataUrl: text('metadata_url'),
    attributeMapping: jsonb('attribute_mapping').$type<Record<string, unknown>>(),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    nameIdFormat: text('name_id_format'),
  });
  const samlRelayStates = s.table('saml_relay_states', {
    id: uuid('id').primaryKey(),
    ssoProviderId: uuid('sso_provider_id').notNull(),
    requestId: text('request_id').notNull(),
    forEmail: text('for_email'),
    redirectTo: text('redirect_to'),
    createdAt: timestamp('created_at', tz),
    updatedAt: timestamp('updated_at', tz),
    flowStateId: uuid('flow_state_id'),
  });
  const samlUsedAssertions = s.table('saml_used_assertions', {
    ssoProviderId: uuid('sso_provider_id').notNull(),
    assertionId: text('assertion_id').notNull(),
    expiresAt: timestamp('expires_at', tz).notNull(),
  });

  // Web3 sign-in messages already used (migration 0014, authsvc's own).
  const web3UsedMessages = s.table('web3_used_messages', {
    messageHash: text('message_hash').primaryKey(),
    expiresAt: timestamp('expires_at', tz).notNull(),
  });

  const auditLogEntries = s.table('audit_log_entries', {
    instanceId: uuid('instance_id'),
    id: uuid('id').primaryKey(),
    payload: json('payload').$type<Record<string, unknown>>(),
    createdAt: timestamp('created_at', tz),
    ipAddress: varchar('ip_address', { length: 64 }).notNull().default(''),
  });

  const rateLimits = s.table('rate_limits', {
    key: text('key').primaryKey(),
    windowStart: timestamp('window_start', tz).notNull(),
    count: doublePrecision('count').notNull(),
    updatedAt: timestamp('updated_at', tz).notNull(),
  });

  const schemaMigrations = s.table('schema_migrations', {
    version: varchar('version', { length: 255 }).primaryKey(),
  });

  return {
    aalLevel,
    codeChallengeMethod,
    oneTimeTokenType,
    factorType,
    factorStatus,
    oauthRegistrationType,
    oauthClientType,
    oauthAuthorizationStatus,
    oauthResponseType,
    oauthClients,
    oauthAuthorizations,
    oauthConsents,
    users,
    identities,
    identityProviderTokens,
    sessions,
    refreshTokens,
    mfaAmrClaims,
    mfaFactors,
    mfaChallenges,
    mfaRecoveryCodeSets,
    mfaRecoveryCodes,
    webauthnCredentials,
    webauthnChallenges,
    oneTimeTokens,
    flowState,
    oauthClientStates,
    customOAuthProviders,
    ssoProviders,
    ssoDomains,
    samlProviders,
    samlRelayStates,
    samlUsedAssertions,
    web3UsedMessages,
    auditLogEntries,
    rateLimits,
    schemaMigrations,
  };
}

export type Tables = ReturnType<typeof createTables>;
