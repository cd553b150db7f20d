// Reads a PKCS#1 RSAPrivateKey far enough to check it at start-up as GoTrue does (SAML_PRIVATE_KEY:
// two primes, e = 65537, at least 2048 bits). WebCrypto imports it later (sso/keys.ts). Our own, not
// @peculiar/asn1-rsa: it runs synchronously in every start (docs/decisions/saml-der.md).

export interface Tlv {
  tag: number;
  /** The value's bytes. */
  value: Uint8Array;
  /** Offset just past this element. */
  end: number;
}

/** One element at `at`; throws on anything truncated or longer than the input. */
export function readTlv(bytes: Uint8Array, at = 0): Tlv {
  if (at + 2 > bytes.length) throw new Error('truncated DER');
  const tag = bytes[at]!;
  let len = bytes[at + 1]!;
  let pos = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || pos + n > bytes.length) throw new Error('bad DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + bytes[pos + i]!;
    pos += n;
  }
  if (pos + len > bytes.length) throw new Error('truncated DER');
  return { tag, value: bytes.subarray(pos, pos + len), end: pos + len };
}

/** The elements inside a constructed value. */
export function readSequence(value: Uint8Array): Tlv[] {
  const out: Tlv[] = [];
  for (let at = 0; at < value.length; ) {
    const t = readTlv(value, at);
    out.push(t);
    at = t.end;
  }
  return out;
}

/** An unsigned INTEGER's significant bytes (leading zeros dropped). */
export function unsignedInt(value: Uint8Array): Uint8Array {
  let i = 0;
  while (i < value.length - 1 && value[i] === 0) i++;
  return value.subarray(i);
}

export interface RsaPrivateKeyFacts {
  modulusBits: number;
  publicExponent: number;
}

/** Checks a PKCS#1 RSAPrivateKey (version 0, nine integers) and tells its size and exponent. */
export function readPkcs1RsaKey(der: Uint8Array): RsaPrivateKeyFacts {
  const outer = readTlv(der);
  if (outer.tag !== 0x30 || outer.end !== der.length) throw new Error('not a DER SEQUENCE');
  const items = readSequence(outer.value);
  if (items.length !== 9 || items.some((i) => i.tag !== 0x02)) throw new Error('not a PKCS#1 RSA private key');
  if (unsignedInt(items[0]!.value)[0] !== 0) throw new Error('not a two-prime PKCS#1 RSA private key');
  const n = unsignedInt(items[1]!.value);
  const e = unsignedInt(items[2]!.value);
  const modulusBits = (n.length - 1) * 8 + (32 - Math.clz32(n[0]!));
  const publicExponent = e.length > 4 ? Number.POSITIVE_INFINITY : e.reduce((acc, x) => acc * 256 + x, 0);
  return { modulusBits, publicExponent };
}
