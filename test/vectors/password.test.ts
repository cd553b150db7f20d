import { describe, expect, it } from 'vitest';
import { hash as rsHash, verify as rsBcryptVerify } from '@node-rs/bcrypt';

// The native binding writes $2b$; $2a$/$2y$ are the same algorithm for passwords ≤ 72 bytes.
const rsBcryptHash = async (pw: string, o: { cost: number; version: '2a' | '2b' | '2y' }) =>
  (await rsHash(pw, o.cost)).replace(/^\$2b\$/, `$${o.version}$`);
import { hash as rsArgon2Hash } from '@node-rs/argon2';
import { compare as bcryptjsCompare } from 'bcryptjs';
import {
  createPortableHasher,
  isSupportedPasswordHash,
  parseArgon2Hash,
  parseBcryptHash,
  parseFirebaseScryptHash,
  type PasswordHasher,
} from '../../src/crypto/password.ts';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';

const portable = createPortableHasher();
const node = createNodeHasher();
const hashers: [string, PasswordHasher][] = [
  ['portable', portable],
  ['node', node],
];

// golang.org/x/crypto/bcrypt's TestBcryptingIsCorrect vector.
const GO_BCRYPT = '$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga'; // "allmine"
// PHP manual's password_verify example (PHP writes $2y$).
const PHP_BCRYPT = '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a'; // "rasmuslerdorf"
// GoTrue's internal/crypto/password_test.go vectors, password "test".
const GOTRUE_ARGON2 = [
  '$argon2i$v=19$m=16,t=2,p=1$bGJRWThNOHJJTVBSdHl2dQ$NfEnUOuUpb7F2fQkgFUG4g',
  '$argon2id$v=19$m=32,t=3,p=2$SFVpOWJ0eXhjRzVkdGN1RQ$RXnb8rh7LaDcn07xsssqqulZYXOM/EUCEFMVcAcyYVk',
];
// firebase/scrypt README: signer key, separator, rounds 8, mem cost 14; password "user1password".
const FIREBASE_DOC_SCRYPT =
  '$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==' +
  '$42xEC+ixf3L2lw==$lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==';
// GoTrue's TestScrypt vectors, password "mytestpassword".
const GOTRUE_FBSCRYPT_PREFIX =
  '$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=ou9tdYTGyYm8kuR6Dt0Bp0kDuAYoXrK16mbZO4yGwAn3oLspjnN0/c41v8xZnO1n14J3MjKj1b2g6AUCAlFwMw==$C0sHCg9ek77hsg==$';
const GOTRUE_FBSCRYPT = `${GOTRUE_FBSCRYPT_PREFIX}zKVTMvnWVw5BBOZNUdnsalx4c4c7y/w7IS5p6Ut2+CfEFFlz37J9huyQfov4iizN8dbjvEJlM5tQaJP84+hfTw==`;
const GOTRUE_FBSCRYPT_WRONG = `${GOTRUE_FBSCRYPT_PREFIX}ZGlmZmVyZW50aGFzaA==`;

const SALT16 = 'c29tZXNhbHRzb21lc2FsdA'; // "somesaltsomesalt", unpadded
const HASH32 = 'RXnb8rh7LaDcn07xsssqqulZYXOM/EUCEFMVcAcyYVk';
const argon2 = (params: string, alg = 'argon2id', salt = SALT16, hash = HASH32) => `$${alg}$${params}$${salt}$${hash}`;

