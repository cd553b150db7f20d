// SAML XML on Node, Bun and Deno (src/crypto/saml-xml.ts is the seam): @xmldom/xmldom parses,
// xml-crypto checks XML signatures (it needs node:crypto). The defences against XML signature
// wrapping and entity tricks (docs/decisions/saml-library.md):
// - no DOCTYPE at all (no entity can be declared, so none can be expanded or fetched);
// - exactly one Assertion (or EncryptedAssertion) in the whole document, a child of the Response;
//   no two elements with one ID; a decrypted assertion is parsed alone and checked the same way;
// - a Signature counts only as a direct child of the Response or of that Assertion, with exactly
//   one Reference whose URI is `#` + that element's ID;
// - after the signature checks out, only the XML it signed (getSignedReferences) is read: it is
//   parsed again and must be that element, with that ID. Nothing is read from the document around
//   it but the Response's Destination, InResponseTo and Status when only the Assertion is signed.
import { constants, createDecipheriv, createPrivateKey, privateDecrypt } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import {
  type IdpMetadata,
  type SamlAssertion,
  type SamlAttribute,
  type SamlResponse,
  type SamlXml,
  SamlXmlError,
  type SubjectConfirmation,
} from '../crypto/saml-xml.ts';

const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol';
const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const XENC = 'http://www.w3.org/2001/04/xmlenc#';
const XENC11 = 'http://www.w3.org/2009/xmlenc11#';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const MAX_XML = 1024 * 1024;

type El = Element;

const fail = (msg: string): never => {
  throw new SamlXmlError(msg);
};

function parse(xml: string): Document {
  if (xml.length > MAX_XML) fail('XML document is too large');
  // No DTD, so no entity declarations: nothing to expand (billion laughs) or fetch (XXE).
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) fail('XML documents with a DOCTYPE are not accepted');
  const bad = (msg: string) => fail(`XML is not well-formed: ${String(msg).split('\n')[0]!.slice(0, 120)}`);
  const doc = new DOMParser({ errorHandler: { warning: () => {}, error: bad, fatalError: bad } }).parseFromString(
    xml,
    'text/xml',
  );
  if (!doc?.documentElement) fail('XML is not well-formed');
  return doc as unknown as Document;
}

function children(el: El, ns: string, name: string): El[] {
  const out: El[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as El).namespaceURI === ns && (n as El).localName === name) out.push(n as El);
  }
  return out;
}

const child = (el: El | undefined, ns: string, name: string): El | undefined =>
  el ? children(el, ns, name)[0] : undefined;
const text = (el: El | undefined): string | undefined => (el ? (el.textContent ?? '').trim() : undefined);
const attr = (el: El | undefined, name: string): string | undefined =>
  el?.hasAttribute(name) ? el.getAttribute(name)! : undefined;

function time(el: El | undefined, name: string): Date | undefined {
  const v = attr(el, name);
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(v) || Number.isNaN(d.getTime())) fail(`${name} is not a valid time`);
  return d;
}

function all(doc: Document | El, ns: string, name: string): El[] {
  return Array.from((doc as El).getElementsByTagNameNS(ns, name) as unknown as ArrayLike<El>);
}

/** Two elements sharing an ID let a signature vouch for one and a reader find the other. */
function assertUniqueIds(doc: Document): void {
  const seen = new Set<string>();
  for (const el of all(doc, '*', '*')) {
    for (const a of ['ID', 'Id', 'id']) {
      const v = attr(el, a);
      if (v === undefined) continue;
      if (seen.has(v)) fail('XML document has duplicate IDs');
      seen.add(v);
    }
  }
}

const pem = (b64: string) =>
  `-----BEGIN CERTIFICATE-----\n${
    b64
      .replace(/\s+/g, '')
      .match(/.{1,64}/g)
      ?.join('\n') ?? ''
  }\n-----END CERTIFICATE-----\n`;

/**
 * Checks `sig` (a direct child of `target`) over the document with one of `certs`, and returns
 * the element it signed, parsed from the signed bytes alone.
 */
function verifiedElement(xml: string, target: El, sig: El, certs: readonly string[]): El {
  const id = attr(target, 'ID');
  if (!id) fail(`${target.localName} has no ID`);
  const refs = all(sig, DS, 'Reference');
  if (refs.length !== 1) fail('Signature must have exactly one Reference');
  if (attr(refs[0], 'URI') !== `#${id}`) fail(`Signature does not reference the ${target.localName}`);
  for (const cert of certs) {
    const signed = new SignedXml({ publicCert: pem(cert), getCertFromKeyInfo: () => null });
    signed.loadSignature(sig as unknown as Node);
    let ok = false;
    try {
      ok = signed.checkSignature(xml);
    } catch {
      ok = false;
    }
    if (!ok) continue;
    const parts = signed.getSignedReferences();
    if (parts.length !== 1) fail('Signature must sign exactly one element');
    const el = parse(parts[0]!).documentElement as unknown as El;
    if (el.namespaceURI !== target.namespaceURI || el.localName !== target.localName || attr(el, 'ID') !== id) {
      fail(`Signature does not cover the ${target.localName}`);
    }
    return el;
  }
  return fail('Signature is invalid');
}

