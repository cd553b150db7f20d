// Refresh tokens GoTrue left behind: legacy tokens stored in clear (12 characters), and sessions
// whose refresh_token_counter says they are signed by GoTrue's per-session key. authsvc's own
// rows hold SHA-256 hex (64 characters), so the length of refresh_tokens.token tells them apart.
import { eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import type { RefreshTokenRow } from './sessions.ts';

/** The row of a legacy token, stored in clear or as the digest `hash-refresh-tokens` wrote. */
export async function findLegacyRefreshToken(
  ex: Executor,
  plain: string,
  digest: string,
): Promise<RefreshTokenRow | undefined> {
  const r = ex.t.refreshTokens;
  const rows = await ex.orm
    .select()
    .from(r)
    .where(inArray(r.token, [plain, digest]))
    .limit(1);
  return rows[0];
}

/** A legacy row becomes an authsvc row: token (and parent) replaced by their SHA-256 hex. */
export async function rewriteRefreshToken(
  ex: Executor,
  id: number,
  token: string,
  parent: string | null,
): Promise<void> {
  await ex.orm.update(ex.t.refreshTokens).set({ token, parent }).where(eq(ex.t.refreshTokens.id, id));
}

export async function setRefreshTokenCounter(ex: Executor, sessionId: string, counter: number): Promise<void> {
  await ex.orm.update(ex.t.sessions).set({ refreshTokenCounter: counter }).where(eq(ex.t.sessions.id, sessionId));
}

const LEGACY = sql.raw('12');

/** Up to `limit` rows whose token or parent is still a legacy token in clear. */
export async function legacyTokenRows(
  ex: Executor,
  limit: number,
): Promise<Pick<RefreshTokenRow, 'id' | 'token' | 'parent'>[]> {
  const r = ex.t.refreshTokens;
  return ex.orm
    .select({ id: r.id, token: r.token, parent: r.parent })
    .from(r)
    .where(sql`length(${r.token}) = ${LEGACY} or length(${r.parent}) = ${LEGACY}`)
    .orderBy(r.id)
    .limit(limit);
}

/**
 * `authsvc hash-refresh-tokens`: every legacy token still in clear (token and parent columns)
 * replaced by `digest(token)`, `batch` rows a transaction. Returns the rows rewritten.
 */
export async function hashLegacyRefreshTokens(
  ex: Executor,
  digest: (token: string) => string,
  batch = 500,
): Promise<number> {
  const r = ex.t.refreshTokens;
  const keep = (v: string | null) => (v && v.length === 12 ? digest(v) : v);
  let total = 0;
  for (;;) {
    const rows = await legacyTokenRows(ex, batch);
    if (rows.length === 0) return total;
    const values = JSON.stringify(
      rows.map((row) => ({ id: row.id, token: keep(row.token), parent: keep(row.parent) })),
    );
    await ex.orm.execute(sql`update ${r} set token = v.token, parent = v.parent
      from json_to_recordset(${values}::json) as v(id bigint, token text, parent text) where ${r.id} = v.id`);
    total += rows.length;
  }
}
