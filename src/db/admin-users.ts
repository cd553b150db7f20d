// Queries only the admin user API needs: the paged listing (and its exact look-ups), identity look-ups, deletion.
import { and, asc, count, desc, eq, ilike, isNull, like, ne, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { type IdentityRow, NIL_UUID, type UserRow } from './users.ts';

export interface UserListQuery {
  aud: string;
  /** GoTrue's `filter`: substring of the email (LIKE) or of user_metadata.full_name (ILIKE). */
  filter?: string;
  /** Not GoTrue's: exactly this address, lower-cased (the (instance_id, lower(email)) index). */
  email?: string;
  /** Not GoTrue's: exactly this phone, as stored (digits only; the unique index). */
  phone?: string;
  ascending: boolean;
  limit: number;
  offset: number;
}

/** The list's condition besides the audience: `filter`, `email` or `phone` (one at most), or none. */
function matching(ex: Executor, q: UserListQuery): SQL | undefined {
  const u = ex.t.users;
  if (q.email !== undefined) {
    // As db/users.ts's user_by_email: the instance_id terms let (instance_id, lower(email)) serve it.
    const exact = sql`lower(${u.email}) = ${q.email}`;
    return or(and(eq(u.instanceId, NIL_UUID), exact), and(isNull(u.instanceId), exact));
  }
  if (q.phone !== undefined) return eq(u.phone, q.phone);
  if (!q.filter) return undefined;
  const pattern = `%${q.filter}%`;
  return or(like(u.email, pattern), ilike(sql`${u.rawUserMetaData} ->> 'full_name'`, pattern));
}

/** One page of the users of an audience, newest first unless `ascending`, and the total count. */
export async function listUsersInAudience(ex: Executor, q: UserListQuery): Promise<{ rows: UserRow[]; total: number }> {
  const u = ex.t.users;
  const where = and(eq(u.aud, q.aud), matching(ex, q));
  const order = q.ascending ? [asc(u.createdAt), asc(u.id)] : [desc(u.createdAt), desc(u.id)];
  const rows = await ex.orm
    .select()
    .from(u)
    .where(where)
    .orderBy(...order)
    .limit(q.limit)
    .offset(q.offset);
  const [total] = await ex.orm.select({ n: count() }).from(u).where(where);
  return { rows, total: Number(total?.n ?? 0) };
}

export async function findIdentity(ex: Executor, userId: string, provider: string): Promise<IdentityRow | undefined> {
  const i = ex.t.identities;
  const rows = await ex.orm
    .select()
    .from(i)
    .where(and(eq(i.userId, userId), eq(i.provider, provider)))
    .limit(1);
  return rows[0];
}

/**
 * Users other than `exceptUserId` holding an identity with this (lower-case) email — GoTrue's
 * IsDuplicatedEmail looks at identities first (SSO identities live in their own linking domain).
 */
export async function findUserIdsByIdentityEmail(
  ex: Executor,
  email: string,
  exceptUserId?: string,
): Promise<string[]> {
  const i = ex.t.identities;
  const conds = [eq(i.email, email.toLowerCase()), sql`${i.provider} NOT LIKE 'sso:%'`];
  if (exceptUserId) conds.push(ne(i.userId, exceptUserId));
  const rows = await ex.orm
    .selectDistinct({ userId: i.userId })
    .from(i)
    .where(and(...conds));
  return rows.map((r) => r.userId);
}

export async function setIdentity(
  ex: Executor,
  identityId: string,
  patch: Partial<Executor['t']['identities']['$inferInsert']>,
): Promise<void> {
  await ex.orm.update(ex.t.identities).set(patch).where(eq(ex.t.identities.id, identityId));
}

/**
 * refresh_tokens.user_id has no foreign key (as in GoTrue): tokens without a session outlive a
 * session cascade. The instance_id terms let (instance_id, user_id) serve the delete, which
 * otherwise scans every token; authsvc writes none, GoTrue the nil instance.
 */
export async function deleteRefreshTokensOfUser(ex: Executor, userId: string): Promise<void> {
  const r = ex.t.refreshTokens;
  await ex.orm
    .delete(r)
    .where(or(and(isNull(r.instanceId), eq(r.userId, userId)), and(eq(r.instanceId, NIL_UUID), eq(r.userId, userId))));
}

/**
 * What a soft delete removes besides the user's sessions: every MFA factor (GoTrue's
 * DeleteFactorsByUserId; their challenges cascade, a WebAuthn factor's credential is in its row),
 * the recovery codes, and the flow states, which may hold the provider's tokens or an auth code.
 */
export async function deleteSignInMaterial(ex: Executor, userId: string): Promise<void> {
  await ex.orm.delete(ex.t.mfaFactors).where(eq(ex.t.mfaFactors.userId, userId));
  await ex.orm.delete(ex.t.mfaRecoveryCodeSets).where(eq(ex.t.mfaRecoveryCodeSets.userId, userId));
  await ex.orm.delete(ex.t.flowState).where(eq(ex.t.flowState.userId, userId));
}

/** Removes the user row; identities, sessions (with their refresh tokens and AMR claims) and one-time tokens cascade. */
export async function deleteUserRow(ex: Executor, userId: string): Promise<void> {
  await deleteRefreshTokensOfUser(ex, userId);
  await ex.orm.delete(ex.t.users).where(eq(ex.t.users.id, userId));
}
