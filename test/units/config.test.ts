import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { CONFIG_VARIABLES } from '../../src/config/fields.ts';
import { lookup } from '../../src/config/names.ts';
import type { Config } from '../../src/config/types.ts';
import { PROVIDERS } from '../../src/config/kinds.ts';
import { parseRequiredCharacters } from '../../src/config/values.ts';
import { parseDurationSeconds, parseGoDuration } from '../../src/config/duration.ts';
import { GOTRUE_ENV } from '../helpers/config-env.ts';

type Env = Record<string, string | undefined>;

const BASE: Env = GOTRUE_ENV;

function parseOk(env: Env, opts?: { local?: boolean }): { config: Config; notices: string[] } {
  const result = parseConfig(env, opts);
  if (!result.ok) throw new Error(`expected a valid config, got:\n${result.errors.join('\n')}`);
  return result;
}

function parseErrors(env: Env, opts?: { local?: boolean }): string[] {
  const result = parseConfig(env, opts);
  if (result.ok) throw new Error('expected errors, got a valid config');
  return result.errors;
}

const ok = (extra: Env, opts?: { local?: boolean }): Config => parseOk({ ...BASE, ...extra }, opts).config;
const errors = (extra: Env, opts?: { local?: boolean }): string[] => parseErrors({ ...BASE, ...extra }, opts);

describe('parseGoDuration', () => {
  it.each([
    ['0', 0],
    ['-0', 0],
    ['300ms', 300],
    ['1.5h', 5_400_000],
    ['2h45m', 9_900_000],
    ['1m30s', 90_000],
    ['-1m', -60_000],
    ['+10s', 10_000],
    ['.5s', 500],
    ['5.s', 5000],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['2000000ns', 2],
  ])('%s → %d ms', (input, ms) => {
    expect(parseGoDuration(input)).toBeCloseTo(ms, 9);
  });

  it.each(['', '-', '1', '10', 'h', '1x', '1m30', '.s', '1.2.3s', ' 1s', '1s '])('rejects %j', (input) => {
    expect(() => parseGoDuration(input)).toThrow(/duration/);
  });
});

describe('parseDurationSeconds', () => {
  it.each([
    ['90', 90],
    ['0.5', 0.5],
    ['90s', 90],
    ['1m30s', 90],
    ['1.5h', 5400],
    ['250ms', 0.25],
    ['0', 0],
  ])('%s → %d s', (input, s) => expect(parseDurationSeconds(input)).toBe(s));

  it.each(['abc', '1d', '', '1 m'])('rejects %j', (input) => {
    expect(() => parseDurationSeconds(input)).toThrow();
  });
});

describe('lookup', () => {
  it('prefers AUTHSVC_ over GOTRUE_ over the bare name', () => {
    expect(lookup({ AUTHSVC_PORT: '1', GOTRUE_PORT: '2', PORT: '3' }, 'PORT')).toBe('1');
    expect(lookup({ GOTRUE_PORT: '2', PORT: '3' }, 'PORT')).toBe('2');
    expect(lookup({ PORT: '3' }, 'PORT')).toBe('3');
  });

  it('reads the bare name only where allowed', () => {
    expect(lookup({ SITE_URL: 'https://x.test' }, 'SITE_URL')).toBeUndefined();
    expect(lookup({ LOG_LEVEL: 'debug' }, 'LOG_LEVEL')).toBe('debug');
    expect(lookup({ OTEL_SERVICE_NAME: 'auth' }, 'OTEL_SERVICE_NAME')).toBe('auth');
    expect(lookup({ SITE_URL: 'https://x.test' }, 'SITE_URL', true)).toBe('https://x.test');
    expect(lookup({ PORT: '3' }, 'PORT', false)).toBeUndefined();
  });

  it("accepts GoTrue's own key names", () => {
    expect(lookup({ GOTRUE_API_PORT: '9999' }, 'PORT')).toBe('9999');
    expect(lookup({ AUTHSVC_API_PORT: '9998', GOTRUE_PORT: '1' }, 'PORT')).toBe('9998');
    expect(lookup({ GOTRUE_DB_DATABASE_URL: 'postgres://a' }, 'DATABASE_URL')).toBe('postgres://a');
    expect(lookup({ GOTRUE_DB_NAMESPACE: 'a' }, 'DB_NAMESPACE')).toBe('a');
    expect(lookup({ GOTRUE_DB_DB_NAMESPACE: 'b' }, 'DB_NAMESPACE')).toBe('b');
    expect(lookup({ GOTRUE_API_API_EXTERNAL_URL: 'https://a' }, 'API_EXTERNAL_URL')).toBe('https://a');
    expect(lookup({ GOTRUE_API_REQUEST_ID_HEADER: 'x-req' }, 'REQUEST_ID_HEADER')).toBe('x-req');
    expect(lookup({ GOTRUE_LOG_LEVEL: 'warn' }, 'LOG_LEVEL')).toBe('warn');
  });

  it('treats an empty value as unset', () => {
    expect(lookup({ AUTHSVC_JWT_AUD: '', GOTRUE_JWT_AUD: 'x' }, 'JWT_AUD')).toBe('x');
    expect(lookup({ AUTHSVC_JWT_AUD: '' }, 'JWT_AUD')).toBeUndefined();
  });
});

