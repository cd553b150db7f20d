// SSO providers, their domains and SAML settings, relay states and used assertion ids
// (GoTrue's sso_providers, sso_domains, saml_providers, saml_relay_states; migration 0012).
import { asc, eq, inArray, like, lt, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type SsoProviderRow = Executor['t']['ssoProviders']['$inferSelect'];
export type SamlProviderRow = Executor['t']['samlProviders']['$inferSelect'];
export type SsoDomainRow = Executor['t']['ssoDomains']['$inferSelect'];
export type RelayStateRow = Executor['t']['samlRelayStates']['$inferSelect'];

/** A provider with its SAML settings and domains (GoTrue's eager-loaded SSOProvider). */
export interface SsoProvider {
  provider: SsoProviderRow;
  saml: SamlProviderRow;
  domains: SsoDomainRow[];
}

async function complete(ex: Executor, rows: SsoProviderRow[]): Promise<SsoProvider[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const saml = await ex.orm.select().from(ex.t.samlProviders).where(inArray(ex.t.samlProviders.ssoProviderId, ids));
  const domains = await ex.orm
    .select()
    .from(ex.t.ssoDomains)
    .where(inArray(ex.t.ssoDomains.ssoProviderId, ids))
    .orderBy(asc(ex.t.ssoDomains.createdAt));
  const out: SsoProvider[] = [];
  for (const provider of rows) {
    const s = saml.find((x) => x.ssoProviderId === provider.id);
    // A provider without its SAML row is half a record: GoTrue's eager load fails on it too.
    if (s) out.push({ provider, saml: s, domains: domains.filter((d) => d.ssoProviderId === provider.id) });
  }
  return out;
}

export async function findSsoProviderById(ex: Executor, id: string): Promise<SsoProvider | undefined> {
  const rows = await ex.orm.select().from(ex.t.ssoProviders).where(eq(ex.t.ssoProviders.id, id)).limit(1);
  return (await complete(ex, rows))[0];
}

/** resource_id is unique case-insensitively (the index is on lower()). */
export async function findSsoProviderByResourceId(ex: Executor, resourceId: string): Promise<SsoProvider | undefined> {
  const p = ex.t.ssoProviders;
  const rows = await ex.orm.select().from(p).where(sql`lower(${p.resourceId}) = lower(${resourceId})`).limit(1);
  return (await complete(ex, rows))[0];
}

/** GoTrue's FindSSOProviderByDomain: the domain as stored, compared through the lower() index. */
export async function findSsoProviderByDomain(ex: Executor, domain: string): Promise<SsoProvider | undefined> {
  const d = ex.t.ssoDomains;
  const rows = await ex.orm
    .select({ id: d.ssoProviderId })
    .from(d)
    .where(sql`lower(${d.domain}) = lower(${domain})`)
    .limit(1);
  return rows[0] ? findSsoProviderById(ex, rows[0].id) : undefined;
}

export async function findSsoProviderByEntityId(ex: Executor, entityId: string): Promise<SsoProvider | undefined> {
  const s = ex.t.samlProviders;
  const rows = await ex.orm.select({ id: s.ssoProviderId }).from(s).where(eq(s.entityId, entityId)).limit(1);
  return rows[0] ? findSsoProviderById(ex, rows[0].id) : undefined;
}

/** The admin list: oldest first; `resource_id` exact or by prefix. */
export async function listSsoProviders(
  ex: Executor,
  filter: { resourceId?: string; resourceIdPrefix?: string } = {},
): Promise<SsoProvider[]> {
  const p = ex.t.ssoProviders;
  const where =
    filter.resourceId !== undefined
      ? eq(p.resourceId, filter.resourceId)
      : filter.resourceIdPrefix !== undefined
        ? like(p.resourceId, `${filter.resourceIdPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
        : undefined;
  const rows = await ex.orm.select().from(p).where(where).orderBy(asc(p.createdAt));
  return complete(ex, rows);
}

export async function insertSsoProvider(
  ex: Executor,
  p: {
    id: string;
    resourceId: string | null;
    disabled: boolean | null;
    allowAnyEmailDomain: boolean;
    entityId: string;
    metadataXml: string;
    metadataUrl: string | null;
    attributeMapping: Record<string, unknown>;
    nameIdFormat: string | null;
    domains: string[];
    now: Date;
  },
): Promise<void> {
  await ex.orm.insert(ex.t.ssoProviders).values({
    id: p.id,
    resourceId: p.resourceId,
    disabled: p.disabled,
    allowAnyEmailDomain: p.allowAnyEmailDomain,
    createdAt: p.now,
    updatedAt: p.now,
  });
  await ex.orm.insert(ex.t.samlProviders).values({
    id: crypto.randomUUID(),
    ssoProviderId: p.id,
    entityId: p.entityId,
    metadataXml: p.metadataXml,
    metadataUrl: p.metadataUrl,
    attributeMapping: p.attributeMapping,
    nameIdFormat: p.nameIdFormat,
    createdAt: p.now,
    updatedAt: p.now,
  });
  if (p.domains.length > 0) await insertSsoDomains(ex, p.id, p.domains, p.now);
}

export async function insertSsoDomains(ex: Executor, providerId: string, domains: string[], now: Date): Promise<void> {
  await ex.orm.insert(ex.t.ssoDomains).values(
    domains.map((domain) => ({
      id: crypto.randomUUID(),
      ssoProviderId: providerId,
      domain,
      createdAt: now,
      updatedAt: now,
    })),
  );
}

export async function deleteSsoDomains(ex: Executor, ids: string[]): Promise<void> {
  if (ids.length > 0) await ex.orm.delete(ex.t.ssoDomains).where(inArray(ex.t.ssoDomains.id, ids));
}

export async function updateSsoProviderRow(
  ex: Executor,
  id: string,
  set: Partial<Pick<SsoProviderRow, 'resourceId' | 'disabled' | 'allowAnyEmailDomain'>>,
  now: Date,
): Promise<void> {
  await ex.orm
    .update(ex.t.ssoProviders)
    .set({ ...set, updatedAt: now })
    .where(eq(ex.t.ssoProviders.id, id));
}

export async function updateSamlProviderRow(
  ex: Executor,
  id: string,
  set: Partial<Pick<SamlProviderRow, 'metadataXml' | 'metadataUrl' | 'attributeMapping' | 'nameIdFormat'>>,
  now: Date,
): Promise<void> {
  await ex.orm
    .update(ex.t.samlProviders)
    .set({ ...set, updatedAt: now })
    .where(eq(ex.t.samlProviders.id, id));
}

export async function deleteSsoProvider(ex: Executor, id: string): Promise<void> {
  await ex.orm.delete(ex.t.ssoProviders).where(eq(ex.t.ssoProviders.id, id));
}

export async function insertRelayState(
  ex: Executor,
  r: { id: string; providerId: string; requestId: string; redirectTo: string | null; flowStateId: string; now: Date },
): Promise<void> {
  await ex.orm.insert(ex.t.samlRelayStates).values({
    id: r.id,
    ssoProviderId: r.providerId,
    requestId: r.requestId,
    redirectTo: r.redirectTo,
    flowStateId: r.flowStateId,
    createdAt: r.now,
    updatedAt: r.now,
  });
}

export async function findRelayState(ex: Executor, id: string): Promise<RelayStateRow | undefined> {
  return (await ex.orm.select().from(ex.t.samlRelayStates).where(eq(ex.t.samlRelayStates.id, id)).limit(1))[0];
}

/** Takes the relay state: true for the one caller that deleted it. */
export async function takeRelayState(ex: Executor, id: string): Promise<boolean> {
  const r = ex.t.samlRelayStates;
  return (await ex.orm.delete(r).where(eq(r.id, id)).returning({ id: r.id })).length > 0;
}

/** Records an assertion id as used; false when it already was (a replay). */
export async function useAssertionId(
  ex: Executor,
  providerId: string,
  assertionId: string,
  expiresAt: Date,
): Promise<boolean> {
  const u = ex.t.samlUsedAssertions;
  const rows = await ex.orm
    .insert(u)
    .values({ ssoProviderId: providerId, assertionId, expiresAt })
    .onConflictDoNothing()
    .returning({ id: u.assertionId });
  return rows.length > 0;
}

/** Drops used ids whose assertions have expired. */
export async function deleteExpiredAssertionIds(ex: Executor, now: Date): Promise<void> {
  const u = ex.t.samlUsedAssertions;
  await ex.orm.delete(u).where(lt(u.expiresAt, now));
}

/** Relay states older than `before` (GoTrue's cleanup removes them). */
export async function deleteStaleRelayStates(ex: Executor, before: Date): Promise<void> {
  const r = ex.t.samlRelayStates;
  await ex.orm.delete(r).where(lt(r.createdAt, before));
}

/** SessionNotOnOrAfter of the assertion: the session ends then (refresh refused after). */
export async function setSessionNotAfter(ex: Executor, sessionId: string, notAfter: Date): Promise<void> {
  await ex.orm.update(ex.t.sessions).set({ notAfter }).where(eq(ex.t.sessions.id, sessionId));
}
