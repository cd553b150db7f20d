// identity_provider_tokens (migration 0017): a provider's refresh token per identity, stored as
// the caller sealed it (an encrypted string bound to the row's id). Rows go with their identity
// or user (ON DELETE CASCADE); a soft-deleted user's are deleted explicitly.
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export interface ProviderTokenRow {
  id: string;
  identityId: string;
  userId: string;
  provider: string;
  /** The encrypted string (GoTrue's JSON format), bound to `id`. */
  refreshToken: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ProviderTokenWrite {
  /** The row's new id: the value was sealed for it. */
  id: string;
  identityId: string;
  userId: string;
  provider: string;
  refreshToken: string;
  now: Date;
}

/** One row per identity: a new token replaces the old one, under the id it was sealed for. */
export async function upsertProviderToken(ex: Executor, w: ProviderTokenWrite): Promise<void> {
  const t = ex.t.identityProviderTokens;
  await ex.orm
    .insert(t)
    .values({
      id: w.id,
      identityId: w.identityId,
      userId: w.userId,
      provider: w.provider,
      refreshToken: w.refreshToken,
      createdAt: w.now,
      updatedAt: w.now,
    })
    .onConflictDoUpdate({
      target: t.identityId,
      set: { id: sql`excluded.id`, refreshToken: sql`excluded.refresh_token`, updatedAt: w.now },
    });
}

/** The user's most recently stored token of `provider` (a user may have linked two accounts of one provider). */
export async function findProviderToken(
  ex: Executor,
  userId: string,
  provider: string,
): Promise<ProviderTokenRow | undefined> {
  const t = ex.t.identityProviderTokens;
  const rows = await ex.orm
    .select()
    .from(t)
    .where(and(eq(t.userId, userId), eq(t.provider, provider)))
    .orderBy(desc(t.updatedAt), desc(t.id))
    .limit(1);
  return rows[0];
}

/** Deletes the row `id` (not a newer one written for the same identity since). */
export async function deleteProviderToken(ex: Executor, id: string): Promise<void> {
  const t = ex.t.identityProviderTokens;
  await ex.orm.delete(t).where(eq(t.id, id));
}

export async function deleteProviderTokensOfUser(ex: Executor, userId: string): Promise<void> {
  const t = ex.t.identityProviderTokens;
  await ex.orm.delete(t).where(eq(t.userId, userId));
}
