// Client authentication at POST /oauth/token (GoTrue: api/middleware.go requireOAuthClientAuth,
// oauthserver/auth.go ExtractClientCredentials, client_auth.go): client_secret_basic,
// client_secret_post, or none (public clients, PKCE only). Refusals are 400 invalid_credentials.
import { findOAuthClient, type OAuthClientRow } from '../db/oauth-clients.ts';
import type { Deps } from '../deps.ts';
import { badRequest } from '../http/errors.ts';
import { isUuid } from './clients.ts';
import { clientSecretMatches } from './secrets.ts';

interface Credentials { clientId: string; secret: string; method: 'client_secret_basic' | 'client_secret_post' | 'none' }

const refuse = (msg: string) => badRequest('invalid_credentials', msg);

/** Go's base64.StdEncoding: padded standard alphabet, nothing else. */
function decodeStdBase64(s: string): string | undefined {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

function extract(authorization: string | undefined, body: { client_id?: string; client_secret?: string }): Credentials {
  if (authorization?.startsWith('Basic ')) {
    const decoded = decodeStdBase64(authorization.slice('Basic '.length));
    if (decoded === undefined) throw refuse('Invalid client credentials: invalid basic auth encoding');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw refuse('Invalid client credentials: invalid basic auth format');
    return { clientId: decoded.slice(0, colon), secret: decoded.slice(colon + 1), method: 'client_secret_basic' };
  }
  const clientId = body.client_id ?? '';
  if (!clientId) throw refuse('Invalid client credentials: client_id is required');
  const secret = body.client_secret ?? '';
  return { clientId, secret, method: secret ? 'client_secret_post' : 'none' };
}

export async function authenticateClient(
  deps: Deps, authorization: string | undefined, body: { client_id?: string; client_secret?: string },
): Promise<OAuthClientRow> {
  const creds = extract(authorization, body);
  if (!isUuid(creds.clientId)) throw refuse('Invalid client_id format');
  const client = await findOAuthClient(deps.db, creds.clientId.toLowerCase());
  if (!client) throw refuse('Invalid client credentials');
  if (creds.method !== client.tokenEndpointAuthMethod) {
    throw refuse(`invalid authentication method: client is registered for '${client.tokenEndpointAuthMethod}' but '${creds.method}' was used`);
  }
  if (client.clientType === 'public') {
    if (creds.secret) throw refuse('public clients must not provide client_secret');
    return client;
  }
  if (!creds.secret) throw refuse('confidential clients must provide client_secret');
  if (!clientSecretMatches(creds.secret, client.clientSecretHash)) throw refuse('invalid client credentials');
  return client;
}
