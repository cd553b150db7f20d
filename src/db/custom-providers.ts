// Custom OAuth/OIDC providers (GoTrue's custom_oauth_providers, migration 0011).
import { asc, count, desc, eq } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type CustomProviderRow = Executor['t']['customOAuthProviders']['$inferSelect'];
export type NewCustomProvider = Executor['t']['customOAuthProviders']['$inferInsert'];

export async function findCustomProvider(
  ex: Executor,
  identifier: string,
  opts: { forUpdate?: boolean } = {},
): Promise<CustomProviderRow | undefined> {
  const p = ex.t.customOAuthProviders;
  const q = ex.orm.select().from(p).where(eq(p.identifier, identifier)).limit(1);
  return (opts.forUpdate ? await q.for('update') : await q)[0];
}

/** GoTrue's list: newest first; with a type filter, ordered by provider_type only (as GoTrue). */
export async function listCustomProviders(ex: Executor, type?: 'oauth2' | 'oidc'): Promise<CustomProviderRow[]> {
  const p = ex.t.customOAuthProviders;
  if (type) return ex.orm.select().from(p).where(eq(p.providerType, type)).orderBy(asc(p.providerType));
  return ex.orm.select().from(p).orderBy(desc(p.createdAt));
}

export async function countCustomProviders(ex: Executor): Promise<number> {
  const rows = await ex.orm.select({ n: count() }).from(ex.t.customOAuthProviders);
  return Number(rows[0]?.n ?? 0);
}

export async function insertCustomProvider(ex: Executor, row: NewCustomProvider): Promise<CustomProviderRow> {
  return (await ex.orm.insert(ex.t.customOAuthProviders).values(row).returning())[0]!;
}

export async function updateCustomProvider(
  ex: Executor,
  id: string,
  set: Partial<NewCustomProvider>,
): Promise<CustomProviderRow | undefined> {
  const p = ex.t.customOAuthProviders;
  return (await ex.orm.update(p).set(set).where(eq(p.id, id)).returning())[0];
}

export async function deleteCustomProvider(ex: Executor, id: string): Promise<boolean> {
  const p = ex.t.customOAuthProviders;
  return (await ex.orm.delete(p).where(eq(p.id, id)).returning({ id: p.id })).length > 0;
}
