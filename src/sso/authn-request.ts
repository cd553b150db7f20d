// The AuthnRequest of POST /sso (GoTrue: crewjam MakeAuthenticationRequest + Redirect): HTTP-
// Redirect binding, the request deflated and base64'd into SAMLRequest, the query signed with
// the SP key (RSA-SHA256) in SigAlg and Signature.
import type { Config } from '../config/types.ts';
import { hex } from '../crypto/encoding.ts';
import { signRsaSha256, toBase64 } from './keys.ts';
import { NAMEID_PERSISTENT, spKeys, spUrls } from './sp.ts';
import { xmlEscape } from './xml-text.ts';

const SIG_ALG = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

async function deflateRaw(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export interface AuthnRequest {
  /** The request's ID: the relay state's request_id, checked against InResponseTo. */
  id: string;
  url: string;
}

export async function authnRequestUrl(
  config: Config,
  r: {
    idpSsoUrl: string;
    relayState: string;
    nameIdFormat?: string | null;
    now: Date;
    randomBytes: (n: number) => Uint8Array;
  },
): Promise<AuthnRequest> {
  const sp = spUrls(config);
  const id = `id-${hex(r.randomBytes(20))}`;
  const xml =
    '<samlp:AuthnRequest xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"' +
    ` ID="${id}" Version="2.0" IssueInstant="${r.now.toISOString()}" Destination="${xmlEscape(r.idpSsoUrl)}"` +
    ` AssertionConsumerServiceURL="${xmlEscape(sp.acsUrl)}" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST">` +
    `<saml:Issuer Format="urn:oasis:names:tc:SAML:2.0:nameid-format:entity">${xmlEscape(sp.entityId)}</saml:Issuer>` +
    `<samlp:NameIDPolicy Format="${xmlEscape(r.nameIdFormat || NAMEID_PERSISTENT)}" AllowCreate="true"></samlp:NameIDPolicy>` +
    '</samlp:AuthnRequest>';
  const query = `SAMLRequest=${encodeURIComponent(toBase64(await deflateRaw(xml)))}&RelayState=${encodeURIComponent(r.relayState)}&SigAlg=${encodeURIComponent(SIG_ALG)}`;
  const { current } = await spKeys(config);
  const signature = toBase64(await signRsaSha256(current.privateKey, new TextEncoder().encode(query)));
  const url = new URL(r.idpSsoUrl);
  return { id, url: `${url.toString()}${url.search ? '&' : '?'}${query}&Signature=${encodeURIComponent(signature)}` };
}
