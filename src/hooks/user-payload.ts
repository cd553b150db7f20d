// The `user` object of a hook's input: the API's user JSON (GoTrue serialises models.User).
import type { Executor } from '../db/database.ts';
import { listFactors } from '../db/mfa.ts';
import { findUserById, listIdentities, type UserRow } from '../db/users.ts';
import { userJson } from '../models/user-json.ts';

/** `user` as stored now (read through `ex`), with its identities and factors; null if it is gone. */
export async function hookUser(ex: Executor, userOrId: UserRow | string): Promise<Record<string, unknown> | null> {
  const user = typeof userOrId === 'string' ? await findUserById(ex, userOrId) : userOrId;
  if (!user) return null;
  return userJson(user, await listIdentities(ex, [user.id]), await listFactors(ex, user.id));
}
