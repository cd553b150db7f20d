// Start-up configuration: GoTrue's variables (GOTRUE_X) keep working, AUTHSVC_X wins over them, and
// every problem is reported at once so an operator fixes a config in one pass, not one per restart.
import { z } from 'zod';
import { parseDurationSeconds } from './duration.ts';

export const PROVIDERS = [
  'apple', 'azure', 'bitbucket', 'discord', 'facebook', 'figma', 'github', 'gitlab', 'google',
  'keycloak', 'linkedin', 'notion', 'spotify', 'slack', 'twitch', 'twitter', 'workos',
] as const;
export type ProviderName = (typeof PROVIDERS)[number];

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
    redirectUrl?: string; flowStateExpiry: number;
    providers: Record<ProviderName, ProviderConfig>;
  };
  rateLimit: { header?: string; store: 'memory' | 'postgres'; emailSent: SendLimit; smsSent: SendLimit; tokenRefresh: number; verify: number; otp: number; anonymousUsers: number; sso: number };
  password: {
    minLength: number; requiredCharacters: string[];
    hibp: { enabled: boolean; failClosed: boolean; userAgent: string; apiUrl: string };
  };
  security: {
    refreshTokenRotationEnabled: boolean; refreshTokenReuseInterval: number; updatePasswordRequireReauthentication: boolean;
    updatePasswordRequireCurrentPassword: boolean; manualLinkingEnabled: boolean; sbForwardedForEnabled: boolean;
    captcha: { enabled: boolean; provider: 'hcaptcha' | 'turnstile'; secret?: string; timeout: number; verifyUrl?: string };
  };
  /** Seconds; 0 is no limit. */
  sessions: { timebox: number; inactivityTimeout: number; singlePerUser: boolean; tags: string[] };
  auditLog: { disablePostgres: boolean };
  smtp: { host?: string; port: number; user?: string; pass?: string; adminEmail: string; senderName?: string; maxFrequency: number };
  resend: { apiKey?: string; baseUrl: string };
  mailer: {
    transport: 'smtp' | 'resend' | 'log'; autoconfirm: boolean; allowUnverifiedEmailSignIns: boolean; secureEmailChangeEnabled: boolean;
    otpExp: number; otpLength: number; externalHosts: string[];
    urlPaths: { invite: string; confirmation: string; recovery: string; emailChange: string };
    subjects: { invite: string; confirmation: string; recovery: string; magicLink: string; emailChange: string; reauthentication: string };
    templates: { invite?: string; confirmation?: string; recovery?: string; magicLink?: string; emailChange?: string; reauthentication?: string };
  };
  sms: {
    autoconfirm: boolean; maxFrequency: number; otpExp: number; otpLength: number; provider?: string; template: string;
    testOtp: Record<string, string>; testOtpValidUntil?: string;
    twilio: Credentials; twilioVerify: Credentials; messagebird: { accessKey?: string; originator?: string };
    textlocal: { apiKey?: string; sender?: string }; vonage: { apiKey?: string; apiSecret?: string; from?: string };
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

// ---------------------------------------------------------------------------------------------
// Name resolution

const BARE_NAMES = new Set(['PORT', 'DATABASE_URL', 'API_EXTERNAL_URL', 'DB_NAMESPACE', 'LOG_LEVEL', 'REQUEST_ID_HEADER']);
// GoTrue nests these under a struct, so its real keys carry the struct name twice or differ.
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  PORT: ['AUTHSVC_API_PORT', 'GOTRUE_API_PORT'],
  DATABASE_URL: ['AUTHSVC_DB_DATABASE_URL', 'GOTRUE_DB_DATABASE_URL'],
  DB_NAMESPACE: ['GOTRUE_DB_DB_NAMESPACE'],
  API_EXTERNAL_URL: ['GOTRUE_API_API_EXTERNAL_URL'],
  REQUEST_ID_HEADER: ['GOTRUE_API_REQUEST_ID_HEADER'],
};

const allowsBare = (name: string): boolean => BARE_NAMES.has(name) || name.startsWith('OTEL_');

