// The SP's key and certificate (GoTrue: conf/saml.go populateFields). SAML_PRIVATE_KEY is a
// PKCS#1 RSA key; WebCrypto imports it as PKCS#8 and signs AuthnRequests with it. The
// certificate published in the metadata is self-signed and made from the key, as GoTrue makes
// it: serial 0, CN "SAML 2.0 Certificate for <API host>", valid from 1970 for 200 years,
// digitalSignature (and dataEncipherment when encrypted assertions are allowed).
import { bits, derNull, derTime, explicit, int, oid, pkcs1ToPkcs8, seq, set, tlv, utf8String } from '../crypto/der.ts';

export interface SamlKey {
  privateKey: CryptoKey;
  /** The self-signed certificate, base64 of its DER. */
  certificate: string;
}

const ALG = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const SHA256_WITH_RSA = () => seq(oid('1.2.840.113549.1.1.11'), derNull());

const fromBase64 = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

async function makeKey(pkcs1b64: string, host: string, encryption: boolean): Promise<SamlKey> {
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs1ToPkcs8(fromBase64(pkcs1b64)), ALG, true, ['sign']);
  const jwk = await crypto.subtle.exportKey('jwk', privateKey);
  const publicKey = await crypto.subtle.importKey('jwk', { kty: 'RSA', n: jwk.n, e: jwk.e }, ALG, true, ['verify']);
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', publicKey));
  const name = seq(set(seq(oid('2.5.4.3'), utf8String(`SAML 2.0 Certificate for ${host}`))));
  // keyUsage: digitalSignature (bit 0), plus dataEncipherment (bit 3).
  const usage = encryption ? bits(Uint8Array.of(0x90), 4) : bits(Uint8Array.of(0x80), 7);
  const extensions = explicit(3, seq(seq(oid('2.5.29.15'), tlv(0x01, Uint8Array.of(0xff)), tlv(0x04, usage))));
  const tbs = seq(
    explicit(0, int(2)),
    int(0),
    SHA256_WITH_RSA(),
    name,
    seq(derTime(new Date(0)), derTime(new Date(Date.UTC(2170, 0, 1)))),
    name,
    spki,
    extensions,
  );
  const signature = new Uint8Array(await crypto.subtle.sign(ALG, privateKey, tbs));
  return { privateKey, certificate: toBase64(seq(tbs, SHA256_WITH_RSA(), bits(signature))) };
}

// One per key, host and usage for the life of the isolate: importing and signing costs a few ms.
const cache = new Map<string, Promise<SamlKey>>();

export function samlKey(pkcs1b64: string, host: string, encryption: boolean): Promise<SamlKey> {
  const id = `${encryption ? 'e' : 's'}|${host}|${pkcs1b64}`;
  let found = cache.get(id);
  if (!found) {
    found = makeKey(pkcs1b64, host, encryption);
    found.catch(() => cache.delete(id));
    if (cache.size > 8) cache.clear();
    cache.set(id, found);
  }
  return found;
}

export async function signRsaSha256(key: CryptoKey, data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign(ALG, key, data));
}