describe('bcrypt', () => {
  it('hashes new passwords as $2a$ cost 10 on both hashers', async () => {
    for (const [, h] of hashers) {
      const encoded = await h.hash('correct horse');
      expect(encoded).toMatch(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
      expect(parseBcryptHash(encoded)).toEqual({ version: '2a', cost: 10 });
    }
    expect(await createPortableHasher({ cost: 4 }).hash('x')).toMatch(/^\$2a\$04\$/);
    expect(await createNodeHasher({ cost: 5 }).hash('x')).toMatch(/^\$2a\$05\$/);
  });

  it('portable hashes verify with the native implementation and vice versa', async () => {
    const password = 'pässwörd 😀 ünïcode';
    const fromPortable = await portable.hash(password);
    expect(await rsBcryptVerify(password, fromPortable)).toBe(true);
    expect(await node.verify(password, fromPortable)).toBe(true);
    expect(await node.verify('passwörd 😀 ünïcode', fromPortable)).toBe(false);

    const fromNode = await node.hash(password);
    expect(await bcryptjsCompare(password, fromNode)).toBe(true);
    expect(await portable.verify(password, fromNode)).toBe(true);
    expect(await portable.verify(`${password} `, fromNode)).toBe(false);
  });

  it('verifies fixed $2a$ and $2y$ vectors from Go and PHP', async () => {
    for (const [, h] of hashers) {
      expect(await h.verify('allmine', GO_BCRYPT)).toBe(true);
      expect(await h.verify('allmine!', GO_BCRYPT)).toBe(false);
      expect(await h.verify('rasmuslerdorf', PHP_BCRYPT)).toBe(true);
      expect(await h.verify('Rasmuslerdorf', PHP_BCRYPT)).toBe(false);
    }
  });

  it('verifies $2b$ and $2y$ hashes made by another implementation', async () => {
    for (const version of ['2b', '2y'] as const) {
      const encoded = await rsBcryptHash('s3cret', { cost: 4, version });
      expect(encoded.startsWith(`$${version}$04$`)).toBe(true);
      for (const [, h] of hashers) {
        expect(await h.verify('s3cret', encoded)).toBe(true);
        expect(await h.verify('s3cre', encoded)).toBe(false);
      }
    }
  });

  it('uses only the first 72 bytes on both hashers, as bcrypt (and GoTrue) does', async () => {
    const long = 'a'.repeat(100);
    const encoded = await rsBcryptHash(long, { cost: 4, version: '2a' as const });
    for (const [, h] of hashers) {
      expect(await h.verify('a'.repeat(72), encoded)).toBe(true);
      expect(await h.verify('a'.repeat(71), encoded)).toBe(false);
    }
  });

  it('hashes lone surrogates as U+FFFD on both hashers (as Go decodes JSON)', async () => {
    for (const [, maker] of hashers) {
      const encoded = await maker.hash('ab\uD800cd');
      for (const [, h] of hashers) {
        expect(await h.verify('ab\uFFFDcd', encoded)).toBe(true);
        expect(await h.verify('ab\uD800cd', encoded)).toBe(true);
      }
    }
  });

  it('refuses non-canonical or unknown bcrypt variants', () => {
    expect(parseBcryptHash(GO_BCRYPT)).toEqual({ version: '2a', cost: 10 });
    expect(parseBcryptHash(GO_BCRYPT.replace('$2a$', '$2x$'))).toBeNull();
    expect(parseBcryptHash(GO_BCRYPT.replace('$10$', '$03$'))).toBeNull();
    expect(parseBcryptHash(GO_BCRYPT.replace('$10$', '$32$'))).toBeNull();
    // 22nd salt character 'e' -> 'f' sets unused bits.
    expect(parseBcryptHash(GO_BCRYPT.replace('xFe', 'xFf'))).toBeNull();
    expect(parseBcryptHash(GO_BCRYPT.slice(0, -1))).toBeNull();
    expect(parseBcryptHash(`${GO_BCRYPT}a`)).toBeNull();
  });
});

describe('argon2', () => {
  it("verifies GoTrue's argon2i/argon2id vectors on both hashers", async () => {
    for (const [, h] of hashers) {
      for (const encoded of GOTRUE_ARGON2) {
        expect(await h.verify('test', encoded)).toBe(true);
        expect(await h.verify('test1', encoded)).toBe(false);
      }
    }
  });

  it('verifies PHC strings produced by @node-rs/argon2 on both hashers', async () => {
    const cases = [
      await rsArgon2Hash('hunter2'), // argon2id, m=19456 t=2 p=1: the package defaults
      await rsArgon2Hash('hunter2', { algorithm: 1, memoryCost: 4096, timeCost: 3, parallelism: 2 }), // argon2i
      await rsArgon2Hash('hunter2', { algorithm: 2, memoryCost: 1024, timeCost: 1, parallelism: 4, outputLen: 20 }),
    ];
    expect(cases[0]).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(cases[1]).toMatch(/^\$argon2i\$v=19\$m=4096,t=3,p=2\$/);
    for (const [, h] of hashers) {
      for (const encoded of cases) {
        expect(await h.verify('hunter2', encoded)).toBe(true);
        expect(await h.verify('hunter3', encoded)).toBe(false);
      }
    }
  });

  it('parses PHC fields and accepts parameters at the limits', () => {
    const parsed = parseArgon2Hash(GOTRUE_ARGON2[1] as string);
    expect(parsed).toMatchObject({ algorithm: 'argon2id', version: 19, memory: 32, iterations: 3, parallelism: 2 });
    expect(parsed?.salt).toEqual(new TextEncoder().encode('HUi9btyxcG5dtcuE'));
    expect(parsed?.hash.length).toBe(32);
    expect(isSupportedPasswordHash(argon2('v=19$m=1048576,t=20,p=16'))).toBe(true);
    expect(isSupportedPasswordHash(argon2('v=19$m=128,t=1,p=16', 'argon2i'))).toBe(true);
  });

  it('refuses parameters beyond GoTrue’s limits and unsupported variants', () => {
    const refused = [
      argon2('v=19$m=1048577,t=2,p=1'), // > 1 GiB
      argon2('v=19$m=19456,t=21,p=1'),
      argon2('v=19$m=19456,t=2,p=17'),
      argon2('v=19$m=19456,t=0,p=1'),
      argon2('v=19$m=19456,t=2,p=0'),
      argon2('v=19$m=15,t=2,p=2'), // m < 8p
      argon2('v=16$m=19456,t=2,p=1'),
      argon2('v=19$m=19456,t=2,p=1', 'argon2d'),
      argon2('v=19$m=19456,t=2,p=1,keyid=abc'),
      argon2('v=19$m=19456,t=2,p=1,data=abc'),
      argon2('v=19$t=2,m=19456,p=1'), // GoTrue requires m,t,p order
      argon2('m=19456,t=2,p=1'), // no version
      argon2('v=19$m=19456,t=2,p=1', 'argon2id', `${SALT16}==`), // padded base64
      argon2('v=19$m=19456,t=2,p=1', 'argon2id', 'c29tZ!hbHQ'),
      argon2('v=19$m=19456,t=2,p=1', 'argon2id', ''), // empty salt
      argon2('v=19$m=19456,t=2,p=1', 'argon2id', 'c2FsdA'), // 4-byte salt: below both backends' minimum
      argon2('v=19$m=19456,t=2,p=1', 'argon2id', SALT16, ''),
      argon2('v=19$m=19456,t=2,p=1', 'argon2id', SALT16, 'AAAA'), // 3-byte digest
      '$argon2id$test',
    ];
    for (const encoded of refused) {
      expect(parseArgon2Hash(encoded), encoded).toBeNull();
      expect(isSupportedPasswordHash(encoded), encoded).toBe(false);
    }
  });

  it('answers false without running a KDF for over-limit hashes', async () => {
    const huge = argon2('v=19$m=4194304,t=2,p=1'); // 4 GiB
    for (const [, h] of hashers) expect(await h.verify('test', huge)).toBe(false);
  });
});

describe('Firebase scrypt', () => {
  it("verifies the firebase/scrypt README vector and GoTrue's vectors on both hashers", async () => {
    for (const [, h] of hashers) {
      expect(await h.verify('user1password', FIREBASE_DOC_SCRYPT)).toBe(true);
      expect(await h.verify('user2password', FIREBASE_DOC_SCRYPT)).toBe(false);
      expect(await h.verify('mytestpassword', GOTRUE_FBSCRYPT)).toBe(true);
      expect(await h.verify('mytestpassword', GOTRUE_FBSCRYPT_WRONG)).toBe(false);
    }
  });

  it('parses the parameters', () => {
    const parsed = parseFirebaseScryptHash(FIREBASE_DOC_SCRYPT);
    expect(parsed).toMatchObject({ memoryPower: 14, N: 16384, r: 8, p: 1 });
    expect(parsed?.saltSeparator).toEqual(new Uint8Array([7]));
    expect(parsed?.signerKey.length).toBe(64);
    expect(parsed?.hash.length).toBe(64);
    expect(isSupportedPasswordHash(FIREBASE_DOC_SCRYPT)).toBe(true);
  });

  it('refuses malformed strings', () => {
    const good = FIREBASE_DOC_SCRYPT;
    const refused = [
      good.replace('v=1,', 'v=2,'),
      good.replace('n=14,', 'n=0,'),
      good.replace('r=8,', 'r=0,'),
      good.replace('p=1,', 'p=0,'),
      good.replace('p=1,', 'p=256,'),
      good.replace('n=14,', 'n=24,'), // 128·8·2^24 = 16 GiB
      good.replace('n=14,', 'n=16,').replace('r=8,', 'r=1,'), // RFC 7914: N must be < 2^(16r)
      good.replace('$42xEC+ixf3L2lw==$', '$42xEC+ixf3L2lw$'), // padding required
      good.replace('$42xEC+ixf3L2lw==$', '$42xEC-ixf3L2lw==$'), // URL-safe alphabet
      good.replace('ss=Bw==', 'ss=B!=='),
      good.replace(/\$[^$]+$/, '$'),
      '$fbscrypt$v=1,n=8,r=8,p=1$c2FsdA$aGFzaA', // unpadded salt
    ];
    for (const encoded of refused) {
      expect(parseFirebaseScryptHash(encoded), encoded).toBeNull();
      expect(isSupportedPasswordHash(encoded), encoded).toBe(false);
    }
  });
});

describe('malformed stored hashes', () => {
  const malformed = [
    '',
    'password',
    '$',
    '$2a$10$',
    '$2a$10$short',
    GO_BCRYPT.replace('$2a$', '$2x$'),
    '$1$saltsalt$hash',
    '$argon2id$',
    '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ',
    '$fbscrypt$',
    '$fbscrypt$v=1,n=14,r=8,p=1$c2FsdA==',
    '$scrypt$ln=14,r=8,p=1$c2FsdA$aGFzaA',
    '{"key_id":"k","alg":"aes-gcm-hkdf","data":"x","nonce":"y"}',
  ];

  it('verify answers false, never throws', async () => {
    for (const [, h] of hashers) {
      for (const encoded of malformed) expect(await h.verify('password', encoded), encoded).toBe(false);
    }
  });

  it('isSupportedPasswordHash answers false', () => {
    for (const encoded of malformed) expect(isSupportedPasswordHash(encoded), encoded).toBe(false);
    for (const encoded of [GO_BCRYPT, PHP_BCRYPT, ...GOTRUE_ARGON2, GOTRUE_FBSCRYPT]) {
      expect(isSupportedPasswordHash(encoded), encoded).toBe(true);
    }
  });
});

describe('event loop', () => {
  // A callback queued before the hashes must run before they all finish: a hasher that computed
  // on the calling thread would complete all four first.
  const startsBeforeHashesFinish = async (h: PasswordHasher) => {
    const order: string[] = [];
    const ticked = new Promise<void>((resolve) =>
      setImmediate(() => {
        order.push('tick');
        resolve();
      }),
    );
    const hashes = [1, 2, 3, 4].map((i) => h.hash(`password ${i}`).then(() => order.push('hash')));
    await Promise.all([ticked, ...hashes]);
    return order;
  };

  it('the node hasher runs bcrypt off the event loop', async () => {
    const order = await startsBeforeHashesFinish(node);
    expect(order).toHaveLength(5);
    expect(order[0]).toBe('tick');
  });

  it('the node hasher runs argon2 and scrypt off the event loop', async () => {
    const order: string[] = [];
    const ticked = new Promise<void>((resolve) => setImmediate(() => resolve(void order.push('tick'))));
    const work = [GOTRUE_FBSCRYPT, FIREBASE_DOC_SCRYPT, ...GOTRUE_ARGON2].map((e) =>
      node.verify('x', e).then(() => order.push('verify')),
    );
    await Promise.all([ticked, ...work]);
    expect(order[0]).toBe('tick');
  });

  it('the portable hasher yields between hashes', async () => {
    const order = await startsBeforeHashesFinish(portable);
    expect(order.indexOf('tick')).toBeLessThan(4);
  });
});
