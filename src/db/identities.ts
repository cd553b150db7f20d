// Identities of external providers: look-ups for GoTrue's automatic account linking
// (models.DetermineAccountLinking) and the writes the OAuth callback and identity unlinking make.
import { and, asc, eq, inArray, ne, notInArray, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { type IdentityRow, NIL_UUID, type UserRow } from './users.ts';

export async function findIdentityByProviderId(
  ex: Executor,
  providerId: string,
  provider: string,
): Promise<IdentityRow | undefined> {
  const i = ex.t.identities;
  const rows = await ex.orm
    .select()
    .from(i)
    .where(and(eq(i.providerId, providerId), eq(i.provider, provider)))
    .limit(1);
  return rows[0];
}

/** Identities whose (lower-cased) email is one of `emails`. */
export async function findIdentitiesByEmails(ex: Executor, emails: string[]): Promise<IdentityRow[]> {
  if (emails.length === 0) return [];
  const i = ex.t.identities;
  return ex.orm.select().from(i).where(inArray(i.email, emails));
}

/** Non-SSO users holding one of the (lower-case) `emails`; the instance terms let the email index serve it. */
export async function findUsersByEmails(ex: Executor, emails: string[]): Promise<UserRow[]> {
  if (emails.length === 0) return [];
  const u = ex.t.users;
  const list = sql.join(
    emails.map((e) => sql`${e}`),
    sql`, `,
  );
  return ex.orm
    .select()
    .from(u)
    .where(
      and(
        sql`((${u.instanceId} = ${NIL_UUID}::uuid and lower(${u.email}) in (${list})) or (${u.instanceId} is null and lower(${u.email}) in (${list})))`,
        eq(u.isSsoUser, false),
      ),
    );
}

/** GoTrue's FindProvidersByUser: distinct providers, oldest identity first. */
export async function providersOfUser(ex: Executor, userId: string): Promise<string[]> {
  const i = ex.t.identities;
  const rows = await ex.orm
    .select({ provider: i.provider })
    .from(i)
    .where(eq(i.userId, userId))
    .orderBy(asc(i.createdAt), asc(i.id));
  return [...new Set(rows.map((r) => r.provider))];
}

/** Every identity of the user but `keepId` (RemoveUnconfirmedIdentities). */
export async function deleteOtherIdentities(ex: Executor, userId: string, keepId: string): Promise<void> {
  const i = ex.t.identities;
  await ex.orm.delete(i).where(and(eq(i.userId, userId), ne(i.id, keepId)));
}

/** Deletes the user's identities of every provider but `keep`; returns how many went. */
export async function deleteIdentitiesExcept(ex: Executor, userId: string, keep: readonly string[]): Promise<number> {
  const i = ex.t.identities;
  const rows = await ex.orm
    .delete(i)
    .where(and(eq(i.userId, userId), notInArray(i.provider, [...keep])))
    .returning({ id: i.id });
  return rows.length;
}

export async function deleteIdentity(ex: Executor, id: string): Promise<void> {
  await ex.orm.delete(ex.t.identities).where(eq(ex.t.identities.id, id));
}

/** A returning sign-in: the provider's current claims, and when. */
export async function touchIdentity(ex: Executor, id: string, data: Record<string, unknown>, now: Date): Promise<void> {
  await ex.orm
    .update(ex.t.identities)
    .set({ identityData: data, lastSignInAt: now, updatedAt: now })
    .where(eq(ex.t.identities.id, id));
}
