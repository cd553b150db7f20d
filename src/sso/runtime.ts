// The SAML XML module of this runtime (deps.samlXml), or GoTrue-style JSON saying there is none.
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import type { SamlXml } from '../crypto/saml-xml.ts';

export const notSupported = () =>
  new ApiError(
    501,
    'saml_not_supported_on_runtime',
    'SAML 2.0 needs XML signature checks this runtime cannot run (Workers without nodejs_compat); run authsvc on Node, Bun or Deno for SSO',
  );

export async function samlXmlOf(deps: Deps): Promise<SamlXml> {
  if (!deps.samlXml) throw notSupported();
  return deps.samlXml();
}