describe('parseConfig: names', () => {
  it('accepts a plain GoTrue configuration', () => {
    const config = ok({});
    expect(config.siteUrl).toBe('https://app.example.com');
    expect(config.api.externalUrl).toBe('https://auth.example.com');
    expect(config.db).toMatchObject({
      driver: 'postgres',
      connection: { kind: 'postgres', url: BASE.DATABASE_URL },
      namespace: 'auth',
      maxPoolSize: 0,
    });
    expect(config.jwt.secret).toBe(BASE.GOTRUE_JWT_SECRET);
    expect(config.mailer.transport).toBe('smtp');
    expect(config.local).toBe(false);
  });

  it('lets AUTHSVC_ win over GOTRUE_', () => {
    const config = ok({ AUTHSVC_SITE_URL: 'https://new.example.com', AUTHSVC_JWT_EXP: '60', GOTRUE_JWT_EXP: '120' });
    expect(config.siteUrl).toBe('https://new.example.com');
    expect(config.jwt.exp).toBe(60);
  });

  it('does not read SITE_URL without a prefix', () => {
    const env: Env = { ...BASE, GOTRUE_SITE_URL: undefined, SITE_URL: 'https://bare.example.com' };
    expect(parseErrors(env)).toContain('AUTHSVC_SITE_URL (or GOTRUE_SITE_URL) is required');
  });

  it('reads PORT, DATABASE_URL and LOG_LEVEL bare, prefixed names winning', () => {
    expect(ok({ PORT: '9000' }).api.port).toBe(9000);
    expect(ok({ PORT: '9000', GOTRUE_API_PORT: '9001' }).api.port).toBe(9001);
    expect(ok({ LOG_LEVEL: 'debug' }).log.level).toBe('debug');
    expect(ok({ LOG_LEVEL: 'debug', GOTRUE_LOG_LEVEL: 'error' }).log.level).toBe('error');
    expect(ok({ GOTRUE_DB_DATABASE_URL: 'postgresql://other/db' }).db.connection.url).toBe('postgresql://other/db');
    expect(ok({ GOTRUE_DB_NAMESPACE: 'auth2' }).db.namespace).toBe('auth2');
    expect(ok({ OTEL_SERVICE_NAME: 'auth', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' }).otel).toMatchObject({
      serviceName: 'auth',
      exporterOtlpEndpoint: 'http://otel:4318',
    });
  });

  it('names the variable that was actually set in an error', () => {
    expect(errors({ AUTHSVC_JWT_EXP: 'abc' })).toEqual(['AUTHSVC_JWT_EXP: expected a number of seconds, got "abc"']);
    expect(errors({ GOTRUE_JWT_EXP: 'abc' })).toEqual(['GOTRUE_JWT_EXP: expected a number of seconds, got "abc"']);
    expect(errors({ LOG_LEVEL: 'loud' })).toEqual([
      'LOG_LEVEL: expected one of panic, fatal, error, warn, info, debug, got "loud"',
    ]);
  });

  it('lists every supported variable, including everything parseConfig reads', () => {
    const read = new Set<string>();
    const spy = new Proxy<Env>(
      {},
      {
        get(_target, key) {
          if (typeof key === 'string') read.add(key);
          return undefined;
        },
      },
    );
    parseConfig(spy);
    parseConfig(spy, { local: true });
    expect(read.size).toBeGreaterThan(200);
    expect(read.has('PORT')).toBe(true);
    expect(read.has('SITE_URL')).toBe(false);
    const names = new Set(CONFIG_VARIABLES.map((v) => v.name));
    const missing = [...read].filter((key) => {
      const name = key.replace(/^(AUTHSVC|GOTRUE)_/, '');
      return !names.has(name) && !CONFIG_VARIABLES.some((v) => v.description.includes(key));
    });
    expect(missing).toEqual([]);
    expect(names.size).toBe(CONFIG_VARIABLES.length);
    for (const v of CONFIG_VARIABLES) expect(v.description, v.name).not.toBe('');
    expect(names).toContain('EXTERNAL_GITHUB_CLIENT_ID');
    expect(CONFIG_VARIABLES.find((v) => v.name === 'PORT')?.description).toContain('GOTRUE_API_PORT');
  });
});

describe('parseConfig: session limits', () => {
  it('SESSIONS_TIMEBOX and SESSIONS_INACTIVITY_TIMEOUT take Go durations (unset: no limit, garbage refused); SESSIONS_SINGLE_PER_USER and SESSIONS_TAGS', () => {
    expect(ok({}).sessions).toEqual({
      timebox: 0,
      inactivityTimeout: 0,
      allowLowAal: 0,
      singlePerUser: false,
      tags: [],
    });
    expect(
      ok({
        GOTRUE_SESSIONS_TIMEBOX: '24h',
        GOTRUE_SESSIONS_INACTIVITY_TIMEOUT: '1h30m',
        GOTRUE_SESSIONS_SINGLE_PER_USER: 'true',
        GOTRUE_SESSIONS_TAGS: 'web, mobile',
        GOTRUE_SESSIONS_ALLOW_LOW_AAL: '12h',
      }).sessions,
    ).toEqual({
      timebox: 86400,
      inactivityTimeout: 5400,
      allowLowAal: 43200,
      singlePerUser: true,
      tags: ['web', 'mobile'],
    });
    expect(parseErrors({ ...BASE, GOTRUE_SESSIONS_TIMEBOX: 'a day' }).join('\n')).toContain('GOTRUE_SESSIONS_TIMEBOX');
  });
});

describe('parseConfig: variables that name no setting', () => {
  it('warns about each prefixed variable authsvc does not read, by name only; aliases, bare names and blanks are fine', () => {
    const result = parseConfig({
      ...BASE,
      GOTRUE_SAML_ENABLE: 'true',
      GOTRUE_SAML_PRIVATE_KEYS: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-very-secret',
      AUTHSVC_SITEURL: 'https://typo.example.com',
      GOTRUE_API_PORT: '9999',
      GOTRUE_DB_DB_NAMESPACE: 'auth',
      GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI: '',
      PORT: '8080',
      HOME: '/root',
    });
    if (!result.ok) throw new Error(result.errors.join('\n'));
    expect(result.warnings).toEqual([
      'AUTHSVC_SITEURL is set, but authsvc has no such setting: it has no effect.',
      'GOTRUE_SAML_ENABLE is set, but authsvc has no such setting: it has no effect.',
      'GOTRUE_SAML_PRIVATE_KEYS is set, but authsvc has no such setting: it has no effect.',
      'RATE_LIMIT_HEADER is not set: per-IP rate limits are off until it names the header in which your proxy passes the client IP (e.g. X-Forwarded-For).',
    ]);
    expect(result.warnings.join(' ')).not.toContain('very-secret');
  });

  it('warns about a setting given under its bare name (it has no effect) unless the prefixed one is set too', () => {
    const result = parseConfig({
      ...BASE,
      GOTRUE_RATE_LIMIT_HEADER: 'X-Forwarded-For',
      SMTP_PASS: 'a-bare-secret-that-authsvc-does-not-read',
      HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
      // Shadowed by the prefixed name (GOTRUE_ENV sets both), or blank.
      JWT_SECRET: 'another-bare-secret',
      SITE_URL: 'https://shadowed.example.com',
      MAILER_AUTOCONFIRM: '',
      // Read bare (allowed), or no setting at all.
      PORT: '8080',
      LOG_LEVEL: 'info',
      HOSTNAME: 'box',
      OTEL_SERVICE_NAME: 'auth',
    });
    if (!result.ok) throw new Error(result.errors.join('\n'));
    expect(result.warnings).toEqual([
      'HOOK_CUSTOM_ACCESS_TOKEN_ENABLED is set without a prefix, so it has no effect: authsvc reads AUTHSVC_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED (or GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED).',
      'SMTP_PASS is set without a prefix, so it has no effect: authsvc reads AUTHSVC_SMTP_PASS (or GOTRUE_SMTP_PASS).',
    ]);
    expect(result.warnings.join(' ')).not.toContain('bare-secret');
  });

  it('a GoTrue docker-compose configuration of supported settings gives no warnings', () => {
    const result = parseConfig({
      ...BASE,
      GOTRUE_MAILER_AUTOCONFIRM: 'true',
      GOTRUE_JWT_EXP: '3600',
      GOTRUE_EXTERNAL_GOOGLE_ENABLED: 'false',
      GOTRUE_RATE_LIMIT_HEADER: 'X-Forwarded-For',
    });
    expect(result.ok && result.warnings).toEqual([]);
  });

  it('a runtime adapter names the variables it reads itself', () => {
    const result = parseConfig(
      { ...BASE, AUTHSVC_DB_WS_PROXY: 'proxy.example.com/v2', GOTRUE_RATE_LIMIT_HEADER: 'X-Real-IP' },
      { adapterVariables: ['AUTHSVC_DB_WS_PROXY'] },
    );
    expect(result.ok && result.warnings).toEqual([]);
  });
});

describe('parseConfig: value syntax', () => {
  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('reads %j as true', (v) => {
    expect(ok({ GOTRUE_DISABLE_SIGNUP: v }).disableSignup).toBe(true);
  });

  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('reads %j as false', (v) => {
    expect(ok({ GOTRUE_EXTERNAL_EMAIL_ENABLED: v }).external.email.enabled).toBe(false);
  });

  it.each(['yes', 'on', 'tRuE', '2'])('rejects the boolean %j', (v) => {
    expect(errors({ GOTRUE_DISABLE_SIGNUP: v })).toEqual([
      `GOTRUE_DISABLE_SIGNUP: expected a boolean (true/false, 1/0, t/f), got "${v}"`,
    ]);
  });

  it('applies boolean defaults', () => {
    const config = ok({});
    expect(config.disableSignup).toBe(false);
    expect(config.external.email).toEqual({ enabled: true, magicLinkEnabled: true, authorizedAddresses: [] });
    expect(config.external.phone.enabled).toBe(false);
    expect(config.security.refreshTokenRotationEnabled).toBe(true);
    expect(config.mailer.secureEmailChangeEnabled).toBe(true);
  });

  it.each([
    ['90', 90],
    ['90s', 90],
    ['1m30s', 90],
    ['1.5h', 5400],
    ['0.5', 0.5],
  ])('reads the duration %j', (v, s) => {
    expect(ok({ GOTRUE_SMTP_MAX_FREQUENCY: v }).smtp.maxFrequency).toBe(s);
  });

  it('rejects bad durations', () => {
    expect(errors({ GOTRUE_SMTP_MAX_FREQUENCY: '1d' })).toEqual([
      'GOTRUE_SMTP_MAX_FREQUENCY: expected a number of seconds, got "1d"',
    ]);
    expect(errors({ GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '-5' })).toHaveLength(1);
    expect(errors({ GOTRUE_JWT_EXP: '90.5' })).toEqual([
      'GOTRUE_JWT_EXP: expected a whole number of seconds, got "90.5"',
    ]);
  });

  it('applies duration defaults in seconds', () => {
    const config = ok({});
    expect(config.jwt.exp).toBe(3600);
    expect(config.smtp.maxFrequency).toBe(900);
    expect(config.sms).toMatchObject({ maxFrequency: 60, otpExp: 60, otpLength: 6 });
    expect(config.mailer).toMatchObject({ otpExp: 86400, otpLength: 6 });
    expect(config.api.maxRequestDuration).toBe(10);
    expect(config.security.captcha.timeout).toBe(10);
    expect(config.external.flowStateExpiry).toBe(300);
    expect(ok({ GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION: '1m' }).external.flowStateExpiry).toBe(300);
    expect(ok({ GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION: '10m' }).external.flowStateExpiry).toBe(600);
    expect(ok({ GOTRUE_JWT_EXP: '1h' }).jwt.exp).toBe(3600);
  });

  it('splits lists on commas, trimming and dropping empty items', () => {
    const config = ok({
      GOTRUE_URI_ALLOW_LIST: ' http://a.test/** , ,http://b.test,',
      GOTRUE_JWT_ADMIN_ROLES: 'admin',
    });
    expect(config.uriAllowList).toEqual(['http://a.test/**', 'http://b.test']);
    expect(config.jwt.adminRoles).toEqual(['admin']);
    expect(ok({}).jwt.adminRoles).toEqual(['service_role', 'supabase_admin']);
    expect(ok({}).uriAllowList).toEqual([]);
  });

  it('requires integers where GoTrue does', () => {
    expect(errors({ PORT: '80.5' })).toEqual(['PORT: expected an integer from 0 to 65535, got "80.5"']);
    expect(errors({ GOTRUE_DB_MAX_POOL_SIZE: 'ten' })).toHaveLength(1);
  });

  it('reads SMS test OTPs with + and spaces removed from the numbers', () => {
    const config = ok({ GOTRUE_SMS_TEST_OTP: '+1 555 0100:123456, 4915112345678:654321' });
    expect(config.sms.testOtp).toEqual({ '15550100': '123456', '4915112345678': '654321' });
    expect(errors({ GOTRUE_SMS_TEST_OTP: '1555:1,oops' })).toHaveLength(1);
  });

  it('checks enumerations', () => {
    expect(
      ok({
        GOTRUE_SMS_PROVIDER: 'twilio_verify',
        GOTRUE_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'AC1',
        GOTRUE_SMS_TWILIO_VERIFY_AUTH_TOKEN: 't',
        GOTRUE_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA1',
      }).sms.provider,
    ).toBe('twilio_verify');
    expect(errors({ GOTRUE_SMS_PROVIDER: 'carrier-pigeon' })).toHaveLength(1);
    expect(errors({ GOTRUE_METRICS_EXPORTER: 'statsd' })).toHaveLength(1);
    expect(errors({ GOTRUE_TRACING_EXPORTER: 'jaeger' })).toHaveLength(1);
    expect(errors({ GOTRUE_RATE_LIMIT_STORE: 'redis' })).toHaveLength(1);
    expect(errors({ GOTRUE_DB_DRIVER: 'mysql' })).toEqual(['GOTRUE_DB_DRIVER: expected one of postgres, got "mysql"']);
    expect(ok({ GOTRUE_LOG_LEVEL: 'WARNING' }).log.level).toBe('warn');
    expect(ok({}).rateLimit.store).toBe('memory');
  });
});

describe('parseConfig: required values', () => {
  it('lists every missing required value at once outside local mode', () => {
    expect(parseErrors({})).toEqual([
      'AUTHSVC_SITE_URL (or GOTRUE_SITE_URL) is required',
      'AUTHSVC_API_EXTERNAL_URL (or GOTRUE_API_EXTERNAL_URL, API_EXTERNAL_URL) is required',
      'AUTHSVC_DB_DRIVER (or GOTRUE_DB_DRIVER) is required',
      'AUTHSVC_DATABASE_URL (or GOTRUE_DATABASE_URL, DATABASE_URL) is required',
      'AUTHSVC_SMTP_ADMIN_EMAIL (or GOTRUE_SMTP_ADMIN_EMAIL) is required',
      'AUTHSVC_JWT_SECRET (or GOTRUE_JWT_SECRET) is required (or set JWT_KEYS)',
      'AUTHSVC_SMTP_HOST (or GOTRUE_SMTP_HOST) is required unless RESEND_API_KEY is set',
    ]);
  });

  it('reports bad values and missing values together', () => {
    const errs = parseErrors({ GOTRUE_SITE_URL: 'not a url', GOTRUE_JWT_EXP: 'abc', GOTRUE_DISABLE_SIGNUP: 'nope' });
    expect(errs).toContain('GOTRUE_SITE_URL: expected an absolute URL, got "not a url"');
    expect(errs).toContain('GOTRUE_JWT_EXP: expected a number of seconds, got "abc"');
    expect(errs).toContain('GOTRUE_DISABLE_SIGNUP: expected a boolean (true/false, 1/0, t/f), got "nope"');
    expect(errs).toContain('AUTHSVC_JWT_SECRET (or GOTRUE_JWT_SECRET) is required (or set JWT_KEYS)');
    expect(errs.some((e) => e.includes('SITE_URL) is required'))).toBe(false);
  });

  it('requires API_EXTERNAL_URL to be a URL', () => {
    expect(errors({ API_EXTERNAL_URL: 'auth.example.com' })).toEqual([
      'API_EXTERNAL_URL: expected an absolute URL, got "auth.example.com"',
    ]);
  });

  it('accepts Resend instead of SMTP and prefers it', () => {
    const config = ok({ GOTRUE_SMTP_HOST: undefined, AUTHSVC_RESEND_API_KEY: 're_123' });
    expect(config.mailer.transport).toBe('resend');
    expect(config.resend).toEqual({ apiKey: 're_123', baseUrl: 'https://api.resend.com' });
    expect(ok({ AUTHSVC_RESEND_API_KEY: 're_123' }).mailer.transport).toBe('resend');
    expect(ok({}).smtp.port).toBe(587);
  });

  it('refuses MAILER_AUTOCONFIRM together with unverified sign-ins', () => {
    expect(
      errors({ GOTRUE_MAILER_AUTOCONFIRM: 'true', GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: 'true' }),
    ).toEqual(['GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: cannot be true while MAILER_AUTOCONFIRM is true']);
  });

  it('requires a captcha secret when captcha is on', () => {
    expect(errors({ GOTRUE_SECURITY_CAPTCHA_ENABLED: 'true' })).toEqual([
      'AUTHSVC_SECURITY_CAPTCHA_SECRET (or GOTRUE_SECURITY_CAPTCHA_SECRET) is required when SECURITY_CAPTCHA_ENABLED is true',
    ]);
    const config = ok({
      GOTRUE_SECURITY_CAPTCHA_ENABLED: 'true',
      GOTRUE_SECURITY_CAPTCHA_SECRET: 's',
      GOTRUE_SECURITY_CAPTCHA_PROVIDER: 'turnstile',
    });
    expect(config.security.captcha).toEqual({
      enabled: true,
      provider: 'turnstile',
      secret: 's',
      timeout: 10,
      verifyUrl: undefined,
    });
    expect(errors({ GOTRUE_SECURITY_CAPTCHA_PROVIDER: 'recaptcha' })).toHaveLength(1);
  });
});

describe('parseConfig: local mode', () => {
  it('fills in safe defaults and says so', () => {
    const { config, notices } = parseOk({ AUTHSVC_JWT_SECRET: 'local-secret', PORT: '9999' }, { local: true });
    expect(config.local).toBe(true);
    expect(config.siteUrl).toBe('http://localhost:3000');
    expect(config.api.externalUrl).toBe('http://localhost:9999');
    expect(config.db).toMatchObject({ driver: 'postgres', connection: { kind: 'pglite', dataDir: './.authsvc' } });
    expect(config.smtp.adminEmail).toBe('admin@localhost');
    expect(config.mailer.transport).toBe('log');
    expect(notices).toHaveLength(6);
    for (const name of ['SITE_URL', 'API_EXTERNAL_URL', 'DB_DRIVER', 'DATABASE_URL', 'SMTP_ADMIN_EMAIL', 'SMTP_HOST']) {
      expect(
        notices.some((n) => n.includes(name)),
        name,
      ).toBe(true);
    }
    expect(notices.some((n) => n.includes('http://localhost:9999'))).toBe(true);
  });

  it('uses port 8081 in the default external URL', () => {
    expect(parseOk({ AUTHSVC_JWT_SECRET: 's' }, { local: true }).config.api.externalUrl).toBe('http://localhost:8081');
  });

  it('keeps given values and gives no notice for them', () => {
    const { config, notices } = parseOk(BASE, { local: true });
    expect(config.siteUrl).toBe('https://app.example.com');
    expect(config.db.connection.kind).toBe('postgres');
    expect(config.mailer.transport).toBe('smtp');
    expect(notices).toEqual([]);
  });

  it('still requires JWT_SECRET', () => {
    expect(parseErrors({}, { local: true })).toEqual([
      'AUTHSVC_JWT_SECRET (or GOTRUE_JWT_SECRET) is required (or set JWT_KEYS)',
    ]);
  });
});

describe('parseConfig: DATABASE_URL', () => {
  it.each([
    ['postgres://u:p@h:5432/db', { kind: 'postgres', url: 'postgres://u:p@h:5432/db' }],
    ['postgresql://h/db', { kind: 'postgres', url: 'postgresql://h/db' }],
    ['pglite://./data/auth', { kind: 'pglite', dataDir: './data/auth' }],
    ['pglite:///var/lib/authsvc', { kind: 'pglite', dataDir: '/var/lib/authsvc' }],
    ['memory://', { kind: 'memory', url: 'memory://' }],
  ])('%s', (url, expected) => {
    expect(ok({ DATABASE_URL: url }).db.connection).toMatchObject(expected);
  });

  it.each(['mysql://h/db', 'pglite://', 'just-a-path', 'sqlite:./x.db'])('rejects %s', (url) => {
    expect(errors({ DATABASE_URL: url })).toHaveLength(1);
  });

  it('refuses a DB_NAMESPACE that is not a plain identifier', () => {
    expect(errors({ DB_NAMESPACE: 'auth"; drop table x; --' })).toHaveLength(1);
  });
});

describe('parseConfig: JWT_KEYS', () => {
  const signing = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd', kid: 'k1', key_ops: ['sign', 'verify'] };
  const verifying = { kty: 'RSA', n: 'n', e: 'AQAB', kid: 'k0', alg: 'RS256', key_ops: ['verify'] };

  it('accepts one signing key plus verification keys, without JWT_SECRET', () => {
    const config = ok({ GOTRUE_JWT_SECRET: undefined, GOTRUE_JWT_KEYS: JSON.stringify([signing, verifying]) });
    // A key without `alg` gets the usual one of its type, so config and signer agree.
    expect(config.jwt.keys).toEqual([
      { ...signing, alg: 'ES256' },
      { ...verifying, alg: 'RS256' },
    ]);
    expect(config.jwt.secret).toBeUndefined();
    expect(config.jwt.validMethods).toEqual(['ES256', 'RS256']);
  });

  it('derives HS256 when only a secret is given, unless methods are set', () => {
    expect(ok({}).jwt.validMethods).toEqual(['HS256']);
    expect(ok({ GOTRUE_JWT_VALID_METHODS: 'HS256,RS256' }).jwt.validMethods).toEqual(['HS256', 'RS256']);
  });

  it('refuses a key algorithm the signer does not support', () => {
    const es384 = { ...signing, crv: 'P-384', alg: undefined };
    expect(errors({ GOTRUE_JWT_SECRET: undefined, GOTRUE_JWT_KEYS: JSON.stringify([es384]) }).join('\n')).toMatch(
      /ES384 is not supported/,
    );
  });

  it.each([
    ['not json', /expected a JSON array of JWKs/],
    ['{"kty":"oct"}', /expected a JSON array of JWKs/],
    ['[{"x":1}]', /not a JWK/],
    [JSON.stringify([verifying]), /no signing key detected/],
    [JSON.stringify([signing, { ...signing, kid: 'k2' }]), /multiple signing keys detected/],
    [JSON.stringify([{ ...signing, d: undefined }]), /no private part/],
  ])('rejects %s', (value, message) => {
    const errs = errors({ GOTRUE_JWT_KEYS: value });
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^GOTRUE_JWT_KEYS: /);
    expect(errs[0]).toMatch(message);
  });

  it('reports a bad JWT_KEYS without also asking for JWT_SECRET', () => {
    expect(errors({ GOTRUE_JWT_SECRET: undefined, GOTRUE_JWT_KEYS: '[' })).toHaveLength(1);
  });
});

