// Value syntax, as GoTrue reads each kind of setting. Parsers throw; the field wrappers
// (setting.ts) turn a throw into a zod issue.
import { parseDurationSeconds } from './duration.ts';
import { readPkcs1RsaKey } from './pkcs1.ts';
import type { SendLimit } from './kinds.ts';

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

export function parseBool(raw: string): boolean {
  const v = raw.trim();
  if (GO_TRUE.has(v)) return true;
  if (GO_FALSE.has(v)) return false;
  throw new Error(`expected a boolean (true/false, 1/0, t/f), got "${raw}"`);
}

export const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (raw: string): number => {
    const v = raw.trim();
    const n = Number(v);
    if (!/^[+-]?\d+$/.test(v) || n < min || n > max) {
      throw new Error(
        `expected an integer${max === Number.MAX_SAFE_INTEGER ? ` >= ${min}` : ` from ${min} to ${max}`}, got "${raw}"`,
      );
    }
    return n;
  };

export function nonNegativeNumber(raw: string): number {
  const v = raw.trim();
  if (!/^\d+(?:\.\d+)?$/.test(v)) throw new Error(`expected a non-negative number, got "${raw}"`);
  return Number(v);
}

export function seconds(raw: string): number {
  let n: number;
  try {
    n = parseDurationSeconds(raw.trim());
  } catch {
    n = Number.NaN;
  }
  if (!Number.isFinite(n) || n < 0) throw new Error(`expected a number of seconds, got "${raw}"`);
  return n;
}

export function parseList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS: EIP-155 chain ids (positive decimal integers), canonical form. */
export function parseChainIds(raw: string): string[] {
  return parseList(raw).map((entry) => {
    if (!/^\+?\d+$/.test(entry) || BigInt(entry) === 0n)
      throw new Error(`"${entry}" is not a chain id (a positive integer)`);
    return BigInt(entry).toString();
  });
}

/**
 * CUSTOM_OAUTH_TRUSTED_HOSTS: `host:port` pairs (IPv6 in brackets), lower-cased. The port is
 * required so that trusting a test issuer on one port trusts nothing else on that machine.
 */
export function parseTrustedHosts(raw: string): string[] {
  return parseList(raw).map((entry) => {
    const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/i.exec(entry);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) throw new Error(`"${entry}" is not host:port`);
    return `${m[1]!.toLowerCase()}:${port}`;
  });
}

export const oneOf =
  <const T extends string>(values: readonly T[], normalise: (v: string) => string = (v) => v) =>
  (raw: string): T => {
    const v = normalise(raw.trim());
    const found = values.find((allowed) => allowed === v);
    if (found === undefined) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
    return found;
  };

export function parseUrl(raw: string): string {
  try {
    new URL(raw);
  } catch {
    throw new Error(`expected an absolute URL, got "${raw}"`);
  }
  return raw;
}

export function sqlIdentifier(raw: string): string {
  // Interpolated into SQL as a schema name, so anything beyond a plain identifier is refused.
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(raw)) throw new Error(`expected a plain SQL identifier, got "${raw}"`);
  return raw;
}

type DbTarget = { kind: 'postgres' | 'pglite' | 'memory'; url: string; dataDir?: string };
export const DEFAULT_DATA_DIR = './.authsvc';

export function parseDatabaseUrl(raw: string): DbTarget {
  const url = raw.trim();
  const scheme = url.slice(0, url.indexOf('://') + 3).toLowerCase();
  if (scheme === 'postgres://' || scheme === 'postgresql://') return { kind: 'postgres', url };
  if (scheme === 'memory://') return { kind: 'memory', url };
  if (scheme === 'pglite://' && url.length > scheme.length)
    return { kind: 'pglite', url, dataDir: url.slice(scheme.length) };
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

export function parseSendLimit(raw: string): SendLimit {
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

export function parseTestOtp(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of parseList(raw)) {
    const at = item.indexOf(':');
    const phone = item.slice(0, at).replace(/[+\s]/g, '');
    const otp = item.slice(at + 1).trim();
    if (at < 0 || phone === '' || otp === '')
      throw new Error(`expected phone:otp pairs separated by commas, got "${item}"`);
    out[phone] = otp;
  }
  return out;
}

export function parseRfc3339(raw: string): string {
  const v = raw.trim();
  if (
    !/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/.test(v) ||
    Number.isNaN(Date.parse(v))
  ) {
    throw new Error(`expected an RFC 3339 time (e.g. 2030-01-01T00:00:00Z), got "${raw}"`);
  }
  return v;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseJwtKeys(raw: string): JsonWebKey[] {
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
      throw new Error(
        `key ${i}: algorithm ${alg ?? '(unknown)'} is not supported (use RS256, RS512, ES256, ES512, EdDSA or HS256)`,
      );
    }
    return { ...(k as JsonWebKey), alg };
  });
  const signing = keys.filter((k) => k.key_ops?.includes('sign'));
  if (signing.length === 0) throw new Error('no signing key detected');
  if (signing.length > 1) throw new Error('multiple signing keys detected');
  const [signer] = signing;
  if (signer && signer.d === undefined && signer.k === undefined)
    throw new Error('the signing key has no private part');
  return keys;
}

const SUPPORTED_JWT_ALGS = new Set(['RS256', 'RS512', 'ES256', 'ES512', 'EdDSA', 'HS256']);

