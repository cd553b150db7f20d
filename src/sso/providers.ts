// The admin API of SSO providers (GoTrue: api/ssoadmin.go): SAML IdPs from metadata XML or a
// metadata URL (fetched through the custom providers' SSRF guard), their email domains,
// attribute mapping and NameID format. GoTrue's checks, order, texts and JSON.
import * as z from 'zod';
import { isUniqueViolation, transaction } from '../db/database.ts';
import {
  deleteSsoDomains,
  deleteSsoProvider,
  findSsoProviderByDomain,
  findSsoProviderByEntityId,
  findSsoProviderById,
  findSsoProviderByResourceId,
  insertSsoDomains,
  insertSsoProvider,
  listSsoProviders,
  type SsoProvider,
  updateSamlProviderRow,
  updateSsoProviderRow,
} from '../db/sso.ts';
import type { Deps } from '../deps.ts';
import { urlGuard } from '../accounts/custom-provider.ts';
import { ApiError, badRequest, notFound, unprocessable, validationFailed } from '../core/errors.ts';
import { optBool, optStr } from '../http/read-json.ts';
import { checkProviderUrl, guardedFetch, UnsafeUrl } from '../oauth/url-guard.ts';
import type { AttributeMapping } from './attributes.ts';
import { samlXmlOf } from './runtime.ts';
import { type IdpMetadata, SamlXmlError } from '../crypto/saml-xml.ts';
import { NAMEID_EMAIL, NAMEID_PERSISTENT, NAMEID_TRANSIENT, NAMEID_UNSPECIFIED } from './sp.ts';

const Mapper = z.object({
  name: optStr,
  names: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? undefined),
  default: z.unknown().optional(),
  array: optBool,
});
const Mapping = z.object({
  keys: z
    .record(z.string(), Mapper)
    .nullish()
    .transform((v) => v ?? undefined),
});

export const SsoProviderBody = z.object({
  type: optStr,
  metadata_url: optStr,
  metadata_xml: optStr,
  domains: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? undefined),
  attribute_mapping: Mapping.nullish().transform((v) => v ?? undefined),
  name_id_format: optStr,
  resource_id: z
    .string()
    .nullish()
    .transform((v) => v ?? undefined),
  disabled: optBool,
  /** authsvc's: the IdP may assert addresses outside its domains (domains.ts). */
  allow_any_email_domain: optBool,
});
export type SsoProviderParams = z.infer<typeof SsoProviderBody>;

const NAME_ID_FORMATS = [NAMEID_PERSISTENT, NAMEID_EMAIL, NAMEID_TRANSIENT, NAMEID_UNSPECIFIED];
const MAX_METADATA_BYTES = 1024 * 1024;

/** GoTrue's provider JSON (metadata_xml left out of lists). */
export function providerJson(p: SsoProvider, withXml = true): Record<string, unknown> {
  const saml: Record<string, unknown> = { entity_id: p.saml.entityId };
  if (withXml && p.saml.metadataXml) saml.metadata_xml = p.saml.metadataXml;
  if (p.saml.metadataUrl) saml.metadata_url = p.saml.metadataUrl;
  saml.attribute_mapping = mappingJson(p.saml.attributeMapping as AttributeMapping | null);
  if (p.saml.nameIdFormat) saml.name_id_format = p.saml.nameIdFormat;
  const out: Record<string, unknown> = { id: p.provider.id };
  if (p.provider.resourceId !== null) out.resource_id = p.provider.resourceId;
  out.disabled = p.provider.disabled;
  out.allow_any_email_domain = p.provider.allowAnyEmailDomain === true;
  out.saml = saml;
  out.domains = p.domains.map((d) => ({ domain: d.domain }));
  out.created_at = p.provider.createdAt;
  out.updated_at = p.provider.updatedAt;
  return out;
}

/** Go's omitempty on each mapper field. */
function mappingJson(m: AttributeMapping | null | undefined): Record<string, unknown> {
  if (!m?.keys || Object.keys(m.keys).length === 0) return {};
  const keys: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m.keys)) {
    const x: Record<string, unknown> = {};
    if (v.name) x.name = v.name;
    if (v.names && v.names.length > 0) x.names = v.names;
    if (v.default !== undefined && v.default !== null) x.default = v.default;
    if (v.array) x.array = true;
    keys[k] = x;
  }
  return { keys };
}

