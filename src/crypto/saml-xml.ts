// The seam between the SAML flows and the XML they read. Parsing untrusted XML and checking XML
// signatures needs an XML DOM, exclusive canonicalisation and RSA over node:crypto (xml-crypto,
// docs/decisions/saml-library.md): the adapters of runtimes that have it (Node, Bun, Deno) load
// src/adapters/saml-xml.ts lazily and put it in deps.samlXml. The core only ever sees the plain
// records below, read from the signed XML alone; every check on them (audience, recipient, time,
// InResponseTo) is made in src/sso/response-checks.ts.

/** An IdP's metadata (EntityDescriptor with exactly one IDPSSODescriptor). */
export interface IdpMetadata {
  entityId: string;
  /** How many IDPSSODescriptors it has (GoTrue wants exactly one). */
  idpDescriptors: number;
  /** SingleSignOnService Location of the HTTP-Redirect binding (else HTTP-POST, as a fallback). */
  ssoUrl?: string;
  /** Base64 DER X.509 certificates of the KeyDescriptors usable for signing. */
  signingCerts: string[];
  validUntil?: Date;
  /** cacheDuration in seconds. */
  cacheDurationSeconds?: number;
}

export interface SamlAttribute {
  name: string;
  friendlyName?: string;
  values: string[];
}

export interface SubjectConfirmation {
  method: string;
  recipient?: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  inResponseTo?: string;
}

/** What the signed assertion says, read from the signed XML only. */
export interface SamlAssertion {
  id: string;
  issuer: string;
  issueInstant?: Date;
  nameId?: { value: string; format?: string };
  subjectConfirmations: SubjectConfirmation[];
  notBefore?: Date;
  notOnOrAfter?: Date;
  /** One list of audiences per AudienceRestriction (each must name the SP). */
  audienceRestrictions: string[][];
  sessionNotOnOrAfter?: Date;
  attributes: SamlAttribute[];
}

export interface SamlResponse {
  id: string;
  issuer?: string;
  destination?: string;
  inResponseTo?: string;
  issueInstant?: Date;
  /** The top-level StatusCode Value. */
  status: string;
  /** Which signature was verified: the whole Response, or only the Assertion. */
  signed: 'response' | 'assertion';
  assertion: SamlAssertion;
}

export interface SamlXml {
  /** Throws SamlXmlError when the metadata cannot be used. */
  parseMetadata(xml: string): IdpMetadata;
  /** The Response's Issuer, unverified: only to pick the IdP of an IdP-initiated response. */
  peekIssuer(xml: string): string | undefined;
  /**
   * Verifies the Response's or the Assertion's signature with one of `certs` (base64 DER) and
   * returns what the signed element says. An EncryptedAssertion is decrypted with one of
   * `decryptionKeys` (the SP's PKCS#1 keys, base64; none: refused). Throws SamlXmlError on
   * anything else.
   */
  verifyResponse(xml: string, certs: readonly string[], decryptionKeys?: readonly string[]): SamlResponse;
}

/** Refused XML; the message is safe to show (it names no secret, quotes no input). */
export class SamlXmlError extends Error {
  override name = 'SamlXmlError';
}

/** How an adapter offers the module: loaded on first use. */
export type LoadSamlXml = () => Promise<SamlXml>;