export function algorithmOf(key: JsonWebKey): string | undefined {
  if (key.alg) return key.alg;
  switch (key.kty) {
    case 'RSA':
      return 'RS256';
    case 'EC':
      return key.crv === 'P-384' ? 'ES384' : key.crv === 'P-521' ? 'ES512' : 'ES256';
    case 'OKP':
      return 'EdDSA';
    case 'oct':
      return 'HS256';
    default:
      return undefined;
  }
}

export const logLevel = oneOf(['panic', 'fatal', 'error', 'warn', 'info', 'debug'], (v) => {
  // logrus, which GoTrue uses, is case-insensitive and also spells it "warning".
  const lower = v.toLowerCase();
  return lower === 'warning' ? 'warn' : lower;
});

// A value below the floor or outside the range is replaced, not refused, as GoTrue does.
export const atLeast = (floor: number) => (raw: string) => Math.max(floor, integer(Number.MIN_SAFE_INTEGER)(raw));
export const otpLength = (raw: string) => {
  const n = integer(Number.MIN_SAFE_INTEGER)(raw);
  return n < 6 || n > 10 ? 6 : n;
};
// GoTrue cannot tell 0 from unset for these, so 0 means "the default" there and here.
export const secondsOr = (fallback: number) => (raw: string) => seconds(raw) || fallback;
// GoTrue reads these as integers and they end up in integer JWT claims and timestamps.
export const wholeSecondsOr = (fallback: number) => (raw: string) => {
  const n = secondsOr(fallback)(raw);
  if (!Number.isInteger(n)) throw new Error(`expected a whole number of seconds, got "${raw}"`);
  return n;
};

/** A SECURITY_DB_ENCRYPTION key: 256 bits in unpadded base64url (Go's RawURLEncoding), i.e. 43 characters. */
export const isDbEncryptionKey = (key: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(key);

/**
 * SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `id:key,id:key` (envconfig's map syntax), every key
 * checked as GoTrue's Validate does. Messages name key ids, never keys.
 */
export function parseDecryptionKeys(raw: string): Record<string, string> {
  const keys: Record<string, string> = Object.create(null);
  if (raw === '') return keys;
  raw.split(',').forEach((pair, i) => {
    const parts = pair.split(':');
    if (parts.length !== 2) throw new Error(`item ${i + 1} is not id:key`);
    const [id, key] = parts as [string, string];
    if (!isDbEncryptionKey(key))
      throw new Error(`decryption key with ID "${id}" must be 256 bits of unpadded base64url`);
    keys[id] = key;
  });
  return keys;
}

const PG_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,62}$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', 'host.docker.internal']);

/**
 * HOOK_<KIND>_URI, checked as GoTrue's ValidateExtensibilityPoint: `pg-functions://<db>/<schema>/<function>`
 * with plain identifiers, `https://…`, or `http://` on a loopback host only.
 */
export function parseHookUri(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`expected a pg-functions:// or https:// URI, got "${raw}"`);
  }
  const scheme = u.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'pg-functions') {
    const parts = u.pathname.split('/');
    if (parts.length < 3) throw new Error('URI path does not contain enough parts');
    if (!PG_NAME.test(parts[1]!)) throw new Error(`invalid schema name: ${parts[1]}`);
    if (!PG_NAME.test(parts[2]!)) throw new Error(`invalid function name: ${parts[2]}`);
    return raw;
  }
  if (scheme === 'https') return raw;
  if (scheme === 'http') {
    if (LOOPBACK_HOSTS.has(u.hostname)) return raw;
    throw new Error('only localhost, 127.0.0.1, and ::1 are supported with http');
  }
  throw new Error('only postgres hooks and HTTPS functions are supported at the moment');
}

const SYMMETRIC_SECRET = /^v1,whsec_[A-Za-z0-9+/=]{32,88}/;
const ASYMMETRIC_SECRET = /^v1a,whpk_[A-Za-z0-9+/=]{44,}:whsk_[A-Za-z0-9+/=]{44,}$/;

/** HOOK_<KIND>_SECRETS: `|`-separated Standard Webhooks secrets (GoTrue's HTTPHookSecrets). Never echoed in errors. */
export function parseHookSecrets(raw: string): string[] {
  const secrets = raw.split('|').filter((s) => s !== '');
  if (secrets.some((s) => !SYMMETRIC_SECRET.test(s) && !ASYMMETRIC_SECRET.test(s))) {
    throw new Error('invalid secret format (expected v1,whsec_<base64>, several separated by |)');
  }
  return secrets;
}

/**
 * GoTrue's SAML_PRIVATE_KEY: standard base64 of a PKCS#1 DER RSA key, e = 65537, at least 2048
 * bits. Kept as given (sso/keys.ts imports it); the errors never quote it.
 */
export function parseSamlPrivateKey(raw: string): string {
  const b64 = raw.trim();
  let der: Uint8Array;
  try {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error();
    der = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    throw new Error('is not standard base64');
  }
  let facts;
  try {
    facts = readPkcs1RsaKey(der);
  } catch {
    throw new Error('is not a PKCS#1 DER RSA private key');
  }
  if (facts.publicExponent !== 65537) throw new Error('must have the public exponent 65537');
  if (facts.modulusBits < 2048) throw new Error('must be an RSA key of at least 2048 bits');
  return b64;
}
