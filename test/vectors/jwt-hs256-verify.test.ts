// verifyJwt checks HS256 tokens synchronously and leaves every other verdict to jose: for each
// crafted token, its answer (claims, or the bad_jwt message) is the one jose's jwtVerify leads to.
import { describe, expect, test } from 'vitest';
import { CompactSign, errors as joseErrors, jwtVerify } from 'jose';
import { loadKeySet, verifyJwt } from '../../src/crypto/jwt.ts';
import { base64url, hmacSha256, utf8 } from '../../src/crypto/encoding.ts';
import { TEST_JWT_SECRET } from '../helpers/app.ts';

const secret = utf8(TEST_JWT_SECRET);
const now = new Date('2026-11-25T12:00:00Z');
const nowS = Math.floor(now.getTime() / 1000);
const enc = (v: unknown) => base64url(utf8(typeof v === 'string' ? v : JSON.stringify(v)));

/** A token whose signature over its exact text is right: header and payload spelt as given. */
function signed(header: unknown, payload: unknown): string {
  const input = `${enc(header)}.${enc(payload)}`;
  return `${input}.${base64url(hmacSha256(secret, utf8(input)))}`;
}

/** What jose alone says, mapped as verifyJwt maps its errors. */
async function joseVerdict(token: string): Promise<unknown> {
  try {
    return (await jwtVerify(token, secret, { algorithms: ['HS256'], currentDate: now })).payload;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) return 'token has invalid claims: token is expired';
    if (err instanceof joseErrors.JWSSignatureVerificationFailed)
      return 'token signature is invalid: signature is invalid';
    if (err instanceof joseErrors.JWTClaimValidationFailed) return `token has invalid claims: ${err.message}`;
    return 'token is malformed';
  }
}

async function verdict(token: string): Promise<unknown> {
  const keys = await loadKeySet({ secret: TEST_JWT_SECRET });
  try {
    return await verifyJwt(keys, token, now);
  } catch (err) {
    return (err as Error).message.replace(/^invalid JWT: unable to parse or verify signature, /, '');
  }
}

const H = { alg: 'HS256', typ: 'JWT' };
const good = { sub: 'u1', role: 'authenticated', iat: nowS - 10, exp: nowS + 3600 };

describe('HS256 verification agrees with jose', () => {
  const cases: [string, () => Promise<string> | string][] = [
    ['a valid token', () => signed(H, good)],
    ['no exp, iat or nbf', () => signed(H, { sub: 'u1' })],
    ['exp now (expired: exp <= now)', () => signed(H, { ...good, exp: nowS })],
    ['expired an hour ago', () => signed(H, { ...good, exp: nowS - 3600 })],
    ['nbf in the future', () => signed(H, { ...good, nbf: nowS + 60 })],
    ['nbf now', () => signed(H, { ...good, nbf: nowS })],
    ['exp as a string', () => signed(H, { ...good, exp: String(nowS + 3600) })],
    ['iat as a string', () => signed(H, { ...good, iat: 'yesterday' })],
    ['payload an array', () => signed(H, [good])],
    ['payload a number', () => signed(H, 42)],
    ['payload not JSON', () => signed(H, '{"sub":')],
    [
      'payload not UTF-8',
      () => {
        const input = `${enc(H)}.${base64url(new Uint8Array([0x7b, 0xff, 0x7d]))}`;
        return `${input}.${base64url(hmacSha256(secret, utf8(input)))}`;
      },
    ],
    ['crit header', () => signed({ ...H, crit: ['exp'] }, good)],
    ['b64 false', () => signed({ ...H, b64: false, crit: ['b64'] }, good)],
    [
      'a wrong signature',
      () => {
        const t = signed(H, good);
        return `${t.slice(0, -2)}${t.endsWith('AA') ? 'BB' : 'AA'}`;
      },
    ],
    [
      'a signature under another secret',
      async () =>
        new CompactSign(utf8(JSON.stringify(good)))
          .setProtectedHeader(H)
          .sign(utf8('another-secret-with-at-least-32-characters')),
    ],
    ['an empty signature', () => `${signed(H, good).split('.').slice(0, 2).join('.')}.`],
    [
      'padding in the payload',
      () => {
        const [h, p, s] = signed(H, good).split('.');
        return `${h}.${p}==.${s}`;
      },
    ],
  ];
  for (const [name, make] of cases) {
    test(name, async () => {
      const token = await make();
      expect(await verdict(token)).toEqual(await joseVerdict(token));
    });
  }

  test('a valid token is accepted and an expired one refused (the verdicts above are not all alike)', async () => {
    expect(await verdict(signed(H, good))).toEqual(good);
    expect(await verdict(signed(H, { ...good, exp: nowS }))).toBe('token has invalid claims: token is expired');
  });
});
