// Password rules as GoTrue applies them (internal/api/password.go, internal/crypto/password.go).
import { type WeakPasswordReason, validationFailed, weakPasswordError } from '../core/errors.ts';

// bcrypt ignores everything past 72 bytes, so a longer password would silently be a shorter one.
export const MAX_PASSWORD_BYTES = 72;

export interface PasswordPolicy {
  /** Minimum length in UTF-8 bytes (GoTrue counts `len(password)`, i.e. bytes). */
  minLength: number;
  /** Each set must contribute at least one character. */
  requiredCharacters: string[];
}

export interface WeakPassword {
  message: string;
  reasons: WeakPasswordReason[];
}

const encoder = new TextEncoder();
const byteLength = (s: string): number => encoder.encode(s).length;

export function assertPasswordLength(password: string): void {
  if (byteLength(password) > MAX_PASSWORD_BYTES) {
    // GoTrue's wording says "characters" although it counts bytes; the wire text is kept.
    throw validationFailed(`Password cannot be longer than ${MAX_PASSWORD_BYTES} characters`);
  }
}

/** Null when the password satisfies the policy; otherwise GoTrue's message and reasons. */
export function checkPasswordStrength(password: string, policy: PasswordPolicy): WeakPassword | null {
  const messages: string[] = [];
  const reasons: WeakPassword['reasons'] = [];
  if (byteLength(password) < policy.minLength) {
    reasons.push('length');
    messages.push(`Password should be at least ${policy.minLength} characters.`);
  }
  // Code points, like Go's strings.ContainsAny, so a set may hold non-ASCII characters.
  const present = new Set(password);
  const missingSet = policy.requiredCharacters.some((set) => set !== '' && ![...set].some((ch) => present.has(ch)));
  if (missingSet) {
    reasons.push('characters');
    messages.push(`Password should contain at least one character of each: ${policy.requiredCharacters.join(', ')}.`);
  }
  return reasons.length > 0 ? { message: messages.join(' '), reasons } : null;
}

/**
 * The check GoTrue runs on signup, PUT /user, admin update and recovery: first the 72-byte
 * limit (400 validation_failed), then strength (422 weak_password). The password grant only
 * reports weakness, so it calls checkPasswordStrength instead.
 */
export function assertPasswordStrength(password: string, policy: PasswordPolicy): void {
  assertPasswordLength(password);
  const weak = checkPasswordStrength(password, policy);
  if (weak) throw weakPasswordError(weak.message, weak.reasons);
}

const FILL_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * A random password of `length` characters (more if there are more required sets than that):
 * one character from each non-empty required set, alphanumerics for the rest, then shuffled so
 * the required ones sit anywhere (GoTrue's crypto.GeneratePassword).
 */
export function generatePassword(length: number, requiredCharacters: string[] = []): string {
  const chars: string[] = [];
  for (const set of requiredCharacters) {
    const options = [...set];
    if (options.length > 0) chars.push(options[randomInt(options.length)] as string);
  }
  while (chars.length < length) chars.push(FILL_ALPHABET[randomInt(FILL_ALPHABET.length)] as string);
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j] as string, chars[i] as string];
  }
  return chars.join('');
}

/** Uniform integer in [0, n): rejection sampling avoids modulo bias. */
function randomInt(n: number): number {
  const limit = Math.floor(0x1_0000_0000 / n) * n;
  const buf = new Uint32Array(1);
  for (;;) {
    crypto.getRandomValues(buf);
    const v = buf[0] as number;
    if (v < limit) return v % n;
  }
}
