// MFA factors and challenges (GoTrue's mfa_factors, mfa_challenges), and the session's side of
// an AAL change: its AMR rows, sessions.aal and sessions.factor_id.
import { and, asc, eq, gte, inArray, lt, ne, notExists, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { jsonValue, mapRow, type RawRow } from './prepared.ts';

export type FactorRow = Executor['t']['mfaFactors']['$inferSelect'];
export type NewFactor = Executor['t']['mfaFactors']['$inferInsert'];
export type ChallengeRow = Executor['t']['mfaChallenges']['$inferSelect'];
export type FactorType = FactorRow['factorType'];

/** SQL: a user's factors as one `json` array, oldest first (read back with `mapFactors`), for statements that already read the user. */
export function factorsJson(t: Executor['t'], userId: SQL): SQL {
  return sql`(select coalesce(json_agg(f order by f.created_at, f.id), '[]'::json) from ${t.mfaFactors} f where f.user_id = ${userId})`;
}

/** A `json_agg` of factor rows. */
export function mapFactors(ex: Executor, agg: unknown): FactorRow[] {
  return (jsonValue<RawRow[] | null>(agg) ?? []).map((r) => mapRow<FactorRow>(ex.t.mfaFactors, r));
}

/** A user's factors, oldest first (GoTrue's FindFactorsByUser). */
export async function listFactors(ex: Executor, userId: string): Promise<FactorRow[]> {
  const f = ex.t.mfaFactors;
  return ex.orm.select().from(f).where(eq(f.userId, userId)).orderBy(asc(f.createdAt), asc(f.id));
}

/** Whether the user has a verified factor ("MFA enabled": aal2 is possible). */
export async function hasVerifiedFactor(ex: Executor, userId: string): Promise<boolean> {
  const f = ex.t.mfaFactors;
  const rows = await ex.orm
    .select({ id: f.id })
    .from(f)
    .where(and(eq(f.userId, userId), eq(f.status, 'verified')))
    .limit(1);
  return rows.length > 0;
}

export async function findFactor(
  ex: Executor,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<FactorRow | undefined> {
  const q = ex.orm.select().from(ex.t.mfaFactors).where(eq(ex.t.mfaFactors.id, id)).limit(1);
  return (opts.forUpdate ? await q.for('update') : await q)[0];
}

export async function insertFactor(ex: Executor, factor: NewFactor): Promise<FactorRow> {
  return (await ex.orm.insert(ex.t.mfaFactors).values(factor).returning())[0]!;
}

export async function updateFactor(
  ex: Executor,
  id: string,
  patch: Partial<NewFactor>,
): Promise<FactorRow | undefined> {
  return (await ex.orm.update(ex.t.mfaFactors).set(patch).where(eq(ex.t.mfaFactors.id, id)).returning())[0];
}

/** Deletes a factor (its challenges go by cascade); the row as it was, or undefined when already gone. */
export async function deleteFactor(ex: Executor, id: string): Promise<FactorRow | undefined> {
  return (await ex.orm.delete(ex.t.mfaFactors).where(eq(ex.t.mfaFactors.id, id)).returning())[0];
}

/** When an unverified factor stops being usable (src/mfa/load-factor.ts sets the times). */
export interface FactorExpiry {
  /** GoTrue's rule (at enrolment only): one never challenged and created before this goes. */
  neverChallengedBefore?: Date;
  /** A WebAuthn one created before this goes once every challenge of it was made before `challengedBefore`. */
  webauthnCreatedBefore: Date;
  challengedBefore: Date;
  /** Any one created before this goes, challenged or not. */
  anyBefore: Date;
}

/**
 * GoTrue's DeleteExpiredFactors, widened (security review 2026-12-01, H2): besides GoTrue's
 * never-challenged ones, an unverified WebAuthn factor whose challenges have all expired (a
 * cancelled browser prompt), and any unverified factor past `anyBefore`.
 */
export async function deleteExpiredFactors(ex: Executor, userId: string, e: FactorExpiry): Promise<void> {
  const f = ex.t.mfaFactors;
  const c = ex.t.mfaChallenges;
  const challenged = (since?: Date) =>
    ex.orm
      .select({ one: sql`1` })
      .from(c)
      .where(since ? and(eq(c.factorId, f.id), gte(c.createdAt, since)) : eq(c.factorId, f.id));
  await ex.orm
    .delete(f)
    .where(
      and(
        eq(f.userId, userId),
        eq(f.status, 'unverified'),
        or(
          e.neverChallengedBefore ? and(lt(f.createdAt, e.neverChallengedBefore), notExists(challenged())) : undefined,
          and(
            eq(f.factorType, 'webauthn'),
            lt(f.createdAt, e.webauthnCreatedBefore),
            notExists(challenged(e.challengedBefore)),
          ),
          lt(f.createdAt, e.anyBefore),
        ),
      ),
    );
}

/** The user's unverified phone factors for `phone` (replaced by a new enrolment of that number). */
export async function deleteUnverifiedPhoneFactors(ex: Executor, userId: string, phone: string): Promise<void> {
  const f = ex.t.mfaFactors;
  await ex.orm.delete(f).where(and(eq(f.userId, userId), eq(f.phone, phone), eq(f.status, 'unverified')));
}

/** After a verify: the user's other unverified factors of the same type are dropped. */
export async function deleteOtherUnverifiedFactors(
  ex: Executor,
  userId: string,
  type: FactorType,
  keepId: string,
): Promise<void> {
  const f = ex.t.mfaFactors;
  await ex.orm
    .delete(f)
    .where(and(eq(f.userId, userId), eq(f.factorType, type), eq(f.status, 'unverified'), ne(f.id, keepId)));
}

export async function insertChallenge(
  ex: Executor,
  c: Executor['t']['mfaChallenges']['$inferInsert'],
): Promise<ChallengeRow> {
  return (await ex.orm.insert(ex.t.mfaChallenges).values(c).returning())[0]!;
}

/** The challenge `id` of factor `factorId`, locked: two verifies of one challenge take turns. */
export async function lockChallenge(ex: Executor, id: string, factorId: string): Promise<ChallengeRow | undefined> {
  const c = ex.t.mfaChallenges;
  return (
    await ex.orm
      .select()
      .from(c)
      .where(and(eq(c.id, id), eq(c.factorId, factorId)))
      .limit(1)
      .for('update')
  )[0];
}

export async function markChallengeVerified(ex: Executor, id: string, now: Date): Promise<void> {
  await ex.orm.update(ex.t.mfaChallenges).set({ verifiedAt: now }).where(eq(ex.t.mfaChallenges.id, id));
}

/** Rewrites a challenge's stored code (re-encryption under the current key). */
export async function setChallengeOtpCode(ex: Executor, id: string, otpCode: string): Promise<void> {
  await ex.orm.update(ex.t.mfaChallenges).set({ otpCode }).where(eq(ex.t.mfaChallenges.id, id));
}

export async function deleteChallenge(ex: Executor, id: string): Promise<void> {
  await ex.orm.delete(ex.t.mfaChallenges).where(eq(ex.t.mfaChallenges.id, id));
}

/**
 * Stamps last_challenged_at. The column is UNIQUE (GoTrue's schema) and JavaScript clocks count
 * milliseconds: a random microsecond keeps two factors challenged in the same millisecond apart.
 */
export async function stampChallenged(ex: Executor, factorId: string, now: Date, micros: number): Promise<void> {
  const at = `${now.toISOString().slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
  await ex.orm
    .update(ex.t.mfaFactors)
    .set({ lastChallengedAt: sql`${at}::timestamptz` })
    .where(eq(ex.t.mfaFactors.id, factorId));
}

/** GoTrue's AddClaimToSession: one AMR row per method; a repeat bumps its updated_at. */
export async function upsertAmrClaim(ex: Executor, sessionId: string, method: string, now: Date): Promise<void> {
  const a = ex.t.mfaAmrClaims;
  await ex.orm
    .insert(a)
    .values({ id: crypto.randomUUID(), sessionId, authenticationMethod: method, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [a.sessionId, a.authenticationMethod], set: { updatedAt: now } });
}

export async function setSessionAal(
  ex: Executor,
  sessionId: string,
  aal: 'aal1' | 'aal2',
  factorId: string | null,
  now: Date,
): Promise<void> {
  await ex.orm.update(ex.t.sessions).set({ aal, factorId, updatedAt: now }).where(eq(ex.t.sessions.id, sessionId));
}

/** `DELETE FROM sessions WHERE user_id = ? AND aal < 'aal2'` (sessions with no aal survive, as in GoTrue). */
export async function deleteLowAalSessions(ex: Executor, userId: string): Promise<void> {
  const s = ex.t.sessions;
  await ex.orm.delete(s).where(and(eq(s.userId, userId), sql`${s.aal} < 'aal2'`));
}

/** GoTrue's DowngradeSessionsToAAL1: sessions upgraded by the factor lose its AMR row and their aal2. */
export async function downgradeSessions(ex: Executor, factorId: string, method: string, now: Date): Promise<void> {
  const s = ex.t.sessions;
  const a = ex.t.mfaAmrClaims;
  const upgraded = ex.orm.select({ id: s.id }).from(s).where(eq(s.factorId, factorId));
  await ex.orm.delete(a).where(and(eq(a.authenticationMethod, method), inArray(a.sessionId, upgraded)));
  await ex.orm.update(s).set({ aal: 'aal1', factorId: null, updatedAt: now }).where(eq(s.factorId, factorId));
}