function storedMapping(m: SsoProviderParams['attribute_mapping']): Record<string, unknown> {
  return mappingJson(m as AttributeMapping | undefined);
}

function validate(deps: Deps, p: SsoProviderParams, forUpdate: boolean): void {
  if (!forUpdate && p.type !== 'saml') throw validationFailed("Only 'saml' supported for SSO provider type");
  if (p.metadata_url && p.metadata_xml)
    throw validationFailed('Only one of metadata_xml or metadata_url needs to be set');
  if (!forUpdate && !p.metadata_url && !p.metadata_xml)
    throw validationFailed('Either metadata_xml or metadata_url must be set');
  if (p.metadata_url) {
    let u: URL;
    try {
      u = new URL(p.metadata_url);
    } catch {
      throw validationFailed('metadata_url is not a valid URL');
    }
    // CUSTOM_OAUTH_TRUSTED_HOSTS may name an IdP inside the network, over http too.
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    const trusted = deps.config.customOAuth.trustedHosts.includes(`${u.hostname.toLowerCase()}:${port}`);
    if (u.protocol !== 'https:' && !(trusted && u.protocol === 'http:'))
      throw validationFailed('metadata_url is not a HTTPS URL');
  }
  if (p.name_id_format && !NAME_ID_FORMATS.includes(p.name_id_format)) {
    throw validationFailed(`name_id_format must be unspecified or one of ${NAME_ID_FORMATS.join(', ')}`);
  }
}

/** fetchSAMLMetadata, through the SSRF guard: non-200 → 400 saml_metadata_fetch_failed. */
async function fetchMetadata(deps: Deps, url: string): Promise<string> {
  const failed = (why: string) =>
    badRequest('saml_metadata_fetch_failed', `${why} fetching SAML Metadata from URL '${url}'`);
  const guard = urlGuard(deps);
  try {
    await checkProviderUrl(url, guard);
  } catch (err) {
    if (err instanceof UnsafeUrl) throw validationFailed(`metadata_url: ${err.message}`);
    throw err;
  }
  let res: Response;
  try {
    res = await guardedFetch(deps.fetch, guard)(url, {
      headers: { Accept: 'application/xml;charset=UTF-8', 'Accept-Charset': 'UTF-8' },
      signal: AbortSignal.timeout(deps.config.sms.httpTimeout * 1000),
    });
  } catch (err) {
    throw failed(err instanceof UnsafeUrl ? `Refused redirect (${err.message})` : 'Network error');
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw failed(`HTTP ${res.status} error`);
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length > MAX_METADATA_BYTES) throw failed('Metadata over 1 MiB');
  return decodeUtf8(bytes);
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw validationFailed('SAML Metadata XML contains invalid UTF-8 characters, which are not supported at this time');
  }
}

/** parseSAMLMetadata: an EntityID and exactly one IDPSSODescriptor. */
export async function parseIdpMetadata(deps: Deps, xml: string): Promise<IdpMetadata> {
  const saml = await samlXmlOf(deps);
  let m: IdpMetadata;
  try {
    m = saml.parseMetadata(xml);
  } catch (err) {
    if (err instanceof SamlXmlError) throw validationFailed(`SAML Metadata is not valid: ${err.message}`);
    throw err;
  }
  if (!m.entityId) throw validationFailed('SAML Metadata does not contain an EntityID');
  if (m.idpDescriptors < 1) throw validationFailed('SAML Metadata does not contain any IDPSSODescriptor');
  if (m.idpDescriptors > 1) throw validationFailed('SAML Metadata contains multiple IDPSSODescriptors');
  return m;
}

