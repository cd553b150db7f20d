// The SP's key and certificate (GoTrue: conf/saml.go populateFields). SAML_PRIVATE_KEY is a
// PKCS#1 RSA key; WebCrypto imports it as PKCS#8 and signs AuthnRequests with it. The
// certificate published in the metadata is self-signed and made from the key, as GoTrue makes
// it: serial 0, CN "SAML 2.0 Certificate for <API host>", valid from 1970 for 200 years,
// digitalSignature (and dataEncipherment when encrypted assertions are allowed), critical.
// The ASN.1 schemas of PKCS#8 and X.509 (@peculiar/asn1-*, the WebAuthn library's, pure
// JavaScript) load with the first SAML request, never at start.

export interface SamlKey {
  privateKey: CryptoKey;
  /** The self-signed certificate, base64 of its DER. */
  certificate: string;
}

const ALG = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

const fromBase64 = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

async function makeKey(pkcs1b64: string, host: string, encryption: boolean): Promise<SamlKey> {
  const [{ AsnConvert, OctetString }, { PrivateKeyInfo }, { rsaEncryption, id_sha256WithRSAEncryption }, x509] =
    await Promise.all([
      import('@peculiar/asn1-schema'),
      import('@peculiar/asn1-pkcs8'),
      import('@peculiar/asn1-rsa'),
      import('@peculiar/asn1-x509'),
    ]);
  // PKCS#1 RSAPrivateKey → PKCS#8 PrivateKeyInfo, the form WebCrypto imports.
  const pkcs8 = AsnConvert.serialize(
    new PrivateKeyInfo({ privateKeyAlgorithm: rsaEncryption, privateKey: new OctetString(fromBase64(pkcs1b64)) }),
  );
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, ALG, true, ['sign']);
  const jwk = await crypto.subtle.exportKey('jwk', privateKey);
  const publicKey = await crypto.subtle.importKey('jwk', { kty: 'RSA', n: jwk.n, e: jwk.e }, ALG, true, ['verify']);
  const spki = await crypto.subtle.exportKey('spki', publicKey);
  // From the OID: asn1-rsa 2.11's ready-made `sha256WithRSAEncryption` carries sha512-256's OID
  // (the metadata test caught it: the certificate's signature did not verify).
  const sha256WithRSAEncryption = new x509.AlgorithmIdentifier({
    algorithm: id_sha256WithRSAEncryption,
    parameters: null,
  });
  const name = new x509.Name([
    new x509.RelativeDistinguishedName([
      new x509.AttributeTypeAndValue({
        type: '2.5.4.3', // commonName
        value: new x509.AttributeValue({ utf8String: `SAML 2.0 Certificate for ${host}` }),
      }),
    ]),
  ]);
  const usage = x509.KeyUsageFlags.digitalSignature | (encryption ? x509.KeyUsageFlags.dataEncipherment : 0);
  const tbsCertificate = new x509.TBSCertificate({
    version: x509.Version.v3,
    serialNumber: new Uint8Array([0]).buffer,
    signature: sha256WithRSAEncryption,
    issuer: name,
    // UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5), as the library writes them.
    validity: new x509.Validity({ notBefore: new Date(0), notAfter: new Date(Date.UTC(2170, 0, 1)) }),
    subject: name,
    subjectPublicKeyInfo: AsnConvert.parse(spki, x509.SubjectPublicKeyInfo),
    extensions: new x509.Extensions([
      new x509.Extension({
        extnID: x509.id_ce_keyUsage,
        critical: true,
        extnValue: new OctetString(AsnConvert.serialize(new x509.KeyUsage(usage))),
      }),
    ]),
  });
  const tbs = AsnConvert.serialize(tbsCertificate);
  const signature = await crypto.subtle.sign(ALG, privateKey, tbs);
  const certificate = new x509.Certificate({
    tbsCertificate,
    signatureAlgorithm: sha256WithRSAEncryption,
    signatureValue: signature,
  });
  return { privateKey, certificate: toBase64(new Uint8Array(AsnConvert.serialize(certificate))) };
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
