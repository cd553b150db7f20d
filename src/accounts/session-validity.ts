// Whether a session still lives: GoTrue's Session.CheckValidity (not_after, SESSIONS_TIMEBOX,
// SESSIONS_INACTIVITY_TIMEOUT, SESSIONS_ALLOW_LOW_AAL) and SESSIONS_SINGLE_PER_USER's "Revoked by
// Newer Login". The refresh grant (refresh.ts) refuses by these rules; GET /sessions lists by them.
import type { Config } from '../config/types.ts';
import type { SessionRow } from '../db/sessions.ts';

type Limits = Pick<Config['sessions'], 'timebox' | 'inactivityTimeout' | 'allowLowAal'>;

/**
 * The last refresh: refreshed_at, else the presented token's updated_at when later than the
 * session's creation, else the creation (db/session-statements.ts checks the same in SQL).
 */
export const lastRefreshedAt = (
  s: Pick<SessionRow, 'createdAt' | 'refreshedAt'>,
  tokenUpdatedAt: Date | null,
): number => s.refreshedAt?.getTime() ?? Math.max(tokenUpdatedAt?.getTime() ?? 0, s.createdAt?.getTime() ?? 0);

/** GoTrue's Session.DetermineTag: its own tag when configured, else the first; '' without tags. */
export const sessionTag = (s: Pick<SessionRow, 'tag'>, tags: string[]): string =>
  tags.length === 0 ? '' : s.tag && tags.includes(s.tag) ? s.tag : tags[0]!;

/** GoTrue's Session.CheckValidity: why a refresh of `session` is refused at `now`, or undefined. */
export function sessionRefusal(
  session: Pick<SessionRow, 'notAfter' | 'createdAt' | 'refreshedAt' | 'aal'>,
  tokenUpdatedAt: Date | null,
  now: Date,
  limits: Limits,
  userHasVerifiedFactor: boolean,
): string | undefined {
  const t = now.getTime();
  if (session.notAfter && t > session.notAfter.getTime()) return 'Invalid Refresh Token: Session Expired';
  const created = session.createdAt?.getTime() ?? 0;
  if (limits.timebox > 0 && t > created + limits.timebox * 1000) return 'Invalid Refresh Token: Session Expired';
  if (limits.inactivityTimeout > 0 && t > lastRefreshedAt(session, tokenUpdatedAt) + limits.inactivityTimeout * 1000) {
    return 'Invalid Refresh Token: Session Expired (Inactivity)';
  }
  // SESSIONS_ALLOW_LOW_AAL: a session below the user's highest possible level (aal2 once a factor
  // is verified) lives only that long.
  if (
    limits.allowLowAal > 0 &&
    userHasVerifiedFactor &&
    (session.aal ?? 'aal1') === 'aal1' &&
    t > created + limits.allowLowAal * 1000
  ) {
    return 'Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)';
  }
  return undefined;
}

/**
 * SESSIONS_SINGLE_PER_USER: another valid session among `sessions` (the user's) with the same
 * tag was refreshed more recently than `session` (GoTrue: "Revoked by Newer Login").
 */
export function newerSessionAmong(
  sessions: SessionRow[],
  session: SessionRow,
  tokenUpdatedAt: Date | null,
  now: Date,
  limits: Config['sessions'],
  userHasVerifiedFactor: boolean,
): boolean {
  const mine = lastRefreshedAt(session, tokenUpdatedAt);
  const tag = sessionTag(session, limits.tags);
  return sessions.some(
    (s) =>
      s.id !== session.id &&
      sessionRefusal(s, null, now, limits, userHasVerifiedFactor) === undefined &&
      sessionTag(s, limits.tags) === tag &&
      lastRefreshedAt(s, null) > mine,
  );
}

/** The sessions of one user (`sessions`) whose refresh would be admitted at `now`, in their order. */
export function liveSessions(
  sessions: SessionRow[],
  now: Date,
  limits: Config['sessions'],
  userHasVerifiedFactor: boolean,
): SessionRow[] {
  const mfa = limits.allowLowAal > 0 && userHasVerifiedFactor;
  return sessions.filter(
    (s) =>
      sessionRefusal(s, null, now, limits, mfa) === undefined &&
      !(limits.singlePerUser && newerSessionAmong(sessions, s, null, now, limits, mfa)),
  );
}
