// The service provider authsvc is (GoTrue: api/saml.go newSAMLServiceProvider, SAMLMetadata):
// its URLs, under SAML_EXTERNAL_URL (else API_EXTERNAL_URL) + /sso/, and its metadata.
import type { Config } from '../config/types.ts';
import { ApiError } from '../core/errors.ts';
import { type SamlKey, samlKey } from './keys.ts';
import { xmlEscape } from './xml-text.ts';

export interface SpUrls {
  /** The entity ID, which is also where the metadata is served. */
  entityId: string;
  acsUrl: string;
  host: string;
}

export function spUrls(config: Config): SpUrls {
  const u = new URL(config.saml.externalUrl || config.api.externalUrl);
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  u.pathname += 'sso/';
  return { entityId: new URL('saml/metadata', u).toString(), acsUrl: new URL('saml/acs', u).toString(), host: u.host };
}

/** The current key (and the next one during a rotation); 500 when SAML is on without one. */
export async function spKeys(config: Config): Promise<{ current: SamlKey; next?: SamlKey }> {
  const { privateKey, privateKeyNext, allowEncryptedAssertions } = config.saml;
  if (!privateKey) throw new ApiError(500, 'unexpected_failure', 'SAML_PRIVATE_KEY is not set');
  const host = new URL(config.api.externalUrl || config.saml.externalUrl || 'http://localhost').hostname;
  const encryption = allowEncryptedAssertions;
  return {
    current: await samlKey(privateKey, host, encryption),
    next: privateKeyNext ? await samlKey(privateKeyNext, host, encryption) : undefined,
  };
}

export const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
export const NAMEID_PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
export const NAMEID_TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';
export const NAMEID_UNSPECIFIED = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';

/** crewjam's default metadata validity. */
const VALID_MS = 48 * 3600 * 1000;
const FIVE_YEARS_MS = 5 * 365 * 24 * 3600 * 1000;

/** crewjam's advertised methods for an encryption key (RSA-OAEP key transport, AES-CBC data; GCM is accepted too). */
const ENCRYPTION_METHODS = [
  'http://www.w3.org/2001/04/xmlenc#aes128-cbc',
  'http://www.w3.org/2001/04/xmlenc#aes192-cbc',
  'http://www.w3.org/2001/04/xmlenc#aes256-cbc',
  'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
]
  .map((a) => `<EncryptionMethod Algorithm="${a}"></EncryptionMethod>`)
  .join('');

function keyDescriptor(use: string, cert: string): string {
  return (
    `<KeyDescriptor use="${use}"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>${cert}</X509Certificate></X509Data></KeyInfo>` +
    `${use === 'encryption' ? ENCRYPTION_METHODS : ''}</KeyDescriptor>`
  );
}

/**
 * The SP's EntityDescriptor: signing key(s), and encryption ones when encrypted assertions are
 * allowed (SAML_ALLOW_ENCRYPTED_ASSERTIONS), the two NameID formats GoTrue asks for, the HTTP-POST ACS.
 */
export async function spMetadata(
  config: Config,
  now: Date,
  download: boolean,
): Promise<{ xml: string; rotating: boolean }> {
  const urls = spUrls(config);
  const { current, next } = await spKeys(config);
  const uses = config.saml.allowEncryptedAssertions ? ['signing', 'encryption'] : ['signing'];
  const keys = [current, ...(next ? [next] : [])].flatMap((k) => uses.map((use) => keyDescriptor(use, k.certificate)));
  const validUntil = new Date(now.getTime() + (download ? FIVE_YEARS_MS : VALID_MS)).toISOString();
  const cache = next ? ' cacheDuration="PT1H"' : '';
  const xml =
    `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" validUntil="${validUntil}"${cache} entityID="${xmlEscape(urls.entityId)}">` +
    `<SPSSODescriptor validUntil="${validUntil}" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" WantAssertionsSigned="true">` +
    keys.join('') +
    `<NameIDFormat>${NAMEID_EMAIL}</NameIDFormat><NameIDFormat>${NAMEID_PERSISTENT}</NameIDFormat>` +
    `<AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${xmlEscape(urls.acsUrl)}" index="1"></AssertionConsumerService>` +
    '</SPSSODescriptor></EntityDescriptor>';
  return { xml, rotating: next !== undefined };
}
