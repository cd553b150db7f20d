// Users: look-ups are scoped by audience, as GoTrue's are.
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { jsonValue, mapRow, type RawRow, statement } from './prepared.ts';

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export type UserRow = Executor['t']['users']['$inferSelect'];
export type NewUser = Executor['t']['users']['$inferInsert'];
export type IdentityRow = Executor['t']['identities']['$inferSelect'];

export async function findUserById(ex: Executor, id: string, opts: { forUpdate?: boolean } = {}): Promise<UserRow | undefined> {
  const q = ex.orm.select().from(ex.t.users).where(eq(ex.t.users.id, id)).limit(1);
  const rows = opts.forUpdate ? await q.for('update') : await q;
  return rows[0];
}

export async function findUserByEmail(ex: Executor, email: string, aud: string): Promise<UserRow | undefined> {
  const u = ex.t.users;
  const rows = await ex.orm.select().from(u)
    .where(and(eq(sql`lower(${u.email})`, email.toLowerCase()), eq(u.aud, aud), eq(u.isSsoUser, false)))
    .limit(1);
  return rows[0];
}

export async function findUserByPhone(ex: Executor, phone: string, aud: string): Promise<UserRow | undefined> {
  const u = ex.t.users;
  const rows = await ex.orm.select().from(u).where(and(eq(u.phone, phone), eq(u.aud, aud))).limit(1);
  return rows[0];
}

export async function insertUser(ex: Executor, user: NewUser): Promise<UserRow> {
  const rows = await ex.orm.insert(ex.t.users).values({ instanceId: NIL_UUID, ...user }).returning();
  return rows[0]!;
}

export async function updateUser(ex: Executor, id: string, patch: Partial<NewUser>): Promise<UserRow> {
  const rows = await ex.orm.update(ex.t.users).set(patch).where(eq(ex.t.users.id, id)).returning();
  if (!rows[0]) throw new Error(`user ${id} vanished during update`);
  return rows[0];
}

export async function insertIdentity(ex: Executor, identity: Executor['t']['identities']['$inferInsert']): Promise<IdentityRow> {
  const rows = await ex.orm.insert(ex.t.identities).values(identity).returning();
  return rows[0]!;
}

/** SQL: a user's identities as one `json` array, oldest first (read back with `mapIdentities`). */
export function identitiesJson(t: Executor['t'], userId: SQL): SQL {
  return sql`(select coalesce(json_agg(i order by i.created_at, i.id), '[]'::json) from ${t.identities} i where i.user_id = ${userId})`;
}

const authContextStmt = statement('auth_context', (t) => sql`
  select row_to_json(u) as "user", ${identitiesJson(t, sql`u.id`)} as identities,
    (select row_to_json(s) from ${t.sessions} s where s.id = ${sql.placeholder('sid')}::uuid) as session
  from ${t.users} u where u.id = ${sql.placeholder('uid')}::uuid`);

/** Everything an authenticated request needs, in one statement: the user, its identities, the session. */
export async function loadAuthContext(ex: Executor, userId: string, sessionId: string | null): Promise<{
  user: UserRow; identities: IdentityRow[]; session: Executor['t']['sessions']['$inferSelect'] | undefined;
} | undefined> {
  const row = (await authContextStmt(ex, { uid: userId, sid: sessionId }))[0];
  if (!row) return undefined;
  const session = jsonValue<RawRow | null>(row.session);
  return {
    user: mapRow<UserRow>(ex.t.users, jsonValue(row.user)),
    identities: mapIdentities(ex, row.identities),
    session: session ? mapRow(ex.t.sessions, session) : undefined,
  };
}

/** A `json_agg` of identity rows. */
export function mapIdentities(ex: Executor, agg: unknown): IdentityRow[] {
  return (jsonValue<RawRow[] | null>(agg) ?? []).map((r) => mapRow<IdentityRow>(ex.t.identities, r));
}

export async function listIdentities(ex: Executor, userIds: string[]): Promise<IdentityRow[]> {
  if (userIds.length === 0) return [];
  return ex.orm.select().from(ex.t.identities).where(inArray(ex.t.identities.userId, userIds))
    .orderBy(ex.t.identities.createdAt, ex.t.identities.id);
}

export async function updateIdentityData(ex: Executor, userId: string, provider: string, data: Record<string, unknown>): Promise<void> {
  const i = ex.t.identities;
  await ex.orm.update(i).set({ identityData: data, updatedAt: new Date() })
    .where(and(eq(i.userId, userId), eq(i.provider, provider)));
}

export function isBanned(user: UserRow, now: Date): boolean {
  return user.bannedUntil != null && user.bannedUntil.getTime() > now.getTime();
}
