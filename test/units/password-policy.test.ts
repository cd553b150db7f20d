import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.ts';
import {
  MAX_PASSWORD_BYTES,
  assertPasswordLength,
  assertPasswordStrength,
  checkPasswordStrength,
  generatePassword,
} from '../../src/crypto/password-policy.ts';

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const SETS_MESSAGE = `Password should contain at least one character of each: ${LOWER}, ${UPPER}, ${DIGITS}.`;

const thrown = (fn: () => void): ApiError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
};

describe('assertPasswordLength', () => {
  it('allows 72 bytes and refuses 73 with GoTrue’s 400', () => {
    expect(MAX_PASSWORD_BYTES).toBe(72);
    expect(() => assertPasswordLength('a'.repeat(72))).not.toThrow();
    const err = thrown(() => assertPasswordLength('a'.repeat(73)));
    expect(err.status).toBe(400);
    expect(err.errorCode).toBe('validation_failed');
    expect(err.message).toBe('Password cannot be longer than 72 characters');
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(() => assertPasswordLength('€'.repeat(24))).not.toThrow(); // 72 bytes
    expect(() => assertPasswordLength('€'.repeat(25))).toThrow(ApiError); // 25 chars, 75 bytes
    expect(() => assertPasswordLength('😀'.repeat(18))).not.toThrow(); // 72 bytes, 36 UTF-16 units
    expect(() => assertPasswordLength('😀'.repeat(18) + 'a')).toThrow(ApiError);
    expect(() => assertPasswordLength('é'.repeat(37))).toThrow(ApiError); // 37 chars, 74 bytes
  });
});

describe('checkPasswordStrength', () => {
  const policy = { minLength: 8, requiredCharacters: [LOWER, UPPER, DIGITS] };

  it('accepts a password meeting the policy', () => {
    expect(checkPasswordStrength('abcDEF12', policy)).toBeNull();
    expect(checkPasswordStrength('x', { minLength: 1, requiredCharacters: [] })).toBeNull();
  });

  it('reports length alone', () => {
    expect(checkPasswordStrength('aB1', policy)).toEqual({
      message: 'Password should be at least 8 characters.',
      reasons: ['length'],
    });
  });

  it('reports missing character sets alone, listing every set', () => {
    expect(checkPasswordStrength('abcdefgh', policy)).toEqual({ message: SETS_MESSAGE, reasons: ['characters'] });
  });

  it('reports both, in GoTrue’s order, joined by one space', () => {
    expect(checkPasswordStrength('abc', policy)).toEqual({
      message: `Password should be at least 8 characters. ${SETS_MESSAGE}`,
      reasons: ['length', 'characters'],
    });
  });

  it('counts length in UTF-8 bytes', () => {
    const six = { minLength: 6, requiredCharacters: [] };
    expect(checkPasswordStrength('ééé', six)).toBeNull(); // 3 characters, 6 bytes
    expect(checkPasswordStrength('éé', six)?.reasons).toEqual(['length']);
  });

  it('matches non-ASCII and astral characters in sets', () => {
    const policy2 = { minLength: 1, requiredCharacters: ['é😀', ':'] };
    expect(checkPasswordStrength('x😀:', policy2)).toBeNull();
    expect(checkPasswordStrength('xé:', policy2)).toBeNull();
    expect(checkPasswordStrength('x\uD83D:', policy2)?.reasons).toEqual(['characters']); // half an emoji
    expect(checkPasswordStrength('x😀', policy2)).toEqual({
      message: 'Password should contain at least one character of each: é😀, :.',
      reasons: ['characters'],
    });
  });
});

describe('assertPasswordStrength', () => {
  const policy = { minLength: 8, requiredCharacters: [LOWER, DIGITS] };

  it('throws 422 weak_password with the reasons', () => {
    const err = thrown(() => assertPasswordStrength('abc', policy));
    expect(err.status).toBe(422);
    expect(err.errorCode).toBe('weak_password');
    expect(err.message).toBe(
      `Password should be at least 8 characters. Password should contain at least one character of each: ${LOWER}, ${DIGITS}.`,
    );
    expect(err.extra).toEqual({ weak_password: { reasons: ['length', 'characters'] } });
  });

  it('checks the 72-byte limit first, as GoTrue does', () => {
    const err = thrown(() => assertPasswordStrength('A'.repeat(73), policy));
    expect(err.status).toBe(400);
    expect(err.errorCode).toBe('validation_failed');
  });

  it('passes a strong password', () => {
    expect(() => assertPasswordStrength('abcdefg1', policy)).not.toThrow();
  });
});

describe('generatePassword', () => {
  it('generates the requested length from the alphanumeric alphabet', () => {
    for (const length of [8, 33, 64]) {
      const pw = generatePassword(length);
      expect(pw).toHaveLength(length);
      expect(pw).toMatch(/^[A-Za-z0-9]+$/);
    }
  });

  it('includes a character of every required set, anywhere', () => {
    const sets = ['!@#', '€', '😀', UPPER];
    const positions = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const pw = generatePassword(33, sets);
      const chars = [...pw];
      expect(chars).toHaveLength(33);
      for (const set of sets)
        expect(
          chars.some((c) => [...set].includes(c)),
          `${set} in ${pw}`,
        ).toBe(true);
      positions.add(chars.indexOf('€'));
      expect(checkPasswordStrength(pw, { minLength: 6, requiredCharacters: sets })).toBeNull();
    }
    // The shuffle spreads required characters; without it '€' would always sit at index 1.
    expect(positions.size).toBeGreaterThan(10);
  });

  it('keeps every required set when there are more sets than length', () => {
    const pw = generatePassword(2, ['a', 'b', 'c', '']);
    expect([...pw].sort().join('')).toBe('abc');
  });

  it('does not repeat itself', () => {
    const seen = new Set(Array.from({ length: 100 }, () => generatePassword(16)));
    expect(seen.size).toBe(100);
  });

  it('uses every alphabet character (no modulo gaps)', () => {
    const seen = new Set(generatePassword(20000));
    expect(seen.size).toBe(62);
  });
});
