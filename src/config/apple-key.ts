// EXTERNAL_APPLE_PRIVATE_KEY: Apple's .p8 key, a PKCS#8 PEM holding an EC P-256 key. Read far
// enough at start-up to refuse anything else (as config/pkcs1.ts reads SAML_PRIVATE_KEY: our own
// synchronous DER reader, docs/decisions/saml-der.md); WebCrypto imports it when the first client
// secret is signed (oauth/apple-secret.ts). A file path is resolved by the adapter before this runs.
import { readSequence, readTlv } from './pkcs1.ts';

// 1.2.840.10045.2.1 (id-ecPublicKey) and 1.2.840.10045.3.1.7 (prime256v1), as DER OID contents.
const EC_PUBLIC_KEY = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const PRIME256V1 = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const PEM_RE = /^-----BEGIN PRIVATE KEY-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END PRIVATE KEY-----\s*$/;

const sameBytes = (a: Uint8Array, b: readonly number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** A PKCS#8 PrivateKeyInfo (version 0) of an EC key on P-256 whose ECPrivateKey holds a 32-byte scalar. */
function isPkcs8P256(der: Uint8Array): boolean {
  try {
    const outer = readTlv(der);
    if (outer.tag !== 0x30 || outer.end !== der.length) return false;
    const [version, algorithm, privateKey] = readSequence(outer.value);
    if (version?.tag !== 0x02 || !sameBytes(version.value, [0])) return false;
    if (algorithm?.tag !== 0x30 || privateKey?.tag !== 0x04) return false;
    const [oid, curve] = readSequence(algorithm.value);
    if (oid?.tag !== 0x06 || !sameBytes(oid.value, EC_PUBLIC_KEY)) return false;
    if (curve?.tag !== 0x06 || !sameBytes(curve.value, PRIME256V1)) return false;
    const ec = readTlv(privateKey.value);
    if (ec.tag !== 0x30 || ec.end !== privateKey.value.length) return false;
    const [ecVersion, scalar] = readSequence(ec.value);
    return (
      ecVersion?.tag === 0x02 && sameBytes(ecVersion.value, [1]) && scalar?.tag === 0x04 && scalar.value.length === 32
    );
  } catch {
    return false;
  }
}

/**
 * The key as a PEM jose's importPKCS8 reads. `\n` escapes (a PEM pasted into one line of an env
 * file) are taken as line breaks. The errors never quote the value.
 */
export function parseApplePrivateKey(raw: string): string {
  const text = raw.trim().replaceAll('\\n', '\n');
  if (text.includes('-----BEGIN EC PRIVATE KEY-----'))
    throw new Error("is a SEC 1 EC key: give Apple's .p8 file as it was downloaded (-----BEGIN PRIVATE KEY-----)");
  const m = PEM_RE.exec(text);
  if (!m)
    throw new Error(
      "is not a PEM private key (-----BEGIN PRIVATE KEY-----): give the .p8 file's contents, or on Node, Bun and Deno its path",
    );
  const b64 = m[1]!.replace(/\s+/g, '');
  let der: Uint8Array;
  try {
    der = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    throw new Error('is not a PEM private key: its body is not base64');
  }
  if (!isPkcs8P256(der)) throw new Error("is not an EC P-256 key in PKCS#8 (Apple's .p8 Sign in with Apple key)");
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}
