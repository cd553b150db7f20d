// The admin API of custom OAuth/OIDC providers (GoTrue: api/custom_oauth_admin.go): the checks in
// GoTrue's order, the SSRF guard on every URL, the OIDC discovery document fetched and checked
// before anything is stored, the client secret sealed under the row's id when DB encryption is on.
import * as z from 'zod';
import { sealSecret } from '../crypto/encrypted-string.ts';
import {
  type CustomProviderRow,
  countCustomProviders,
  deleteCustomProvider,
  findCustomProvider,
  insertCustomProvider,
  listCustomProviders,
  type NewCustomProvider,
  updateCustomProvider,
} from '../db/custom-providers.ts';
import { isUniqueViolation } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { urlGuard } from '../accounts/custom-provider.ts';
import { ApiError, badRequest, notFound, validationFailed } from '../core/errors.ts';
import { optBool, optRecord, optStr } from '../http/read-json.ts';
import { obj, str } from '../oauth/claims.ts';
import { bodyText, send } from '../oauth/oauth2.ts';
import { discoveryUrlOf } from '../oauth/oidc-cache.ts';
import { checkProviderUrl, guardedFetch, UnsafeUrl } from '../oauth/url-guard.ts';

const optList = z
  .array(z.string())
  .nullish()
  .transform((v) => v ?? undefined);

export const CustomProviderBody = z.object({
  provider_type: optStr,
  identifier: optStr,
  name: optStr,
  client_id: optStr,
  client_secret: optStr,
  acceptable_client_ids: optList,
  scopes: optList,
  pkce_enabled: optBool,
  attribute_mapping: optRecord,
  custom_claims_allowlist: optList,
  authorization_params: optRecord,
  enabled: optBool,
  email_optional: optBool,
  issuer: optStr,
  discovery_url: optStr,
  skip_nonce_check: optBool,
  authorization_url: optStr,
  token_url: optStr,
  userinfo_url: optStr,
  jwks_uri: optStr,
});
export type CustomProviderParams = z.infer<typeof CustomProviderBody>;

const RESERVED_PARAMS = [
  'client_id',
  'client_secret',
  'redirect_uri',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
  'code_verifier',
  'nonce',
];
const PROTECTED_TARGETS = [
  'id',
  'aud',
  'role',
  'app_metadata',
  'created_at',
  'updated_at',
  'confirmed_at',
  'email_confirmed_at',
  'phone_confirmed_at',
  'email_verified',
  'phone_verified',
  'banned_until',
  'is_super_admin',
];
/** The table's CHECK on identifier; GoTrue lets a bad one reach the database (500), authsvc answers 400. */
const IDENTIFIER_RE = /^[a-z0-9][a-z0-9:-]{0,48}[a-z0-9]$/;
const MAX_URL = 2048;

const notFoundError = () => notFound('custom_provider_not_found', 'Custom OAuth provider not found');
const prefixError = (id: string) =>
  validationFailed(`identifier must start with 'custom:' prefix, e.g. 'custom:${id}'`);

/** GoTrue's provider JSON: never the client secret. */
export function customProviderJson(row: CustomProviderRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: row.id,
    provider_type: row.providerType,
    identifier: row.identifier,
    name: row.name,
    client_id: row.clientId,
    acceptable_client_ids: row.acceptableClientIds,
    scopes: row.scopes,
    pkce_enabled: row.pkceEnabled,
    attribute_mapping: row.attributeMapping,
    custom_claims_allowlist: row.customClaimsAllowlist,
    authorization_params: row.authorizationParams,
    enabled: row.enabled,
    email_optional: row.emailOptional,
  };
  if (row.issuer !== null) out.issuer = row.issuer;
  if (row.discoveryUrl !== null) out.discovery_url = row.discoveryUrl;
  out.skip_nonce_check = row.skipNonceCheck;
  if (row.cachedDiscovery) out.discovery_document = row.cachedDiscovery;
  if (row.authorizationUrl !== null) out.authorization_url = row.authorizationUrl;
  if (row.tokenUrl !== null) out.token_url = row.tokenUrl;
  if (row.userinfoUrl !== null) out.userinfo_url = row.userinfoUrl;
  if (row.jwksUri !== null) out.jwks_uri = row.jwksUri;
  out.created_at = row.createdAt.toISOString();
  out.updated_at = row.updatedAt.toISOString();
  return out;
}

