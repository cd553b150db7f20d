// Reading audit_log_entries for GET /admin/audit (GoTrue: models.FindAuditLogEntries): newest
// first, optionally filtered by `payload->>'<field>' ILIKE '%text%'` over one scope's fields.
import { and, count, desc, eq, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from './database.ts';
import { NIL_UUID } from './users.ts';

/** Query scope → payload fields it searches (GoTrue's filterColumnMap). */
export const AUDIT_SCOPES: Record<string, readonly string[]> = {
  author: ['actor_username', 'actor_name'],
  action: ['action'],
  type: ['log_type'],
};

export type AuditRow = Executor['t']['auditLogEntries']['$inferSelect'];

export interface AuditQuery {
  /** Payload fields to match (one of AUDIT_SCOPES' values); none = no filter. */
  fields?: readonly string[];
  /** Matched with ILIKE '%text%', `%` and `_` keeping their wildcard meaning as in GoTrue. */
  text?: string;
  limit: bigint;
  offset: bigint;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export async function findAuditEntries(ex: Executor, q: AuditQuery): Promise<{ entries: AuditRow[]; total: number }> {
  const a = ex.t.auditLogEntries;
  const conds: SQL[] = [eq(a.instanceId, NIL_UUID)];
  if (q.fields?.length && q.text) {
    const pattern = `%${q.text}%`;
    conds.push(or(...q.fields.map((f) => sql`${a.payload}->>${f} ILIKE ${pattern}`))!);
  }
  const where = and(...conds);
  const [counted] = await ex.orm.select({ n: count() }).from(a).where(where);
  const total = Number(counted?.n ?? 0);
  // Past the end (however far: page and per_page are unbounded uint64s) there is nothing to read.
  if (q.offset >= BigInt(total)) return { entries: [], total };
  const limit = Number(q.limit > MAX_SAFE ? MAX_SAFE : q.limit);
  // id breaks ties between entries written in one transaction (they share created_at).
  const entries = await ex.orm
    .select()
    .from(a)
    .where(where)
    .orderBy(desc(a.createdAt), desc(a.id))
    .limit(limit)
    .offset(Number(q.offset));
  return { entries, total };
}