function candidateKeys(name: string, bare: boolean): string[] {
  const rank = (key: string) => (key.startsWith('AUTHSVC_') ? 0 : 1);
  // Stable sort: AUTHSVC_ keys first, each canonical name before its alias.
  const keys = [`AUTHSVC_${name}`, `GOTRUE_${name}`, ...(ALIASES[name] ?? [])].sort((a, b) => rank(a) - rank(b));
  return bare ? [...keys, name] : keys;
}

function resolve(env: Record<string, string | undefined>, name: string, bare: boolean): { key: string; value: string } | undefined {
  for (const key of candidateKeys(name, bare)) {
    const value = env[key];
    // envconfig treats an empty value as unset, so a blank AUTHSVC_X must not hide GOTRUE_X.
    if (value !== undefined && value !== '') return { key, value };
  }
  return undefined;
}

/** The value of `name` (unprefixed, e.g. `SITE_URL`): AUTHSVC_ first, then GOTRUE_, then bare where allowed. */
export function lookup(env: Record<string, string | undefined>, name: string, bare: boolean = allowsBare(name)): string | undefined {
  return resolve(env, name, bare)?.value;
}

const label = (name: string): string =>
  `AUTHSVC_${name} (or GOTRUE_${name}${allowsBare(name) ? `, ${name}` : ''})`;

// ---------------------------------------------------------------------------------------------
// Value syntax. Parsers throw; the field wrappers turn a throw into a zod issue.

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function parseBool(raw: string): boolean {
  const v = raw.trim();
  if (GO_TRUE.has(v)) return true;
  if (GO_FALSE.has(v)) return false;
  throw new Error(`expected a boolean (true/false, 1/0, t/f), got "${raw}"`);
}

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) => (raw: string): number => {
  const v = raw.trim();
  const n = Number(v);
  if (!/^[+-]?\d+$/.test(v) || n < min || n > max) {
    throw new Error(`expected an integer${max === Number.MAX_SAFE_INTEGER ? ` >= ${min}` : ` from ${min} to ${max}`}, got "${raw}"`);
  }
  return n;
};

function nonNegativeNumber(raw: string): number {
  const v = raw.trim();
  if (!/^\d+(?:\.\d+)?$/.test(v)) throw new Error(`expected a non-negative number, got "${raw}"`);
  return Number(v);
}

function seconds(raw: string): number {
  let n: number;
  try {
    n = parseDurationSeconds(raw.trim());
  } catch {
    n = Number.NaN;
  }
  if (!Number.isFinite(n) || n < 0) throw new Error(`expected a number of seconds, got "${raw}"`);
  return n;
}

function parseList(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

const oneOf = <const T extends string>(values: readonly T[], normalise: (v: string) => string = (v) => v) => (raw: string): T => {
  const v = normalise(raw.trim());
  const found = values.find((allowed) => allowed === v);
  if (found === undefined) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
  return found;
};

function parseUrl(raw: string): string {
  try {
    new URL(raw);
  } catch {
    throw new Error(`expected an absolute URL, got "${raw}"`);
  }
  return raw;
}

function sqlIdentifier(raw: string): string {
  // Interpolated into SQL as a schema name, so anything beyond a plain identifier is refused.
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(raw)) throw new Error(`expected a plain SQL identifier, got "${raw}"`);
  return raw;
}

type DbTarget = { kind: 'postgres' | 'pglite' | 'memory'; url: string; dataDir?: string };
const DEFAULT_DATA_DIR = './.authsvc';

function parseDatabaseUrl(raw: string): DbTarget {
  const url = raw.trim();
  const scheme = url.slice(0, url.indexOf('://') + 3).toLowerCase();
  if (scheme === 'postgres://' || scheme === 'postgresql://') return { kind: 'postgres', url };
  if (scheme === 'memory://') return { kind: 'memory', url };
  if (scheme === 'pglite://' && url.length > scheme.length) return { kind: 'pglite', url, dataDir: url.slice(scheme.length) };
  // Only the scheme is echoed: a connection string carries a password.
  const shown = url.includes('://') ? `${url.slice(0, url.indexOf('://'))}://…` : '(no scheme)';
  throw new Error(`expected postgres://…, postgresql://…, pglite://<directory> or memory://, got ${shown}`);
}

