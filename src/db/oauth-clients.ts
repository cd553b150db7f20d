// OAuth server clients (GoTrue's oauth_clients): soft-deleted rows are gone for every reader.
import { and, desc, eq, isNull } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type OAuthClientRow = Executor['t']['oauthClients']['$inferSelect'];
export type NewOAuthClient = Executor['t']['oauthClients']['$inferInsert'];

export async function findOAuthClient(ex: Executor, id: string): Promise<OAuthClientRow | undefined> {
  const c = ex.t.oauthClients;
  const rows = await ex.orm.select().from(c).where(and(eq(c.id, id), isNull(c.deletedAt))).limit(1);
  return rows[0];
}

/** Newest first, as GoTrue lists them. */
export async function listOAuthClients(ex: Executor): Promise<OAuthClientRow[]> {
  const c = ex.t.oauthClients;
  return ex.orm.select().from(c).where(isNull(c.deletedAt)).orderBy(desc(c.createdAt));
}

export async function insertOAuthClient(ex: Executor, row: NewOAuthClient): Promise<OAuthClientRow> {
  const rows = await ex.orm.insert(ex.t.oauthClients).values(row).returning();
  return rows[0]!;
}

export async function updateOAuthClient(ex: Executor, id: string, patch: Partial<NewOAuthClient>): Promise<OAuthClientRow | undefined> {
  const c = ex.t.oauthClients;
  const rows = await ex.orm.update(c).set(patch).where(and(eq(c.id, id), isNull(c.deletedAt))).returning();
  return rows[0];
}

/** Sessions a client holds (deleting a client, revoking a grant). */
export async function deleteOAuthSessions(ex: Executor, clientId: string, userId?: string): Promise<void> {
  const s = ex.t.sessions;
  await ex.orm.delete(s).where(userId ? and(eq(s.oauthClientId, clientId), eq(s.userId, userId)) : eq(s.oauthClientId, clientId));
}
