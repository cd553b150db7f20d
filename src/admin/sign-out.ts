// POST /admin/users/{user_id}/logout — not a GoTrue route (GoTrue's admin can only sign a user out
// with that user's own JWT, POST /logout?scope=global): ends every session of the user, and with
// them every refresh token, as a password reset by the admin already does. Recorded as `logout`
// with the admin as actor. Access tokens already issued are refused from then on (http/auth.ts:
// 403 session_not_found once their session row is gone). DELETE /admin/users/{user_id}/sessions/{session_id} (ours too) ends one session.
import { and, eq } from 'drizzle-orm';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { deleteSessions } from '../db/sessions.ts';
import { NIL_UUID, findUserById } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../core/errors.ts';
import type { AdminContext } from './user-input.ts';

export async function adminSignOutUser(deps: Deps, userId: string, ctx: AdminContext): Promise<void> {
  await transaction(deps.db, async (tx) => {
    const user = await findUserById(tx, userId, { forUpdate: true });
    if (!user) throw notFound('user_not_found', 'User not found');
    await deleteSessions(tx, user.id, 'global');
    await insertAudit(tx, {
      actor: { id: NIL_UUID, email: ctx.role, phone: null, rawUserMetaData: null },
      action: 'logout',
      traits: { user_id: user.id, user_email: user.email ?? '', user_phone: user.phone ?? '' },
      ip: ctx.ip,
      now: deps.now(),
    });
  });
}

/** Ends one session of the user (its refresh tokens go with it); 404 session_not_found when it is not the user's. */
export async function adminEndSession(deps: Deps, userId: string, sessionId: string, ctx: AdminContext): Promise<void> {
  await transaction(deps.db, async (tx) => {
    const user = await findUserById(tx, userId, { forUpdate: true });
    if (!user) throw notFound('user_not_found', 'User not found');
    const s = tx.t.sessions;
    const gone = await tx.orm
      .delete(s)
      .where(and(eq(s.id, sessionId), eq(s.userId, user.id)))
      .returning({ id: s.id });
    if (gone.length === 0) throw notFound('session_not_found', 'Session not found');
    await insertAudit(tx, {
      actor: { id: NIL_UUID, email: ctx.role, phone: null, rawUserMetaData: null },
      action: 'logout',
      traits: { user_id: user.id, user_email: user.email ?? '', user_phone: user.phone ?? '', session_id: sessionId },
      ip: ctx.ip,
      now: deps.now(),
    });
  });
}