/** GoTrue's syntax: sets separated by `:`, `\:` is a literal colon, empty sets dropped. */
export function parseRequiredCharacters(raw: string): string[] {
  const sets: string[] = [];
  let pending = '';
  const parts = raw.split(':');
  parts.forEach((part, i) => {
    // GoTrue only joins one escape per pair of parts; chained escapes (`a\:b\:c`) are joined fully here.
    if (part.endsWith('\\') && i < parts.length - 1) {
      pending += `${part.slice(0, -1)}:`;
      return;
    }
    sets.push(pending + part);
    pending = '';
  });
  return sets.filter((s) => s !== '');
}

function parseSendLimit(raw: string): SendLimit {
  const v = raw.trim();
  if (/^\d+(?:\.\d+)?$/.test(v)) return { count: Number(v), periodSeconds: 3600, form: 'window' };
  const [count, period, ...rest] = v.split('/');
  if (count !== undefined && period !== undefined && rest.length === 0 && /^\d+$/.test(count.trim())) {
    let periodSeconds = Number.NaN;
    try {
      periodSeconds = parseDurationSeconds(period.trim());
    } catch {
      // reported below with the whole value
    }
    if (periodSeconds > 0) return { count: Number(count.trim()), periodSeconds, form: 'bucket' };
  }
  throw new Error(`expected N (per hour) or N/duration (e.g. 10/1h), got "${raw}"`);
}

function parseTestOtp(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of parseList(raw)) {
    const at = item.indexOf(':');
    const phone = item.slice(0, at).replace(/[+\s]/g, '');
    const otp = item.slice(at + 1).trim();
    if (at < 0 || phone === '' || otp === '') throw new Error(`expected phone:otp pairs separated by commas, got "${item}"`);
    out[phone] = otp;
  }
  return out;
}

function parseRfc3339(raw: string): string {
  const v = raw.trim();
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/.test(v) || Number.isNaN(Date.parse(v))) {
    throw new Error(`expected an RFC 3339 time (e.g. 2030-01-01T00:00:00Z), got "${raw}"`);
  }
  return v;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJwtKeys(raw: string): JsonWebKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new Error(`expected a JSON array of JWKs: ${e instanceof Error ? e.message : 'invalid JSON'}`);
  }
  if (!Array.isArray(parsed)) throw new Error('expected a JSON array of JWKs');
  const keys = parsed.map((k: unknown, i): JsonWebKey => {
    if (!isRecord(k) || typeof k.kty !== 'string') throw new Error(`key ${i} is not a JWK (no "kty")`);
    if (k.key_ops !== undefined && !(Array.isArray(k.key_ops) && k.key_ops.every((op) => typeof op === 'string'))) {
      throw new Error(`key ${i}: "key_ops" must be an array of strings`);
    }
    // GoTrue signs with the key's alg; a key without one gets the usual alg of its type.
    const alg = algorithmOf(k as JsonWebKey);
    if (!alg || !SUPPORTED_JWT_ALGS.has(alg)) {
      throw new Error(`key ${i}: algorithm ${alg ?? '(unknown)'} is not supported (use RS256, RS512, ES256, ES512, EdDSA or HS256)`);
    }
    return { ...(k as JsonWebKey), alg };
  });
  const signing = keys.filter((k) => k.key_ops?.includes('sign'));
  if (signing.length === 0) throw new Error('no signing key detected');
  if (signing.length > 1) throw new Error('multiple signing keys detected');
  const [signer] = signing;
  if (signer && signer.d === undefined && signer.k === undefined) throw new Error('the signing key has no private part');
  return keys;
}

const SUPPORTED_JWT_ALGS = new Set(['RS256', 'RS512', 'ES256', 'ES512', 'EdDSA', 'HS256']);