function attributes(assertion: El): SamlAttribute[] {
  const out: SamlAttribute[] = [];
  for (const stmt of children(assertion, SAML, 'AttributeStatement')) {
    for (const a of children(stmt, SAML, 'Attribute')) {
      out.push({
        name: attr(a, 'Name') ?? '',
        friendlyName: attr(a, 'FriendlyName'),
        values: children(a, SAML, 'AttributeValue').map((v) => (v.textContent ?? '').trim()),
      });
    }
  }
  return out;
}

function readAssertion(a: El): SamlAssertion {
  if (children(a, SAML, 'EncryptedAttribute').length > 0 || all(a, SAML, 'EncryptedID').length > 0)
    fail('Encrypted attributes and IDs are not supported');
  const subject = child(a, SAML, 'Subject');
  const nameId = child(subject, SAML, 'NameID');
  const confirmations: SubjectConfirmation[] = (subject ? children(subject, SAML, 'SubjectConfirmation') : []).map(
    (sc) => {
      const data = child(sc, SAML, 'SubjectConfirmationData');
      return {
        method: attr(sc, 'Method') ?? '',
        recipient: attr(data, 'Recipient'),
        notBefore: time(data, 'NotBefore'),
        notOnOrAfter: time(data, 'NotOnOrAfter'),
        inResponseTo: attr(data, 'InResponseTo'),
      };
    },
  );
  const conditions = child(a, SAML, 'Conditions');
  const audienceRestrictions = (conditions ? children(conditions, SAML, 'AudienceRestriction') : []).map((r) =>
    children(r, SAML, 'Audience').map((x) => (x.textContent ?? '').trim()),
  );
  let sessionNotOnOrAfter: Date | undefined;
  for (const s of children(a, SAML, 'AuthnStatement')) sessionNotOnOrAfter ??= time(s, 'SessionNotOnOrAfter');
  return {
    id: attr(a, 'ID') ?? '',
    issuer: text(child(a, SAML, 'Issuer')) ?? '',
    issueInstant: time(a, 'IssueInstant'),
    nameId: nameId ? { value: (nameId.textContent ?? '').trim(), format: attr(nameId, 'Format') } : undefined,
    subjectConfirmations: confirmations,
    notBefore: time(conditions, 'NotBefore'),
    notOnOrAfter: time(conditions, 'NotOnOrAfter'),
    audienceRestrictions,
    sessionNotOnOrAfter,
    attributes: attributes(a),
  };
}

function responseRoot(doc: Document): El {
  const root = doc.documentElement as unknown as El;
  if (root.namespaceURI !== SAMLP || root.localName !== 'Response') fail('XML is not a SAML Response');
  return root;
}

/** Block ciphers of EncryptedData: key length, and GCM (authenticated) or CBC. */
const DATA_CIPHERS: Record<string, { name: string; gcm: boolean }> = {
  [`${XENC}aes128-cbc`]: { name: 'aes-128-cbc', gcm: false },
  [`${XENC}aes192-cbc`]: { name: 'aes-192-cbc', gcm: false },
  [`${XENC}aes256-cbc`]: { name: 'aes-256-cbc', gcm: false },
  [`${XENC11}aes128-gcm`]: { name: 'aes-128-gcm', gcm: true },
  [`${XENC11}aes192-gcm`]: { name: 'aes-192-gcm', gcm: true },
  [`${XENC11}aes256-gcm`]: { name: 'aes-256-gcm', gcm: true },
};

const bytesOf = (el: El | undefined) => Buffer.from((el?.textContent ?? '').replace(/\s+/g, ''), 'base64');