describe('parseConfig: passwords', () => {
  it('splits required characters on colons, honouring \\: escapes', () => {
    expect(parseRequiredCharacters('abc:ABC:0123456789')).toEqual(['abc', 'ABC', '0123456789']);
    expect(parseRequiredCharacters('a\\:b:c')).toEqual(['a:b', 'c']);
    expect(parseRequiredCharacters('\\:')).toEqual([':']);
    expect(parseRequiredCharacters('::abc:')).toEqual(['abc']);
    expect(parseRequiredCharacters('a\\:b\\:c:d')).toEqual(['a:b:c', 'd']);
    expect(parseRequiredCharacters('ab\\')).toEqual(['ab\\']);
    // The set Supabase's dashboard writes, whose symbols include a colon.
    const supabase =
      'abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789:!@#$%^&*()_+-=[]{};\'\\:"|<>?,./`~';
    expect(ok({ GOTRUE_PASSWORD_REQUIRED_CHARACTERS: supabase }).password.requiredCharacters).toEqual([
      'abcdefghijklmnopqrstuvwxyz',
      'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
      '0123456789',
      '!@#$%^&*()_+-=[]{};\':"|<>?,./`~',
    ]);
  });

  it('forces PASSWORD_MIN_LENGTH to at least 6', () => {
    expect(ok({}).password.minLength).toBe(6);
    expect(ok({ GOTRUE_PASSWORD_MIN_LENGTH: '3' }).password.minLength).toBe(6);
    expect(ok({ GOTRUE_PASSWORD_MIN_LENGTH: '12' }).password.minLength).toBe(12);
    expect(errors({ GOTRUE_PASSWORD_MIN_LENGTH: 'long' })).toHaveLength(1);
  });
});

