// Access tokens: HS256 with JWT_SECRET by default, or the one signing key of JWT_KEYS
// (RS256/RS512/ES256/ES512/EdDSA). Verification is as strict as GoTrue's: only the
// configured algorithms, `kid` picks the key, `alg: none` never verifies.
import { SignJWT, decodeProtectedHeader, errors as joseErrors, importJWK, jwtVerify } from 'jose';
import type { CryptoKey, JWK, JWTPayload, JWTHeaderParameters } from 'jose';
import { ApiError } from '../core/errors.ts';
import { base64url, fromBase64url, hmacSha256, timingSafeEqual, utf8 } from './encoding.ts';

const ASYMMETRIC = new Set(['RS256', 'RS512', 'ES256', 'ES512', 'EdDSA']);
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const;

/** `raw`: an HS256 key's bytes, for the synchronous check of verifyHs256. */
interface VerifyKey {
  kid?: string;
  alg: string;
  key: CryptoKey | Uint8Array;
  raw?: Uint8Array;
}

export interface KeySet {
  /** `raw`: the HS256 secret's bytes, for the synchronous signer. */
  sign: { alg: string; kid?: string; key: CryptoKey | Uint8Array; raw?: Uint8Array };
  verify: VerifyKey[];
  /**
   * JWT_SECRET as an HS256 key (kid = JWT_KEY_ID). GoTrue checks every HS256 token without a
   * known kid against it, whatever JWT_KEYS holds: the anon and service_role keys of existing
   * projects are signed so.
   */
  secret?: VerifyKey;
  algorithms: string[];
  /** Public halves of the asymmetric keys, for /.well-known/jwks.json. */
  publicJwks: JWK[];
  /**
   * Derives refresh-token children (accounts/session.ts), taken from the signing key's secret: every
   * instance has it, the database does not, and whoever holds it can mint access tokens anyway.
   */
  refreshChildKey: Uint8Array;
}

const REFRESH_CHILD_LABEL = utf8('authsvc/refresh-token-child/v1');

export interface JwtKeyConfig {
  secret?: string;
  keyId?: string;
  keys?: JsonWebKey[];
  validMethods?: string[];
}

function publicHalf(jwk: JWK): JWK {
  const pub: Record<string, unknown> = { ...jwk };
  for (const m of PRIVATE_MEMBERS) delete pub[m];
  return { ...(pub as JWK), use: 'sig', key_ops: ['verify'] };
}

