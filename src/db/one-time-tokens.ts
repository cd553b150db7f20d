// one_time_tokens: at most one row per (user, type); creating one replaces the previous.
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Executor } from './database.ts';

export const OTT_TYPES = [
  'confirmation_token',
  'reauthentication_token',
  'recovery_token',
  'email_change_token_new',
  'email_change_token_current',
  'phone_change_token',
] as const;
export type OneTimeTokenType = (typeof OTT_TYPES)[number];

export type OneTimeTokenRow = Executor['t']['oneTimeTokens']['$inferSelect'];

/** Stores the token, replacing the user's previous one of that type, which is returned. */
export async function putOneTimeToken(
  ex: Executor,
  t: {
    userId: string;
    type: OneTimeTokenType;
    tokenHash: string;
    relatesTo: string;
    now: Date;
    /** SHA-256 of the mailed link token; texted codes and reauthentication nonces have none. */
    linkHash?: string;
  },
): Promise<OneTimeTokenRow | undefined> {
  const o = ex.t.oneTimeTokens;
  const [previous] = await ex.orm
    .delete(o)
    .where(and(eq(o.userId, t.userId), eq(o.tokenType, t.type)))
    .returning();
  await ex.orm.insert(o).values({
    id: crypto.randomUUID(),
    userId: t.userId,
    tokenType: t.type,
    tokenHash: t.tokenHash,
    relatesTo: t.relatesTo.toLowerCase(),
    createdAt: t.now,
    updatedAt: t.now,
    linkHash: t.linkHash ?? null,
  });
  return previous;
}

/** Deletes the user's token of `type` and returns it (to put back if the request is undone). */
export async function removeOneTimeToken(
  ex: Executor,
  userId: string,
  type: OneTimeTokenType,
): Promise<OneTimeTokenRow | undefined> {
  const o = ex.t.oneTimeTokens;
  const [row] = await ex.orm
    .delete(o)
    .where(and(eq(o.userId, userId), eq(o.tokenType, type)))
    .returning();
  return row;
}

export async function putBackOneTimeToken(ex: Executor, row: OneTimeTokenRow): Promise<void> {
  await ex.orm.insert(ex.t.oneTimeTokens).values(row).onConflictDoNothing();
}

/** Undoes putOneTimeToken: removes `tokenHash` if it is still the user's token, and puts `previous` back. */
export async function restoreOneTimeToken(
  ex: Executor,
  userId: string,
  type: OneTimeTokenType,
  tokenHash: string,
  previous: OneTimeTokenRow | undefined,
): Promise<void> {
  const o = ex.t.oneTimeTokens;
  const removed = await ex.orm
    .delete(o)
    .where(and(eq(o.userId, userId), eq(o.tokenType, type), eq(o.tokenHash, tokenHash)))
    .returning({ id: o.id });
  if (removed.length > 0 && previous) await putBackOneTimeToken(ex, previous);
}

/** The pending tokens of these types sent to `address` (lower-cased), whatever their hash. */
export async function findOneTimeTokensByAddress(
  ex: Executor,
  address: string,
  types: OneTimeTokenType[],
): Promise<OneTimeTokenRow[]> {
  const o = ex.t.oneTimeTokens;
  return ex.orm
    .select()
    .from(o)
    .where(and(eq(o.relatesTo, address.toLowerCase()), inArray(o.tokenType, types)));
}

/** Deletes the user's tokens: all, one type, or the types listed. */
export async function clearOneTimeTokens(
  ex: Executor,
  userId: string,
  type?: OneTimeTokenType | readonly OneTimeTokenType[],
): Promise<void> {
  const o = ex.t.oneTimeTokens;
  const which =
    type === undefined ? undefined : typeof type === 'string' ? eq(o.tokenType, type) : inArray(o.tokenType, [...type]);
  await ex.orm.delete(o).where(which ? and(eq(o.userId, userId), which) : eq(o.userId, userId));
}

/** The tokens of these types whose mailed link hashes to `linkHash`. */
export async function findOneTimeTokensByLink(
  ex: Executor,
  linkHash: string,
  types: readonly OneTimeTokenType[],
): Promise<OneTimeTokenRow[]> {
  const o = ex.t.oneTimeTokens;
  return ex.orm
    .select()
    .from(o)
    .where(and(eq(o.linkHash, linkHash), inArray(o.tokenType, [...types])));
}

/** Rows written before link tokens (or by GoTrue), whose link was the code's hash itself. */
export async function findLegacyOneTimeTokens(
  ex: Executor,
  tokenHash: string,
  types: readonly OneTimeTokenType[],
): Promise<OneTimeTokenRow[]> {
  const o = ex.t.oneTimeTokens;
  return ex.orm
    .select()
    .from(o)
    .where(and(eq(o.tokenHash, tokenHash), isNull(o.linkHash), inArray(o.tokenType, [...types])));
}
