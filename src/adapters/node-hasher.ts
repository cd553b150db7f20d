// Native password hashing for Node: every KDF runs on libuv's thread pool, so a login burst costs
// pool threads, not event-loop time. Parsing, limits and comparison come from src/crypto/password.ts,
// so answers match the portable hasher exactly.
import { createCipheriv, scrypt } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';
import type { Algorithm, Version as Argon2Version } from '@node-rs/argon2';
import {
  createHasherFromPrimitives,
  scryptMemoryBytes,
  type FirebaseScryptHash,
  type HashPrimitives,
  type PasswordHasher,
} from '../crypto/password.ts';

const FIREBASE_KEY_BYTES = 32;
// The package declares these as `const enum`s but exports empty objects at run time, so the
// values are spelled out (Argon2i = 1, Argon2id = 2, V0x13 = 1 in its index.d.ts).
const ARGON2I: Algorithm = 1;
const ARGON2ID: Algorithm = 2;
const ARGON2_V19: Argon2Version = 1;

function scryptAsync(password: Uint8Array, salt: Uint8Array, params: FirebaseScryptHash): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password,
      salt,
      FIREBASE_KEY_BYTES,
      // Node's default maxmem is 32 MiB; the parser already capped the parameters at 1 GiB.
      { N: params.N, r: params.r, p: params.p, maxmem: scryptMemoryBytes(params.N, params.r, params.p) + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

export const nodePrimitives: HashPrimitives = {
  // The binding writes $2b$; GoTrue writes $2a$. For passwords of at most 72 bytes (all we accept)
  // the two are the same algorithm, so only the label changes.
  bcryptHash: async (password, cost) => (await bcryptHash(password, cost)).replace(/^\$2b\$/, '$2a$'),
  bcryptVerify: (password, encoded) => bcryptVerify(password, encoded),
  async argon2(password, params) {
    // hashRaw with the parsed parameters (not `verify` on the string) so the Rust PHC parser's own
    // rules cannot make Node accept or refuse a hash differently from the portable hasher.
    // Loaded on the first argon2 hash only (imported accounts): most deployments never pay for it.
    const { hashRaw: argon2HashRaw } = await import('@node-rs/argon2');
    const raw = await argon2HashRaw(password, {
      algorithm: params.algorithm === 'argon2id' ? ARGON2ID : ARGON2I,
      version: ARGON2_V19,
      memoryCost: params.memory,
      timeCost: params.iterations,
      parallelism: params.parallelism,
      outputLen: params.hash.length,
      salt: params.salt,
    });
    return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  },
  async firebaseScrypt(password, params) {
    const salt = new Uint8Array(params.salt.length + params.saltSeparator.length);
    salt.set(params.salt, 0);
    salt.set(params.saltSeparator, params.salt.length);
    const key = await scryptAsync(password, salt, params);
    // Zero IV: Firebase's scheme uses the key once, as a keystream over the signer key.
    const cipher = createCipheriv('aes-256-ctr', key, new Uint8Array(16));
    const out = Buffer.concat([cipher.update(params.signerKey), cipher.final()]);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  },
};

/** At most `max` tasks at once; the rest wait in order (a released slot passes straight to the next). */
export function concurrencyLimit(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/**
 * Password KDFs share libuv's thread pool with WebCrypto (JWT signing and verification, hashes).
 * Capping them at one per core keeps threads free, so a login burst does not stall every
 * token check behind 60 ms bcrypt jobs.
 */
export function createNodeHasher(opts: { cost?: number; maxConcurrent?: number } = {}): PasswordHasher {
  const limit = concurrencyLimit(opts.maxConcurrent ?? Math.max(1, availableParallelism()));
  const p = nodePrimitives;
  return createHasherFromPrimitives(
    {
      bcryptHash: (password, cost) => limit(() => p.bcryptHash(password, cost)),
      bcryptVerify: (password, encoded) => limit(() => p.bcryptVerify(password, encoded)),
      argon2: (password, params) => limit(() => p.argon2(password, params)),
      firebaseScrypt: (password, params) => limit(() => p.firebaseScrypt(password, params)),
    },
    opts.cost,
  );
}