export function checkPathIdentifier(identifier: string): void {
  if (!identifier) throw validationFailed('identifier is required');
  if (!identifier.startsWith('custom:')) throw prefixError(identifier);
}

export async function adminListCustomProviders(
  deps: Deps,
  type: string | undefined,
): Promise<Record<string, unknown>[]> {
  if (type && type !== 'oauth2' && type !== 'oidc') throw validationFailed("type must be either 'oauth2' or 'oidc'");
  return (await listCustomProviders(deps.db, type === 'oauth2' || type === 'oidc' ? type : undefined)).map(
    customProviderJson,
  );
}

export async function adminGetCustomProvider(deps: Deps, identifier: string): Promise<Record<string, unknown>> {
  checkPathIdentifier(identifier);
  const row = await findCustomProvider(deps.db, identifier);
  if (!row) throw notFoundError();
  return customProviderJson(row);
}

function checkAuthorizationParams(params: Record<string, unknown> | undefined): void {
  for (const [k, v] of Object.entries(params ?? {})) {
    if (RESERVED_PARAMS.includes(k)) throw validationFailed(`Cannot override reserved OAuth parameter: ${k}`);
    if (typeof v !== 'string') throw validationFailed(`Authorization parameter ${JSON.stringify(k)} must be a string`);
  }
}

function checkAttributeMapping(mapping: Record<string, unknown> | undefined): void {
  for (const k of Object.keys(mapping ?? {})) {
    if (PROTECTED_TARGETS.includes(k)) throw validationFailed(`Cannot map to protected system field: ${k}`);
  }
}

function checkAllowlist(list: string[] | undefined): void {
  if (list?.some((k) => k.trim() === ''))
    throw validationFailed('custom_claims_allowlist entries must be non-empty strings');
}

/** ValidateOAuthURL for the admin: 400 validation_failed with GoTrue's words. */
async function checkUrl(deps: Deps, url: string): Promise<void> {
  if (url.length > MAX_URL) throw validationFailed('URL must not be longer than 2048 characters');
  try {
    await checkProviderUrl(url, urlGuard(deps));
  } catch (err) {
    if (err instanceof UnsafeUrl) throw validationFailed(err.message);
    throw err;
  }
}

function checkRequired(p: CustomProviderParams, type: 'oauth2' | 'oidc'): void {
  if (!p.identifier) throw validationFailed('identifier is required');
  if (!p.identifier.startsWith('custom:')) throw prefixError(p.identifier);
  // Stricter than GoTrue, whose database refuses these with a 500.
  if (!IDENTIFIER_RE.test(p.identifier))
    throw validationFailed(
      'identifier must be lower-case letters, digits, ":" and "-", at most 50 characters, not ending in ":" or "-"',
    );
  if (!p.name) throw validationFailed('name is required');
  if ([...p.name].length > 100) throw validationFailed('name must be at most 100 characters');
  if (!p.client_id) throw validationFailed('client_id is required');
  if ([...p.client_id].length > 512) throw validationFailed('client_id must be at most 512 characters');
  if (!p.client_secret) throw validationFailed('client_secret is required');
  if (type === 'oidc' && !p.issuer) throw validationFailed('issuer is required for OIDC providers');
  if (type === 'oauth2') {
    if (!p.authorization_url) throw validationFailed('authorization_url is required for OAuth2 providers');
    if (!p.token_url) throw validationFailed('token_url is required for OAuth2 providers');
    if (!p.userinfo_url) throw validationFailed('userinfo_url is required for OAuth2 providers');
  }
}

const withOpenid = (scopes: string[]) => (scopes.includes('openid') ? scopes : ['openid', ...scopes]);

/**
 * FetchAndValidateOIDCDiscovery and the admin's required fields: the document, fetched through the
 * guard, must name the expected issuer and the four endpoints OpenID Discovery requires.
 */
