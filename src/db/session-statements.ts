// Session creation and refresh-token rotation as single statements (prepared, one round trip,
// one commit when outside a transaction). Every write of a statement depends on its first
// step, so a statement either does all of its work or none of it.
import { sql } from 'drizzle-orm';
import { type AuditEntry, auditRecord, auditRecordsJson } from './audit.ts';
import type { Executor } from './database.ts';
import { jsonValue, mapRow, type RawRow, statement } from './prepared.ts';
import { factorsJson, type FactorRow, mapFactors } from './mfa.ts';
import type { SessionRow } from './sessions.ts';
import { type IdentityRow, identitiesJson, mapIdentities, NIL_UUID, type UserRow } from './users.ts';

const p = (name: string) => sql.placeholder(name);

const AUDIT_ROWS = sql`json_to_recordset(${p('audits')}::json) as a(id uuid, payload json, created_at timestamptz, ip text)`;

const createStmt = statement(
  'create_session',
  (t) => sql`
  with s as (
    insert into ${t.sessions} (id, user_id, created_at, updated_at, aal, user_agent, ip, refresh_token_hmac_key)
    values (${p('sid')}::uuid, ${p('uid')}::uuid, ${p('now')}::timestamptz, ${p('now')}::timestamptz, 'aal1',
            ${p('ua')}::text, ${p('ip')}::inet, ${p('hmac')}::text)
    returning *
  ), amr as (
    insert into ${t.mfaAmrClaims} (id, session_id, authentication_method, created_at, updated_at)
    select ${p('amrId')}::uuid, s.id, ${p('method')}::text, ${p('now')}::timestamptz, ${p('now')}::timestamptz from s
  ), rt as (
    insert into ${t.refreshTokens} (token, parent, user_id, session_id, revoked, created_at, updated_at)
    select ${p('tokenHash')}::text, null, s.user_id::text, s.id, false, ${p('now')}::timestamptz, ${p('now')}::timestamptz from s
  ), audit as (
    insert into ${t.auditLogEntries} (instance_id, id, payload, created_at, ip_address)
    select ${NIL_UUID}::uuid, a.id, a.payload, a.created_at, a.ip from ${AUDIT_ROWS}
  ), u as (
    update ${t.users} set last_sign_in_at = ${p('now')}::timestamptz where id = ${p('uid')}::uuid returning *
  )
  select row_to_json(s) as session, row_to_json(u) as "user", ${identitiesJson(t, sql`u.id`)} as identities,
    ${factorsJson(t, sql`u.id`)} as factors
  from s, u`,
);

export interface NewSession {
  sessionId: string;
  userId: string;
  now: Date;
  userAgent: string | null;
  ip: string | null;
  /** Null: children derive from the instance-wide key (KeySet.refreshChildKey). */
  hmacKey: string | null;
  method: string;
  tokenHash: string;
  audits: AuditEntry[];
}

export interface SessionState {
  user: UserRow;
  session: SessionRow;
  identities: IdentityRow[];
  /** The user's MFA factors (user.factors in every session response). */
  factors: FactorRow[];
}

/** Inserts the session, its AMR claim and first refresh token, the audit entries; stamps last_sign_in_at. */
export async function insertSessionWithToken(ex: Executor, n: NewSession): Promise<SessionState> {
  const rows = await createStmt(ex, {
    sid: n.sessionId,
    uid: n.userId,
    now: n.now.toISOString(),
    ua: n.userAgent,
    ip: n.ip,
    hmac: n.hmacKey ?? null,
    amrId: crypto.randomUUID(),
    method: n.method,
    tokenHash: n.tokenHash,
    audits: auditRecordsJson(ex, n.audits),
  });
  const row = rows[0];
  if (!row) throw new Error(`user ${n.userId} vanished while a session was created`);
  return {
    user: mapRow(ex.t.users, jsonValue(row.user)),
    session: mapRow(ex.t.sessions, jsonValue(row.session)),
    identities: mapIdentities(ex, row.identities),
    factors: mapFactors(ex, row.factors),
  };
}