function algorithmOf(key: JsonWebKey): string | undefined {
  if (key.alg) return key.alg;
  switch (key.kty) {
    case 'RSA': return 'RS256';
    case 'EC': return key.crv === 'P-384' ? 'ES384' : key.crv === 'P-521' ? 'ES512' : 'ES256';
    case 'OKP': return 'EdDSA';
    case 'oct': return 'HS256';
    default: return undefined;
  }
}

const logLevel = oneOf(['panic', 'fatal', 'error', 'warn', 'info', 'debug'], (v) => {
  // logrus, which GoTrue uses, is case-insensitive and also spells it "warning".
  const lower = v.toLowerCase();
  return lower === 'warning' ? 'warn' : lower;
});

// A value below the floor or outside the range is replaced, not refused, as GoTrue does.
const atLeast = (floor: number) => (raw: string) => Math.max(floor, integer(Number.MIN_SAFE_INTEGER)(raw));
const otpLength = (raw: string) => {
  const n = integer(Number.MIN_SAFE_INTEGER)(raw);
  return n < 6 || n > 10 ? 6 : n;
};
// GoTrue cannot tell 0 from unset for these, so 0 means "the default" there and here.
const secondsOr = (fallback: number) => (raw: string) => seconds(raw) || fallback;
// GoTrue reads these as integers and they end up in integer JWT claims and timestamps.
const wholeSecondsOr = (fallback: number) => (raw: string) => {
  const n = secondsOr(fallback)(raw);
  if (!Number.isInteger(n)) throw new Error(`expected a whole number of seconds, got "${raw}"`);
  return n;
};

// ---------------------------------------------------------------------------------------------
// Fields: one zod schema per variable, over the resolved raw string.

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
const f = <S extends z.ZodType>(schema: S, def: string, description: string): Field<S> => ({ schema, default: def, description });