export async function loadKeySet(cfg: JwtKeyConfig): Promise<KeySet> {
  const verify: VerifyKey[] = [];
  const publicJwks: JWK[] = [];
  let sign: KeySet['sign'] | undefined;
  let signerSecret: Uint8Array | undefined;

  if (cfg.keys && cfg.keys.length > 0) {
    for (const raw of cfg.keys) {
      const jwk = raw as JWK;
      const isSigner = Array.isArray(jwk.key_ops) && jwk.key_ops.includes('sign');
      if (jwk.kty === 'oct') {
        const alg = jwk.alg ?? 'HS256';
        const key = await importJWK({ ...jwk, key_ops: undefined }, alg);
        verify.push({ kid: jwk.kid, alg, key, ...(alg === 'HS256' && key instanceof Uint8Array ? { raw: key } : {}) });
        if (isSigner) {
          sign = { alg, kid: jwk.kid, key, ...(key instanceof Uint8Array ? { raw: key } : {}) };
          signerSecret = utf8(jwk.k ?? '');
        }
        continue;
      }
      const alg = jwk.alg ?? '';
      if (!ASYMMETRIC.has(alg)) throw new Error(`JWT_KEYS: unsupported key algorithm "${alg}"`);
      const pub = publicHalf(jwk);
      const { use: _u, key_ops: _k, ...importable } = pub;
      verify.push({ kid: jwk.kid, alg, key: (await importJWK(importable, alg)) as CryptoKey });
      publicJwks.push(pub);
      if (isSigner) {
        const { key_ops: _ko, use: _us, ...priv } = jwk;
        sign = { alg, kid: jwk.kid, key: (await importJWK(priv, alg)) as CryptoKey };
        signerSecret = utf8(JSON.stringify(PRIVATE_MEMBERS.map((m) => jwk[m] ?? null)));
      }
    }
  }
  let secret: VerifyKey | undefined;
  if (cfg.secret) {
    const raw = new TextEncoder().encode(cfg.secret) as Uint8Array<ArrayBuffer>;
    // The bytes, not a WebCrypto key: tokens are checked synchronously (verifyHs256) and jose
    // imports them itself on the rare refusal, so an HS256 server never starts WebCrypto (whose
    // first use costs Node about 5 MB of resident memory).
    secret = { kid: cfg.keyId || undefined, alg: 'HS256', key: raw, raw };
    if (!sign) {
      sign = { alg: 'HS256', kid: cfg.keyId || undefined, key: secret.key, raw };
      signerSecret = raw;
    }
  }
  if (!sign) throw new Error('JWT: no signing key detected (set JWT_SECRET or a JWT_KEYS entry with key_ops ["sign"])');
  // GoTrue derives the accepted algorithms from JWT_KEYS alone (HS256 with only JWT_SECRET): with
  // only asymmetric keys, HS256 tokens are refused unless JWT_VALID_METHODS lists it.
  const algorithms =
    cfg.validMethods && cfg.validMethods.length > 0
      ? cfg.validMethods
      : verify.length > 0
        ? [...new Set(verify.map((k) => k.alg))]
        : ['HS256'];
  const refreshChildKey = hmacSha256(signerSecret ?? new Uint8Array(), REFRESH_CHILD_LABEL);
  return { sign, verify, secret, algorithms, publicJwks, refreshChildKey };
}

export async function signJwt(keys: KeySet, claims: JWTPayload): Promise<string> {
  const header: JWTHeaderParameters = { alg: keys.sign.alg, typ: 'JWT' };
  if (keys.sign.kid) header.kid = keys.sign.kid;
  if (keys.sign.alg === 'HS256' && keys.sign.raw) return signHs256(header, claims, keys.sign.raw);
  return new SignJWT(claims).setProtectedHeader(header).sign(keys.sign.key);
}

/** The bytes jose's SignJWT produces for HS256, without its WebCrypto round trip (every token response signs one). */
export function signHs256(header: JWTHeaderParameters, claims: JWTPayload, secret: Uint8Array): string {
  const input = `${base64url(utf8(JSON.stringify(header)))}.${base64url(utf8(JSON.stringify(claims)))}`;
  return `${input}.${base64url(hmacSha256(secret, utf8(input)))}`;
}

/** The signing methods golang-jwt registers (GetSigningMethod); any other `alg` is "unavailable" there. */
const GO_JWT_METHODS = new Set([
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'none',
]);

export function badJwt(detail: string): ApiError {
  return new ApiError(403, 'bad_jwt', `invalid JWT: unable to parse or verify signature, ${detail}`);
}

/**
 * The keys a token may be checked against, as GoTrue's parseJWTClaims picks them: a `kid` of
 * JWT_KEYS picks that key (JWT_KEY_ID picks JWT_SECRET); otherwise an HS256 token is checked
 * against JWT_SECRET — and, for tokens this server signed with a kid-less oct key of JWT_KEYS,
 * against that key too.
 */
function candidateKeys(keys: KeySet, header: { alg?: string; kid?: string }): VerifyKey[] {
  const alg: unknown = header.alg;
  // golang-jwt v5's parser: a missing or unknown alg is unverifiable; a known one outside the accepted list fails as a signature.
  if (typeof alg !== 'string' || !alg) throw badJwt('token is unverifiable: signing method (alg) is unspecified');
  if (!GO_JWT_METHODS.has(alg)) throw badJwt('token is unverifiable: signing method (alg) is unavailable');
  if (!keys.algorithms.includes(alg)) throw badJwt(`token signature is invalid: signing method ${alg} is invalid`);
  if (header.kid) {
    const byKid = keys.verify.find((k) => k.kid === header.kid);
    if (byKid) {
      if (byKid.alg !== alg)
        throw badJwt('token is unverifiable: error while executing keyfunc: key is of invalid type');
      return [byKid];
    }
    if (keys.secret && header.kid === keys.secret.kid && alg === 'HS256') return [keys.secret];
  }
  if (alg === 'HS256') {
    const found = [...(keys.secret ? [keys.secret] : []), ...keys.verify.filter((k) => k.alg === 'HS256' && !k.kid)];
    if (found.length > 0) return found;
  }
  throw badJwt(
    `token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${header.kid ?? '<nil>'} for algorithm ${alg}`,
  );
}

