// Byte/text encodings on Uint8Array only (no Buffer: the core runs on Workers). base32 and hex
// are @scure/base's and @noble/hashes' (both dependencies already); base64url stays written out
// here because it is on every token check's path (measured, see below).
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { base32nopad } from '@scure/base';

/** Lower-case RFC 4648 base32 without padding (GoTrue's refresh-token alphabet). */
export function base32(bytes: Uint8Array): string {
  return base32nopad.encode(bytes).toLowerCase();
}

export const hex = (bytes: Uint8Array): string => bytesToHex(bytes);

export function base64url(bytes: Uint8Array): string {
  // fromCharCode over chunks (a byte string in a few calls, not one concatenation per byte): 4-7
  // -> 1.6 us for an access token's payload; chunked so a large input stays within argument limits.
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]);
  }
  return btoa(bin).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function fromBase64url(s: string): Uint8Array<ArrayBuffer> {
  const b64 = s.replaceAll('-', '+').replaceAll('_', '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  // An indexed loop: Uint8Array.from(bin, fn) walks the string with its iterator and calls fn per
  // character, which made this a twentieth of GET /user's CPU (three decodes per token check).
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export const utf8 = (s: string) => new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;

// SHA-256 and HMAC-SHA-256 of short inputs run synchronously in JS (@noble/hashes, about 2 and
// 7 µs): WebCrypto's promise and thread-pool hop cost more than the hash itself on every
// runtime, and on Node under load they were a fifth of a refresh's CPU time.

export function sha256Hex(s: string): string {
  return hex(sha256(utf8(s)));
}

export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  return hmac(sha256, key, message);
}

/** Constant-time comparison of two strings. */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = utf8(a);
  const y = utf8(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
