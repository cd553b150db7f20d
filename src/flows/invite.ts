// POST /invite — GoTrue: api.Invite. Creates (or re-invites) an unconfirmed user and sends the
// invitation (after the transaction commits); accepting it is `verify type=invite`.
import { insertAudit } from '../db/audit.ts';
import { isUniqueViolation } from '../db/database.ts';
import {
  NIL_UUID,
  deleteUnconfirmedUser,
  findUserByEmail,
  findUserById,
  insertIdentity,
  insertUser,
  listIdentities,
  type NewUser,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import { queueEmailToken } from '../accounts/email-tokens.ts';
import { transactionThenSend } from '../accounts/outbox.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { userJson } from '../models/user-json.ts';
import { afterUserCreated, beforeUserCreated } from '../hooks/user-created.ts';

const emailExists = () =>
  new ApiError(422, 'email_exists', 'A user with this email address has already been registered');

export async function inviteUser(
  deps: Deps,
  p: {
    email: string;
    data: Record<string, unknown>;
    aud: string;
    redirectTo: string;
    adminRole: string;
    meta: RequestMeta;
  },
): Promise<Record<string, unknown>> {
  let body: Record<string, unknown>;
  try {
    body = await transactionThenSend(deps, async (tx, out) => {
      const now = deps.now();
      const existing = await findUserByEmail(tx, p.email, p.aud);
      if (existing?.emailConfirmedAt) throw emailExists();
      let user = existing ? await findUserById(tx, existing.id, { forUpdate: true }) : undefined;
      if (!user) {
        const id = crypto.randomUUID();
        const identityData = { sub: id, email: p.email, email_verified: false, phone_verified: false };
        user = await insertUser(tx, {
          id,
          aud: p.aud,
          role: deps.config.jwt.defaultGroupName,
          email: p.email,
          rawAppMetaData: { provider: 'email', providers: ['email'] },
          rawUserMetaData: p.data,
          createdAt: now,
          updatedAt: now,
        });
        await insertIdentity(tx, {
          providerId: id,
          userId: id,
          identityData,
          provider: 'email',
          createdAt: now,
          updatedAt: now,
        });
        await beforeUserCreated(deps, tx, user, p.meta.ip);
        out.undo((u) => deleteUnconfirmedUser(u, id));
      }
      // Re-inviting an unconfirmed user clears a password someone may have signed it up with:
      // accepting the invite then sets a random one (pre-account takeover, see signup.ts).
      const patch: Partial<NewUser> = { invitedAt: now, ...(user.encryptedPassword ? { encryptedPassword: '' } : {}) };
      user = await queueEmailToken(deps, tx, out, user, 'invite', { redirectTo: p.redirectTo, patch });
      await insertAudit(tx, {
        // GoTrue records the admin as a pseudo-user: nil id, the role as username.
        actor: { id: NIL_UUID, email: p.adminRole, phone: null, rawUserMetaData: null },
        action: 'user_invited',
        ip: p.meta.ip,
        now,
        traits: { user_id: user.id, user_email: user.email ?? '' },
      });
      return userJson(user, await listIdentities(tx, [user.id]));
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw emailExists();
    throw err;
  }
  // GoTrue calls the after user created hook after every invite, a re-invite too; its error is
  // the answer (the user and the sent invitation stay).
  await afterUserCreated(deps, String(body.id));
  return body;
}
