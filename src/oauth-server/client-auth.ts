// Client authentication at the OAuth endpoints (GoTrue: api/middleware.go requireOAuthClientAuth,
// oauthserver/auth.go ExtractClientCredentials, client_auth.go): client_secret_basic,
// client_secret_post, or none (public clients, PKCE only). Refusals are RFC 6749 §5.2
// `invalid_client`: 401 with a Basic challenge when the client tried HTTP Basic, else 400
// (authsvc; GoTrue answers 400 invalid_credentials in its own body).
import type { OAuthClientRow } from '../db/oauth-clients.ts';
import type { Deps } from '../deps.ts';
import { OAuthApiError } from '../core/errors.ts';
import { knownClient } from './metadata-document.ts';
import { clientSecretMatches } from './secrets.ts';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';
interface Credentials {
  clientId: string;
  secrets: string[];
  method: ClientAuthMethod;
}

/** What the discovery documents list: exactly the methods authenticateClient accepts. */
export const CLIENT_AUTH_METHODS: ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="OAuth", charset="UTF-8"' };

const refuse = (msg: string, basic: boolean) =>
  new OAuthApiError('invalid_client', msg, undefined, basic ? { status: 401, headers: BASIC_CHALLENGE } : {});

/** Go's base64.StdEncoding: padded standard alphabet, nothing else. */
function decodeStdBase64(s: string): string | undefined {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/** application/x-www-form-urlencoded decoding, which RFC 6749 §2.3.1 applies before Base64. */
function formDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function extract(authorization: string | undefined, body: { client_id?: string; client_secret?: string }): Credentials {
  if (authorization?.startsWith('Basic ')) {
    const decoded = decodeStdBase64(authorization.slice('Basic '.length));
    if (decoded === undefined) throw refuse('Invalid client credentials: invalid basic auth encoding', true);
    const colon = decoded.indexOf(':');
    if (colon < 0) throw refuse('Invalid client credentials: invalid basic auth format', true);
    const clientId = formDecode(decoded.slice(0, colon));
    const rawSecret = decoded.slice(colon + 1);
    const secret = formDecode(rawSecret);
    if (clientId === undefined || secret === undefined)
      throw refuse('Invalid client credentials: invalid basic auth encoding', true);
    // A client that did not form-encode (GoTrue's own reading) still matches with its raw secret.
    return { clientId, secrets: secret === rawSecret ? [secret] : [secret, rawSecret], method: 'client_secret_basic' };
  }
  const clientId = body.client_id ?? '';
  if (!clientId) throw refuse('Invalid client credentials: client_id is required', false);
  const secret = body.client_secret ?? '';
  return { clientId, secrets: secret ? [secret] : [], method: secret ? 'client_secret_post' : 'none' };
}

/** The client a request authenticates as: registered (a uuid), or a metadata document's (an https URL) already fetched. */
export async function authenticateClient(
  deps: Deps,
  authorization: string | undefined,
  body: { client_id?: string; client_secret?: string },
): Promise<OAuthClientRow> {
  const creds = extract(authorization, body);
  const basic = creds.method === 'client_secret_basic';
  const client = await knownClient(deps, creds.clientId);
  if (!client) throw refuse('Invalid client credentials', basic);
  if (creds.method !== client.tokenEndpointAuthMethod) {
    throw refuse(
      `invalid authentication method: client is registered for '${client.tokenEndpointAuthMethod}' but '${creds.method}' was used`,
      basic,
    );
  }
  if (client.clientType === 'public') {
    if (creds.secrets.length > 0) throw refuse('public clients must not provide client_secret', basic);
    return client;
  }
  if (creds.secrets.length === 0) throw refuse('confidential clients must provide client_secret', basic);
  // Every candidate is compared (constant time each), so the answer's timing does not say which matched.
  const matches = creds.secrets.map((s) => clientSecretMatches(s, client.clientSecretHash));
  if (!matches.includes(true)) throw refuse('invalid client credentials', basic);
  return client;
}