/** The content key, unwrapped with one of the SP keys (RSA-OAEP only: PKCS#1 v1.5 is a padding oracle). */
function contentKey(encryptedKey: El, keys: readonly string[]): Buffer {
  const method = child(encryptedKey, XENC, 'EncryptionMethod');
  const alg = attr(method, 'Algorithm');
  if (alg !== `${XENC}rsa-oaep-mgf1p` && alg !== `${XENC11}rsa-oaep`)
    fail('Unsupported key transport algorithm (RSA-OAEP is required)');
  const digest = attr(child(method, DS, 'DigestMethod'), 'Algorithm') ?? `${DS}sha1`;
  const oaepHash = digest.endsWith('#sha256')
    ? 'sha256'
    : digest.endsWith('#sha1')
      ? 'sha1'
      : fail('Unsupported OAEP digest');
  const wrapped = bytesOf(child(child(encryptedKey, XENC, 'CipherData'), XENC, 'CipherValue'));
  for (const k of keys) {
    try {
      const key = createPrivateKey({ key: Buffer.from(k, 'base64'), format: 'der', type: 'pkcs1' });
      return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash }, wrapped);
    } catch {
      // The next key (SAML_PRIVATE_KEY_NEXT during a rotation).
    }
  }
  return fail('Encrypted assertion could not be decrypted');
}

/** EncryptedAssertion → the Assertion's XML (XML Encryption 1.1, the forms IdPs send). */
function decryptAssertion(enc: El, keys: readonly string[]): string {
  const data = children(enc, XENC, 'EncryptedData');
  if (data.length !== 1) fail('EncryptedAssertion must hold one EncryptedData');
  const cipher = DATA_CIPHERS[attr(child(data[0]!, XENC, 'EncryptionMethod'), 'Algorithm') ?? ''];
  if (!cipher) fail('Unsupported data encryption algorithm');
  const encryptedKey = all(data[0]!, XENC, 'EncryptedKey')[0] ?? children(enc, XENC, 'EncryptedKey')[0];
  if (!encryptedKey) fail('EncryptedAssertion has no EncryptedKey');
  const key = contentKey(encryptedKey!, keys);
  const body = bytesOf(child(child(data[0]!, XENC, 'CipherData'), XENC, 'CipherValue'));
  try {
    if (cipher!.gcm) {
      const d = createDecipheriv(cipher!.name as 'aes-256-gcm', key, body.subarray(0, 12));
      d.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()]).toString('utf8');
    }
    // XML Encryption's CBC padding: the last byte says how many to drop (the others are arbitrary).
    const d = createDecipheriv(cipher!.name, key, body.subarray(0, 16)).setAutoPadding(false);
    const plain = Buffer.concat([d.update(body.subarray(16)), d.final()]);
    const pad = plain[plain.length - 1] ?? 0;
    if (pad < 1 || pad > 16) throw new Error('bad padding');
    return plain.subarray(0, plain.length - pad).toString('utf8');
  } catch {
    return fail('Encrypted assertion could not be decrypted');
  }
}

/**
 * A decrypted assertion, parsed alone: exactly one Assertion (the root), unique IDs; `signed`
 * when its own signature must hold (nothing signed it from outside).
 */
function decryptedAssertion(enc: El, keys: readonly string[], certs: readonly string[], signed: boolean): El {
  const xml = decryptAssertion(enc, keys);
  const doc = parse(xml);
  const root = doc.documentElement as unknown as El;
  assertUniqueIds(doc);
  if (
    root.namespaceURI !== SAML ||
    root.localName !== 'Assertion' ||
    all(doc, SAML, 'Assertion').length !== 1 ||
    all(doc, SAML, 'EncryptedAssertion').length > 0
  ) {
    fail('EncryptedAssertion must hold exactly one Assertion');
  }
  const sig = children(root, DS, 'Signature');
  if (sig.length > 1) fail('More than one Signature');
  if (sig.length === 1) return verifiedElement(xml, root, sig[0]!, certs);
  if (!signed) fail('Neither the SAML Response nor its Assertion is signed');
  return root;
}