async function metadataOf(deps: Deps, p: SsoProviderParams): Promise<{ xml: string; meta: IdpMetadata }> {
  const xml = p.metadata_xml ?? (await fetchMetadata(deps, p.metadata_url!));
  if (new TextEncoder().encode(xml).length > MAX_METADATA_BYTES) throw validationFailed('SAML Metadata is over 1 MiB');
  return { xml, meta: await parseIdpMetadata(deps, xml) };
}

const notFoundError = () => notFound('sso_provider_not_found', 'SSO Identity Provider not found');
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** loadSSOProvider: a uuid, or `resource_<resource_id>`. */
export async function loadSsoProvider(deps: Deps, idp: string): Promise<SsoProvider> {
  const found = idp.startsWith('resource_')
    ? await findSsoProviderByResourceId(deps.db, idp.slice('resource_'.length))
    : UUID_RE.test(idp)
      ? await findSsoProviderById(deps.db, idp.toLowerCase())
      : undefined;
  if (!found) throw notFoundError();
  return found;
}

export async function adminListSsoProviders(
  deps: Deps,
  query: { resource_id?: string; resource_id_prefix?: string },
): Promise<Record<string, unknown>> {
  const rows = await listSsoProviders(deps.db, {
    resourceId: query.resource_id || undefined,
    resourceIdPrefix: query.resource_id ? undefined : query.resource_id_prefix || undefined,
  });
  return { items: rows.map((p) => providerJson(p, false)) };
}

function domainTaken(domain: string, owner: string, update: boolean): ApiError {
  return badRequest(
    'sso_domain_already_exists',
    update
      ? `SSO domain '${domain}' already assigned to another provider (${owner})`
      : `SSO Domain '${domain}' is already assigned to an SSO identity provider (${owner})`,
  );
}

function checkDomains(domains: string[]): void {
  // Stricter than GoTrue, whose database refuses an empty one with a 500.
  if (domains.some((d) => d.trim() === '')) throw validationFailed('domains must not be empty');
}

export async function adminCreateSsoProvider(deps: Deps, p: SsoProviderParams): Promise<Record<string, unknown>> {
  validate(deps, p, false);
  if (p.resource_id === '') throw validationFailed('resource_id must not be empty');
  const { xml, meta } = await metadataOf(deps, p);
  if (await findSsoProviderByEntityId(deps.db, meta.entityId)) {
    throw unprocessable(
      'saml_idp_already_exists',
      `SAML Identity Provider with this EntityID (${meta.entityId}) already exists`,
    );
  }
  const domains = p.domains ?? [];
  checkDomains(domains);
  for (const domain of domains) {
    const owner = await findSsoProviderByDomain(deps.db, domain);
    if (owner) throw domainTaken(domain, owner.provider.id, false);
  }
  const id = crypto.randomUUID();
  try {
    await transaction(deps.db, (tx) =>
      insertSsoProvider(tx, {
        id,
        resourceId: p.resource_id ?? null,
        disabled: p.disabled ?? null,
        allowAnyEmailDomain: p.allow_any_email_domain ?? false,
        entityId: meta.entityId,
        metadataXml: xml,
        metadataUrl: p.metadata_url ?? null,
        attributeMapping: storedMapping(p.attribute_mapping),
        nameIdFormat: p.name_id_format || null,
        domains: [...new Set(domains)],
        now: deps.now(),
      }),
    );
  } catch (err) {
    // Two admins racing for one entity id, domain or resource id: the indexes decide.
    if (isUniqueViolation(err))
      throw unprocessable('conflict', 'Creating SSO provider failed, likely due to a conflict. Try again?');
    throw err;
  }
  return providerJson((await findSsoProviderById(deps.db, id))!);
}

