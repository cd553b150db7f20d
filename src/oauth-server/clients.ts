// OAuth clients: registration (admin and dynamic, RFC 7591), update, soft delete, secret
// regeneration, and the client JSON — GoTrue: oauthserver/service.go, client_auth.go, handlers.go.
import { transaction } from '../db/database.ts';
import {
  countDynamicClientsSince,
  deleteOAuthSessions,
  findOAuthClient,
  findOAuthClientByMetadataUrl,
  insertOAuthClient,
  lockDynamicRegistrations,
  type OAuthClientRow,
  updateOAuthClient,
} from '../db/oauth-clients.ts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound, OAuthApiError, validationFailed } from '../core/errors.ts';
import { newClientSecret } from './secrets.ts';

export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
type ClientType = 'public' | 'confidential';

const GRANT_TYPES = ['authorization_code', 'refresh_token'];
const DANGEROUS_SCHEMES = ['javascript', 'data', 'file', 'vbscript', 'about', 'blob'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (s: string): boolean => UUID_RE.test(s);

export interface RegisterParams {
  redirect_uris?: string[];
  client_type?: string;
  token_endpoint_auth_method?: string;
  grant_types?: string[];
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  /** Checked as client_uri is, not stored (GoTrue's table has no column for them). */
  policy_uri?: string;
  tos_uri?: string;
}

export interface UpdateParams {
  redirect_uris?: string[];
  grant_types?: string[];
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  policy_uri?: string;
  tos_uri?: string;
  token_endpoint_auth_method?: string;
}

/** The id a client goes by on the wire: its metadata document's URL, or its uuid. */
export const publicClientId = (c: Pick<OAuthClientRow, 'id' | 'clientIdMetadataUrl'>): string =>
  c.clientIdMetadataUrl ?? c.id;

/** The client as GoTrue's OAuthServerClientResponse serialises it (field order, omitempty). */
export function clientJson(c: OAuthClientRow, secret?: string): Record<string, unknown> {
  const out: Record<string, unknown> = { client_id: publicClientId(c) };
  // RFC 7591 §3.2.1 (authsvc; GoTrue sends neither): when the id was issued, and that a secret never expires.
  out.client_id_issued_at = Math.floor(c.createdAt.getTime() / 1000);
  if (secret) {
    out.client_secret = secret;
    out.client_secret_expires_at = 0;
  }
  out.client_type = c.clientType;
  const uris = splitList(c.redirectUris);
  if (uris.length > 0) out.redirect_uris = uris;
  out.token_endpoint_auth_method = c.tokenEndpointAuthMethod;
  out.grant_types = splitList(c.grantTypes);
  out.response_types = ['code'];
  if (c.clientName) out.client_name = c.clientName;
  if (c.clientUri) out.client_uri = c.clientUri;
  if (c.logoUri) out.logo_uri = c.logoUri;
  out.registration_type = c.registrationType;
  out.created_at = c.createdAt.toISOString();
  out.updated_at = c.updatedAt.toISOString();
  return out;
}

/** GoTrue stores lists comma-joined. */
export const splitList = (s: string): string[] => (s === '' ? [] : s.split(','));

/** Why a redirect URI is refused (OAuth 2.1 §2.3.1, RFC 6819 §5.1.1), or undefined. */
function redirectUriProblem(uri: string): string | undefined {
  if (uri === '') return 'redirect URI cannot be empty';
  // oauth_authorizations.redirect_uri holds at most 2048 characters: a longer one could never be used.
  if (uri.length > 2048) return 'redirect URI cannot exceed 2048 characters';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'invalid URL format';
  }
  const scheme = u.protocol.slice(0, -1);
  if (!scheme || !u.host) return 'must have scheme and host';
  if (DANGEROUS_SCHEMES.includes(scheme.toLowerCase())) return `scheme '${scheme}' is not allowed for security reasons`;
  if (scheme === 'http' && !['localhost', '127.0.0.1', '::1', '[::1]'].includes(u.hostname))
    return 'HTTP scheme only allowed for localhost';
  // A comma would split the stored list (GoTrue joins redirect_uris with commas).
  if (uri.includes(',')) return 'commas are not allowed in a redirect URI';
  if (u.hash !== '' || uri.includes('#')) return 'fragment not allowed in redirect URI';
  return undefined;
}

/**
 * A refused registration field: GoTrue's 400 validation_failed to the admin API, RFC 7591 §3.2.2's
 * `invalid_redirect_uri` / `invalid_client_metadata` to dynamic registration.
 */
export class ClientMetadataError extends ApiError {
  constructor(
    readonly kind: 'invalid_redirect_uri' | 'invalid_client_metadata',
    message: string,
  ) {
    super(400, 'validation_failed', message);
    this.name = 'ClientMetadataError';
  }
}