async function fetchDiscovery(deps: Deps, url: string, issuer: string): Promise<Record<string, unknown>> {
  const failed = (why: string) => validationFailed(`OIDC discovery from ${JSON.stringify(url)} failed: ${why}`);
  const ctx = {
    fetch: guardedFetch(deps.fetch, urlGuard(deps)),
    timeoutMs: deps.config.sms.httpTimeout * 1000,
    userAgent: `authsvc/${deps.version || 'dev'}`,
  };
  let doc: Record<string, unknown>;
  try {
    const res = await send(ctx, url, { headers: { Accept: 'application/json' } }, 'discovery');
    const text = await bodyText(res, 'discovery');
    if (!res.ok) throw failed(`HTTP ${res.status}`);
    doc = obj(JSON.parse(text));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const cause =
      err instanceof Error && err.cause instanceof UnsafeUrl
        ? err.cause.message
        : err instanceof SyntaxError
          ? 'the answer is not JSON'
          : err instanceof Error
            ? err.message
            : 'failed';
    throw failed(cause);
  }
  if (str(doc.issuer) && str(doc.issuer) !== issuer)
    throw failed(
      `issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuer)} got ${JSON.stringify(str(doc.issuer))}`,
    );
  const missing = ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'].filter((k) => !str(doc[k]));
  if (missing.length > 0)
    throw validationFailed(`OIDC discovery document is missing required fields: ${missing.join(', ')}`);
  const kept: Record<string, unknown> = {};
  for (const k of ['issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri'])
    if (str(doc[k])) kept[k] = str(doc[k]);
  for (const k of [
    'scopes_supported',
    'response_types_supported',
    'grant_types_supported',
    'subject_types_supported',
  ]) {
    const v = doc[k];
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) kept[k] = v;
  }
  return kept;
}

export async function adminCreateCustomProvider(deps: Deps, p: CustomProviderParams): Promise<Record<string, unknown>> {
  const type = p.provider_type;
  if (type !== 'oauth2' && type !== 'oidc') throw validationFailed("provider_type must be either 'oauth2' or 'oidc'");
  checkRequired(p, type);
  checkAuthorizationParams(p.authorization_params);
  checkAttributeMapping(p.attribute_mapping);
  checkAllowlist(p.custom_claims_allowlist);
  const max = deps.config.customOAuth.maxProviders;
  if (max > 0 && (await countCustomProviders(deps.db)) >= max) {
    throw badRequest('over_custom_provider_quota', 'Maximum number of custom OAuth/OIDC providers reached');
  }
  const urls =
    type === 'oidc' ? [p.issuer, p.discovery_url] : [p.authorization_url, p.token_url, p.userinfo_url, p.jwks_uri];
  for (const u of urls) if (u) await checkUrl(deps, u);
  const identifier = p.identifier!;
  const conflict = () => badRequest('conflict', 'A custom OAuth provider with this identifier already exists');
  if (await findCustomProvider(deps.db, identifier)) throw conflict();
  const id = crypto.randomUUID();
  const now = deps.now();
  const row: NewCustomProvider = {
    id,
    providerType: type,
    identifier,
    name: p.name!,
    clientId: p.client_id!,
    clientSecret: '',
    acceptableClientIds: p.acceptable_client_ids ?? [],
    scopes: type === 'oidc' ? withOpenid(p.scopes ?? []) : (p.scopes ?? []),
    pkceEnabled: p.pkce_enabled ?? true,
    attributeMapping: p.attribute_mapping ?? {},
    customClaimsAllowlist: p.custom_claims_allowlist ?? [],
    authorizationParams: (p.authorization_params ?? {}) as Record<string, string>,
    enabled: p.enabled ?? true,
    emailOptional: p.email_optional ?? false,
    createdAt: now,
    updatedAt: now,
  };
  if (type === 'oidc') {
    Object.assign(row, {
      issuer: p.issuer,
      discoveryUrl: p.discovery_url || null,
      skipNonceCheck: p.skip_nonce_check ?? false,
    });
    row.cachedDiscovery = await fetchDiscovery(deps, p.discovery_url || discoveryUrlOf(p.issuer!), p.issuer!);
    row.discoveryCachedAt = now;
  } else {
    Object.assign(row, {
      authorizationUrl: p.authorization_url,
      tokenUrl: p.token_url,
      userinfoUrl: p.userinfo_url,
      jwksUri: p.jwks_uri || null,
    });
  }
  row.clientSecret = await sealSecret(deps.config.security.dbEncryption, id, p.client_secret!, deps.randomBytes);
  try {
    return customProviderJson(await insertCustomProvider(deps.db, row));
  } catch (err) {
    // Two creations racing for one identifier: the loser is told as the sequential case is.
    if (isUniqueViolation(err)) throw conflict();
    throw new ApiError(500, 'unexpected_failure', 'Error creating custom OAuth provider', undefined, err);
  }
}

