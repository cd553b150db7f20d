// GET /oauth/authorize (GoTrue: oauthserver/authorize.go OAuthServerAuthorize). Until the client
// and its exact redirect URI are known, errors are JSON; after that they go back to the client
// as `?error=…` redirects. A valid request is stored as a pending authorization (no user yet)
// and the browser is sent to the app's consent page with its authorization_id.
import { badRequest, validationFailed } from '../core/errors.ts';
import { insertOAuthAuthorization, sweepOAuthAuthorizations } from '../db/oauth-authorizations.ts';
import { findOAuthClient, type OAuthClientRow } from '../db/oauth-clients.ts';
import type { Deps } from '../deps.ts';
import { isUuid, splitList } from './clients.ts';
import { isMetadataDocumentId, metadataDocumentClient } from './metadata-document.ts';
import { isSupportedScope, parseScopes } from './scopes.ts';

export interface AuthorizeQuery {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  scope?: string;
  state?: string;
  resource?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  nonce?: string;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Used codes are kept this long past their expiry so a late second use still ends their session. */
const USED_CODE_RETENTION_SECONDS = 24 * 3600;

/** `<uri>` with `params` merged into its query (Go's url.Values.Encode: keys sorted, spaces as +). */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') u.searchParams.set(k, v);
  u.searchParams.sort();
  return u.toString();
}

/** RFC 9207 (authsvc): every authorization response, errors too, names the issuer when there is one. */
export function errorRedirect(
  uri: string,
  error: string,
  description: string,
  state: string | null | undefined,
  issuer: string | undefined,
): string {
  return withQuery(uri, { error, error_description: description, state: state ?? undefined, iss: issuer });
}

/** 32 random alphanumerics (GoTrue's crypto.SecureAlphanumeric), without modulo bias. */
function authorizationId(deps: Deps): string {
  let out = '';
  while (out.length < 32) {
    for (const b of deps.randomBytes(48)) {
      if (b < 248 && out.length < 32) out += ALPHANUMERIC[b % 62];
    }
  }
  return out;
}

/** RFC 8707 §2: an absolute URI without a fragment (and, as GoTrue, without a query). */
export function resourceProblem(resource: string): string | undefined {
  let u: URL;
  try {
    u = new URL(resource);
  } catch {
    return 'resource must be an absolute URI';
  }
  if (u.hash !== '' || resource.includes('#')) return 'resource must not include a fragment component';
  if (u.search !== '') return 'resource must not include a query component';
  if (resource.length > 2048) return 'resource cannot exceed 2048 characters';
  return undefined;
}

/** Why the request is refused (sent to the client as invalid_request), or undefined. */
function requestProblem(q: AuthorizeQuery, scope: string): string | undefined {
  if ((q.response_type || 'code') !== 'code') return 'only response_type=code is supported';
  const scopes = parseScopes(scope);
  if (scopes.length === 0) return 'scope parameter cannot be empty';
  const unsupported = scopes.find((s) => !isSupportedScope(s));
  if (unsupported !== undefined) return `unsupported scope: ${unsupported}`;
  if (q.resource) {
    const problem = resourceProblem(q.resource);
    if (problem) return problem;
  }
  if (!q.code_challenge || !q.code_challenge_method)
    return 'PKCE flow requires both code_challenge and code_challenge_method';
  // OAuth 2.1 and MCP: S256 only (GoTrue also accepts `plain`, which protects nothing against an
  // attacker who sees the authorization request).
  if (q.code_challenge_method.toLowerCase() !== 's256') return "code_challenge_method must be 'S256'";
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(q.code_challenge))
    return 'code_challenge must be between 43 and 128 characters';
  if ((q.state?.length ?? 0) > 4096) return 'state cannot exceed 4096 characters';
  if ((q.nonce?.length ?? 0) > 255) return 'nonce cannot exceed 255 characters';
  if (scope.length > 4096) return 'scope cannot exceed 4096 characters';
  return undefined;
}

/** The client an authorization request names: registered (a uuid), or a metadata document (an https URL). */
async function authorizingClient(deps: Deps, clientId: string): Promise<OAuthClientRow> {
  if (isMetadataDocumentId(deps, clientId)) return metadataDocumentClient(deps, clientId);
  if (!isUuid(clientId)) throw badRequest('oauth_client_not_found', 'invalid client_id format');
  const client = await findOAuthClient(deps.db, clientId.toLowerCase());
  if (!client) throw badRequest('oauth_client_not_found', 'invalid client_id');
  return client;
}

/** The URL the browser is sent to (302). */
export async function authorize(deps: Deps, q: AuthorizeQuery): Promise<string> {
  if (!q.client_id) throw validationFailed('client_id is required');
  if (!q.redirect_uri) throw validationFailed('redirect_uri is required');
  const client = await authorizingClient(deps, q.client_id);
  // Exact string match: a URI the client did not register never receives a redirect.
  if (!splitList(client.redirectUris).includes(q.redirect_uri)) throw validationFailed('invalid redirect_uri');

  const scope = q.scope || deps.config.oauthServer.defaultScope;
  const problem = requestProblem(q, scope);
  if (problem) return errorRedirect(q.redirect_uri, 'invalid_request', problem, q.state, deps.config.jwt.issuer);

  const path = deps.config.oauthServer.authorizationPath;
  const now = deps.now();
  const id = authorizationId(deps);
  await sweepOAuthAuthorizations(deps.db, now, USED_CODE_RETENTION_SECONDS);
  await insertOAuthAuthorization(deps.db, {
    id: crypto.randomUUID(),
    authorizationId: id,
    clientId: client.id,
    redirectUri: q.redirect_uri,
    scope,
    state: q.state || null,
    resource: q.resource || null,
    codeChallenge: q.code_challenge!,
    codeChallengeMethod: 's256',
    responseType: 'code',
    status: 'pending',
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.config.oauthServer.authorizationTtl * 1000),
    nonce: q.nonce || null,
  });
  if (!path)
    return errorRedirect(
      q.redirect_uri,
      'server_error',
      'oauth authorization path not configured',
      q.state,
      deps.config.jwt.issuer,
    );
  const base = deps.config.siteUrl.replace(/\/+$/, '');
  return `${base}${path.startsWith('/') ? path : `/${path}`}?authorization_id=${id}`;
}