const B64URL = /^[A-Za-z0-9_-]*$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The claims of an HS256 token whose signature under `secret` is right and whose claims jose's
 * jwtVerify would accept (a JSON object; iat, nbf, exp numbers when present; nbf not in the
 * future; exp in the future), checked synchronously (@noble/hashes). Undefined for anything
 * else, and jose then decides, with its exact error: this path only ever says yes where jose says
 * yes. jose's WebCrypto verify costs a promise and a thread-pool hop per request (about 60 µs of
 * the 230 µs a GET /user costs on Node: docs/decisions/hs256-verify.md).
 */
function verifyHs256(
  token: string,
  header: Record<string, unknown>,
  secret: Uint8Array,
  now: Date,
): JWTPayload | undefined {
  // Headers with members that change how the token is read (crit, b64) are jose's to judge.
  if ('crit' in header || 'b64' in header) return undefined;
  const dot1 = token.indexOf('.');
  const dot2 = token.lastIndexOf('.');
  if (dot1 <= 0 || dot2 === dot1 || token.indexOf('.', dot1 + 1) !== dot2) return undefined;
  const signingInput = token.slice(0, dot2);
  // Compared as text: a signature spelt otherwise (non-canonical base64url) goes to jose.
  if (!timingSafeEqual(base64url(hmacSha256(secret, utf8(signingInput))), token.slice(dot2 + 1))) return undefined;
  const body = token.slice(dot1 + 1, dot2);
  if (!B64URL.test(body)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(strictUtf8.decode(fromBase64url(body)));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null || Object.getPrototypeOf(claims) !== Object.prototype)
    return undefined;
  const c = claims as JWTPayload;
  const nowS = Math.floor(now.getTime() / 1000);
  for (const k of ['iat', 'nbf', 'exp'] as const) if (c[k] !== undefined && typeof c[k] !== 'number') return undefined;
  if (c.nbf !== undefined && c.nbf > nowS) return undefined;
  if (c.exp !== undefined && c.exp <= nowS) return undefined;
  return c;
}

/** Verifies signature, algorithm and expiry; returns the claims. Throws 403 bad_jwt. */
export async function verifyJwt(keys: KeySet, token: string, now?: Date): Promise<JWTPayload> {
  let header: { alg?: string; kid?: string };
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw badJwt('token is malformed: could not base64 decode header');
  }
  const candidates = candidateKeys(keys, header);
  if (header.alg === 'HS256') {
    for (const key of candidates) {
      const payload = key.raw ? verifyHs256(token, header, key.raw, now ?? new Date()) : undefined;
      if (payload) return payload;
    }
  }
  let first: unknown;
  for (const key of candidates) {
    try {
      const { payload } = await jwtVerify(token, key.key, {
        algorithms: [key.alg],
        ...(now ? { currentDate: now } : {}),
      });
      return payload;
    } catch (err) {
      first ??= err;
      // Only a signature mismatch is worth the next key; an expired token is expired under any.
      if (!(err instanceof joseErrors.JWSSignatureVerificationFailed)) break;
    }
  }
  if (first instanceof joseErrors.JWTExpired) throw badJwt('token has invalid claims: token is expired');
  if (first instanceof joseErrors.JWSSignatureVerificationFailed)
    throw badJwt('token signature is invalid: signature is invalid');
  if (first instanceof joseErrors.JWTClaimValidationFailed) throw badJwt(`token has invalid claims: ${first.message}`);
  throw badJwt('token is malformed');
}
