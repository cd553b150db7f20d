// A SAML 2.0 identity provider for tests: its own RSA key and self-signed certificate made at
// test time, metadata XML, and SAML Responses signed with xml-crypto (the whole Response, only the
// Assertion, or nothing), plus the tampered ones an attacker would send.
import { constants, createCipheriv, type KeyObject, publicEncrypt, randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { selfSignedRsaCert } from './tls-cert.ts';

const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
export const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
export const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
export const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

export interface ResponseOptions {
  /** The SP's entity ID (the Audience). */
  audience: string;
  acsUrl: string;
  inResponseTo?: string;
  nameId?: string;
  /** The NameID's content as raw XML (comments, entities), instead of `nameId`. */
  nameIdXml?: string;
  nameIdFormat?: string;
  attributes?: Record<string, string[]>;
  now?: Date;
  /** Seconds the assertion stays valid (NotOnOrAfter); negative for an expired one. */
  validFor?: number;
  sessionNotOnOrAfter?: Date;
  destination?: string;
  recipient?: string;
  assertionId?: string;
  issuer?: string;
  /** What is signed: the Assertion (default), the Response, both, or nothing. */
  sign?: 'assertion' | 'response' | 'both' | 'none';
  /** Sign with another key than the metadata's (a forged signature). */
  signingKey?: string;
  /** Encrypt the (signed) assertion to this SP key: an EncryptedAssertion, RSA-OAEP key transport. */
  encryptTo?: KeyObject;
  /** The data cipher of the EncryptedAssertion (default AES-256-GCM). */
  dataCipher?: 'aes256-gcm' | 'aes128-cbc';
}

export interface TestIdp {
  entityId: string;
  ssoUrl: string;
  certB64: string;
  metadataXml: string;
  /** The SAML Response XML. */
  responseXml(o: ResponseOptions): string;
  /** The same, base64 for the SAMLResponse form field. */
  response(o: ResponseOptions): string;
}

const XENC = 'http://www.w3.org/2001/04/xmlenc#';

/** XML Encryption of an assertion, as IdPs send it (the content key wrapped with RSA-OAEP, SHA-1). */
function encryptAssertion(assertion: string, to: KeyObject, cipher: 'aes256-gcm' | 'aes128-cbc'): string {
  const gcm = cipher === 'aes256-gcm';
  const key = randomBytes(gcm ? 32 : 16);
  const iv = randomBytes(gcm ? 12 : 16);
  const c = createCipheriv(gcm ? 'aes-256-gcm' : 'aes-128-cbc', key, iv);
  const body = Buffer.concat([c.update(assertion, 'utf8'), c.final()]);
  const data = gcm
    ? Buffer.concat([iv, body, (c as ReturnType<typeof createCipheriv> & { getAuthTag(): Buffer }).getAuthTag()])
    : Buffer.concat([iv, body]);
  const wrapped = publicEncrypt({ key: to, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, key);
  const alg = gcm ? 'http://www.w3.org/2009/xmlenc11#aes256-gcm' : `${XENC}aes128-cbc`;
  return (
    `<saml:EncryptedAssertion><xenc:EncryptedData xmlns:xenc="${XENC}" Type="${XENC}Element"><xenc:EncryptionMethod Algorithm="${alg}"/>` +
    `<ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><xenc:EncryptedKey><xenc:EncryptionMethod Algorithm="${XENC}rsa-oaep-mgf1p"><ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/></xenc:EncryptionMethod>` +
    `<xenc:CipherData><xenc:CipherValue>${wrapped.toString('base64')}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey></ds:KeyInfo>` +
    `<xenc:CipherData><xenc:CipherValue>${data.toString('base64')}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData></saml:EncryptedAssertion>`
  );
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const newId = () => `_${crypto.randomUUID().replaceAll('-', '')}`;

function signElement(xml: string, localName: string, key: string, certB64: string): string {
  const sig = new SignedXml({
    privateKey: key,
    publicCert: certB64,
    canonicalizationAlgorithm: EXC_C14N,
    signatureAlgorithm: RSA_SHA256,
  });
  const xpath = `//*[local-name(.)='${localName}']`;
  sig.addReference({ xpath, digestAlgorithm: SHA256, transforms: [ENVELOPED, EXC_C14N] });
  sig.computeSignature(xml, {
    prefix: 'ds',
    location: { reference: `${xpath}/*[local-name(.)='Issuer']`, action: 'after' },
  });
  return sig.getSignedXml();
}

export function createTestIdp(name = 'idp'): TestIdp {
  const entityId = `https://${name}.example.test/metadata`;
  const ssoUrl = `https://${name}.example.test/sso`;
  const { key, certB64 } = selfSignedRsaCert(`${name}.example.test`);
  const metadataXml = `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${certB64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:NameIDFormat>${PERSISTENT}</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${ssoUrl}"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ssoUrl}/post"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;

  function responseXml(o: ResponseOptions): string {
    const now = o.now ?? new Date();
    const iso = (d: Date) => d.toISOString();
    const until = new Date(now.getTime() + (o.validFor ?? 300) * 1000);
    const before = new Date(now.getTime() - 60_000);
    const irt = o.inResponseTo ? ` InResponseTo="${esc(o.inResponseTo)}"` : '';
    const attrs = Object.entries(o.attributes ?? {})
      .map(
        ([n, vs]) =>
          `<saml:Attribute Name="${esc(n)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${vs
            .map(
              (v) =>
                `<saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`,
            )
            .join('')}</saml:Attribute>`,
      )
      .join('');
    const issuer = o.issuer ?? entityId;
    const session = o.sessionNotOnOrAfter ? ` SessionNotOnOrAfter="${iso(o.sessionNotOnOrAfter)}"` : '';
    const assertion =
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.assertionId ?? newId()}" Version="2.0" IssueInstant="${iso(now)}">` +
      `<saml:Issuer>${esc(issuer)}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="${o.nameIdFormat ?? PERSISTENT}">${o.nameIdXml ?? esc(o.nameId ?? 'user-1')}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData${irt} NotOnOrAfter="${iso(until)}" Recipient="${esc(o.recipient ?? o.acsUrl)}"/></saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${iso(before)}" NotOnOrAfter="${iso(until)}"><saml:AudienceRestriction><saml:Audience>${esc(o.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="${newId()}"${session}><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
      (attrs ? `<saml:AttributeStatement>${attrs}</saml:AttributeStatement>` : '') +
      '</saml:Assertion>';
    const sign = o.sign ?? 'assertion';
    const signingKey = o.signingKey ?? key;
    const signedAssertion =
      sign === 'assertion' || sign === 'both' ? signElement(assertion, 'Assertion', signingKey, certB64) : assertion;
    const response =
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${newId()}" Version="2.0" IssueInstant="${iso(now)}" Destination="${esc(o.destination ?? o.acsUrl)}"${irt}>` +
      `<saml:Issuer>${esc(issuer)}</saml:Issuer>` +
      '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
      (o.encryptTo
        ? encryptAssertion(signedAssertion.replace(/^<\?xml[^>]*>/, ''), o.encryptTo, o.dataCipher ?? 'aes256-gcm')
        : signedAssertion.replace(/^<\?xml[^>]*>/, '')) +
      '</samlp:Response>';
    return sign === 'response' || sign === 'both' ? signElement(response, 'Response', signingKey, certB64) : response;
  }

  return {
    entityId,
    ssoUrl,
    certB64,
    metadataXml,
    responseXml,
    response: (o) => Buffer.from(responseXml(o)).toString('base64'),
  };
}

/** Another key pair's private key (to sign with a key the metadata does not hold). */
export function strangerKey(): string {
  return selfSignedRsaCert('stranger.example.test').key;
}

/** The AuthnRequest XML inside an HTTP-Redirect URL (SAMLRequest: deflated, base64). */
export function decodeAuthnRequest(url: string): { xml: string; params: URLSearchParams } {
  const params = new URL(url).searchParams;
  const xml = inflateRawSync(Buffer.from(params.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
  return { xml, params };
}

/**
 * XML signature wrapping: the signed assertion is hidden in the Response's Extensions, and a
 * forged one, claiming another user, takes its place.
 */
export function wrapSignedAssertion(signedResponseXml: string, forgedNameId: string): string {
  const m = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signedResponseXml);
  if (!m) throw new Error('no assertion');
  const original = m[0];
  const forged = original
    .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
    .replace(/ID="[^"]+"/, `ID="_forged${Date.now()}"`)
    .replace(/(<saml:NameID[^>]*>)[^<]*(<\/saml:NameID>)/, `$1${forgedNameId}$2`);
  return signedResponseXml.replace(original, `<samlp:Extensions>${original}</samlp:Extensions>${forged}`);
}
