// Sessions, their AMR claims and their refresh tokens.
import { and, desc, eq, isNull, ne } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type SessionRow = Executor['t']['sessions']['$inferSelect'];
export type RefreshTokenRow = Executor['t']['refreshTokens']['$inferSelect'];

export async function findSession(
  ex: Executor,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<SessionRow | undefined> {
  const q = ex.orm.select().from(ex.t.sessions).where(eq(ex.t.sessions.id, id)).limit(1);
  const rows = opts.forUpdate ? await q.for('update') : await q;
  return rows[0];
}

/** Every session of a user (SESSIONS_SINGLE_PER_USER compares them). */
export async function sessionsOfUser(ex: Executor, userId: string): Promise<SessionRow[]> {
  return ex.orm.select().from(ex.t.sessions).where(eq(ex.t.sessions.userId, userId));
}

export async function touchSession(
  ex: Executor,
  id: string,
  patch: Partial<Executor['t']['sessions']['$inferInsert']>,
): Promise<void> {
  await ex.orm.update(ex.t.sessions).set(patch).where(eq(ex.t.sessions.id, id));
}

/** GoTrue's `amr` claim: newest first. */
export async function listAmrClaims(ex: Executor, sessionId: string): Promise<{ method: string; timestamp: number }[]> {
  const a = ex.t.mfaAmrClaims;
  const rows = await ex.orm
    .select({ m: a.authenticationMethod, at: a.updatedAt })
    .from(a)
    .where(eq(a.sessionId, sessionId))
    .orderBy(desc(a.updatedAt));
  return rows.map((r) => ({ method: r.m, timestamp: Math.floor(r.at.getTime() / 1000) }));
}

export type LogoutScope = 'global' | 'local' | 'others';

/** Deletes sessions (their refresh tokens and AMR claims go with them by cascade). */
export async function deleteSessions(
  ex: Executor,
  userId: string,
  scope: LogoutScope,
  currentSessionId?: string,
): Promise<void> {
  const s = ex.t.sessions;
  if (scope === 'local') {
    if (currentSessionId) await ex.orm.delete(s).where(and(eq(s.id, currentSessionId), eq(s.userId, userId)));
    return;
  }
  if (scope === 'others') {
    if (currentSessionId) await ex.orm.delete(s).where(and(eq(s.userId, userId), ne(s.id, currentSessionId)));
    else await ex.orm.delete(s).where(eq(s.userId, userId));
    return;
  }
  await ex.orm.delete(s).where(eq(s.userId, userId));
}

/**
 * Deletes one session of the user that is the user's own (not an OAuth client's); its refresh
 * tokens and AMR claims go with it by cascade. False when there was none.
 */
export async function deleteOwnSession(ex: Executor, userId: string, sessionId: string): Promise<boolean> {
  const s = ex.t.sessions;
  const gone = await ex.orm
    .delete(s)
    .where(and(eq(s.id, sessionId), eq(s.userId, userId), isNull(s.oauthClientId)))
    .returning({ id: s.id });
  return gone.length > 0;
}

export async function insertRefreshToken(
  ex: Executor,
  r: { tokenHash: string; parentHash: string | null; userId: string; sessionId: string; now: Date },
): Promise<void> {
  await ex.orm.insert(ex.t.refreshTokens).values({
    token: r.tokenHash,
    parent: r.parentHash,
    userId: r.userId,
    sessionId: r.sessionId,
    revoked: false,
    createdAt: r.now,
    updatedAt: r.now,
  });
}

export async function findRefreshToken(ex: Executor, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  const rows = await ex.orm.select().from(ex.t.refreshTokens).where(eq(ex.t.refreshTokens.token, tokenHash)).limit(1);
  return rows[0];
}

export async function findActiveRefreshToken(ex: Executor, sessionId: string): Promise<RefreshTokenRow | undefined> {
  const r = ex.t.refreshTokens;
  const rows = await ex.orm
    .select()
    .from(r)
    .where(and(eq(r.sessionId, sessionId), eq(r.revoked, false)))
    .orderBy(desc(r.id))
    .limit(1);
  return rows[0];
}

export async function revokeRefreshToken(ex: Executor, id: number, now: Date): Promise<void> {
  await ex.orm.update(ex.t.refreshTokens).set({ revoked: true, updatedAt: now }).where(eq(ex.t.refreshTokens.id, id));
}

/** Reuse detected: every live token of the session is revoked. */
export async function revokeSessionTokens(ex: Executor, sessionId: string, now: Date): Promise<void> {
  const r = ex.t.refreshTokens;
  await ex.orm
    .update(r)
    .set({ revoked: true, updatedAt: now })
    .where(and(eq(r.sessionId, sessionId), eq(r.revoked, false)));
}
