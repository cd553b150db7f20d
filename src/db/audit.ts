// audit_log_entries, written in the same transaction as the action they record, and each entry
// handed to the executor's AuditSink (logged as `audit_event`, as GoTrue does).
import { inArray } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { NIL_UUID, type UserRow } from './users.ts';

export type AuditAction =
  | 'login'
  | 'logout'
  | 'invite_accepted'
  | 'user_signedup'
  | 'user_invited'
  | 'user_deleted'
  | 'user_modified'
  | 'user_recovery_requested'
  | 'user_reauthenticate_requested'
  | 'user_confirmation_requested'
  | 'user_repeated_signup'
  | 'user_updated_password'
  | 'token_revoked'
  | 'token_refreshed'
  | 'identity_linked'
  | 'identity_unlinked'
  | 'factor_in_progress'
  | 'challenge_created'
  | 'verification_attempted'
  | 'factor_unenrolled'
  | 'factor_updated'
  | 'factor_deleted'
  | 'recovery_codes_generated'
  | 'recovery_codes_regenerated'
  | 'recovery_codes_deleted'
  | 'passkey_created'
  | 'passkey_updated'
  | 'passkey_deleted';

const LOG_TYPE: Record<AuditAction, string> = {
  login: 'account',
  logout: 'account',
  invite_accepted: 'account',
  user_signedup: 'team',
  user_invited: 'team',
  user_deleted: 'team',
  token_revoked: 'token',
  token_refreshed: 'token',
  user_modified: 'user',
  user_recovery_requested: 'user',
  user_reauthenticate_requested: 'user',
  user_confirmation_requested: 'user',
  user_repeated_signup: 'user',
  user_updated_password: 'user',
  identity_linked: 'user',
  identity_unlinked: 'user',
  factor_in_progress: 'factor',
  challenge_created: 'factor',
  verification_attempted: 'factor',
  factor_unenrolled: 'factor',
  factor_updated: 'factor',
  factor_deleted: 'factor',
  recovery_codes_generated: 'factor',
  recovery_codes_regenerated: 'factor',
  recovery_codes_deleted: 'factor',
  passkey_created: 'user',
  passkey_updated: 'user',
  passkey_deleted: 'user',
};

export interface AuditEntry {
  actor: (Pick<UserRow, 'id' | 'email' | 'phone' | 'rawUserMetaData'> & { isSsoUser?: boolean | null }) | null;
  action: AuditAction;
  traits?: Record<string, unknown>;
  ip?: string;
  now: Date;
}

/** The row an entry becomes (for statements that insert several at once: `auditRecordsJson`). */
export type AuditRecord = { id: string; payload: Record<string, unknown>; created_at: Date; ip: string };

export function auditRecord(e: AuditEntry, id: string = crypto.randomUUID()): AuditRecord {
  const payload: Record<string, unknown> = {
    actor_id: e.actor?.id ?? NIL_UUID,
    // GoTrue: the actor's is_sso_user.
    actor_via_sso: e.actor?.isSsoUser === true,
    actor_username: e.actor ? e.actor.phone || e.actor.email || '' : '',
  };
  const fullName = e.actor?.rawUserMetaData?.full_name;
  if (typeof fullName === 'string' && fullName) payload.actor_name = fullName;
  payload.action = e.action;
  payload.log_type = LOG_TYPE[e.action];
  if (e.traits && Object.keys(e.traits).length > 0) payload.traits = e.traits;
  return { id, payload, created_at: e.now, ip: (e.ip ?? '').slice(0, 64) };
}

/**
 * Entries for a statement that inserts them itself, as the JSON array that
 * `json_to_recordset(...) as a(id uuid, payload json, created_at timestamptz, ip text)` reads:
 * logged to the executor's sink, and `[]` when AUDIT_LOG_DISABLE_POSTGRES keeps them out of the table.
 */
export function auditRecordsJson(ex: Executor, entries: AuditEntry[]): string {
  const records = entries.map((e) => auditRecord(e));
  for (const r of records) ex.audit?.log(r);
  return ex.audit?.disablePostgres ? '[]' : JSON.stringify(records);
}

export async function insertAudit(ex: Executor, e: AuditEntry): Promise<void> {
  const r = auditRecord(e);
  ex.audit?.log(r);
  if (ex.audit?.disablePostgres) return;
  await ex.orm.insert(ex.t.auditLogEntries).values({
    instanceId: NIL_UUID,
    id: r.id,
    payload: r.payload,
    createdAt: r.created_at,
    ipAddress: r.ip,
  });
}

/** Removes entries by id (the writes of a request whose email could not be sent). */
export async function deleteAuditEntries(ex: Executor, ids: string[]): Promise<void> {
  if (ids.length === 0 || ex.audit?.disablePostgres) return;
  await ex.orm.delete(ex.t.auditLogEntries).where(inArray(ex.t.auditLogEntries.id, ids));
}