export async function adminUpdateCustomProvider(
  deps: Deps,
  identifier: string,
  p: CustomProviderParams,
): Promise<Record<string, unknown>> {
  checkPathIdentifier(identifier);
  if (p.authorization_params !== undefined) checkAuthorizationParams(p.authorization_params);
  if (p.attribute_mapping !== undefined) checkAttributeMapping(p.attribute_mapping);
  if (p.custom_claims_allowlist !== undefined) checkAllowlist(p.custom_claims_allowlist);
  const row = await findCustomProvider(deps.db, identifier);
  if (!row) throw notFoundError();
  if (p.name && [...p.name].length > 100) throw validationFailed('name must be at most 100 characters');
  if (p.client_id && [...p.client_id].length > 512) throw validationFailed('client_id must be at most 512 characters');
  const set: Partial<NewCustomProvider> = { updatedAt: deps.now() };
  if (p.name) set.name = p.name;
  if (p.client_id) set.clientId = p.client_id;
  if (p.acceptable_client_ids !== undefined) set.acceptableClientIds = p.acceptable_client_ids;
  if (p.scopes !== undefined) set.scopes = row.providerType === 'oidc' ? withOpenid(p.scopes) : p.scopes;
  if (p.pkce_enabled !== undefined) set.pkceEnabled = p.pkce_enabled;
  if (p.attribute_mapping !== undefined) set.attributeMapping = p.attribute_mapping;
  if (p.custom_claims_allowlist !== undefined) set.customClaimsAllowlist = p.custom_claims_allowlist;
  if (p.authorization_params !== undefined) set.authorizationParams = p.authorization_params as Record<string, string>;
  if (p.enabled !== undefined) set.enabled = p.enabled;
  if (p.email_optional !== undefined) set.emailOptional = p.email_optional;
  const oldDiscovery = row.issuer ? row.discoveryUrl || discoveryUrlOf(row.issuer) : undefined;
  if (row.providerType === 'oidc') {
    if (p.issuer) {
      await checkUrl(deps, p.issuer);
      set.issuer = p.issuer;
    }
    if (p.discovery_url) {
      await checkUrl(deps, p.discovery_url);
      set.discoveryUrl = p.discovery_url;
    }
    if (p.skip_nonce_check !== undefined) set.skipNonceCheck = p.skip_nonce_check;
    if (p.issuer || p.discovery_url !== undefined) {
      const issuer = set.issuer ?? row.issuer ?? '';
      set.cachedDiscovery = await fetchDiscovery(
        deps,
        (set.discoveryUrl ?? row.discoveryUrl) || discoveryUrlOf(issuer),
        issuer,
      );
      set.discoveryCachedAt = deps.now();
    }
  } else {
    for (const [key, col] of [
      ['authorization_url', 'authorizationUrl'],
      ['token_url', 'tokenUrl'],
      ['userinfo_url', 'userinfoUrl'],
      ['jwks_uri', 'jwksUri'],
    ] as const) {
      const v = p[key];
      if (!v) continue;
      await checkUrl(deps, v);
      set[col] = v;
    }
  }
  if (p.client_secret)
    set.clientSecret = await sealSecret(deps.config.security.dbEncryption, row.id, p.client_secret, deps.randomBytes);
  const updated = await updateCustomProvider(deps.db, row.id, set);
  if (!updated) throw notFoundError();
  if (oldDiscovery) deps.oauthCache?.custom.forget(oldDiscovery);
  return customProviderJson(updated);
}

export async function adminDeleteCustomProvider(deps: Deps, identifier: string): Promise<void> {
  checkPathIdentifier(identifier);
  const row = await findCustomProvider(deps.db, identifier);
  if (!row || !(await deleteCustomProvider(deps.db, row.id))) throw notFoundError();
  if (row.issuer) deps.oauthCache?.custom.forget(row.discoveryUrl || discoveryUrlOf(row.issuer));
}
