// The before and after user created hooks (GoTrue: api/hooks.go). Before user created is asked
// about every user a sign-up makes (email/phone signup, /otp and magic links, anonymous sign-in, invites,
// generate_link signup/invite, OAuth and ID-token sign-ups; not admin POST /admin/users). It can
// only refuse. It is called right after the user row is written, inside the request's
// transaction: a refusal or failure takes the row back, and a Postgres-function hook runs in
// that transaction. (GoTrue calls it just before the insert; the user JSON is the same.)
import type { Executor } from '../db/database.ts';
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { userJson } from '../models/user-json.ts';
import { ApiError } from '../core/errors.ts';
import { invokeHook, unmarshalError } from './invoke.ts';
import { hookUser } from './user-payload.ts';

/** HOOK_BEFORE_USER_CREATED for the `user` just inserted through `tx`. */
export async function beforeUserCreated(deps: Deps, tx: Executor, user: UserRow, ip?: string): Promise<void> {
  if (!deps.config.hooks.BEFORE_USER_CREATED.enabled) return;
  // GoTrue's user has no identities loaded yet (a nil list: null).
  checkEmptyOutput(await invokeHook(deps, 'BEFORE_USER_CREATED', { user: userJson(user, null) }, { ex: tx, ip }));
}

// The output has no fields, but must still decode as an object (Go's json.Unmarshal).
function checkEmptyOutput(output: unknown): void {
  if (output !== undefined && output !== null && (typeof output !== 'object' || Array.isArray(output)))
    throw unmarshalError();
}

/**
 * HOOK_AFTER_USER_CREATED (GoTrue: api/hooks.go triggerAfterUserCreated), once the request that
 * made the user has committed: the saved user with its identities. It cannot take the user back:
 * a refusal or failure is the request's answer (the user, and any session, stay), or, with
 * `wrap` (GoTrue's /signup), a plain 500 "Error invoking hook". A Postgres-function hook runs in
 * a transaction of its own (GoTrue: outside any transaction).
 */
export async function afterUserCreated(deps: Deps, userId: string, opts: { wrap?: boolean } = {}): Promise<void> {
  if (!deps.config.hooks.AFTER_USER_CREATED.enabled) return;
  const user = await hookUser(deps.db, userId);
  if (!user) return;
  try {
    checkEmptyOutput(await invokeHook(deps, 'AFTER_USER_CREATED', { user }));
  } catch (err) {
    if (opts.wrap) throw new ApiError(500, 'unexpected_failure', 'Error invoking hook', undefined, err);
    throw err;
  }
}
