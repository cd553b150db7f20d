-- MFA recovery codes (issue 27 item 6). GoTrue stores a set as an mfa_factors row of a new
-- factor_type 'recovery_codes' (supabase/auth#2725). authsvc does not: migrations run in one
-- transaction (src/db/migrate.ts) and Postgres refuses a partial index on an enum value added in
-- the same transaction ("unsafe use of new value", PGlite and Postgres 15 alike), while
-- `factor_type::text` is not immutable and cannot stand in. So the enum is untouched and a set
-- has its own tables, named apart from GoTrue's (mfa_recovery_code_sets has other columns there,
-- and CREATE TABLE IF NOT EXISTS would silently keep that shape). Keeping the set out of
-- mfa_factors also keeps it out of user.factors and of "has a verified factor" checks, in
-- GoTrue's database functions and users' RLS policies as much as here.
-- Codes are stored as SHA-256 hex of "<set id>:<code>", never in plain text.

CREATE TABLE IF NOT EXISTS "{{namespace}}".mfa_user_recovery_code_sets (
  id uuid PRIMARY KEY,
  -- One set per user: the unique constraint is what makes two concurrent generations one.
  user_id uuid NOT NULL UNIQUE REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  friendly_name text NOT NULL,
  failed_verification_count integer NOT NULL DEFAULT 0,
  verification_locked_until timestamptz NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS "{{namespace}}".mfa_user_recovery_codes (
  id uuid PRIMARY KEY,
  set_id uuid NOT NULL REFERENCES "{{namespace}}".mfa_user_recovery_code_sets (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  used_at timestamptz NULL,
  UNIQUE (set_id, code_hash)
);
