// OAuth server authorization requests and the consents users gave (GoTrue's
// oauth_authorizations, oauth_consents).
import { and, desc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type OAuthAuthorizationRow = Executor['t']['oauthAuthorizations']['$inferSelect'];
export type NewOAuthAuthorization = Executor['t']['oauthAuthorizations']['$inferInsert'];
export type OAuthConsentRow = Executor['t']['oauthConsents']['$inferSelect'];

export async function insertOAuthAuthorization(ex: Executor, row: NewOAuthAuthorization): Promise<void> {
  await ex.orm.insert(ex.t.oauthAuthorizations).values(row);
}

/**
 * Locks the row (GoTrue: FOR UPDATE SKIP LOCKED): of two requests on one authorization, the
 * second finds nothing until the first commits, so neither can claim it twice.
 */
export async function lockOAuthAuthorization(
  ex: Executor,
  authorizationId: string,
): Promise<OAuthAuthorizationRow | undefined> {
  const a = ex.t.oauthAuthorizations;
  const rows = await ex.orm
    .select()
    .from(a)
    .where(eq(a.authorizationId, authorizationId))
    .limit(1)
    .for('update', { skipLocked: true });
  return rows[0];
}

/** The row holding a code, in any status (a used code is found too: its reuse is detected). */
export async function lockOAuthAuthorizationByCode(
  ex: Executor,
  code: string,
): Promise<OAuthAuthorizationRow | undefined> {
  const a = ex.t.oauthAuthorizations;
  const rows = await ex.orm.select().from(a).where(eq(a.authorizationCode, code)).limit(1).for('update');
  return rows[0];
}

export async function updateOAuthAuthorization(
  ex: Executor,
  id: string,
  patch: Partial<NewOAuthAuthorization>,
): Promise<void> {
  await ex.orm.update(ex.t.oauthAuthorizations).set(patch).where(eq(ex.t.oauthAuthorizations.id, id));
}

/** Requests and used codes past their lifetime by more than `graceSeconds`. */
export async function sweepOAuthAuthorizations(ex: Executor, now: Date, graceSeconds: number): Promise<void> {
  const a = ex.t.oauthAuthorizations;
  await ex.orm.delete(a).where(lt(a.expiresAt, new Date(now.getTime() - graceSeconds * 1000)));
}

export async function findActiveConsent(
  ex: Executor,
  userId: string,
  clientId: string,
): Promise<OAuthConsentRow | undefined> {
  const c = ex.t.oauthConsents;
  const rows = await ex.orm
    .select()
    .from(c)
    .where(and(eq(c.userId, userId), eq(c.clientId, clientId), isNull(c.revokedAt)))
    .limit(1);
  return rows[0];
}

/** GoTrue's UpsertOAuthServerConsent: one row per user and client; a new grant un-revokes it. */
export async function upsertConsent(
  ex: Executor,
  userId: string,
  clientId: string,
  scopes: string,
  now: Date,
): Promise<void> {
  const c = ex.t.oauthConsents;
  await ex.orm
    .insert(c)
    .values({ id: crypto.randomUUID(), userId, clientId, scopes, grantedAt: now, revokedAt: null })
    .onConflictDoUpdate({ target: [c.userId, c.clientId], set: { scopes, grantedAt: now, revokedAt: null } });
}

export async function revokeConsent(ex: Executor, id: string, now: Date): Promise<void> {
  const c = ex.t.oauthConsents;
  await ex.orm.update(c).set({ revokedAt: now }).where(eq(c.id, id));
}

/** The user's active grants with their (not deleted) clients, newest first. */
export async function listGrants(ex: Executor, userId: string) {
  const c = ex.t.oauthConsents;
  const k = ex.t.oauthClients;
  return ex.orm
    .select({ consent: c, client: k })
    .from(c)
    .innerJoin(k, and(eq(k.id, c.clientId), isNull(k.deletedAt)))
    .where(and(eq(c.userId, userId), isNull(c.revokedAt)))
    .orderBy(desc(c.grantedAt), sql`${c.id}`);
}
