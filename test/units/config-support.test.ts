// The rule, checked by walking the whole config schema: every setting authsvc accepts is acted
// on, or stops start-up (security settings), or is named in a warning when it is given a value.
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { CONFIG_VARIABLES, type FieldName, support } from '../../src/config/fields.ts';
import type { Config } from '../../src/config/types.ts';
import type { Support } from '../../src/config/setting.ts';
import { GOTRUE_ENV } from '../helpers/config-env.ts';

type Env = Record<string, string>;

const BASE: Env = { ...GOTRUE_ENV, GOTRUE_RATE_LIMIT_HEADER: 'X-Forwarded-For' };

// Values that parse for most fields; the first that parses and changes the config is used.
// A real SAML_PRIVATE_KEY (PKCS#1 DER, base64).
const RSA_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs1', format: 'der' })
  .toString('base64');

// A real EXTERNAL_APPLE_PRIVATE_KEY (Apple's .p8: PKCS#8 PEM, P-256).
const EC_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;

const CANDIDATES = [
  'true',
  'false',
  '7',
  '2h',
  'https://example.com/x',
  'postgres://other@db/x',
  'x',
  'a,b',
  'twilio',
  'prometheus',
  'debug',
  'text',
  'turnstile',
  'postgres',
  'preferred',
  '+15555550100:123456',
  '2040-01-01T00:00:00Z',
  '10/1h',
  'idp.internal:8443',
  'k1:Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo',
  'v1,whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  JSON.stringify([
    {
      kty: 'oct',
      k: 'Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo',
      kid: 'k1',
      key_ops: ['sign', 'verify'],
      alg: 'HS256',
    },
  ]),
  RSA_KEY,
  EC_KEY,
];

// Fields that only take effect, or only parse, together with others.
const COMPANIONS: Record<string, Env> = {
  RESEND_BASE_URL: { GOTRUE_RESEND_API_KEY: 're_x' },
  SAML_ENABLED: { GOTRUE_SAML_PRIVATE_KEY: RSA_KEY },
  PASSWORD_HIBP_FAIL_CLOSED: { GOTRUE_PASSWORD_HIBP_ENABLED: 'true' },
  SECURITY_CAPTCHA_ENABLED: { GOTRUE_SECURITY_CAPTCHA_SECRET: 's' },
  SECURITY_DB_ENCRYPTION_ENCRYPT: {
    GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1',
    GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: 'Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo',
    GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: 'k1:Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo',
  },
  // Whichever provider a sample names, its credentials are there.
  SMS_PROVIDER: {
    GOTRUE_SMS_TWILIO_ACCOUNT_SID: 'AC1',
    GOTRUE_SMS_TWILIO_AUTH_TOKEN: 't',
    GOTRUE_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
    GOTRUE_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'AC1',
    GOTRUE_SMS_TWILIO_VERIFY_AUTH_TOKEN: 't',
    GOTRUE_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA1',
    GOTRUE_SMS_MESSAGEBIRD_ACCESS_KEY: 'k',
    GOTRUE_SMS_MESSAGEBIRD_ORIGINATOR: 'o',
    GOTRUE_SMS_TEXTLOCAL_API_KEY: 'k',
    GOTRUE_SMS_TEXTLOCAL_SENDER: 's',
    GOTRUE_SMS_VONAGE_API_KEY: 'k',
    GOTRUE_SMS_VONAGE_API_SECRET: 's',
    GOTRUE_SMS_VONAGE_FROM: 'f',
  },
};
// Refresh tokens are stored only encrypted: start-up refuses STORE_TOKENS without a key.
for (const v of CONFIG_VARIABLES)
  if (v.name.endsWith('_STORE_TOKENS'))
    COMPANIONS[v.name] = {
      ...COMPANIONS.SECURITY_DB_ENCRYPTION_ENCRYPT,
      GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
    };
for (const v of CONFIG_VARIABLES) {
  const m = /^EXTERNAL_([A-Z]+)_ENABLED$/.exec(v.name);
  if (!m || m[1] === 'EMAIL' || m[1] === 'PHONE' || m[1] === 'ANONYMOUS') continue;
  COMPANIONS[v.name] = {
    [`GOTRUE_EXTERNAL_${m[1]}_CLIENT_ID`]: 'id',
    [`GOTRUE_EXTERNAL_${m[1]}_SECRET`]: 'secret',
    [`GOTRUE_EXTERNAL_${m[1]}_REDIRECT_URI`]: 'https://auth.example.com/callback',
    [`GOTRUE_EXTERNAL_${m[1]}_URL`]: 'https://idp.example.com',
  };
}

