// OAuth server clients (GoTrue's oauth_clients): soft-deleted rows are gone for every reader.
import { and, count, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type OAuthClientRow = Executor['t']['oauthClients']['$inferSelect'];
export type NewOAuthClient = Executor['t']['oauthClients']['$inferInsert'];

export async function findOAuthClient(ex: Executor, id: string): Promise<OAuthClientRow | undefined> {
  const c = ex.t.oauthClients;
  const rows = await ex.orm
    .select()
    .from(c)
    .where(and(eq(c.id, id), isNull(c.deletedAt)))
    .limit(1);
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

export async function updateOAuthClient(
  ex: Executor,
  id: string,
  patch: Partial<NewOAuthClient>,
): Promise<OAuthClientRow | undefined> {
  const c = ex.t.oauthClients;
  const rows = await ex.orm
    .update(c)
    .set(patch)
    .where(and(eq(c.id, id), isNull(c.deletedAt)))
    .returning();
  return rows[0];
}

/** Sessions a client holds (deleting a client, revoking a grant). */
export async function deleteOAuthSessions(ex: Executor, clientId: string, userId?: string): Promise<void> {
  const s = ex.t.sessions;
  await ex.orm
    .delete(s)
    .where(userId ? and(eq(s.oauthClientId, clientId), eq(s.userId, userId)) : eq(s.oauthClientId, clientId));
}

/**
 * Serialises dynamic registrations across instances for the rest of the transaction, so that a
 * count of the last hour's registrations and the insert that follows it cannot interleave.
 */
export async function lockDynamicRegistrations(ex: Executor): Promise<void> {
  await ex.orm.execute(sql`select pg_advisory_xact_lock(hashtext('authsvc:oauth_dynamic_client_registration'))`);
}

/** Dynamically registered clients created after `since`, deleted ones included (they were rows once). */
export async function countDynamicClientsSince(ex: Executor, since: Date): Promise<number> {
  const c = ex.t.oauthClients;
  const [row] = await ex.orm
    .select({ n: count() })
    .from(c)
    .where(and(eq(c.registrationType, 'dynamic'), gt(c.createdAt, since)));
  return Number(row?.n ?? 0);
}

/** The client of a Client ID Metadata Document (oauth-server/metadata-document.ts), by its URL. */
export async function findOAuthClientByMetadataUrl(ex: Executor, url: string): Promise<OAuthClientRow | undefined> {
  const c = ex.t.oauthClients;
  const rows = await ex.orm
    .select()
    .from(c)
    .where(and(eq(c.clientIdMetadataUrl, url), isNull(c.deletedAt)))
    .limit(1);
  return rows[0];
}

/**
 * Writes what a metadata document says as a public client: one row per URL, created on first use
 * and updated on each fetch (two instances fetching at once both land on the one row). A client
 * an admin deleted stays deleted: nothing is returned.
 */
export async function upsertMetadataClient(
  ex: Executor,
  p: {
    url: string;
    now: Date;
    expiresAt: Date;
    redirectUris: string;
    grantTypes: string;
    clientName: string | null;
    clientUri: string | null;
    logoUri: string | null;
  },
): Promise<OAuthClientRow | undefined> {
  const c = ex.t.oauthClients;
  const fields = {
    redirectUris: p.redirectUris,
    grantTypes: p.grantTypes,
    clientName: p.clientName,
    clientUri: p.clientUri,
    logoUri: p.logoUri,
    metadataExpiresAt: p.expiresAt,
    updatedAt: p.now,
  };
  const rows = await ex.orm
    .insert(c)
    .values({
      id: crypto.randomUUID(),
      clientSecretHash: null,
      registrationType: 'dynamic',
      clientType: 'public',
      tokenEndpointAuthMethod: 'none',
      clientIdMetadataUrl: p.url,
      createdAt: p.now,
      ...fields,
    })
    .onConflictDoUpdate({ target: c.clientIdMetadataUrl, set: fields, setWhere: isNull(c.deletedAt) })
    .returning();
  return rows[0];
}
