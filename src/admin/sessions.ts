// GET /admin/users/{user_id}/sessions — not a GoTrue route (GoTrue's admin API lists no sessions):
// the user's sessions, newest first, for the console's user page. What a session row says about
// where and how it was made; never its refresh-token HMAC key, nor any token.
import { desc, eq } from 'drizzle-orm';
import { findUserById } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../core/errors.ts';

export interface AdminSession {
  id: string;
  created_at: string | null;
  updated_at: string | null;
  /** The last refresh (GoTrue stores it without a time zone, in UTC). */
  refreshed_at: string | null;
  aal: string | null;
  factor_id: string | null;
  not_after: string | null;
  user_agent: string | null;
  ip: string | null;
  oauth_client_id: string | null;
  tag: string | null;
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

export async function adminListSessions(deps: Deps, userId: string): Promise<AdminSession[]> {
  const db = deps.db;
  if (!(await findUserById(db, userId))) throw notFound('user_not_found', 'User not found');
  const s = db.t.sessions;
  const rows = await db.orm.select().from(s).where(eq(s.userId, userId)).orderBy(desc(s.createdAt), desc(s.id));
  return rows.map((r) => ({
    id: r.id,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
    refreshed_at: iso(r.refreshedAt),
    aal: r.aal ?? null,
    factor_id: r.factorId ?? null,
    not_after: iso(r.notAfter),
    user_agent: r.userAgent ?? null,
    ip: r.ip ?? null,
    oauth_client_id: r.oauthClientId ?? null,
    tag: r.tag ?? null,
  }));
}
