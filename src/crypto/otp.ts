// One-time codes and their hashes: sha224(email_or_phone + otp) hex, as GoTrue stores them.
import { sha224 } from '@noble/hashes/sha2.js';
import { hex, utf8 } from './encoding.ts';

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
