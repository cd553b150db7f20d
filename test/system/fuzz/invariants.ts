// Database invariants that must hold after any sequence of requests, as SQL: each query returns
// the rows that break its rule (none when it holds).
import type { Database } from '../../../src/db/database.ts';

export const INVARIANTS: Record<string, (ns: string) => string> = {
  // Signup, admin create, invite, OTP and OAuth write the user and its identities in one
  // transaction; only anonymous users and users with neither email nor phone have none.
  'every user with an email or phone has an identity': (ns) => `
    select u.id from ${ns}.users u
    where not u.is_anonymous and (u.email is not null or u.phone is not null)
      and not exists (select 1 from ${ns}.identities i where i.user_id = u.id)`,
  'every identity belongs to a user': (ns) => `
    select i.id from ${ns}.identities i where not exists (select 1 from ${ns}.users u where u.id = i.user_id)`,
  'no refresh token without a session': (ns) => `
    select r.id from ${ns}.refresh_tokens r
    where r.session_id is null or not exists (select 1 from ${ns}.sessions s where s.id = r.session_id)`,
  "a refresh token belongs to its session's user": (ns) => `
    select r.id from ${ns}.refresh_tokens r join ${ns}.sessions s on s.id = r.session_id where r.user_id <> s.user_id::text`,
  'no refresh token has two live children': (ns) => `
    select r.parent from ${ns}.refresh_tokens r
    where r.parent is not null and not r.revoked group by r.session_id, r.parent having count(*) > 1`,
  'a session has at most one live refresh token': (ns) => `
    select r.session_id from ${ns}.refresh_tokens r where not r.revoked group by r.session_id having count(*) > 1`,
  'no session of a deleted user': (ns) => `
    select s.id from ${ns}.sessions s
    where not exists (select 1 from ${ns}.users u where u.id = s.user_id and u.deleted_at is null)`,
  'no one-time token without its user': (ns) => `
    select o.id from ${ns}.one_time_tokens o
    where not exists (select 1 from ${ns}.users u where u.id = o.user_id and u.deleted_at is null)`,
  // GoTrue keeps the token in the user's column and in one_time_tokens; they never disagree.
  "a one-time token matches its user's column": (ns) => `
    select o.id from ${ns}.one_time_tokens o join ${ns}.users u on u.id = o.user_id
    where o.token_hash <> coalesce(case o.token_type
      when 'confirmation_token' then u.confirmation_token when 'recovery_token' then u.recovery_token
      when 'reauthentication_token' then u.reauthentication_token when 'phone_change_token' then u.phone_change_token
      when 'email_change_token_new' then u.email_change_token_new when 'email_change_token_current' then u.email_change_token_current
    end, '')`,
  // A half-written signup: a user whose email identity is missing or names another address.
  // (A soft-deleted user's address and identities are obfuscated: left out.)
  'an email user has an email identity with that address': (ns) => `
    select u.id from ${ns}.users u
    where u.email is not null and u.email <> '' and not u.is_anonymous and not u.is_sso_user and u.deleted_at is null
      and (u.raw_app_meta_data ->> 'provider') = 'email'
      and not exists (select 1 from ${ns}.identities i where i.user_id = u.id and i.provider = 'email' and i.email = lower(u.email))`,
  'a user lists the providers of its identities': (ns) => `
    select u.id from ${ns}.users u join ${ns}.identities i on i.user_id = u.id
    where u.deleted_at is null and not coalesce((u.raw_app_meta_data -> 'providers') ? i.provider, false)`,
};

/** The broken invariants, each with up to five offending rows. */
export async function checkInvariants(db: Database): Promise<string[]> {
  const ns = `"${db.namespace}"`;
  const broken: string[] = [];
  for (const [name, sql] of Object.entries(INVARIANTS)) {
    const rows = await db.withSession((s) => s.exec(`${sql(ns)} limit 5`));
    if (rows.length > 0) broken.push(`${name}: ${JSON.stringify(rows)}`);
  }
  return broken;
}
