// Listing, renaming and deleting passkeys — GoTrue: passkey_manage.go, passkey_admin.go. An id
// that is not a UUID and a passkey of another user get the same 404: no probing for ids.
import { parseUuid } from '../http/uuid.ts';
import type { AuthContext } from '../app-env.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { findUserById } from '../db/users.ts';
import { deletePasskey, findPasskey, listPasskeys, type PasskeyRow, updatePasskey } from '../db/webauthn.ts';
import type { Deps } from '../deps.ts';
import { notify } from '../accounts/notify.ts';
import { notFound, validationFailed } from '../core/errors.ts';
import { requirePasskeyAal } from './registration.ts';

const passkeyNotFound = () => notFound('validation_failed', 'Passkey not found');
const MAX_NAME_BYTES = 120;

/** GoTrue's PasskeyListItem: friendly_name and last_used_at left out when empty. */
export function passkeyJson(p: PasskeyRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: p.id };
  if (p.friendlyName) out.friendly_name = p.friendlyName;
  out.created_at = p.createdAt.toISOString();
  if (p.lastUsedAt) out.last_used_at = p.lastUsedAt.toISOString();
  return out;
}

function passkeyId(raw: string): string {
  const id = parseUuid(raw);
  if (!id) throw passkeyNotFound();
  return id;
}

export async function listUserPasskeys(deps: Deps, userId: string): Promise<Record<string, unknown>[]> {
  return (await listPasskeys(deps.db, userId)).map(passkeyJson);
}

export async function renamePasskey(
  deps: Deps,
  auth: AuthContext,
  rawId: string,
  friendlyName: string | undefined,
  ip: string | undefined,
): Promise<Record<string, unknown>> {
  const id = passkeyId(rawId);
  if (!friendlyName) throw validationFailed('friendly_name is required');
  if (new TextEncoder().encode(friendlyName).length > MAX_NAME_BYTES)
    throw validationFailed('friendly_name must be 120 characters or less');
  const now = deps.now();
  return transaction(deps.db, async (tx) => {
    const found = await findPasskey(tx, id, auth.user.id, { forUpdate: true });
    if (!found) throw passkeyNotFound();
    const row = (await updatePasskey(tx, id, { friendlyName, updatedAt: now }))!;
    await insertAudit(tx, { actor: auth.user, action: 'passkey_updated', traits: { passkey_id: id }, ip, now });
    return passkeyJson(row);
  });
}

export async function deleteOwnPasskey(
  deps: Deps,
  auth: AuthContext,
  rawId: string,
  ip: string | undefined,
): Promise<void> {
  await requirePasskeyAal(deps, auth);
  const id = passkeyId(rawId);
  const now = deps.now();
  await transaction(deps.db, async (tx) => {
    if (!(await deletePasskey(tx, id, auth.user.id))) throw passkeyNotFound();
    await insertAudit(tx, { actor: auth.user, action: 'passkey_deleted', traits: { passkey_id: id }, ip, now });
  });
  // After the commit; never fails the deletion. The admin API's deletion sends none, as for MFA factors.
  await notify(deps, { kind: 'passkey_removed', user: auth.user }, ip);
}

async function adminUser(deps: Deps, userId: string) {
  const user = await findUserById(deps.db, userId);
  if (!user) throw notFound('user_not_found', 'User not found');
  return user;
}

export async function adminListPasskeys(deps: Deps, userId: string): Promise<Record<string, unknown>[]> {
  return listUserPasskeys(deps, (await adminUser(deps, userId)).id);
}

export async function adminDeletePasskey(
  deps: Deps,
  userId: string,
  rawId: string,
  ip: string | undefined,
): Promise<void> {
  const user = await adminUser(deps, userId);
  const id = passkeyId(rawId);
  const now = deps.now();
  await transaction(deps.db, async (tx) => {
    if (!(await deletePasskey(tx, id, user.id))) throw passkeyNotFound();
    await insertAudit(tx, {
      actor: null,
      action: 'passkey_deleted',
      traits: { user_id: user.id, passkey_id: id },
      ip,
      now,
    });
  });
}
