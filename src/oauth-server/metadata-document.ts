// Client ID Metadata Documents (authsvc; the OAuth working group's client-id-metadata-document
// draft, which the MCP authorization spec of 2025-11-25 prefers to dynamic registration): a
// client_id that is an https URL is the address of the client's own metadata. It is fetched
// through the outbound-request guard (no private or loopback address, bounded size and time),
// checked (its client_id is the URL, its redirect URIs are used exactly as listed), and kept as a
// public client row, fetched again once its HTTP caching lifetime (within bounds) has passed.
import type { Deps } from '../deps.ts';
import {
  findOAuthClient,
  findOAuthClientByMetadataUrl,
  type OAuthClientRow,
  upsertMetadataClient,
} from '../db/oauth-clients.ts';
import { badRequest } from '../core/errors.ts';
import { urlGuard } from '../accounts/custom-provider.ts';
import { guardedFetch, UnsafeUrl } from '../oauth/url-guard.ts';
import { checkGrantTypes, checkMetadata, checkRedirectUris, ClientMetadataError, isUuid } from './clients.ts';

/** Bounds on a document: its size, how long a fetch may take, and how long it is trusted. */
export const METADATA_LIMITS = {
  maxBytes: 64 * 1024,
  timeoutMs: 5000,
  minTtlSeconds: 60,
  defaultTtlSeconds: 600,
  maxTtlSeconds: 24 * 3600,
};

/** Whether `clientId` names a metadata document here: the feature is on and it is an https URL with a path. */
export function isMetadataDocumentId(deps: Deps, clientId: string): boolean {
  if (!deps.config.oauthServer.clientIdMetadataDocuments || !clientId.startsWith('https://')) return false;
  try {
    const u = new URL(clientId);
    // The draft: https, a path, no fragment, no credentials; dot segments would make two names for one document.
    return (
      u.href === clientId &&
      u.pathname !== '/' &&
      !u.hash &&
      !u.username &&
      !u.password &&
      !/\/\.\.?(\/|$)/.test(clientId)
    );
  } catch {
    return false;
  }
}

const refused = (why: string) => badRequest('oauth_client_not_found', `client metadata document refused: ${why}`);

/** The client of a metadata document, from the row while it is fresh, else fetched again. */
export async function metadataDocumentClient(deps: Deps, url: string): Promise<OAuthClientRow> {
  const now = deps.now();
  const row = await findOAuthClientByMetadataUrl(deps.db, url);
  if (row?.metadataExpiresAt && row.metadataExpiresAt.getTime() > now.getTime()) return row;
  const { doc, ttlSeconds } = await fetchDocument(deps, url);
  const metadata = validated(doc, url);
  const client = await upsertMetadataClient(deps.db, {
    url,
    now,
    expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    redirectUris: metadata.redirect_uris.join(','),
    grantTypes: metadata.grant_types.join(','),
    clientName: metadata.client_name ?? null,
    clientUri: metadata.client_uri ?? null,
    logoUri: metadata.logo_uri ?? null,
  });
  if (!client) throw refused('an administrator deleted this client');
  return client;
}

/** A client presented by id at the token, revocation or introspection endpoint: registered, or a document already fetched. */
export async function knownClient(deps: Deps, clientId: string): Promise<OAuthClientRow | undefined> {
  if (isMetadataDocumentId(deps, clientId)) return findOAuthClientByMetadataUrl(deps.db, clientId);
  if (!isUuid(clientId)) return undefined;
  return findOAuthClient(deps.db, clientId.toLowerCase());
}

async function fetchDocument(deps: Deps, url: string): Promise<{ doc: unknown; ttlSeconds: number }> {
  let res: Response;
  try {
    res = await guardedFetch(deps.fetch, urlGuard(deps))(url, {
      headers: { Accept: 'application/json' },
      signal: AbortSignal.timeout(METADATA_LIMITS.timeoutMs),
    });
  } catch (err) {
    throw refused(err instanceof UnsafeUrl ? err.message : 'it could not be fetched');
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw refused(`HTTP ${res.status}`);
  }
  const text = await boundedText(res);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw refused('it is not JSON');
  }
  return { doc, ttlSeconds: cacheLifetime(res.headers, deps.now()) };
}

/** The body as text, refused past METADATA_LIMITS.maxBytes (counted while read, whatever Content-Length says). */
async function boundedText(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > METADATA_LIMITS.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw refused(`it is larger than ${METADATA_LIMITS.maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(all);
  } catch {
    throw refused('it is not UTF-8');
  }
}

/** Seconds the document may be used without fetching it again: its HTTP caching headers, within bounds. */
export function cacheLifetime(headers: Headers, now: Date): number {
  const { minTtlSeconds: min, defaultTtlSeconds: dflt, maxTtlSeconds: max } = METADATA_LIMITS;
  const clamp = (s: number) => Math.min(max, Math.max(min, s));
  const cc = (headers.get('cache-control') ?? '').toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/.test(cc)) return min;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?/.exec(cc);
  if (maxAge) return clamp(Number(maxAge[1]) - Number(headers.get('age') ?? 0));
  const expires = Date.parse(headers.get('expires') ?? '');
  if (!Number.isNaN(expires)) return clamp(Math.floor((expires - now.getTime()) / 1000));
  return dflt;
}

interface ClientMetadata {
  redirect_uris: string[];
  grant_types: string[];
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
}

const optionalString = (doc: Record<string, unknown>, key: string): string | undefined => {
  const v = doc[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw refused(`${key} must be a string`);
  return v;
};

/** The document as a public client's metadata, or why not. */
function validated(raw: unknown, url: string): ClientMetadata {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw refused('it is not a JSON object');
  const doc = raw as Record<string, unknown>;
  if (doc.client_id !== url) throw refused('its client_id is not the URL it was fetched from');
  // A document is public: anyone can read it, so it holds no secret and authenticates no one.
  if ('client_secret' in doc || 'client_secret_expires_at' in doc) throw refused('it must not carry a client_secret');
  const method = optionalString(doc, 'token_endpoint_auth_method') ?? 'none';
  if (method !== 'none') throw refused(`token_endpoint_auth_method '${method}' is not supported (only 'none')`);
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string'))
    throw refused('redirect_uris must be an array of strings');
  const grantTypes = doc.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!Array.isArray(grantTypes) || !grantTypes.every((g) => typeof g === 'string'))
    throw refused('grant_types must be an array of strings');
  const metadata: ClientMetadata = {
    redirect_uris: uris as string[],
    grant_types: grantTypes as string[],
    client_name: optionalString(doc, 'client_name'),
    client_uri: optionalString(doc, 'client_uri'),
    logo_uri: optionalString(doc, 'logo_uri'),
  };
  try {
    checkRedirectUris(metadata.redirect_uris, true);
    checkGrantTypes(metadata.grant_types);
    checkMetadata(metadata);
  } catch (err) {
    if (err instanceof ClientMetadataError) throw refused(err.message);
    throw err;
  }
  return metadata;
}
