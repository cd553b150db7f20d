// Users: look-ups are scoped by audience, as GoTrue's are.
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { factorsJson, type FactorRow, mapFactors } from './mfa.ts';
import { jsonValue, mapRow, type RawRow, statement } from './prepared.ts';

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export type UserRow = Executor['t']['users']['$inferSelect'];
export type NewUser = Executor['t']['users']['$inferInsert'];
export type IdentityRow = Executor['t']['identities']['$inferSelect'];

const p = (name: string) => sql.placeholder(name);

const userByIdStmt = statement('user_by_id', (t) => sql`select * from ${t.users} where id = ${p('id')}::uuid`);
const userByIdLockedStmt = statement(
  'user_by_id_locked',
  (t) => sql`select * from ${t.users} where id = ${p('id')}::uuid for update`,
);
// instance_id is what lets (instance_id, lower(email)) serve the look-up: without it a sign-in
// scanned the whole table (48 ms at 200,000 users). GoTrue matches the nil instance only; rows
// inserted by hand without one (imports) are found too, through the same index.
const userByEmailStmt = statement(
  'user_by_email',
  (t) => sql`
  select * from ${t.users}
  where ((instance_id = ${NIL_UUID}::uuid and lower(email) = ${p('email')}::text)
         or (instance_id is null and lower(email) = ${p('email')}::text))
    and aud = ${p('aud')}::text and is_sso_user = false
  limit 1`,
);
const userByPhoneStmt = statement(
  'user_by_phone',
  (t) => sql`
  select * from ${t.users} where phone = ${p('phone')}::text and aud = ${p('aud')}::text limit 1`,
);

function firstUser(ex: Executor, rows: RawRow[]): UserRow | undefined {
  return rows[0] ? mapRow<UserRow>(ex.t.users, rows[0]) : undefined;
}

