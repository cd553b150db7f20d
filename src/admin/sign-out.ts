// POST /admin/users/{user_id}/logout — not a GoTrue route (GoTrue's admin can only sign a user out
// with that user's own JWT, POST /logout?scope=global): ends every session of the user, and with
// them every refresh token, as a password reset by the admin already does. Recorded as `logout`
// with the admin as actor. Access tokens already issued stay valid until they expire, as after
// any logout.
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