// Settings with exactly one accepted value (GoTrue's): nothing to change, nothing to act on.
const ONE_VALUE = ['DB_DRIVER', 'TRACING_EXPORTER'];

function parse(env: Env) {
  return parseConfig(env);
}

function flatten(v: unknown, path: string[] = [], out = new Map<string, string>()): Map<string, string> {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) flatten(x, [...path, k], out);
  } else {
    out.set(path.join('.'), JSON.stringify(v));
  }
  return out;
}

function changedPaths(a: Config, b: Config): string[] {
  const fa = flatten(a);
  const fb = flatten(b);
  // config.effective mirrors every setting for GET /admin/config (shown, never acted on): what
  // acts on a setting is the typed config around it.
  return [...new Set([...fa.keys(), ...fb.keys()])].filter(
    (k) => !k.startsWith('effective.') && fa.get(k) !== fb.get(k),
  );
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const ROOT = join(import.meta.dirname, '..', '..');
// Where settings are read: everything but the schema itself.
const READERS = sources(join(ROOT, 'src'))
  .filter((p) => !relative(ROOT, p).replaceAll('\\', '/').startsWith('src/config/'))
  .map((p) => readFileSync(p, 'utf8'))
  .join('\n');

/**
 * A config path counts as read when the code names its last two segments (`captcha.enabled`),
 * or passes the parent object on whole (`loadKeySet(config.jwt)`, `subjects[key]`) and names the
 * leaf somewhere. Lenient on purpose; what it catches is a setting whose name nothing mentions.
 */
function isRead(path: string): boolean {
  const parts = path.split('.');
  const leaf = parts.at(-1)!;
  const parent = parts.at(-2);
  // Provider settings are read through config.external.providers[name].
  if (parts[0] === 'external' && parts[1] === 'providers' && READERS.includes('providers['))
    return new RegExp(`\\.${leaf}\\b`).test(READERS);
  // Hook settings are read through config.hooks[kind].
  if (parts[0] === 'hooks' && READERS.includes('config.hooks[')) return new RegExp(`\\.${leaf}\\b`).test(READERS);
  if (!parent) return new RegExp(`\\.${leaf}\\b`).test(READERS);
  if (READERS.includes(`${parent}.${leaf}`)) return true;
  const parentWhole = new RegExp(`\\.${parent}(?![.\\w])`).test(READERS);
  return parentWhole && (new RegExp(`\\b${leaf}\\b`).test(READERS) || READERS.includes(`${parent}[`));
}

/** A value for `name` that parses (with its companions) and differs from the default, with the resulting config. */
function sample(name: string): { value: string; env: Env } | undefined {
  const base = { ...BASE, ...COMPANIONS[name] };
  const baseline = parse(base);
  if (!baseline.ok) throw new Error(baseline.errors.join('\n'));
  for (const value of CANDIDATES) {
    const env = { ...base, [`GOTRUE_${name}`]: value };
    const r = parseConfig(env);
    if (!r.ok) {
      // A refused setting shows up as an error naming it; that is a usable sample too.
      if (r.errors.some((e) => e.startsWith(`GOTRUE_${name}:`) && e.includes('refuses to start')))
        return { value, env };
      continue;
    }
    if (changedPaths(baseline.config, r.config).length > 0) return { value, env };
  }
  return undefined;
}

describe('every accepted setting is acted on, refused, or warned about', () => {
  const baseline = parse(BASE);
  if (!baseline.ok) throw new Error(baseline.errors.join('\n'));

  test.each(CONFIG_VARIABLES.map((v) => [v.name, v] as const))('%s', (name, v) => {
    const found = sample(name);
    if (ONE_VALUE.includes(name)) {
      expect(found).toBeUndefined();
      return;
    }
    expect(found, `no sample value found for ${name}`).toBeDefined();
    const result = parseConfig(found!.env);
    const key = `GOTRUE_${name}`;
    if (!v.support.built && v.support.refuse) {
      expect(result.ok).toBe(false);
      expect(!result.ok && result.errors.some((e) => e.startsWith(`${key}:`))).toBe(true);
      return;
    }
    expect(result.ok, !result.ok ? result.errors.join('\n') : '').toBe(true);
    if (!result.ok) return;
    const named = result.warnings.filter((w) => w.startsWith(`${key} is set`));
    if (!v.support.built) {
      expect(named, `${name} is not built: a warning must name it`).toHaveLength(1);
      expect(named[0]).not.toContain(found!.value.length > 3 ? found!.value : '\u0000'); // names, never values
      return;
    }
    expect(named).toEqual([]);
    const paths = changedPaths(
      parse({ ...BASE, ...COMPANIONS[name] }).ok
        ? (parse({ ...BASE, ...COMPANIONS[name] }) as { config: Config }).config
        : baseline.config,
      result.config,
    );
    expect(paths.length, `${name} changes nothing in the config`).toBeGreaterThan(0);
    const unread = paths.filter((p) => !isRead(p));
    expect(unread, `${name} is marked as built, but nothing outside the schema reads ${unread.join(', ')}`).toEqual([]);
  });

  test('a value equal to the default changes nothing and is not warned about', () => {
    const r = parseConfig({
      ...BASE,
      GOTRUE_TRACING_ENABLED: 'false',
      GOTRUE_SMS_AUTOCONFIRM: 'false',
      GOTRUE_EXTERNAL_GITHUB_ENABLED: 'false',
    });
    expect(r.ok && r.warnings).toEqual([]);
  });

  test('the read check itself notices a setting nobody reads', () => {
    expect(isRead('password.hibp.enabled')).toBe(true);
    expect(isRead('security.nothingReadsThisSetting')).toBe(false);
  });
});

describe('RATE_LIMIT_HEADER', () => {
  const { GOTRUE_RATE_LIMIT_HEADER: _, ...withoutHeader } = BASE;
  const warning =
    'RATE_LIMIT_HEADER is not set: per-IP rate limits are off until it names the header in which your proxy passes the client IP (e.g. X-Forwarded-For).';

  test('outside local mode, a start-up warning says per-IP limits are off until it is set', () => {
    const r = parseConfig(withoutHeader);
    expect(r.ok && r.warnings).toEqual([warning]);
    expect((parseConfig(BASE) as { warnings: string[] }).warnings).toEqual([]);
    const sb = parseConfig({ ...withoutHeader, GOTRUE_SECURITY_SB_FORWARDED_FOR_ENABLED: 'true' });
    expect(sb.ok && sb.warnings).toEqual([]);
  });

  test('local mode (npm start on a laptop) does not warn', () => {
    const r = parseConfig({ AUTHSVC_JWT_SECRET: 'local-secret' }, { local: true });
    expect(r.ok && r.warnings).toEqual([]);
  });
});

// No real setting is refused today, so the stop-start-up path is exercised with a constructed
// support table: the schema's own, with one security setting (and one secret) marked refused.
describe('a refused setting stops start-up (the mechanism, with a constructed support table)', () => {
  const because = 'pretend this security setting is not built';
  const table = (name: FieldName): Support =>
    name === 'PASSWORD_HIBP_ENABLED' || name === 'SMTP_PASS' ? { built: false, refuse: true, because } : support(name);
  const refusal = (key: string) =>
    `${key}: ${because}; authsvc refuses to start rather than run without it (unset it to start).`;

  test('given a value, start-up fails naming the variable as it was set; the value is never repeated', () => {
    const r = parseConfig({ ...BASE, GOTRUE_PASSWORD_HIBP_ENABLED: 'true' }, { support: table });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors).toEqual([refusal('GOTRUE_PASSWORD_HIBP_ENABLED')]);
    const secret = parseConfig({ ...BASE, AUTHSVC_SMTP_PASS: 'hunter2-smtp-password' }, { support: table });
    expect(!secret.ok && secret.errors).toEqual([refusal('AUTHSVC_SMTP_PASS')]);
    expect(JSON.stringify(secret)).not.toContain('hunter2');
    // Both at once: every refusal is listed, and a setting that is only warned about stays a warning.
    const both = parseConfig(
      { ...BASE, GOTRUE_PASSWORD_HIBP_ENABLED: 'true', GOTRUE_SMTP_PASS: 'x', GOTRUE_TRACING_ENABLED: 'true' },
      { support: table },
    );
    expect(!both.ok && both.errors).toEqual([refusal('GOTRUE_PASSWORD_HIBP_ENABLED'), refusal('GOTRUE_SMTP_PASS')]);
  });

  test('unset, or set to its default, a refused setting does not stop start-up', () => {
    for (const env of [BASE, { ...BASE, GOTRUE_PASSWORD_HIBP_ENABLED: 'false' }]) {
      const r = parseConfig(env, { support: table });
      expect(r.ok, !r.ok ? r.errors.join('\n') : '').toBe(true);
      expect(r.ok && r.warnings).toEqual([]);
    }
    // The same value under the schema's own table starts (the setting is built).
    expect(parseConfig({ ...BASE, GOTRUE_PASSWORD_HIBP_ENABLED: 'true' }).ok).toBe(true);
  });
});
