// A self-signed certificate made at test time, for test SMTP servers that speak TLS. Node can make
// keys but not certificates, so the DER is assembled by hand (as in test/units/mail.test.ts): a P-256 key,
// CN localhost, SAN localhost + 127.0.0.1 + any extra IPv4 addresses, valid for a day.
import { generateKeyPairSync, sign } from 'node:crypto';

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const der = (tag: number, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
};
const seq = (...parts: Buffer[]) => der(0x30, ...parts);
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const out = [40 * a + b];
  for (const arc of rest) {
    const chunk: number[] = [];
    for (let v = arc; ; v = Math.floor(v / 128)) {
      chunk.unshift((v % 128) | (chunk.length ? 0x80 : 0));
      if (v < 128) break;
    }
    out.push(...chunk);
  }
  return der(0x06, Buffer.from(out));
}
const utcTime = (d: Date) => der(0x17, Buffer.from(d.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z'));

export function selfSignedCert(extraIPv4: string[] = []): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(der(0x31, seq(oid('2.5.4.3'), der(0x0c, Buffer.from('localhost')))));
  const ips = ['127.0.0.1', ...extraIPv4].map((ip) => der(0x87, Buffer.from(ip.split('.').map(Number))));
  const san = seq(der(0x82, Buffer.from('localhost')), ...ips);
  const now = Date.now();
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))), // v3
    der(0x02, Buffer.from([0x01, 0x23, 0x45, 0x67])),
    ecdsaSha256,
    name,
    seq(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, seq(seq(oid('2.5.29.17'), der(0x04, san)))),
  );
  const signature = sign('sha256', tbs, privateKey);
  const certDer = seq(tbs, ecdsaSha256, der(0x03, Buffer.from([0]), signature));
  const cert = `-----BEGIN CERTIFICATE-----\n${certDer
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  return { key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, cert };
}

/**
 * An RSA-2048 key and a self-signed certificate for it (SHA-256 with RSA, valid for a day): the
 * test SAML IdP's signing pair. `certB64` is the certificate's DER in base64, as metadata holds it.
 */
export function selfSignedRsaCert(cn: string): { key: string; pkcs1: Buffer; certB64: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
  const sha256WithRsa = seq(oid('1.2.840.113549.1.1.11'), der(0x05));
  const name = seq(der(0x31, seq(oid('2.5.4.3'), der(0x0c, Buffer.from(cn)))));
  const now = Date.now();
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, Buffer.from([0x01, 0x02, 0x03, 0x04])),
    sha256WithRsa,
    name,
    seq(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign('sha256', tbs, privateKey);
  const certDer = seq(tbs, sha256WithRsa, der(0x03, Buffer.from([0]), signature));
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    pkcs1: privateKey.export({ type: 'pkcs1', format: 'der' }),
    certB64: certDer.toString('base64'),
  };
}
