// Passkeys and their ceremonies' challenges (GoTrue's webauthn_credentials, webauthn_challenges),
// and the one look-up WebAuthn MFA factors need beyond db/mfa.ts: a credential id across users.
import { and, asc, count, eq, inArray, isNull, lt, type SQL, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type PasskeyRow = Executor['t']['webauthnCredentials']['$inferSelect'];
export type NewPasskey = Executor['t']['webauthnCredentials']['$inferInsert'];
export type WebauthnChallengeRow = Executor['t']['webauthnChallenges']['$inferSelect'];
export type ChallengeKind = 'registration' | 'authentication';

/** A user's passkeys, oldest first (GoTrue's FindWebAuthnCredentialsByUserID). */
export async function listPasskeys(ex: Executor, userId: string): Promise<PasskeyRow[]> {
  const p = ex.t.webauthnCredentials;
  return ex.orm.select().from(p).where(eq(p.userId, userId)).orderBy(asc(p.createdAt), asc(p.id));
}

export async function countPasskeys(ex: Executor, userId: string): Promise<number> {
  const p = ex.t.webauthnCredentials;
  const rows = await ex.orm.select({ n: count() }).from(p).where(eq(p.userId, userId));
  return Number(rows[0]?.n ?? 0);
}

export async function findPasskey(
  ex: Executor,
  id: string,
  userId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<PasskeyRow | undefined> {
  const p = ex.t.webauthnCredentials;
  const q = ex.orm
    .select()
    .from(p)
    .where(and(eq(p.id, id), eq(p.userId, userId)))
    .limit(1);
  return (opts.forUpdate ? await q.for('update') : await q)[0];
}

/** The passkey with this credential id, locked (its sign counter is about to be checked and moved). */
export async function lockPasskeyByCredentialId(
  ex: Executor,
  credentialId: Uint8Array,
): Promise<PasskeyRow | undefined> {
  const p = ex.t.webauthnCredentials;
  return (await ex.orm.select().from(p).where(eq(p.credentialId, credentialId)).limit(1).for('update'))[0];
}

/** Inserts a passkey; undefined when its credential id is already registered (to anyone). */
export async function insertPasskey(ex: Executor, row: NewPasskey): Promise<PasskeyRow | undefined> {
  const p = ex.t.webauthnCredentials;
  return (await ex.orm.insert(p).values(row).onConflictDoNothing({ target: p.credentialId }).returning())[0];
}

export async function updatePasskey(
  ex: Executor,
  id: string,
  patch: Partial<NewPasskey>,
): Promise<PasskeyRow | undefined> {
  const p = ex.t.webauthnCredentials;
  return (await ex.orm.update(p).set(patch).where(eq(p.id, id)).returning())[0];
}

export async function deletePasskey(ex: Executor, id: string, userId: string): Promise<PasskeyRow | undefined> {
  const p = ex.t.webauthnCredentials;
  return (
    await ex.orm
      .delete(p)
      .where(and(eq(p.id, id), eq(p.userId, userId)))
      .returning()
  )[0];
}

/** A user's passkeys and pending ceremonies (a soft delete: GoTrue's DeleteWebAuthnCredentialsByUserID). */
export async function deleteUserPasskeys(ex: Executor, userId: string): Promise<void> {
  await ex.orm.delete(ex.t.webauthnCredentials).where(eq(ex.t.webauthnCredentials.userId, userId));
  await ex.orm.delete(ex.t.webauthnChallenges).where(eq(ex.t.webauthnChallenges.userId, userId));
}

/**
 * Stores a ceremony's challenge. Expired challenges are swept a hundred at a time on the way
 * (the sign-in options endpoint needs no session, so nothing else bounds the table).
 */
export async function insertWebauthnChallenge(
  ex: Executor,
  row: {
    id: string;
    userId: string | null;
    kind: ChallengeKind;
    sessionData: unknown;
    createdAt: Date;
    expiresAt: Date;
  },
): Promise<void> {
  const c = ex.t.webauthnChallenges;
  const expired = ex.orm.select({ id: c.id }).from(c).where(lt(c.expiresAt, row.createdAt)).limit(100);
  await ex.orm.delete(c).where(inArray(c.id, expired));
  await ex.orm.insert(c).values({
    id: row.id,
    userId: row.userId,
    challengeType: row.kind,
    sessionData: row.sessionData,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  });
}

/**
 * GoTrue's ConsumeWebAuthnChallengeByID: deletes and returns the challenge in one statement, so
 * a challenge answers one ceremony however many arrive at once. `userId` null: a sign-in
 * challenge, bound to no user.
 */
export async function consumeWebauthnChallenge(
  ex: Executor,
  id: string,
  kind: ChallengeKind,
  userId: string | null,
): Promise<WebauthnChallengeRow | undefined> {
  const c = ex.t.webauthnChallenges;
  const owner: SQL = userId === null ? isNull(c.userId) : eq(c.userId, userId);
  return (
    await ex.orm
      .delete(c)
      .where(and(eq(c.id, id), eq(c.challengeType, kind), owner))
      .returning()
  )[0];
}

/** Whether a WebAuthn factor (of any user but `exceptFactorId`) already holds this credential id. */
export async function factorCredentialTaken(
  ex: Executor,
  credentialIdB64: string,
  exceptFactorId: string,
): Promise<boolean> {
  const f = ex.t.mfaFactors;
  const rows = await ex.orm
    .select({ id: f.id })
    .from(f)
    .where(and(sql`${f.webAuthnCredential} ->> 'id' = ${credentialIdB64}`, sql`${f.id} <> ${exceptFactorId}`))
    .limit(1);
  return rows.length > 0;
}
