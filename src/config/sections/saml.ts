// SAML 2.0 single sign-on, authsvc as the service provider (SAML_*; GoTrue's conf/saml.go).
import { bool, opt, withDefault, setting } from '../setting.ts';
import { parseSamlPrivateKey, parseUrl, seconds } from '../values.ts';

export const saml = {
  saml: {
    enabled: setting(
      'SAML_ENABLED',
      bool(false),
      'false',
      'SAML 2.0 single sign-on (/sso, /sso/saml/metadata, /sso/saml/acs); off, every /sso path answers 404 saml_provider_disabled. The admin API (/admin/sso/providers) works either way. Needs a runtime with node:crypto (Node, Bun, Deno; docs/sso-saml.md).',
    ),
    privateKey: setting(
      'SAML_PRIVATE_KEY',
      opt(parseSamlPrivateKey),
      '',
      "Required when SAML_ENABLED: the SP's RSA key, standard base64 of its PKCS#1 DER (e = 65537, at least 2048 bits), as GoTrue takes it; signs AuthnRequests, and a self-signed certificate made from it is published in the SP metadata.",
      { secret: true },
    ),
    privateKeyNext: setting(
      'SAML_PRIVATE_KEY_NEXT',
      opt(parseSamlPrivateKey),
      '',
      'The next SP key during a rotation (as SAML_PRIVATE_KEY): its certificate is published in the metadata beside the current one.',
      { secret: true },
    ),
    allowEncryptedAssertions: setting(
      'SAML_ALLOW_ENCRYPTED_ASSERTIONS',
      bool(false),
      'false',
      'Publish the SP key(s) for encryption in the metadata and accept encrypted assertions (RSA-OAEP key transport; AES-CBC or AES-GCM data), decrypted with SAML_PRIVATE_KEY, then SAML_PRIVATE_KEY_NEXT.',
    ),
    relayStateValidity: setting(
      'SAML_RELAY_STATE_VALIDITY_PERIOD',
      withDefault(seconds, 120),
      '2m',
      "How long after POST /sso the IdP's answer is accepted (the relay state's life).",
    ),
    externalUrl: setting(
      'SAML_EXTERNAL_URL',
      opt(parseUrl),
      'API_EXTERNAL_URL',
      'Base URL of the SP: entity ID and metadata at <url>/sso/saml/metadata, ACS at <url>/sso/saml/acs.',
    ),
  },
};