const badRedirectUri = (msg: string) => new ClientMetadataError('invalid_redirect_uri', msg);
const badMetadata = (msg: string) => new ClientMetadataError('invalid_client_metadata', msg);

export function checkRedirectUris(uris: string[] | undefined, required: boolean): void {
  if (required && (!uris || uris.length === 0)) throw badRedirectUri('redirect_uris is required');
  if (!uris || uris.length === 0) throw badRedirectUri('redirect_uris cannot be empty');
  if (uris.length > 10) throw badRedirectUri('redirect_uris cannot exceed 10 items');
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw badRedirectUri(`invalid redirect_uri '${uri}': ${problem}`);
  }
}

export function checkGrantTypes(types: string[]): void {
  if (types.length === 0) throw badMetadata('grant_types cannot be empty');
  if (types.some((g) => !GRANT_TYPES.includes(g)))
    throw badMetadata("grant_types must only contain 'authorization_code' and/or 'refresh_token'");
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * A URL the consent page shows or links to: https, or http on loopback only (authsvc; GoTrue takes
 * anything url.ParseRequestURI parses, so `javascript:` reached the app's consent page).
 */
function isPageUrl(s: string): boolean {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  return u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK_HOSTS.includes(u.hostname));
}

type MetadataUri = 'client_uri' | 'logo_uri' | 'policy_uri' | 'tos_uri';

function checkUri(name: MetadataUri, value: string | undefined): void {
  if (!value) return;
  if (value.length > 2048) throw badMetadata(`${name} cannot exceed 2048 characters`);
  if (!isPageUrl(value)) throw badMetadata(`${name} must be an https URL (http only on localhost)`);
}

export function checkMetadata(p: { client_name?: string } & Partial<Record<MetadataUri, string>>): void {
  if (p.client_name !== undefined && p.client_name.length > 1024)
    throw badMetadata('client_name cannot exceed 1024 characters');
  for (const name of ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri'] as const) checkUri(name, p[name]);
}

const typeForMethod = (m: string): ClientType => (m === 'none' ? 'public' : 'confidential');
const methodsFor = (t: string): AuthMethod[] =>
  t === 'public' ? ['none'] : t === 'confidential' ? ['client_secret_basic', 'client_secret_post'] : [];
const goList = (xs: readonly string[]) => `[${xs.join(' ')}]`;

function validateRegistration(p: RegisterParams): void {
  checkRedirectUris(p.redirect_uris, true);
  if (p.grant_types && p.grant_types.length > 0) checkGrantTypes(p.grant_types);
  checkMetadata(p);
  if (p.client_type && p.client_type !== 'public' && p.client_type !== 'confidential') {
    throw badMetadata("client_type must be 'public' or 'confidential'");
  }
  const method = p.token_endpoint_auth_method;
  if (method && !(AUTH_METHODS as readonly string[]).includes(method)) {
    throw badMetadata(`token_endpoint_auth_method must be one of: ${goList(AUTH_METHODS)}`);
  }
  if (p.client_type && method && p.client_type !== typeForMethod(method)) {
    throw badMetadata(
      `client_type '${p.client_type}' is inconsistent with token_endpoint_auth_method '${method}' (expected client_type '${typeForMethod(method)}')`,
    );
  }
}

/**
 * Registers a client; the secret (confidential clients) is returned once and only its hash kept.
 * GoTrue answers every validation failure here with the inner error's text, "400: <message>".
 */
export async function registerClient(
  deps: Deps,
  p: RegisterParams,
  registrationType: 'manual' | 'dynamic',
): Promise<Record<string, unknown>> {
  try {
    validateRegistration(p);
  } catch (err) {
    if (err instanceof ClientMetadataError && registrationType === 'dynamic')
      throw new OAuthApiError(err.kind, err.message);
    if (err instanceof ApiError) throw validationFailed(`400: ${err.message}`);
    throw err;
  }
  const clientType: ClientType =
    (p.client_type as ClientType | undefined) ||
    (p.token_endpoint_auth_method ? typeForMethod(p.token_endpoint_auth_method) : 'confidential');
  const method = p.token_endpoint_auth_method || (clientType === 'public' ? 'none' : 'client_secret_basic');
  const secret = clientType === 'confidential' ? newClientSecret(deps.randomBytes) : undefined;
  const now = deps.now();
  const values = {
    id: crypto.randomUUID(),
    clientSecretHash: secret?.hash ?? null,
    registrationType,
    clientType,
    tokenEndpointAuthMethod: method,
    redirectUris: p.redirect_uris!.join(','),
    grantTypes: (p.grant_types && p.grant_types.length > 0 ? p.grant_types : GRANT_TYPES).join(','),
    clientName: p.client_name || null,
    clientUri: p.client_uri || null,
    logoUri: p.logo_uri || null,
    createdAt: now,
    updatedAt: now,
  };
  const limit = deps.config.oauthServer.dynamicRegistrationHourlyLimit;
  if (registrationType === 'manual' || limit === 0)
    return clientJson(await insertOAuthClient(deps.db, values), secret?.secret);
  // A bound on what anyone can create, across instances and without RATE_LIMIT_HEADER.
  const row = await transaction(deps.db, async (tx) => {
    await lockDynamicRegistrations(tx);
    if ((await countDynamicClientsSince(tx, new Date(now.getTime() - 3600_000))) >= limit) {
      throw new ApiError(429, 'over_request_rate_limit', 'Dynamic client registration limit reached, try again later');
    }
    return insertOAuthClient(tx, values);
  });
  return clientJson(row, secret?.secret);
}

/** GoTrue's LoadOAuthServerClient: 400 for a malformed id, 404 for a missing or deleted client. */
export async function loadClient(deps: Deps, id: string): Promise<OAuthClientRow> {
  // A metadata document's client goes by its URL (percent-encoded in the path).
  if (id.startsWith('https://')) {
    const client = await findOAuthClientByMetadataUrl(deps.db, id);
    if (!client) throw notFound('oauth_client_not_found', 'OAuth client not found');
    return client;
  }
  if (!isUuid(id)) throw validationFailed('invalid client_id format');
  const client = await findOAuthClient(deps.db, id.toLowerCase());
  if (!client) throw notFound('oauth_client_not_found', 'OAuth client not found');
  return client;
}

export async function updateClient(
  deps: Deps,
  client: OAuthClientRow,
  p: UpdateParams,
): Promise<Record<string, unknown>> {
  if (Object.values(p).every((v) => v === undefined)) throw validationFailed('No fields provided for update');
  if (p.redirect_uris !== undefined) checkRedirectUris(p.redirect_uris, false);
  if (p.grant_types !== undefined) checkGrantTypes(p.grant_types);
  checkMetadata(p);
  const method = p.token_endpoint_auth_method;
  if (method !== undefined) {
    if (!(AUTH_METHODS as readonly string[]).includes(method)) {
      throw validationFailed(`invalid token_endpoint_auth_method: must be one of ${goList(AUTH_METHODS)}`);
    }
    if (!methodsFor(client.clientType).includes(method as AuthMethod)) {
      throw validationFailed(
        `token_endpoint_auth_method '${method}' is not valid for client_type '${client.clientType}'; valid methods: ${goList(methodsFor(client.clientType))}`,
      );
    }
  }
  const updated = await updateOAuthClient(deps.db, client.id, {
    ...(p.redirect_uris !== undefined ? { redirectUris: p.redirect_uris.join(',') } : {}),
    ...(p.grant_types !== undefined ? { grantTypes: p.grant_types.join(',') } : {}),
    ...(p.client_name !== undefined ? { clientName: p.client_name || null } : {}),
    ...(p.client_uri !== undefined ? { clientUri: p.client_uri || null } : {}),
    ...(p.logo_uri !== undefined ? { logoUri: p.logo_uri || null } : {}),
    ...(method !== undefined ? { tokenEndpointAuthMethod: method } : {}),
    updatedAt: deps.now(),
  });
  if (!updated) throw notFound('oauth_client_not_found', 'OAuth client not found');
  return clientJson(updated);
}

/**
 * Soft delete, as GoTrue. authsvc also ends the sessions the client holds: a deleted client's
 * refresh tokens could not be used anyway (client authentication fails), but its access tokens
 * would live on until they expire.
 */
export async function deleteClient(deps: Deps, client: OAuthClientRow): Promise<void> {
  await transaction(deps.db, async (tx) => {
    const now = deps.now();
    await updateOAuthClient(tx, client.id, { deletedAt: now, updatedAt: now });
    await deleteOAuthSessions(tx, client.id);
  });
}

export async function regenerateSecret(deps: Deps, client: OAuthClientRow): Promise<Record<string, unknown>> {
  if (client.clientType !== 'confidential') throw validationFailed('Cannot regenerate secret for public client');
  const secret = newClientSecret(deps.randomBytes);
  const updated = await updateOAuthClient(deps.db, client.id, { clientSecretHash: secret.hash, updatedAt: deps.now() });
  if (!updated) throw notFound('oauth_client_not_found', 'OAuth client not found');
  return clientJson(updated, secret.secret);
}