function verifyResponse(xml: string, certs: readonly string[], decryptionKeys: readonly string[] = []): SamlResponse {
  if (certs.length === 0) fail('The IdP metadata has no signing certificate');
  const doc = parse(xml);
  const root = responseRoot(doc);
  assertUniqueIds(doc);
  // One assertion in the whole document, where it belongs: a second one (in Extensions, in an
  // Advice, in an Object of a signature) is how wrapping attacks hide the signed original.
  const plain = all(doc, SAML, 'Assertion');
  const encrypted = all(doc, SAML, 'EncryptedAssertion');
  const direct = [...children(root, SAML, 'Assertion'), ...children(root, SAML, 'EncryptedAssertion')];
  if (plain.length + encrypted.length !== 1 || direct.length !== 1)
    fail('SAML Response must contain exactly one Assertion');
  if (encrypted.length > 0 && decryptionKeys.length === 0)
    fail('Encrypted assertions are not accepted (SAML_ALLOW_ENCRYPTED_ASSERTIONS is off)');
  const outer = direct[0]!;
  const isEncrypted = outer.localName === 'EncryptedAssertion';
  const status = attr(child(child(root, SAMLP, 'Status'), SAMLP, 'StatusCode'), 'Value') ?? '';
  const responseSig = children(root, DS, 'Signature');
  const assertionSig = isEncrypted ? [] : children(outer, DS, 'Signature');
  if (responseSig.length > 1 || assertionSig.length > 1) fail('More than one Signature');
  let signedRoot: El = root;
  let assertionEl: El;
  let signed: SamlResponse['signed'];
  if (responseSig.length === 1) {
    signedRoot = verifiedElement(xml, root, responseSig[0]!, certs);
    const inner = [...children(signedRoot, SAML, 'Assertion'), ...children(signedRoot, SAML, 'EncryptedAssertion')];
    if (
      inner.length !== 1 ||
      all(signedRoot, SAML, 'Assertion').length + all(signedRoot, SAML, 'EncryptedAssertion').length !== 1
    ) {
      fail('SAML Response must contain exactly one Assertion');
    }
    if (inner[0]!.localName === 'EncryptedAssertion')
      assertionEl = decryptedAssertion(inner[0]!, decryptionKeys, certs, true);
    else {
      assertionEl = inner[0]!;
      // A signed assertion inside a signed response: its own signature must hold too.
      if (assertionSig.length === 1) verifiedElement(xml, outer, assertionSig[0]!, certs);
    }
    signed = 'response';
  } else if (isEncrypted) {
    assertionEl = decryptedAssertion(outer, decryptionKeys, certs, false);
    signed = 'assertion';
  } else if (assertionSig.length === 1) {
    assertionEl = verifiedElement(xml, outer, assertionSig[0]!, certs);
    signed = 'assertion';
  } else {
    return fail('Neither the SAML Response nor its Assertion is signed');
  }
  return {
    id: attr(signedRoot, 'ID') ?? '',
    issuer: text(child(signedRoot, SAML, 'Issuer')),
    destination: attr(signedRoot, 'Destination'),
    inResponseTo: attr(signedRoot, 'InResponseTo'),
    issueInstant: time(signedRoot, 'IssueInstant'),
    status:
      signed === 'response'
        ? (attr(child(child(signedRoot, SAMLP, 'Status'), SAMLP, 'StatusCode'), 'Value') ?? '')
        : status,
    signed,
    assertion: readAssertion(assertionEl),
  };
}

function peekIssuer(xml: string): string | undefined {
  const root = responseRoot(parse(xml));
  return text(child(root, SAML, 'Issuer')) ?? text(child(child(root, SAML, 'Assertion'), SAML, 'Issuer'));
}

/** xs:duration as seconds (PnYnMnDTnHnMnS; years and months as 365 and 30 days). */
function durationSeconds(v: string | undefined): number | undefined {
  if (!v) return undefined;
  const m = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(v.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0));
  return (((y! * 365 + mo! * 30 + d!) * 24 + h!) * 60 + mi!) * 60 + s!;
}

function parseMetadata(xml: string): IdpMetadata {
  const doc = parse(xml);
  let root = doc.documentElement as unknown as El;
  if (root.namespaceURI === MD && root.localName === 'EntitiesDescriptor') {
    const entities = children(root, MD, 'EntityDescriptor');
    if (entities.length !== 1) fail('SAML Metadata must describe exactly one entity');
    root = entities[0]!;
  }
  if (root.namespaceURI !== MD || root.localName !== 'EntityDescriptor')
    fail('XML is not SAML Metadata (EntityDescriptor)');
  const idps = children(root, MD, 'IDPSSODescriptor');
  const entityId = attr(root, 'entityID') ?? '';
  const idp = idps[0];
  const services = idp ? children(idp, MD, 'SingleSignOnService') : [];
  const location = (binding: string) =>
    attr(
      services.find((s) => attr(s, 'Binding') === binding),
      'Location',
    );
  const signingCerts = (idp ? children(idp, MD, 'KeyDescriptor') : [])
    .filter((k) => (attr(k, 'use') ?? 'signing') === 'signing')
    .flatMap((k) => all(k, DS, 'X509Certificate').map((c) => (c.textContent ?? '').replace(/\s+/g, '')))
    .filter((c) => c !== '');
  return {
    entityId,
    ssoUrl: location(REDIRECT) ?? location(POST),
    signingCerts,
    validUntil: time(root, 'validUntil') ?? time(idp, 'validUntil'),
    cacheDurationSeconds: durationSeconds(attr(root, 'cacheDuration') ?? attr(idp, 'cacheDuration')),
    idpDescriptors: idps.length,
  };
}

export const samlXml: SamlXml = { parseMetadata, peekIssuer, verifyResponse };
