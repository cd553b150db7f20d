// Password hashing and verification, wire-compatible with GoTrue (internal/crypto/password.go):
// new hashes are bcrypt `$2a$` cost 10; stored bcrypt, argon2i/argon2id (PHC) and Firebase scrypt
// hashes verify. Runtime-neutral: WebCrypto and @noble/hashes only. Node swaps the primitives for
// native ones (src/adapters/node-hasher.ts) through `createHasherFromPrimitives`, so the parsing,
// limits and comparison rules below are shared and both hashers answer identically.
import { compare as bcryptjsCompare, genSalt as bcryptjsGenSalt, hash as bcryptjsHash } from 'bcryptjs';
import { argon2iAsync, argon2idAsync } from '@noble/hashes/argon2.js';
import { scryptAsync } from '@noble/hashes/scrypt.js';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, encoded: string): Promise<boolean>;
}

export const DEFAULT_BCRYPT_COST = 10;

export interface BcryptHash {
  version: '2a' | '2b' | '2y';
  cost: number;
}

export interface Argon2Hash {
  algorithm: 'argon2i' | 'argon2id';
  version: 19;
  /** KiB (`m=`). */
  memory: number;
  /** Passes (`t=`). */
  iterations: number;
  /** Lanes (`p=`). */
  parallelism: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

export interface FirebaseScryptHash {
  /** log2 of scrypt's N (Firebase's "mem cost"). */
  memoryPower: number;
  /** scrypt N = 2^memoryPower. */
  N: number;
  /** scrypt r (Firebase's "rounds"). */
  r: number;
  p: number;
  saltSeparator: Uint8Array;
  signerKey: Uint8Array;
  salt: Uint8Array;
  hash: Uint8Array;
}

// GoTrue's argon2 limits; they bound the work an imported hash can make a login do.
export const ARGON2_MAX_MEMORY_KIB = 1024 * 1024;
export const ARGON2_MAX_ITERATIONS = 20;
export const ARGON2_MAX_PARALLELISM = 16;
// GoTrue sets no scrypt limit (a huge n panics there); we apply argon2's 1 GiB budget instead.
export const SCRYPT_MAX_MEMORY_BYTES = 1024 * 1024 * 1024;
const FIREBASE_KEY_BYTES = 32; // AES-256

// Only the three prefixes GoTrue documents; the salt's last character must be canonical
// (its low 4 bits unused) because bcryptjs compares re-encoded salts while Go compares only the
// digest, and requiring canonical salts makes every implementation agree.
const BCRYPT_RE = /^\$(2[aby])\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{21}[.Oeu][./A-Za-z0-9]{31}$/;
// Same shape as GoTrue's regexps (argon2d/v=16/keyid/data are matched, then refused, as there).
const ARGON2_RE =
  /^\$(argon2(?:d|i|id))\$v=(16|19)\$m=([0-9]+),t=([0-9]+),p=([0-9]+)(?:,keyid=([^,$]+))?(?:,data=([^$]+))?\$([^$]*)\$(.*)$/;
const FBSCRYPT_RE =
  /^\$fbscrypt\$v=([0-9]+),n=([0-9]+),r=([0-9]+),p=([0-9]+)(?:,ss=([^,]+))?(?:,sk=([^$]+))?\$([^$]+)\$(.+)$/;

export function parseBcryptHash(encoded: string): BcryptHash | null {
  const m = BCRYPT_RE.exec(encoded);
  if (!m) return null;
  return { version: m[1] as BcryptHash['version'], cost: Number(m[2]) };
}

export function parseArgon2Hash(encoded: string): Argon2Hash | null {
  const m = ARGON2_RE.exec(encoded);
  if (!m) return null;
  const [, alg, v, ms, ts, ps, keyid, data, saltB64, hashB64] = m;
  if (alg !== 'argon2i' && alg !== 'argon2id') return null;
  if (v !== '19' || keyid !== undefined || data !== undefined) return null;
  const memory = parseUint(ms, 0xffffffff);
  const iterations = parseUint(ts, 0xffffffff);
  const parallelism = parseUint(ps, 0xff);
  if (memory === null || iterations === null || parallelism === null) return null;
  if (memory > ARGON2_MAX_MEMORY_KIB || iterations > ARGON2_MAX_ITERATIONS || parallelism > ARGON2_MAX_PARALLELISM) {
    return null;
  }
  // Go panics on t=0/p=0 and silently raises m below 8p; RFC 9106 forbids all three, and both
  // argon2 backends refuse them, so they are malformed here.
  if (iterations < 1 || parallelism < 1 || memory < 8 * parallelism) return null;
  const salt = decodeBase64(saltB64 ?? '', false);
  const hash = decodeBase64(hashB64 ?? '', false);
  // Go accepts 1-byte salts and digests; noble and the Rust argon2 crate need salt >= 8 and
  // digest >= 4 bytes (RFC 9106's minimum tag). Refusing them keeps import honest.
  if (!salt || !hash || salt.length < 8 || hash.length < 4) return null;
  return { algorithm: alg, version: 19, memory, iterations, parallelism, salt, hash };
}

export function parseFirebaseScryptHash(encoded: string): FirebaseScryptHash | null {
  const m = FBSCRYPT_RE.exec(encoded);
  if (!m) return null;
  const [, v, ns, rs, ps, ssB64, skB64, saltB64, hashB64] = m;
  if (v !== '1') return null;
  const memoryPower = parseUint(ns, 0xffffffff);
  const r = parseUint(rs, Number.MAX_SAFE_INTEGER);
  const p = parseUint(ps, 0xff);
  if (memoryPower === null || r === null || p === null) return null;
  if (memoryPower < 1 || r < 1 || p < 1) return null;
  // RFC 7914 requires N < 2^(128·r/8); OpenSSL and noble enforce it (Go does not).
  if (memoryPower >= 16 * r || memoryPower > 30) return null;
  const N = 2 ** memoryPower;
  if (scryptMemoryBytes(N, r, p) > SCRYPT_MAX_MEMORY_BYTES) return null;
  const saltSeparator = decodeBase64(ssB64 ?? '', true);
  const signerKey = decodeBase64(skB64 ?? '', true);
  const salt = decodeBase64(saltB64 ?? '', true);
  const hash = decodeBase64(hashB64 ?? '', true);
  if (!saltSeparator || !signerKey || !salt || !hash) return null;
  return { memoryPower, N, r, p, saltSeparator, signerKey, salt, hash };
}

/** Whether `encoded` is a hash this server can verify (admin import of `password_hash`). */
export function isSupportedPasswordHash(encoded: string): boolean {
  return (
    parseBcryptHash(encoded) !== null || parseArgon2Hash(encoded) !== null || parseFirebaseScryptHash(encoded) !== null
  );
}

/** scrypt's working memory: V (128·r·N) plus B (128·r·p), plus slack for the block buffers. */
export function scryptMemoryBytes(N: number, r: number, p: number): number {
  return 128 * r * (N + 2) + 128 * r * p;
}

/** Constant time for equal lengths; lengths are not secret (GoTrue's subtle.ConstantTimeCompare). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * Lone surrogates become U+FFFD, as Go's JSON decoder does, so every backend (bcryptjs encodes
 * them as CESU-8 otherwise) hashes the same bytes GoTrue would.
 */
export function toWellFormed(password: string): string {
  return new TextDecoder().decode(new TextEncoder().encode(password));
}

/** The KDFs a hasher needs; the portable set is below, Node's native set is in adapters. */
export interface HashPrimitives {
  bcryptHash(password: string, cost: number): Promise<string>;
  bcryptVerify(password: string, encoded: string): Promise<boolean>;
  /** Raw argon2 digest of `password` with the stored parameters, `hash.length` bytes long. */
  argon2(password: Uint8Array, params: Argon2Hash): Promise<Uint8Array>;
  /** scrypt(password, salt‖separator) as AES-256-CTR key (zero counter) encrypting the signer key. */
  firebaseScrypt(password: Uint8Array, params: FirebaseScryptHash): Promise<Uint8Array>;
}

/** Format dispatch and comparison shared by every hasher: identical semantics everywhere. */
export function createHasherFromPrimitives(kdf: HashPrimitives, cost = DEFAULT_BCRYPT_COST): PasswordHasher {
  return {
    hash: (password) => kdf.bcryptHash(toWellFormed(password), cost),
    async verify(password, encoded) {
      try {
        const pw = toWellFormed(password);
        if (parseBcryptHash(encoded)) return await kdf.bcryptVerify(pw, encoded);
        const bytes = new TextEncoder().encode(pw);
        const argon2 = parseArgon2Hash(encoded);
        if (argon2) return constantTimeEqual(await kdf.argon2(bytes, argon2), argon2.hash);
        const fb = parseFirebaseScryptHash(encoded);
        if (fb) return constantTimeEqual(await kdf.firebaseScrypt(bytes, fb), fb.hash);
        return false;
      } catch {
        // A stored hash a backend still refuses (or memory it cannot get) is a failed login, not
        // a 500: the caller cannot fix the stored value mid-request.
        return false;
      }
    },
  };
}

export const portablePrimitives: HashPrimitives = {
  // bcryptjs's async API computes in slices of up to 100 ms and yields between them, so requests
  // interleave; a cost-10 hash (~75 ms on Node) still occupies the isolate for one slice.
  async bcryptHash(password, cost) {
    // bcryptjs labels its salts $2b$; GoTrue writes $2a$. bcryptjs computes both identically
    // (the minor letter only decides the trailing NUL), so relabelling the salt is enough.
    const salt = (await bcryptjsGenSalt(cost)).replace(/^\$2b\$/, '$2a$');
    return bcryptjsHash(password, salt);
  },
  bcryptVerify: (password, encoded) => bcryptjsCompare(password, encoded),
  argon2(password, params) {
    const fn = params.algorithm === 'argon2id' ? argon2idAsync : argon2iAsync;
    return fn(password, params.salt, {
      t: params.iterations,
      m: params.memory,
      p: params.parallelism,
      version: 0x13,
      dkLen: params.hash.length,
      maxmem: params.memory * 1024,
    });
  },
  async firebaseScrypt(password, params) {
    const key = await scryptAsync(password, concatBytes(params.salt, params.saltSeparator), {
      N: params.N,
      r: params.r,
      p: params.p,
      dkLen: FIREBASE_KEY_BYTES,
      maxmem: scryptMemoryBytes(params.N, params.r, params.p) + 1024 * 1024,
    });
    const aesKey = await crypto.subtle.importKey('raw', key, 'AES-CTR', false, ['encrypt']);
    // length 128: the whole 16-byte block is the counter, as in Go's cipher.NewCTR.
    const out = await crypto.subtle.encrypt(
      { name: 'AES-CTR', counter: new Uint8Array(16), length: 128 },
      aesKey,
      new Uint8Array(params.signerKey), // copy: WebCrypto's types want an ArrayBuffer-backed view
    );
    return new Uint8Array(out);
  },
};

export function createPortableHasher(opts: { cost?: number } = {}): PasswordHasher {
  return createHasherFromPrimitives(portablePrimitives, opts.cost ?? DEFAULT_BCRYPT_COST);
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function parseUint(digits: string | undefined, max: number): number | null {
  // Go's ParseUint accepts leading zeros; the length cap keeps Number() exact.
  if (digits === undefined || !/^[0-9]{1,16}$/.test(digits)) return null;
  const n = Number(digits);
  return Number.isSafeInteger(n) && n <= max ? n : null;
}

const B64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_LOOKUP = new Map([...B64_ALPHABET].map((c, i) => [c, i] as const));

/**
 * Standard-alphabet base64, padded (Go's StdEncoding: fbscrypt) or unpadded (RawStdEncoding:
 * PHC). Like Go's non-strict decoders, unused trailing bits are ignored. Null when malformed.
 */
export function decodeBase64(s: string, padded: boolean): Uint8Array | null {
  let body = s;
  if (padded) {
    if (s.length % 4 !== 0) return null;
    body = s.endsWith('==') ? s.slice(0, -2) : s.endsWith('=') ? s.slice(0, -1) : s;
  }
  if (body.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((body.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (const ch of body) {
    const v = B64_LOOKUP.get(ch);
    if (v === undefined) return null;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}
