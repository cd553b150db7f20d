// Start-up configuration: GoTrue's variables (GOTRUE_X) keep working, AUTHSVC_X wins over them, and
// every problem is reported at once so an operator fixes a config in one pass, not one per restart.
import { type LocalizedMail, parseLocalizedMailName, readLocalizedMail } from './mail-locales.ts';
import type * as z from 'zod';
import { FIELD_NAMES, type FieldName, FLAT_SCHEMA, unbuiltSettings } from './fields.ts';
import { HOOK_KINDS, type HookTarget, type ProviderName, PROVIDERS, type SmsProviderName } from './kinds.ts';
import { allowsBare, candidateKeys, label, resolve } from './names.ts';
import { SECTIONS } from './sections/index.ts';
import { build, type Support, upper } from './setting.ts';
import type { Config, ConfigResult, Flat } from './types.ts';
import { algorithmOf, DEFAULT_DATA_DIR, isDbEncryptionKey } from './values.ts';

const SMS_CREDENTIALS: Record<SmsProviderName, string[]> = {
  twilio: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_MESSAGE_SERVICE_SID'],
  twilio_verify: ['TWILIO_VERIFY_ACCOUNT_SID', 'TWILIO_VERIFY_AUTH_TOKEN', 'TWILIO_VERIFY_MESSAGE_SERVICE_SID'],
  messagebird: ['MESSAGEBIRD_ACCESS_KEY', 'MESSAGEBIRD_ORIGINATOR'],
  textlocal: ['TEXTLOCAL_API_KEY', 'TEXTLOCAL_SENDER'],
  vonage: ['VONAGE_API_KEY', 'VONAGE_API_SECRET', 'VONAGE_FROM'],
};

const providerNeeds = (p: ProviderName) => [
  'CLIENT_ID',
  ...(p === 'apple' ? [] : ['SECRET']),
  'REDIRECT_URI',
  ...(p === 'keycloak' ? ['URL'] : []),
];

const APPLE_KEY = ['EXTERNAL_APPLE_PRIVATE_KEY', 'EXTERNAL_APPLE_KEY_ID', 'EXTERNAL_APPLE_TEAM_ID'] as const;

/** Apple's client secret: EXTERNAL_APPLE_SECRET, or the key authsvc signs one with (all three of APPLE_KEY). */
function checkAppleSecret(isSet: (name: FieldName) => boolean, problem: (name: string, message: string) => void) {
  if (isSet('EXTERNAL_APPLE_SECRET')) return;
  const missing = APPLE_KEY.filter((name) => !isSet(name));
  if (missing.length === 0) return;
  const what = missing.length === APPLE_KEY.length ? APPLE_KEY.join(', ') : `also ${missing.join(', ')}`;
  problem('EXTERNAL_APPLE_SECRET', `is required when EXTERNAL_APPLE_ENABLED is true (or set ${what})`);
}