export async function findUserById(
  ex: Executor,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<UserRow | undefined> {
  return firstUser(ex, await (opts.forUpdate ? userByIdLockedStmt : userByIdStmt)(ex, { id }));
}

export async function findUserByEmail(ex: Executor, email: string, aud: string): Promise<UserRow | undefined> {
  return firstUser(ex, await userByEmailStmt(ex, { email: email.toLowerCase(), aud }));
}

export async function findUserByPhone(ex: Executor, phone: string, aud: string): Promise<UserRow | undefined> {
  return firstUser(ex, await userByPhoneStmt(ex, { phone, aud }));
}

/** The user whose pending phone change is to `phone` (GoTrue: FindUserByPhoneChangeAndAudience). */
export async function findUserByPhoneChange(ex: Executor, phone: string, aud: string): Promise<UserRow | undefined> {
  const u = ex.t.users;
  const rows = await ex.orm
    .select()
    .from(u)
    .where(and(eq(u.phoneChange, phone), eq(u.aud, aud), eq(u.isSsoUser, false)))
    .limit(1);
  return rows[0];
}

export async function insertUser(ex: Executor, user: NewUser): Promise<UserRow> {
  const rows = await ex.orm
    .insert(ex.t.users)
    .values({ instanceId: NIL_UUID, ...user })
    .returning();
  return rows[0]!;
}

const emailUserStmt = statement(
  'insert_email_user',
  (t) => sql`
  with u as (
    insert into ${t.users} (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
                            raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
    values (${NIL_UUID}::uuid, ${p('id')}::uuid, ${p('aud')}::text, ${p('role')}::text, ${p('email')}::text,
            ${p('password')}::text, ${p('confirmedAt')}::timestamptz, ${p('appMeta')}::jsonb, ${p('meta')}::jsonb,
            ${p('now')}::timestamptz, ${p('now')}::timestamptz)
    returning *
  ), i as (
    insert into ${t.identities} (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
    select u.id::text, u.id, ${p('meta')}::jsonb, 'email', ${p('now')}::timestamptz, ${p('now')}::timestamptz, ${p('now')}::timestamptz
    from u
  )
  select * from u`,
);

export interface NewEmailUser {
  id: string;
  aud: string;
  role: string;
  email: string;
  encryptedPassword: string;
  /** Null until the address is confirmed. */
  emailConfirmedAt: Date | null;
  appMetaData: Record<string, unknown>;
  /** user_metadata, and the email identity's identity_data (GoTrue writes both alike at signup). */
  metaData: Record<string, unknown>;
  now: Date;
}

/** A password user and its email identity, in one statement (signup). */
export async function insertEmailUser(ex: Executor, n: NewEmailUser): Promise<UserRow> {
  const user = firstUser(
    ex,
    await emailUserStmt(ex, {
      id: n.id,
      aud: n.aud,
      role: n.role,
      email: n.email,
      password: n.encryptedPassword,
      confirmedAt: n.emailConfirmedAt?.toISOString() ?? null,
      appMeta: JSON.stringify(n.appMetaData),
      meta: JSON.stringify(n.metaData),
      now: n.now.toISOString(),
    }),
  );
  if (!user) throw new Error(`user ${n.id} was not inserted`);
  return user;
}

export async function updateUser(ex: Executor, id: string, patch: Partial<NewUser>): Promise<UserRow> {
  const rows = await ex.orm.update(ex.t.users).set(patch).where(eq(ex.t.users.id, id)).returning();
  if (!rows[0]) throw new Error(`user ${id} vanished during update`);
  return rows[0];
}

/** A token column of users: the guard of an undo (the token is still the one this request wrote). */
export type TokenColumn =
  | 'confirmationToken'
  | 'recoveryToken'
  | 'reauthenticationToken'
  | 'emailChangeTokenNew'
  | 'emailChangeTokenCurrent'
  | 'phoneChangeToken';

/** Puts `before` back, provided `guard` still holds the token this request wrote (nobody used or replaced it since). */
export async function restoreUserColumns(
  ex: Executor,
  id: string,
  before: Partial<NewUser>,
  guard: { column: TokenColumn; value: string },
): Promise<void> {
  const u = ex.t.users;
  await ex.orm
    .update(u)
    .set(before)
    .where(and(eq(u.id, id), eq(u[guard.column], guard.value)));
}

/** Deletes a user this request created, unless it was confirmed meanwhile (identities and tokens go with it). */
export async function deleteUnconfirmedUser(ex: Executor, id: string): Promise<void> {
  const u = ex.t.users;
  await ex.orm
    .delete(u)
    .where(and(eq(u.id, id), sql`${u.emailConfirmedAt} is null`, sql`${u.phoneConfirmedAt} is null`));
}

export async function insertIdentity(
  ex: Executor,
  identity: Executor['t']['identities']['$inferInsert'],
): Promise<IdentityRow> {
  const rows = await ex.orm.insert(ex.t.identities).values(identity).returning();
  return rows[0]!;
}

/** SQL: a user's identities as one `json` array, oldest first (read back with `mapIdentities`). */
export function identitiesJson(t: Executor['t'], userId: SQL): SQL {
  return sql`(select coalesce(json_agg(i order by i.created_at, i.id), '[]'::json) from ${t.identities} i where i.user_id = ${userId})`;
}

const authContextStmt = statement(
  'auth_context',
  (t) => sql`
  select row_to_json(u) as "user", ${identitiesJson(t, sql`u.id`)} as identities, ${factorsJson(t, sql`u.id`)} as factors,
    (select row_to_json(s) from ${t.sessions} s where s.id = ${sql.placeholder('sid')}::uuid) as session
  from ${t.users} u where u.id = ${sql.placeholder('uid')}::uuid`,
);

/** Everything an authenticated request needs, in one statement: the user, its identities and MFA factors, the session. */
export async function loadAuthContext(
  ex: Executor,
  userId: string,
  sessionId: string | null,
): Promise<
  | {
      user: UserRow;
      identities: IdentityRow[];
      factors: FactorRow[];
      session: Executor['t']['sessions']['$inferSelect'] | undefined;
    }
  | undefined
> {
  const row = (await authContextStmt(ex, { uid: userId, sid: sessionId }))[0];
  if (!row) return undefined;
  const session = jsonValue<RawRow | null>(row.session);
  return {
    user: mapRow<UserRow>(ex.t.users, jsonValue(row.user)),
    identities: mapIdentities(ex, row.identities),
    factors: mapFactors(ex, row.factors),
    session: session ? mapRow(ex.t.sessions, session) : undefined,
  };
}

/** A `json_agg` of identity rows. */
export function mapIdentities(ex: Executor, agg: unknown): IdentityRow[] {
  return (jsonValue<RawRow[] | null>(agg) ?? []).map((r) => mapRow<IdentityRow>(ex.t.identities, r));
}

export async function listIdentities(ex: Executor, userIds: string[]): Promise<IdentityRow[]> {
  if (userIds.length === 0) return [];
  return ex.orm
    .select()
    .from(ex.t.identities)
    .where(inArray(ex.t.identities.userId, userIds))
    .orderBy(ex.t.identities.createdAt, ex.t.identities.id);
}

export async function updateIdentityData(
  ex: Executor,
  userId: string,
  provider: string,
  data: Record<string, unknown>,
): Promise<void> {
  const i = ex.t.identities;
  await ex.orm
    .update(i)
    .set({ identityData: data, updatedAt: new Date() })
    .where(and(eq(i.userId, userId), eq(i.provider, provider)));
}

/** Sets email_verified in the user's email identity and keeps the rest of its data (GoTrue's User.Confirm). */
export async function markEmailIdentityVerified(ex: Executor, userId: string, now: Date): Promise<void> {
  const i = ex.t.identities;
  await ex.orm
    .update(i)
    .set({
      identityData: sql`coalesce(${i.identityData}, '{}'::jsonb) || '{"email_verified": true}'::jsonb`,
      updatedAt: now,
    })
    .where(and(eq(i.userId, userId), eq(i.provider, 'email')));
}

export function isBanned(user: UserRow, now: Date): boolean {
  return user.bannedUntil != null && user.bannedUntil.getTime() > now.getTime();
}