const DEFAULT_SEND_LIMIT: SendLimit = { count: 30, periodSeconds: 3600, form: 'window' };
const SUBJECTS = {
  INVITE: 'You have been invited', CONFIRMATION: 'Confirm Your Signup', RECOVERY: 'Reset Your Password',
  MAGIC_LINK: 'Your Magic Link', EMAIL_CHANGE: 'Confirm Email Change', REAUTHENTICATION: 'Confirm reauthentication',
} as const;
const SMS_PROVIDERS = ['twilio', 'twilio_verify', 'messagebird', 'textlocal', 'vonage'] as const;

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
  EXTERNAL_REDIRECT_URL: f(opt(parseUrl), '', 'Where OAuth callbacks send the user when no redirect_to applies.'),
  EXTERNAL_FLOW_STATE_EXPIRY_DURATION: f(withDefault((raw) => Math.max(300, seconds(raw)), 300), '300', 'Lifetime of a PKCE flow state in seconds; at least 300.'),

  RATE_LIMIT_HEADER: f(text(), '', 'Header holding the client IP used for per-IP rate limits.'),
  RATE_LIMIT_STORE: f(withDefault(oneOf(['memory', 'postgres']), 'memory'), 'memory', 'Where rate-limit counters live: memory (one instance) or postgres (shared).'),
  RATE_LIMIT_EMAIL_SENT: f(withDefault(parseSendLimit, DEFAULT_SEND_LIMIT), '30', 'Emails per hour (N), or a bucket of N refilled one per duration (N/duration); 0 blocks all.'),
  RATE_LIMIT_SMS_SENT: f(withDefault(parseSendLimit, DEFAULT_SEND_LIMIT), '30', 'SMS per hour (N), or N/duration as for RATE_LIMIT_EMAIL_SENT.'),
  RATE_LIMIT_TOKEN_REFRESH: f(withDefault(nonNegativeNumber, 150), '150', '/token requests per IP per 5 minutes.'),
  RATE_LIMIT_VERIFY: f(withDefault(nonNegativeNumber, 30), '30', '/verify requests per IP per 5 minutes.'),
  RATE_LIMIT_OTP: f(withDefault(nonNegativeNumber, 30), '30', 'OTP-sending requests per IP per 5 minutes.'),
  RATE_LIMIT_ANONYMOUS_USERS: f(withDefault(nonNegativeNumber, 30), '30', 'Anonymous sign-ins per IP per hour.'),
  RATE_LIMIT_SSO: f(withDefault(nonNegativeNumber, 30), '30', 'SSO requests per IP per 5 minutes.'),

  PASSWORD_MIN_LENGTH: f(withDefault(atLeast(6), 6), '6', 'Minimum password length in bytes; values below 6 count as 6.'),
  PASSWORD_REQUIRED_CHARACTERS: f(withDefault(parseRequiredCharacters, []), '', 'Character sets separated by ":"; a password needs one of each. "\\:" is a literal colon.'),
  PASSWORD_HIBP_ENABLED: f(bool(false), 'false', 'Refuse new passwords found in Have I Been Pwned (a k-anonymity range query: only 5 hex digits of the SHA-1 leave the server); the password grant reports them in weak_password.'),
  PASSWORD_HIBP_FAIL_CLOSED: f(bool(false), 'false', 'When Have I Been Pwned cannot be reached: refuse the password change with 500 (true) or allow it and log a warning (false).'),
  PASSWORD_HIBP_USER_AGENT: f(textOr('https://github.com/supabase/gotrue'), 'https://github.com/supabase/gotrue', 'User-Agent of the Have I Been Pwned look-ups.'),
  PASSWORD_HIBP_API_URL: f(withDefault(parseUrl, 'https://api.pwnedpasswords.com'), 'https://api.pwnedpasswords.com', 'Base URL of the Pwned Passwords range API (a mirror or proxy); authsvc only.'),

  AUDIT_LOG_DISABLE_POSTGRES: f(bool(false), 'false', 'Write no audit_log_entries rows; every audit entry is still logged as audit_event.'),
  SESSIONS_TIMEBOX: f(withDefault(seconds, 0), '0', 'Longest life of a session from its sign-in (e.g. 24h); a refresh after it is refused with session_expired. 0: no limit.'),
  SESSIONS_SINGLE_PER_USER: f(bool(false), 'false', 'Only the most recently refreshed session of a user (per tag) may refresh; the others get session_expired.'),
  SESSIONS_TAGS: f(withDefault(parseList, []), '', 'Session tags, comma-separated: with SESSIONS_SINGLE_PER_USER one session per tag; untagged sessions count as the first.'),
  SESSIONS_INACTIVITY_TIMEOUT: f(withDefault(seconds, 0), '0', 'Longest time between refreshes of a session (e.g. 8h); a refresh after it is refused with session_expired. 0: no limit.'),

  SECURITY_REFRESH_TOKEN_ROTATION_ENABLED: f(bool(true), 'true', 'Detect refresh-token reuse and revoke the whole family.'),
  // 10 s, not GoTrue's 0: GoTrue always re-answers the immediate predecessor, the spec only inside
  // this window, so 0 would sign out every client whose refresh response was lost (Supabase's hosted default is 10 s).
  SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: f(withDefault(seconds, 10), '10', 'Seconds during which the previous refresh token may be exchanged again for the same child; later reuse revokes the session\'s tokens.'),
  SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: f(bool(false), 'false', 'A password change needs a reauthentication nonce.'),
  SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD: f(bool(false), 'false', 'A password change needs the current password.'),
  SECURITY_MANUAL_LINKING_ENABLED: f(bool(false), 'false', 'Allow users to link identities themselves.'),
  SECURITY_SB_FORWARDED_FOR_ENABLED: f(bool(false), 'false', 'Take the client IP from the Sb-Forwarded-For header.'),
  SECURITY_CAPTCHA_ENABLED: f(bool(false), 'false', 'Check the captcha token on signup, the password grant, /otp, /magiclink, /recover and /resend.'),
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

  SMS_AUTOCONFIRM: f(bool(false), 'false', 'When true, phone numbers need no confirmation.'),
  SMS_MAX_FREQUENCY: f(withDefault(secondsOr(60), 60), '60', 'Minimum seconds between SMS OTPs to one user.'),
  SMS_OTP_EXP: f(withDefault(wholeSecondsOr(60), 60), '60', 'Validity of an SMS OTP in seconds.'),
  SMS_OTP_LENGTH: f(withDefault(otpLength, 6), '6', 'Digits of an SMS OTP, 6 to 10 (other values count as 6).'),
  SMS_PROVIDER: f(opt(oneOf(SMS_PROVIDERS)), '', `One of ${SMS_PROVIDERS.join(', ')}.`),
  SMS_TEMPLATE: f(textOr('Your code is {{ .Code }}'), 'Your code is {{ .Code }}', 'Text of the SMS.'),
  SMS_TEST_OTP: f(withDefault(parseTestOtp, {}), '', 'Fixed codes for test numbers: phone:otp,phone:otp (no SMS is sent).'),
  SMS_TEST_OTP_VALID_UNTIL: f(opt(parseRfc3339), '', 'RFC 3339 time after which SMS_TEST_OTP stops working; empty means never.'),
  SMS_TWILIO_ACCOUNT_SID: f(text(), '', 'Twilio account SID.'),
  SMS_TWILIO_AUTH_TOKEN: f(text(), '', 'Twilio auth token.'),
  SMS_TWILIO_MESSAGE_SERVICE_SID: f(text(), '', 'Twilio message service SID or sender number.'),
  SMS_TWILIO_VERIFY_ACCOUNT_SID: f(text(), '', 'Twilio Verify account SID.'),
  SMS_TWILIO_VERIFY_AUTH_TOKEN: f(text(), '', 'Twilio Verify auth token.'),
  SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: f(text(), '', 'Twilio Verify service SID.'),
  SMS_MESSAGEBIRD_ACCESS_KEY: f(text(), '', 'MessageBird access key.'),
  SMS_MESSAGEBIRD_ORIGINATOR: f(text(), '', 'MessageBird originator: a phone number with + or a company name.'),
  SMS_TEXTLOCAL_API_KEY: f(text(), '', 'Textlocal API key.'),
  SMS_TEXTLOCAL_SENDER: f(text(), '', 'Textlocal sender.'),
  SMS_VONAGE_API_KEY: f(text(), '', 'Vonage API key.'),
  SMS_VONAGE_API_SECRET: f(text(), '', 'Vonage API secret.'),
  SMS_VONAGE_FROM: f(text(), '', 'Vonage sender.'),
};

