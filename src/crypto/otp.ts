// One-time codes and the values mailed with them.
// - The code (6 digits by default) is typed in with the address it went to; its hash,
//   sha224(email_or_phone + code) hex as GoTrue stores it, is compared under the per-code
//   attempt limit (accounts/code-attempts.ts).
// - The link token is what a link, `{{ .TokenHash }}` and generate_link's `hashed_token` carry:
//   256 random bits, stored as their SHA-256. GoTrue's link value is the code's hash itself, which
//   anyone who knows the address can compute from a guess of the code (review 2026-11-25, H1).
import { sha224 } from '@noble/hashes/sha2.js';
import { hex, sha256Hex, utf8 } from './encoding.ts';

/** Uniform random decimal code of `length` digits (rejection sampling: no modulo bias). */
export function generateOtp(length: number, randomBytes: (n: number) => Uint8Array): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 250 && out.length < length) out += String(b % 10);
    }
  }
  return out;
}

export function tokenHash(emailOrPhone: string, otp: string): string {
  return hex(sha224(utf8(emailOrPhone + otp)));
}

export interface LinkToken {
  /** What the link carries: 64 hex characters, `pkce_`-prefixed for a PKCE flow (GET /verify answers with `?code=`). */
  token: string;
  /** What one_time_tokens.link_hash stores. */
  hash: string;
}

export const LINK_TOKEN_BYTES = 32;

export function newLinkToken(randomBytes: (n: number) => Uint8Array, pkce: boolean): LinkToken {
  const token = `${pkce ? 'pkce_' : ''}${hex(randomBytes(LINK_TOKEN_BYTES))}`;
  return { token, hash: linkTokenHash(token) };
}

export function linkTokenHash(token: string): string {
  return sha256Hex(token);
}

const NEW_LINK = /^(pkce_)?[0-9a-f]{64}$/;
const LEGACY_LINK = /^(pkce_)?[0-9a-f]{56}$/;

/** The shape of a link value: one of ours, GoTrue's sha224 (code-derived), or neither. */
export function linkShape(value: string): 'random' | 'legacy' | 'other' {
  if (NEW_LINK.test(value)) return 'random';
  if (LEGACY_LINK.test(value)) return 'legacy';
  return 'other';
}