export async function adminUpdateSsoProvider(
  deps: Deps,
  current: SsoProvider,
  p: SsoProviderParams,
): Promise<Record<string, unknown>> {
  validate(deps, p, true);
  const saml: Parameters<typeof updateSamlProviderRow>[2] = {};
  const row: Parameters<typeof updateSsoProviderRow>[2] = {};
  if (p.metadata_xml || p.metadata_url) {
    const { xml, meta } = await metadataOf(deps, p);
    if (meta.entityId !== current.saml.entityId) {
      throw badRequest(
        'saml_entity_id_mismatch',
        `SAML Metadata can be updated only if the EntityID matches for the provider; expected '${current.saml.entityId}' but got '${meta.entityId}'`,
      );
    }
    if (p.metadata_url) saml.metadataUrl = p.metadata_url;
    saml.metadataXml = xml;
  }
  const create: string[] = [];
  const remove: string[] = [];
  if (p.domains !== undefined) {
    checkDomains(p.domains);
    const keep = new Set<string>();
    for (const domain of new Set(p.domains)) {
      const owner = await findSsoProviderByDomain(deps.db, domain);
      if (owner && owner.provider.id !== current.provider.id) throw domainTaken(domain, owner.provider.id, true);
      if (owner) keep.add(domain.toLowerCase());
      else create.push(domain);
    }
    for (const d of current.domains) if (!keep.has(d.domain.toLowerCase())) remove.push(d.id);
  }
  if (p.attribute_mapping?.keys !== undefined) saml.attributeMapping = storedMapping(p.attribute_mapping);
  // As GoTrue: a name_id_format left out clears the stored one.
  if ((p.name_id_format ?? '') !== (current.saml.nameIdFormat ?? '')) saml.nameIdFormat = p.name_id_format || null;
  if (p.resource_id !== undefined && (p.resource_id || null) !== current.provider.resourceId)
    row.resourceId = p.resource_id || null;
  if (p.disabled !== undefined && p.disabled !== current.provider.disabled) row.disabled = p.disabled;
  if (
    p.allow_any_email_domain !== undefined &&
    p.allow_any_email_domain !== (current.provider.allowAnyEmailDomain === true)
  ) {
    row.allowAnyEmailDomain = p.allow_any_email_domain;
  }
  const modified =
    Object.keys(saml).length > 0 || Object.keys(row).length > 0 || create.length > 0 || remove.length > 0;
  if (modified) {
    const now = deps.now();
    try {
      await transaction(deps.db, async (tx) => {
        await updateSsoProviderRow(tx, current.provider.id, row, now);
        await deleteSsoDomains(tx, remove);
        if (create.length > 0) await insertSsoDomains(tx, current.provider.id, create, now);
        if (Object.keys(saml).length > 0) await updateSamlProviderRow(tx, current.saml.id, saml, now);
      });
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(
        422,
        'conflict',
        'Updating SSO provider failed, likely due to a conflict. Try again?',
        undefined,
        err,
      );
    }
  }
  return providerJson((await findSsoProviderById(deps.db, current.provider.id))!);
}

export async function adminDeleteSsoProvider(deps: Deps, current: SsoProvider): Promise<Record<string, unknown>> {
  await deleteSsoProvider(deps.db, current.provider.id);
  return providerJson(current);
}

/** Re-fetches a metadata_url provider's stale metadata (IsSAMLMetadataStale); keeps the old on failure. */
export async function refreshedMetadata(
  deps: Deps,
  p: SsoProvider,
  meta: IdpMetadata,
): Promise<{ xml: string; meta: IdpMetadata } | undefined> {
  if (!p.saml.metadataUrl) return undefined;
  const now = deps.now().getTime();
  const updated = p.saml.updatedAt?.getTime() ?? 0;
  const expired = meta.validUntil !== undefined && now > meta.validUntil.getTime();
  const cached =
    meta.cacheDurationSeconds !== undefined &&
    meta.cacheDurationSeconds > 0 &&
    now > updated + meta.cacheDurationSeconds * 1000;
  const daily = meta.validUntil === undefined && !meta.cacheDurationSeconds && now > updated + 24 * 3600 * 1000;
  if (!expired && !cached && !daily) return undefined;
  try {
    const xml = await fetchMetadata(deps, p.saml.metadataUrl);
    const fresh = await parseIdpMetadata(deps, xml);
    if (fresh.entityId !== p.saml.entityId) throw new Error('the refreshed metadata names another EntityID');
    return { xml, meta: fresh };
  } catch (err) {
    deps.logger.warn('SAML Metadata could not be retrieved, continuing with existing metadata', {
      sso_provider_id: p.provider.id,
      error: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
}