type Up = Uppercase<ProviderName>;
const PROVIDER_FLAGS = ['ENABLED', 'SKIP_NONCE_CHECK', 'EMAIL_OPTIONAL'] as const;
const PROVIDER_TEXTS = ['CLIENT_ID', 'SECRET', 'REDIRECT_URI', 'URL'] as const;
type ProviderFlagFields = { [K in `EXTERNAL_${Up}_${(typeof PROVIDER_FLAGS)[number]}`]: Field<ReturnType<typeof bool>> };
type ProviderTextFields = { [K in `EXTERNAL_${Up}_${(typeof PROVIDER_TEXTS)[number]}`]: Field<ReturnType<typeof text>> };

const upper = <P extends ProviderName>(p: P) => p.toUpperCase() as Uppercase<P>;
const GITLAB_URL = 'https://gitlab.com';

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

const FIELDS = { ...STATIC_FIELDS, ...providerFields() };
type FieldName = keyof typeof FIELDS;
const FIELD_NAMES = Object.keys(FIELDS) as FieldName[];

const SHAPE = Object.fromEntries(FIELD_NAMES.map((name) => [name, FIELDS[name].schema])) as { [K in FieldName]: (typeof FIELDS)[K]['schema'] };
const FLAT_SCHEMA = z.object(SHAPE);
type Flat = z.output<typeof FLAT_SCHEMA>;

function describeVariable(name: string, description: string): string {
  const aliases = ALIASES[name] ?? [];
  const also = [...(aliases.length > 0 ? [`as ${aliases.join(' or ')}`] : []), ...(allowsBare(name) ? ['without a prefix'] : [])];
  return also.length === 0 ? description : `${description} Also read ${also.join(', and ')}.`;
}

