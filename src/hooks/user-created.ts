// The before user created hook (GoTrue: api/hooks.go triggerBeforeUserCreated): asked about every
// user a sign-up makes (email/phone signup, /otp and magic links, anonymous sign-in, invites,
// generate_link signup/invite, OAuth and ID-token sign-ups; not admin POST /admin/users). It can
// only refuse. It is called right after the user row is written, inside the request's
// transaction: a refusal or failure takes the row back, and a Postgres-function hook runs in
// that transaction. (GoTrue calls it just before the insert; the user JSON is the same.)
import type { Executor } from '../db/database.ts';
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { userJson } from '../flows/user-json.ts';
import { invokeHook, unmarshalError } from './invoke.ts';

/** HOOK_BEFORE_USER_CREATED for the `user` just inserted through `tx`. */
export async function beforeUserCreated(deps: Deps, tx: Executor, user: UserRow, ip?: string): Promise<void> {
  if (!deps.config.hooks.BEFORE_USER_CREATED.enabled) return;
  // GoTrue's user has no identities loaded yet (a nil list: null).
  const output = await invokeHook(deps, 'BEFORE_USER_CREATED', { user: userJson(user, null) }, { ex: tx, ip });
  // The output has no fields, but must still decode as an object (Go's json.Unmarshal).
  if (output !== undefined && output !== null && (typeof output !== 'object' || Array.isArray(output))) throw unmarshalError();
}