function crossCheck(c: Flat, ctx: z.RefinementCtx, local: boolean, isSet: (name: FieldName) => boolean): void {
  const problem = (name: string, message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
  const required = (name: FieldName, when = '') => {
    if (!isSet(name)) problem(name, `is required${when}`);
  };
  // Local mode has already filled these in, so they only fire outside it.
  for (const name of ['SITE_URL', 'API_EXTERNAL_URL', 'DB_DRIVER', 'DATABASE_URL', 'SMTP_ADMIN_EMAIL'] as const)
    required(name);
  if (!isSet('JWT_KEYS')) required('JWT_SECRET', ' (or set JWT_KEYS)');
  if (!local && !isSet('RESEND_API_KEY')) required('SMTP_HOST', ' unless RESEND_API_KEY is set');
  if (c.SAML_ENABLED) required('SAML_PRIVATE_KEY', ' when SAML_ENABLED is true');
  if (c.SECURITY_CAPTCHA_ENABLED) required('SECURITY_CAPTCHA_SECRET', ' when SECURITY_CAPTCHA_ENABLED is true');
  // GoTrue's DatabaseEncryptionConfiguration.Validate (the decryption keys are checked as they parse).
  if (c.SECURITY_DB_ENCRYPTION_ENCRYPT) {
    const id = c.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID;
    if (id === '')
      problem('SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID', 'is required when SECURITY_DB_ENCRYPTION_ENCRYPT is true');
    if (!isDbEncryptionKey(c.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY)) {
      problem(
        'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY',
        'must be 256 bits of unpadded base64url when SECURITY_DB_ENCRYPTION_ENCRYPT is true',
      );
    }
    if (id !== '' && !c.SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS[id]) {
      problem('SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS', `must also hold the encryption key (id "${id}")`);
    }
  }
  // Providers' refresh tokens are never stored in clear.
  if (!c.SECURITY_DB_ENCRYPTION_ENCRYPT) {
    for (const p of PROVIDERS) {
      const name = `EXTERNAL_${upper(p)}_STORE_TOKENS` as const;
      if (p !== 'twitter' && c[name])
        problem(
          name,
          'needs SECURITY_DB_ENCRYPTION_ENCRYPT=true with an encryption key: refresh tokens are stored only encrypted',
        );
    }
  }
  if (c.MAILER_AUTOCONFIRM && c.MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS) {
    problem('MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS', 'cannot be true while MAILER_AUTOCONFIRM is true');
  }
  // GoTrue checks these when it first sends (Validate in configuration.go); here start-up says so.
  const sms = c.SMS_PROVIDER;
  if (sms)
    for (const need of SMS_CREDENTIALS[sms]) required(`SMS_${need}` as FieldName, ` when SMS_PROVIDER is ${sms}`);
  for (const p of PROVIDERS) {
    const x = `EXTERNAL_${upper(p)}` as const;
    if (!c[`${x}_ENABLED`]) continue;
    for (const need of providerNeeds(p)) {
      const name = `${x}_${need}`;
      if (!isSet(name as FieldName)) problem(name, `is required when ${x}_ENABLED is true`);
    }
    if (p === 'apple') checkAppleSecret(isSet, problem);
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
export function unknownVariables(
  env: Record<string, string | undefined>,
  adapterVariables: readonly string[] = [],
): string[] {
  knownKeys ??= new Set(FIELD_NAMES.flatMap((name) => candidateKeys(name, false)));
  const adapter = new Set(adapterVariables);
  return Object.keys(env)
    .filter(
      (key) =>
        /^(AUTHSVC|GOTRUE)_/.test(key) &&
        env[key] !== undefined &&
        env[key] !== '' &&
        !knownKeys!.has(key) &&
        !adapter.has(key) &&
        !parseLocalizedMailName(key),
    )
    .sort();
}

/**
 * Settings set under their bare name where only AUTHSVC_/GOTRUE_ is read (`JWT_SECRET=…` instead
 * of `AUTHSVC_JWT_SECRET=…`), and the prefixed name is not set: each has no effect, which is easy
 * to miss (GoTrue ignores them silently too). Names only, sorted.
 */
export function unprefixedSettings(env: Record<string, string | undefined>): string[] {
  return FIELD_NAMES.filter(
    (name) => !allowsBare(name) && env[name] !== undefined && env[name] !== '' && !resolve(env, name, false),
  ).sort();
}

/** Parses the flat environment map. Never throws for bad input: every problem is in `errors`. */
export function parseConfig(
  env: Record<string, string | undefined>,
  opts: {
    local?: boolean;
    adapterVariables?: readonly string[] /** Tests: another support table (fields.ts). */;
    support?: (name: FieldName) => Support;
  } = {},
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
    ...unknownVariables(env, opts.adapterVariables).map(
      (key) => `${key} is set, but authsvc has no such setting: it has no effect.`,
    ),
    ...unprefixedSettings(env).map(
      (name) =>
        `${name} is set without a prefix, so it has no effect: authsvc reads AUTHSVC_${name} (or GOTRUE_${name}).`,
    ),
  ];
  // GoTrue limits per IP only with a header to key on; behind a proxy that header must be named.
  if (!local && !values.has('RATE_LIMIT_HEADER') && !result.data.SECURITY_SB_FORWARDED_FOR_ENABLED) {
    warnings.push(
      'RATE_LIMIT_HEADER is not set: per-IP rate limits are off until it names the header in which your proxy passes the client IP (e.g. X-Forwarded-For).',
    );
  }
  const rpWarning = webauthnWarning(result.data);
  if (rpWarning) warnings.push(rpWarning);
  return {
    ok: true,
    config: {
      ...configFrom(result.data, local, readLocalizedMail(env)),
      effective: { values: result.data, set: new Set(values.keys()) },
    },
    notices,
    warnings,
  };
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

/** Config from the parsed settings: each section's values, and what several settings decide together. */
function configFrom(c: Flat, local: boolean, localized?: LocalizedMail): Config {
  const built = build(SECTIONS, c, local);
  const keys = c.JWT_KEYS;
  const derivedMethods = keys ? [...new Set(keys.map(algorithmOf).filter((a) => a !== undefined))] : ['HS256'];
  return {
    ...built,
    local,
    jwt: { ...built.jwt, validMethods: built.jwt.validMethods.length > 0 ? built.jwt.validMethods : derivedMethods },
    // An explicit RESEND_API_KEY is an authsvc-only choice, so it beats SMTP settings carried over from GoTrue.
    mailer: {
      ...built.mailer,
      transport: c.RESEND_API_KEY ? 'resend' : c.SMTP_HOST ? 'smtp' : 'log',
      localized: localized ?? { templates: {}, subjects: {} },
    },
    hooks: Object.fromEntries(HOOK_KINDS.map((k) => [k, withTarget(built.hooks[k])])) as Config['hooks'],
  };
}

/** A hook's setting with its URI resolved to a transport (the URI was checked by parseHookUri). */
function withTarget<H extends { uri: string }>(hook: H): H & { target?: HookTarget } {
  const uri = hook.uri;
  if (!uri) return hook;
  const u = new URL(uri);
  const scheme = u.protocol.slice(0, -1).toLowerCase();
  if (scheme !== 'pg-functions') return { ...hook, target: { transport: 'http', url: uri } };
  const [, schema, fn] = u.pathname.split('/');
  return { ...hook, target: { transport: 'pg', schema: schema!, fn: fn! } };
}