describe('parseConfig: OTP lengths', () => {
  it.each([
    ['6', 6],
    ['8', 8],
    ['10', 10],
    ['5', 6],
    ['11', 6],
    ['0', 6],
    ['-7', 6],
  ])('%s → %d', (value, expected) => {
    const config = ok({ GOTRUE_MAILER_OTP_LENGTH: value, GOTRUE_SMS_OTP_LENGTH: value });
    expect(config.mailer.otpLength).toBe(expected);
    expect(config.sms.otpLength).toBe(expected);
  });

  it('rejects a non-integer length', () => {
    expect(errors({ GOTRUE_MAILER_OTP_LENGTH: 'six' })).toHaveLength(1);
  });
});

describe('parseConfig: send limits', () => {
  it('defaults to 30 per hour', () => {
    expect(ok({}).rateLimit.emailSent).toEqual({ count: 30, periodSeconds: 3600, form: 'window' });
    expect(ok({}).rateLimit.smsSent).toEqual({ count: 30, periodSeconds: 3600, form: 'window' });
  });

  it.each([
    ['100', { count: 100, periodSeconds: 3600, form: 'window' }],
    ['0', { count: 0, periodSeconds: 3600, form: 'window' }],
    ['10/1h', { count: 10, periodSeconds: 3600, form: 'bucket' }],
    ['5/30s', { count: 5, periodSeconds: 30, form: 'bucket' }],
    ['2/1m30s', { count: 2, periodSeconds: 90, form: 'bucket' }],
  ])('reads %s', (value, expected) => {
    expect(ok({ GOTRUE_RATE_LIMIT_EMAIL_SENT: value }).rateLimit.emailSent).toEqual(expected);
    expect(ok({ GOTRUE_RATE_LIMIT_SMS_SENT: value }).rateLimit.smsSent).toEqual(expected);
  });

  it.each(['ten', '10/', '10/xyz', '/1h', '10/1h/2', '-1', '10/0s'])('rejects %j', (value) => {
    expect(errors({ GOTRUE_RATE_LIMIT_EMAIL_SENT: value })).toHaveLength(1);
  });

  it('reads the per-IP limits', () => {
    expect(ok({}).rateLimit).toMatchObject({ tokenRefresh: 150, verify: 30, otp: 30, anonymousUsers: 30, sso: 30 });
    expect(ok({ GOTRUE_RATE_LIMIT_VERIFY: '5', GOTRUE_RATE_LIMIT_HEADER: 'X-Real-IP' }).rateLimit).toMatchObject({
      verify: 5,
      header: 'X-Real-IP',
    });
  });
});

