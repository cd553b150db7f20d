// GET /sessions, DELETE /sessions/{id} — not GoTrue routes (issue 46; the shape of auth-js's draft
// listSessions()/revokeSession(), supabase/auth-js#1042): the signed-in user's own live sessions,
// and ending one of them. OAuth clients' sessions are not the user's here (review 2026-12-01 H1):
// neither listed nor ended (/user/oauth/grants revokes those). Never a token or a session's key.
import type { AuthContext } from '../app-env.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { deleteOwnSession, type SessionRow, sessionsOfUser } from '../db/sessions.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../core/errors.ts';
import { requireAal2WhenMfa } from '../accounts/aal2-rule.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { liveSessions } from '../accounts/session-validity.ts';

export interface OwnSession {
  id: string;
  created_at: string | null;
  updated_at: string | null;
  /** The last refresh (stored without a time zone, in UTC, as GoTrue does). */
  refreshed_at: string | null;
  not_after: string | null;
  user_agent: string | null;
  ip: string | null;
  aal: string | null;
  factor_id: string | null;
  /** The session the request's access token belongs to. */
  current: boolean;
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
const newestFirst = (a: SessionRow, b: SessionRow): number =>
  (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

function ownSessionJson(s: SessionRow, currentId: string | undefined): OwnSession {
  return {
    id: s.id,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
    refreshed_at: iso(s.refreshedAt),
    not_after: iso(s.notAfter),
    user_agent: s.userAgent ?? null,
    ip: s.ip ?? null,
    aal: s.aal ?? null,
    factor_id: s.factorId ?? null,
    current: s.id === currentId,
  };
}

/**
 * The user's sessions a refresh would still admit (not_after, SESSIONS_TIMEBOX,
 * SESSIONS_INACTIVITY_TIMEOUT, SESSIONS_ALLOW_LOW_AAL, SESSIONS_SINGLE_PER_USER), newest first.
 */
export async function listOwnSessions(deps: Deps, auth: AuthContext): Promise<OwnSession[]> {
  const all = await sessionsOfUser(deps.db, auth.user.id);
  const verified = auth.factors.some((f) => f.status === 'verified');
  return liveSessions(all, deps.now(), deps.config.sessions, verified)
    .filter((s) => !s.oauthClientId)
    .sort(newestFirst)
    .map((s) => ownSessionJson(s, auth.session?.id));
}

/**
 * Ends one of the user's own sessions (`id` canonical, lower case): its refresh tokens go with
 * it, its access tokens are refused from then on (http/auth.ts: 403 session_not_found). The
 * current session is a local sign-out (POST /logout?scope=local, audited the same); another
 * needs an aal2 session while the user has a verified factor. 404 session_not_found when the
 * session is not the user's own.
 */
export async function endOwnSession(deps: Deps, auth: AuthContext, id: string, meta: RequestMeta): Promise<void> {
  const { user, session } = auth;
  const current = id === session?.id;
  if (!current) await requireAal2WhenMfa(deps.db, user.id, session?.aal, 'end another session');
  await transaction(deps.db, async (tx) => {
    if (!(await deleteOwnSession(tx, user.id, id))) throw notFound('session_not_found', 'Session not found');
    await insertAudit(tx, {
      actor: user,
      action: 'logout',
      ...(current ? {} : { traits: { session_id: id } }),
      ip: meta.ip,
      now: deps.now(),
    });
  });
}