const TELEMETRY = /^(TRACING_|METRICS_|OTEL_|DEBUG$)/;
const PROVIDER_FIELD = new RegExp(`^EXTERNAL_(${PROVIDERS.map((p) => p.toUpperCase()).join('|')})_`);

/** The settings accepted but not acted on yet, and why (see Support). */
function support(name: FieldName): Support {
  const no = (because: string, refuse = false): Support => ({ built: false, refuse, because });
  if (TELEMETRY.test(name)) return no('trace and metrics export are not built yet');
  if (PROVIDER_FIELD.test(name) || name === 'EXTERNAL_REDIRECT_URL') return no('sign-in with external OAuth providers is not built yet');
  if (name.startsWith('SMS_') || name === 'RATE_LIMIT_SMS_SENT' || name === 'EXTERNAL_PHONE_ENABLED') return no('phone sign-in and SMS are not built yet');
  if (name === 'OPERATOR_TOKEN' || name === 'API_ENDPOINT') return no('multi-instance mode is not supported');
  if (name === 'RATE_LIMIT_SSO') return no('SAML single sign-on is not built');
  if (name === 'SECURITY_MANUAL_LINKING_ENABLED') return no('identity linking comes with the OAuth providers');
  if (name === 'MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS') return no('sign-in before confirming the address is not built (authsvc stays strict)');
  if (name === 'MAILER_EXTERNAL_HOSTS') return no('links in emails always use API_EXTERNAL_URL');
  return { built: true };
}

/** Every supported variable, unprefixed (read as AUTHSVC_X, then GOTRUE_X). Feeds the README table. */
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
function unbuiltSettings(values: Map<FieldName, string>, sources: Map<string, string>, parsed: Flat): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const defaults = FLAT_SCHEMA.parse({});
  for (const name of FIELD_NAMES) {
    const s = support(name);
    if (s.built || !values.has(name)) continue;
    // A value equal to the default (e.g. TRACING_ENABLED=false) changes nothing.
    if (JSON.stringify(parsed[name]) === JSON.stringify(defaults[name])) continue;
    const key = sources.get(name) ?? name;
    if (s.refuse) errors.push(`${key}: ${s.because}; authsvc refuses to start rather than run without it (unset it to start).`);
    else warnings.push(`${key} is set, but ${s.because}: it has no effect.`);
  }
  return { errors, warnings };
}

// ---------------------------------------------------------------------------------------------
// Parsing

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
  if (c.SECURITY_CAPTCHA_ENABLED) required('SECURITY_CAPTCHA_SECRET', ' when SECURITY_CAPTCHA_ENABLED is true');
  if (c.MAILER_AUTOCONFIRM && c.MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS) {
    problem('MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS', 'cannot be true while MAILER_AUTOCONFIRM is true');
  }
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

/** Parses the flat environment map. Never throws for bad input: every problem is in `errors`. */
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

