// The database invariants of issue 17, as SQL over one schema: each query lists the rows that
// break one, so a failure names them.
import pg from 'pg';

const CHECKS: Record<string, (ns: string) => string> = {
  'user without identities': (ns) => `select u.id, u.email from ${ns}.users u
    where not u.is_anonymous and (u.email is not null or u.phone is not null)
      and not exists (select 1 from ${ns}.identities i where i.user_id = u.id)`,
  'refresh token without a session': (ns) => `select r.id from ${ns}.refresh_tokens r
    where r.session_id is null or not exists (select 1 from ${ns}.sessions s where s.id = r.session_id)`,
  'session of a deleted user': (ns) => `select s.id from ${ns}.sessions s
    where not exists (select 1 from ${ns}.users u where u.id = s.user_id and u.deleted_at is null)`,
  'one-time token without its user': (ns) => `select o.id from ${ns}.one_time_tokens o
    where not exists (select 1 from ${ns}.users u where u.id = o.user_id)`,
  // Half-written signup or email change: the user's token column and its one_time_tokens row go together.
  'confirmation token without its row': (ns) => `select u.id from ${ns}.users u
    where coalesce(u.confirmation_token, '') <> ''
      and not exists (select 1 from ${ns}.one_time_tokens o where o.user_id = u.id and o.token_type = 'confirmation_token' and o.token_hash = u.confirmation_token)`,
  'confirmation row without its token': (
    ns,
  ) => `select o.id from ${ns}.one_time_tokens o join ${ns}.users u on u.id = o.user_id
    where o.token_type = 'confirmation_token' and coalesce(u.confirmation_token, '') <> o.token_hash`,
  'email change token without its row': (ns) => `select u.id from ${ns}.users u
    where coalesce(u.email_change_token_new, '') <> ''
      and not exists (select 1 from ${ns}.one_time_tokens o where o.user_id = u.id and o.token_type = 'email_change_token_new' and o.token_hash = u.email_change_token_new)`,
  'refresh token with two live children': (ns) => `select r.parent, count(*)::int as n from ${ns}.refresh_tokens r
    where r.parent is not null and not r.revoked group by r.parent having count(*) > 1`,
  'refresh token with two children': (ns) => `select r.parent, count(*)::int as n from ${ns}.refresh_tokens r
    where r.parent is not null group by r.parent having count(*) > 1`,
  'session with two live refresh tokens': (ns) => `select r.session_id, count(*)::int as n from ${ns}.refresh_tokens r
    where not r.revoked group by r.session_id having count(*) > 1`,
};

/** Every broken invariant with the rows that break it; {} when all hold. */
export async function brokenInvariants(url: string, namespace: string): Promise<Record<string, unknown[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Record<string, unknown[]> = {};
    for (const [name, q] of Object.entries(CHECKS)) {
      const { rows } = await client.query(q(`"${namespace}"`));
      if (rows.length > 0) out[name] = rows.slice(0, 5);
    }
    return out;
  } finally {
    await client.end();
  }
}

/** Connections of the proxy's upstream ports left inside a transaction or aborted one. */
export async function leftInTransaction(url: string, ports: number[]): Promise<unknown[]> {
  if (ports.length === 0) return [];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select pid, client_port, state, query from pg_stat_activity where client_port = any($1::int[]) and state like 'idle in transaction%'`,
      [ports],
    );
    return rows;
  } finally {
    await client.end();
  }
}