describe('parseConfig: external providers', () => {
  it('knows the 17 providers of the spec, all off by default', () => {
    expect(PROVIDERS).toHaveLength(17);
    const { providers } = ok({}).external;
    expect(Object.keys(providers).sort()).toEqual([...PROVIDERS].sort());
    expect(Object.values(providers).every((p) => !p.enabled)).toBe(true);
    expect(providers.gitlab.url).toBe('https://gitlab.com');
  });

  it('requires credentials of an enabled provider, naming each missing one', () => {
    expect(errors({ GOTRUE_EXTERNAL_GITHUB_ENABLED: 'true', GOTRUE_EXTERNAL_GITHUB_CLIENT_ID: 'id' })).toEqual([
      'AUTHSVC_EXTERNAL_GITHUB_SECRET (or GOTRUE_EXTERNAL_GITHUB_SECRET) is required when EXTERNAL_GITHUB_ENABLED is true',
      'AUTHSVC_EXTERNAL_GITHUB_REDIRECT_URI (or GOTRUE_EXTERNAL_GITHUB_REDIRECT_URI) is required when EXTERNAL_GITHUB_ENABLED is true',
    ]);
  });

  it('requires the realm URL for keycloak', () => {
    const keycloak = {
      GOTRUE_EXTERNAL_KEYCLOAK_ENABLED: 'true',
      GOTRUE_EXTERNAL_KEYCLOAK_CLIENT_ID: 'id',
      GOTRUE_EXTERNAL_KEYCLOAK_SECRET: 's',
      GOTRUE_EXTERNAL_KEYCLOAK_REDIRECT_URI: 'https://auth.example.com/callback',
    };
    expect(errors(keycloak)).toEqual([
      'AUTHSVC_EXTERNAL_KEYCLOAK_URL (or GOTRUE_EXTERNAL_KEYCLOAK_URL) is required when EXTERNAL_KEYCLOAK_ENABLED is true',
    ]);
    const config = ok({ ...keycloak, GOTRUE_EXTERNAL_KEYCLOAK_URL: 'https://kc.example.com/realms/main' });
    expect(config.external.providers.keycloak).toEqual({
      enabled: true,
      clientId: 'id',
      secret: 's',
      redirectUri: 'https://auth.example.com/callback',
      url: 'https://kc.example.com/realms/main',
      skipNonceCheck: false,
      emailOptional: false,
      storeTokens: false,
    });
  });

  it('reads a complete provider and ignores disabled ones', () => {
    const config = ok({
      AUTHSVC_EXTERNAL_GOOGLE_ENABLED: 'true',
      AUTHSVC_EXTERNAL_GOOGLE_CLIENT_ID: 'gid',
      AUTHSVC_EXTERNAL_GOOGLE_SECRET: 'gs',
      AUTHSVC_EXTERNAL_GOOGLE_REDIRECT_URI: 'https://auth.example.com/callback',
      AUTHSVC_EXTERNAL_GOOGLE_SKIP_NONCE_CHECK: '1',
      GOTRUE_EXTERNAL_GITLAB_CLIENT_ID: 'only-an-id',
    });
    expect(config.external.providers.google).toMatchObject({ enabled: true, clientId: 'gid', skipNonceCheck: true });
    expect(config.external.providers.gitlab).toMatchObject({ enabled: false, clientId: 'only-an-id' });
  });
});

