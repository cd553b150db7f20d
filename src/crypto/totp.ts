// TOTP (RFC 6238 over RFC 4226 HOTP) as GoTrue's pquerna/otp uses it: HMAC-SHA-1, 6 digits,
// 30-second steps, one step of skew either way. Own code over @noble/hashes rather than a
// library because the verifier must say *which* step matched (the replay check stores it);
// see docs/decisions/totp.md.
import { hmac } from '@noble/hashes/hmac.js';
import { sha1 } from '@noble/hashes/legacy.js';
import { timingSafeEqual } from './encoding.ts';

export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
export const TOTP_SKEW = 1;

/** RFC 4226 §5.3: dynamic truncation of HMAC-SHA-1(key, counter), `digits` decimal digits. */
export function hotp(key: Uint8Array, counter: number, digits = TOTP_DIGITS): string {
  const msg = new Uint8Array(8);
  // Counters stay below 2^53: split into two 32-bit halves.
  const view = new DataView(msg.buffer);
  view.setUint32(0, Math.floor(counter / 2 ** 32));
  view.setUint32(4, counter >>> 0);
  const mac = hmac(sha1, key, msg);
  const offset = mac[mac.length - 1]! & 0x0f;
  const bin = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(bin % 10 ** digits).padStart(digits, '0');
}

export const totpStep = (at: Date): number => Math.floor(at.getTime() / 1000 / TOTP_PERIOD);

/**
 * The time step whose code `code` is, within ±TOTP_SKEW steps of `at`, or undefined. Every
 * candidate is computed and compared in constant time, so timing tells nothing about which matched.
 */
export function matchTotp(key: Uint8Array, code: string, at: Date): number | undefined {
  const now = totpStep(at);
  let matched: number | undefined;
  for (let step = now - TOTP_SKEW; step <= now + TOTP_SKEW; step++) {
    if (timingSafeEqual(hotp(key, step), code) && matched === undefined) matched = step;
  }
  return matched;
}

const B32_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Decodes a stored secret (case and `=` padding ignored); undefined when it is not base32. */
export function fromBase32(text: string): Uint8Array | undefined {
  const s = text.toUpperCase().replace(/=+$/, '');
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of s) {
    const v = B32_UPPER.indexOf(ch);
    if (v < 0) return undefined;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}