export function parseConfig(
  env: Record<string, string | undefined>, opts: { local?: boolean; adapterVariables?: readonly string[] } = {},
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
  const result = schema.safeParse(Object.fromEntries(values));
  if (!result.success) {
    const errors = result.error.issues.map((issue) => {
      const name = issue.path[0];
      if (typeof name !== 'string') return issue.message;
      const key = sources.get(name);
      return key === undefined ? `${label(name)} ${issue.message}` : `${key}: ${issue.message}`;
    });
    return { ok: false, errors };
  }
  const unbuilt = unbuiltSettings(values, sources, result.data);
  if (unbuilt.errors.length > 0) return { ok: false, errors: unbuilt.errors };
  const warnings = [
    ...unbuilt.warnings,
    ...unknownVariables(env, opts.adapterVariables).map((key) => `${key} is set, but authsvc has no such setting: it has no effect.`),
  ];
  // GoTrue limits per IP only with a header to key on; behind a proxy that header must be named.
  if (!local && !values.has('RATE_LIMIT_HEADER') && !result.data.SECURITY_SB_FORWARDED_FOR_ENABLED) {
    warnings.push('RATE_LIMIT_HEADER is not set: per-IP rate limits are off until it names the header in which your proxy passes the client IP (e.g. X-Forwarded-For).');
  }
  return { ok: true, config: build(result.data, local), notices, warnings };
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
      providers,
    },
    rateLimit: {
      header: c.RATE_LIMIT_HEADER, store: c.RATE_LIMIT_STORE, emailSent: c.RATE_LIMIT_EMAIL_SENT, smsSent: c.RATE_LIMIT_SMS_SENT,
      tokenRefresh: c.RATE_LIMIT_TOKEN_REFRESH, verify: c.RATE_LIMIT_VERIFY, otp: c.RATE_LIMIT_OTP,
      anonymousUsers: c.RATE_LIMIT_ANONYMOUS_USERS, sso: c.RATE_LIMIT_SSO,
    },
    password: {
      minLength: c.PASSWORD_MIN_LENGTH, requiredCharacters: c.PASSWORD_REQUIRED_CHARACTERS,
      hibp: { enabled: c.PASSWORD_HIBP_ENABLED, failClosed: c.PASSWORD_HIBP_FAIL_CLOSED, userAgent: c.PASSWORD_HIBP_USER_AGENT, apiUrl: c.PASSWORD_HIBP_API_URL },
    },
    sessions: {
      timebox: c.SESSIONS_TIMEBOX, inactivityTimeout: c.SESSIONS_INACTIVITY_TIMEOUT,
      singlePerUser: c.SESSIONS_SINGLE_PER_USER, tags: c.SESSIONS_TAGS,
    },
    auditLog: { disablePostgres: c.AUDIT_LOG_DISABLE_POSTGRES },
    security: {
      refreshTokenRotationEnabled: c.SECURITY_REFRESH_TOKEN_ROTATION_ENABLED,
      refreshTokenReuseInterval: c.SECURITY_REFRESH_TOKEN_REUSE_INTERVAL,
      updatePasswordRequireReauthentication: c.SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION,
      updatePasswordRequireCurrentPassword: c.SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD,
      manualLinkingEnabled: c.SECURITY_MANUAL_LINKING_ENABLED,
      sbForwardedForEnabled: c.SECURITY_SB_FORWARDED_FOR_ENABLED,
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
      },
      templates: {
        invite: c.MAILER_TEMPLATES_INVITE, confirmation: c.MAILER_TEMPLATES_CONFIRMATION, recovery: c.MAILER_TEMPLATES_RECOVERY,
        magicLink: c.MAILER_TEMPLATES_MAGIC_LINK, emailChange: c.MAILER_TEMPLATES_EMAIL_CHANGE, reauthentication: c.MAILER_TEMPLATES_REAUTHENTICATION,
      },
    },
    sms: {
      autoconfirm: c.SMS_AUTOCONFIRM, maxFrequency: c.SMS_MAX_FREQUENCY, otpExp: c.SMS_OTP_EXP, otpLength: c.SMS_OTP_LENGTH,
      provider: c.SMS_PROVIDER, template: c.SMS_TEMPLATE, testOtp: c.SMS_TEST_OTP, testOtpValidUntil: c.SMS_TEST_OTP_VALID_UNTIL,
      twilio: { accountSid: c.SMS_TWILIO_ACCOUNT_SID, authToken: c.SMS_TWILIO_AUTH_TOKEN, messageServiceSid: c.SMS_TWILIO_MESSAGE_SERVICE_SID },
      twilioVerify: {
        accountSid: c.SMS_TWILIO_VERIFY_ACCOUNT_SID, authToken: c.SMS_TWILIO_VERIFY_AUTH_TOKEN,
        messageServiceSid: c.SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID,
      },
      messagebird: { accessKey: c.SMS_MESSAGEBIRD_ACCESS_KEY, originator: c.SMS_MESSAGEBIRD_ORIGINATOR },
      textlocal: { apiKey: c.SMS_TEXTLOCAL_API_KEY, sender: c.SMS_TEXTLOCAL_SENDER },
      vonage: { apiKey: c.SMS_VONAGE_API_KEY, apiSecret: c.SMS_VONAGE_API_SECRET, from: c.SMS_VONAGE_FROM },
    },
  };
}
