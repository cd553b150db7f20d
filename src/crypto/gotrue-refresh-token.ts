// GoTrue's refresh-token formats (internal/crypto/refresh_tokens.go, models/user.go
// FindUserWithRefreshToken), read so that sessions GoTrue issued keep refreshing in authsvc.
// - Legacy (SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION 0 and 1): exactly 12 characters, stored as
//   they are in refresh_tokens.token; GoTrue looks up any 12-character token that way.
// - Signed (version 2): unpadded base64url of
//     0x00 | session id (16 bytes) | counter (uvarint) | HMAC-SHA-256(session key, all before)[0:16]
//     | SHA-256(all before)[0:4]
//   The checksum only spares the database strings that cannot be tokens; the HMAC under
//   sessions.refresh_token_hmac_key is what authenticates the token.
import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, fromBase64url, hex, hmacSha256 } from './encoding.ts';

export const LEGACY_REFRESH_TOKEN_LENGTH = 12;

const SIGNATURE_LENGTH = 16;
const CHECKSUM_LENGTH = 4;
const MIN_LENGTH = 1 + 16 + 1 + SIGNATURE_LENGTH + CHECKSUM_LENGTH;
const MAX_LENGTH = MIN_LENGTH + 9; // a uvarint of 64 bits takes up to 10 bytes

export interface SignedRefreshToken {
  sessionId: string;
  counter: number;
  /** Everything the signature covers. */
  signed: Uint8Array;
  signature: Uint8Array;
}

const uuidText = (b: Uint8Array): string => {
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** Go's binary.Uvarint: the value and its length, or undefined when malformed or past 2^53. */
function readUvarint(b: Uint8Array, from: number): { value: number; length: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = from; i < b.length && i - from < 10; i++) {
    const byte = b[i]!;
    value += (byte & 0x7f) * scale;
    if (!Number.isSafeInteger(value)) return undefined;
    if (byte < 0x80) return { value, length: i - from + 1 };
    scale *= 128;
  }
  return undefined;
}

function writeUvarint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** A signed token's parts, or undefined when the string is not one (GoTrue's ParseRefreshToken). */
export function parseSignedRefreshToken(token: string): SignedRefreshToken | undefined {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64url(token);
  } catch {
    return undefined;
  }
  if (bytes.length < MIN_LENGTH || bytes.length > MAX_LENGTH || bytes[0] !== 0) return undefined;
  const body = bytes.subarray(0, bytes.length - CHECKSUM_LENGTH);
  if (!equalBytes(sha256(body).subarray(0, CHECKSUM_LENGTH), bytes.subarray(body.length))) return undefined;
  const counter = readUvarint(body, 17);
  if (!counter || body.length - 17 - counter.length !== SIGNATURE_LENGTH) return undefined;
  const signedLength = body.length - SIGNATURE_LENGTH;
  return {
    sessionId: uuidText(body.subarray(1, 17)),
    counter: counter.value,
    signed: body.subarray(0, signedLength),
    signature: body.subarray(signedLength),
  };
}

/** Whether the token was signed with the session's key (constant time). */
export function checkSignedRefreshToken(t: SignedRefreshToken, key: Uint8Array): boolean {
  return equalBytes(hmacSha256(key, t.signed).subarray(0, SIGNATURE_LENGTH), t.signature);
}

/** GoTrue's RefreshToken.Encode: the token of `sessionId` at `counter`. */
export function encodeSignedRefreshToken(sessionId: string, counter: number, key: Uint8Array): string {
  const id = sessionId.replaceAll('-', '');
  const head = new Uint8Array([
    0,
    ...Array.from({ length: 16 }, (_, i) => Number.parseInt(id.slice(i * 2, i * 2 + 2), 16)),
    ...writeUvarint(counter),
  ]);
  const withSignature = new Uint8Array([...head, ...hmacSha256(key, head).subarray(0, SIGNATURE_LENGTH)]);
  return base64url(new Uint8Array([...withSignature, ...sha256(withSignature).subarray(0, CHECKSUM_LENGTH)]));
}

/**
 * What `authsvc hash-refresh-tokens` stores for a legacy token still in clear: a keyed digest (a
 * 12-character token has only 60 random bits, so a bare SHA-256 of a dump's millions of them
 * falls to a multi-target search; without the key, which is not in the database, none does).
 */
export function legacyRefreshDigest(refreshChildKey: Uint8Array, token: string): string {
  return hex(hmacSha256(refreshChildKey, new TextEncoder().encode(`gotrue-legacy-refresh-token:${token}`)));
}