describe('parseConfig: mailer and sms', () => {
  it('applies the spec defaults', () => {
    const { mailer, sms } = ok({});
    expect(mailer.urlPaths).toEqual({
      invite: '/verify',
      confirmation: '/verify',
      recovery: '/verify',
      emailChange: '/verify',
    });
    expect(mailer.subjects).toEqual({
      invite: 'You have been invited',
      confirmation: 'Confirm Your Signup',
      recovery: 'Reset Your Password',
      magicLink: 'Your Magic Link',
      emailChange: 'Confirm Email Change',
      reauthentication: 'Confirm reauthentication',
      // GoTrue's defaults for the account-change notifications.
      password_changed_notification: 'Your password was changed',
      email_changed_notification: 'Your email address was changed',
      phone_changed_notification: 'Your phone number was changed',
      identity_linked_notification: 'A new sign-in method was linked to your account',
      identity_unlinked_notification: 'A sign-in method was removed from your account',
      mfa_factor_enrolled_notification: 'A new verification method was added to your account',
      mfa_factor_unenrolled_notification: 'A verification method was removed from your account',
      passkey_added_notification: 'A new passkey was added to your account',
      passkey_removed_notification: 'A passkey was removed from your account',
    });
    expect(mailer.templates).toEqual({});
    expect(Object.values(mailer.notifications)).toEqual(Array(9).fill(false));
    expect(sms.template).toBe('Your code is {{ .Code }}');
    expect(sms.testOtp).toEqual({});
  });

  it('reads the upper-snake names of nested settings', () => {
    const config = ok({
      GOTRUE_MAILER_URLPATHS_EMAIL_CHANGE: '/auth/v1/verify',
      GOTRUE_MAILER_SUBJECTS_MAGIC_LINK: 'Sign in',
      GOTRUE_MAILER_TEMPLATES_MAGIC_LINK: 'https://cdn.example.com/magic.html',
      GOTRUE_SMS_TWILIO_ACCOUNT_SID: 'AC1',
      GOTRUE_SMS_VONAGE_API_SECRET: 'vs',
      GOTRUE_SMS_TEST_OTP_VALID_UNTIL: '2030-01-01T00:00:00Z',
      GOTRUE_MAILER_NOTIFICATIONS_MFA_FACTOR_UNENROLLED_ENABLED: 'true',
      GOTRUE_MAILER_SUBJECTS_PASSWORD_CHANGED_NOTIFICATION: 'Password changed',
      AUTHSVC_MAILER_TEMPLATES_IDENTITY_LINKED_NOTIFICATION: 'https://cdn.example.com/linked.html',
    });
    expect(config.mailer.notifications).toMatchObject({ mfa_factor_unenrolled: true, mfa_factor_enrolled: false });
    expect(config.mailer.subjects.password_changed_notification).toBe('Password changed');
    expect(config.mailer.templates.identity_linked_notification).toBe('https://cdn.example.com/linked.html');
    expect(config.mailer.urlPaths.emailChange).toBe('/auth/v1/verify');
    expect(config.mailer.subjects.magicLink).toBe('Sign in');
    expect(config.mailer.templates.magicLink).toBe('https://cdn.example.com/magic.html');
    expect(config.sms.twilio.accountSid).toBe('AC1');
    expect(config.sms.vonage.apiSecret).toBe('vs');
    expect(config.sms.testOtpValidUntil).toBe('2030-01-01T00:00:00Z');
    expect(errors({ GOTRUE_SMS_TEST_OTP_VALID_UNTIL: 'tomorrow' })).toHaveLength(1);
  });
});

describe('secrets stay out of error messages', () => {
  it('a malformed DATABASE_URL is reported without its credentials', () => {
    const result = parseConfig({ DATABASE_URL: 'mysql://admin:hunter2secret@db.example/app' }, { local: true });
    expect(result.ok).toBe(false);
    const text = result.ok ? '' : result.errors.join('\n');
    expect(text).toContain('DATABASE_URL');
    expect(text).toContain('mysql://…');
    expect(text).not.toContain('hunter2secret');
  });
});
