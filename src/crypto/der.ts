// The little DER that SAML needs without an X.509 library: wrap GoTrue's PKCS#1 SAML_PRIVATE_KEY
// as PKCS#8 for WebCrypto, and write the self-signed certificate the SP metadata publishes
// (sso/keys.ts). Reading the key is config/pkcs1.ts's (checked at start-up).
import { concatBytes } from '@noble/hashes/utils.js';

function length(n: number): Uint8Array {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let x = n; x > 0; x = Math.floor(x / 256)) bytes.unshift(x & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

const concat = (parts: Uint8Array[]): Uint8Array<ArrayBuffer> => concatBytes(...parts) as Uint8Array<ArrayBuffer>;

export const tlv = (tag: number, ...parts: Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const body = concat(parts);
  return concat([Uint8Array.of(tag), length(body.length), body]);
};
export const seq = (...parts: Uint8Array[]) => tlv(0x30, ...parts);
export const set = (...parts: Uint8Array[]) => tlv(0x31, ...parts);
export const derNull = () => Uint8Array.of(0x05, 0x00);
export const octets = (b: Uint8Array) => tlv(0x04, b);
export const bits = (b: Uint8Array, unused = 0) => tlv(0x03, Uint8Array.of(unused), b);
export const utf8String = (s: string) => tlv(0x0c, new TextEncoder().encode(s));
export const explicit = (n: number, inner: Uint8Array) => tlv(0xa0 + n, inner);

export function int(n: number): Uint8Array {
  const bytes: number[] = [];
  let x = n;
  do {
    bytes.unshift(x & 0xff);
    x = Math.floor(x / 256);
  } while (x > 0);
  if (bytes[0]! & 0x80) bytes.unshift(0);
  return tlv(0x02, Uint8Array.from(bytes));
}

export function oid(dotted: string): Uint8Array {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const chunk: number[] = [];
    let x = n;
    do {
      chunk.unshift(x & 0x7f);
      x = Math.floor(x / 128);
    } while (x > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(out));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
export function derTime(d: Date): Uint8Array {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, new TextEncoder().encode(`${iso.slice(2)}Z`))
    : tlv(0x18, new TextEncoder().encode(`${iso}Z`));
}

/** PKCS#1 RSAPrivateKey → PKCS#8 PrivateKeyInfo (what WebCrypto imports). */
export function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array<ArrayBuffer> {
  return seq(int(0), seq(oid('1.2.840.113549.1.1.1'), derNull()), octets(pkcs1));
}
