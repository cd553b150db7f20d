// one_time_tokens: at most one row per (user, type); creating one replaces the previous.
import { and, eq, inArray } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type OneTimeTokenType =
  | 'confirmation_token' | 'reauthentication_token' | 'recovery_token'
  | 'email_change_token_new' | 'email_change_token_current' | 'phone_change_token';

export async function putOneTimeToken(ex: Executor, t: { userId: string; type: OneTimeTokenType; tokenHash: string; relatesTo: string; now: Date }): Promise<void> {
  const o = ex.t.oneTimeTokens;
  await ex.orm.delete(o).where(and(eq(o.userId, t.userId), eq(o.tokenType, t.type)));
  await ex.orm.insert(o).values({
    id: crypto.randomUUID(), userId: t.userId, tokenType: t.type, tokenHash: t.tokenHash,
    relatesTo: t.relatesTo.toLowerCase(), createdAt: t.now, updatedAt: t.now,
  });
}

export async function clearOneTimeTokens(ex: Executor, userId: string, type?: OneTimeTokenType): Promise<void> {
  const o = ex.t.oneTimeTokens;
  await ex.orm.delete(o).where(type ? and(eq(o.userId, userId), eq(o.tokenType, type)) : eq(o.userId, userId));
}

export async function findOneTimeTokens(ex: Executor, tokenHash: string, types: OneTimeTokenType[]) {
  const o = ex.t.oneTimeTokens;
  return ex.orm.select().from(o).where(and(eq(o.tokenHash, tokenHash), inArray(o.tokenType, types)));
}