// One statement, one round trip, one commit. The session row is locked first (as in the
// transactional path), and only when the token is live, its session was created with the
// instance-wide child key (no per-session key), is not an OAuth client's (its client is checked there), has not expired (not_after, SESSIONS_TIMEBOX,
// SESSIONS_INACTIVITY_TIMEOUT, as accounts/session-validity.ts's sessionRefusal) and its user is
// neither banned nor soft-deleted (the users row is joined already: the check costs no extra read).
// `r` re-checks `revoked = false` on the newest row version after any wait, so of two concurrent
// rotations of one token exactly one gets a row back; everything else gets none and takes the
// transactional path, which gives the precise answer (reuse window, errors). `r` finds the token
// by its primary key: by (session_id, revoked) a generic plan waded through the dead versions of
// every earlier token of the session that was once live (49 buffers a rotation instead of 3).
// The audit payload is db/audit.ts's `auditRecord` in SQL (a test keeps the two equal).
const rotateStmt = statement(
  'refresh_rotate',
  (t) => sql`
  with tok as (
    select id, session_id, updated_at from ${t.refreshTokens} where token = ${p('hash')}::text
  ), s as (
    select s.id, tok.id as token_id from tok join ${t.sessions} s on s.id = tok.session_id
      join ${t.users} u on u.id = s.user_id
    where s.refresh_token_hmac_key is null and s.oauth_client_id is null
      and (s.not_after is null or s.not_after >= ${p('now')}::timestamptz)
      and (${p('timebox')}::float8 = 0
           or s.created_at + ${p('timebox')}::float8 * interval '1 second' >= ${p('now')}::timestamptz)
      and (${p('inactivity')}::float8 = 0
           or coalesce(s.refreshed_at at time zone 'UTC', greatest(tok.updated_at, s.created_at))
              + ${p('inactivity')}::float8 * interval '1 second' >= ${p('now')}::timestamptz)
      and (u.banned_until is null or u.banned_until <= ${p('now')}::timestamptz)
      and u.deleted_at is null
    for update of s
  ), r as (
    update ${t.refreshTokens} set revoked = true, updated_at = ${p('now')}::timestamptz
    where id = (select token_id from s) and revoked = false
    returning session_id, user_id
  ), u as (
    select * from ${t.users} where id = (select user_id::uuid from r)
  ), child as (
    insert into ${t.refreshTokens} (token, parent, user_id, session_id, revoked, created_at, updated_at)
    select ${p('childHash')}::text, ${p('hash')}::text, r.user_id, r.session_id, false, ${p('now')}::timestamptz, ${p('now')}::timestamptz
    from r
  ), audit as (
    insert into ${t.auditLogEntries} (instance_id, id, payload, created_at, ip_address)
    select ${NIL_UUID}::uuid, a.id, json_strip_nulls(json_build_object(
        'actor_id', u.id, 'actor_via_sso', u.is_sso_user,
        'actor_username', coalesce(nullif(u.phone, ''), nullif(u.email, ''), ''),
        'actor_name', case when jsonb_typeof(u.raw_user_meta_data -> 'full_name') = 'string'
                           then nullif(u.raw_user_meta_data ->> 'full_name', '') end,
        'action', a.action, 'log_type', 'token')),
      ${p('now')}::timestamptz, ${p('auditIp')}::text
    from u, (values (${p('revokedId')}::uuid, 'token_revoked'), (${p('refreshedId')}::uuid, 'token_refreshed')) as a(id, action)
    where ${p('writeAudit')}::boolean
  ), touched as (
    update ${t.sessions} set refreshed_at = ${p('now')}::timestamptz at time zone 'UTC', updated_at = ${p('now')}::timestamptz,
      user_agent = coalesce(${p('ua')}::text, user_agent), ip = coalesce(${p('ip')}::inet, ip)
    where id = (select session_id from r)
    returning *
  )
  select row_to_json(touched) as session, row_to_json(u) as "user",
    (select coalesce(json_agg(json_build_object('method', m.authentication_method, 'at', m.updated_at)
                              order by m.updated_at desc), '[]'::json)
       from ${t.mfaAmrClaims} m where m.session_id = touched.id) as amr,
    ${identitiesJson(t, sql`u.id`)} as identities, ${factorsJson(t, sql`u.id`)} as factors
  from touched, u`,
);

export interface Rotation {
  tokenHash: string;
  childHash: string;
  now: Date;
  userAgent: string | null;
  ip: string | null;
  /** Seconds, 0 for none: SESSIONS_TIMEBOX and SESSIONS_INACTIVITY_TIMEOUT. */
  timebox: number;
  inactivityTimeout: number;
}

/**
 * Revokes a live token and stores its child; undefined when the fast path does not apply (not
 * found, revoked, expired, banned or soft-deleted user, a per-session key, a lost race).
 */
export async function rotateRefreshToken(
  ex: Executor,
  r: Rotation,
): Promise<
  | (SessionState & {
      amr: { method: string; timestamp: number }[];
    })
  | undefined
> {
  const revokedId = crypto.randomUUID();
  const refreshedId = crypto.randomUUID();
  const row = (
    await rotateStmt(ex, {
      hash: r.tokenHash,
      childHash: r.childHash,
      now: r.now.toISOString(),
      ua: r.userAgent,
      ip: r.ip,
      timebox: r.timebox,
      inactivity: r.inactivityTimeout,
      auditIp: (r.ip ?? '').slice(0, 64),
      revokedId,
      refreshedId,
      writeAudit: !ex.audit?.disablePostgres,
    })
  )[0];
  if (!row) return undefined;
  const user = mapRow<UserRow>(ex.t.users, jsonValue<RawRow>(row.user));
  if (ex.audit?.logs) {
    const entry = { actor: user, ip: r.ip ?? undefined, now: r.now };
    ex.audit.log(auditRecord({ ...entry, action: 'token_revoked' }, revokedId));
    ex.audit.log(auditRecord({ ...entry, action: 'token_refreshed' }, refreshedId));
  }
  const amr = jsonValue<{ method: string; at: string }[]>(row.amr).map((a) => ({
    method: a.method,
    timestamp: Math.floor(new Date(a.at).getTime() / 1000),
  }));
  return {
    user,
    session: mapRow(ex.t.sessions, jsonValue<RawRow>(row.session)),
    amr,
    identities: mapIdentities(ex, row.identities),
    factors: mapFactors(ex, row.factors),
  };
}
