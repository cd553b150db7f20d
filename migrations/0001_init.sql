-- authsvc initial schema. Table and column names follow GoTrue's final shape so data moves
-- between the two with plain SQL. {{namespace}} is replaced with DB_NAMESPACE (default auth).
-- Deliberate difference: refresh_tokens.token and .parent hold SHA-256 hex digests, not tokens.
-- Every statement is idempotent so the migration also runs over an existing GoTrue schema.

CREATE SCHEMA IF NOT EXISTS "{{namespace}}";

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".aal_level AS ENUM ('aal1', 'aal2', 'aal3');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".code_challenge_method AS ENUM ('s256', 'plain');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".one_time_token_type AS ENUM (
    'confirmation_token', 'reauthentication_token', 'recovery_token',
    'email_change_token_new', 'email_change_token_current', 'phone_change_token');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

CREATE TABLE IF NOT EXISTS "{{namespace}}".users (
  instance_id uuid,
  id uuid PRIMARY KEY,
  aud varchar(255),
  role varchar(255),
  email varchar(255),
  encrypted_password varchar(255),
  email_confirmed_at timestamptz,
  invited_at timestamptz,
  confirmation_token varchar(255),
  confirmation_sent_at timestamptz,
  recovery_token varchar(255),
  recovery_sent_at timestamptz,
  email_change_token_new varchar(255),
  email_change varchar(255),
  email_change_sent_at timestamptz,
  last_sign_in_at timestamptz,
  raw_app_meta_data jsonb,
  raw_user_meta_data jsonb,
  is_super_admin boolean,
  created_at timestamptz,
  updated_at timestamptz,
  phone text UNIQUE DEFAULT NULL,
  phone_confirmed_at timestamptz,
  phone_change text DEFAULT '',
  phone_change_token varchar(255) DEFAULT '',
  phone_change_sent_at timestamptz,
  confirmed_at timestamptz GENERATED ALWAYS AS (LEAST(email_confirmed_at, phone_confirmed_at)) STORED,
  email_change_token_current varchar(255) DEFAULT '',
  email_change_confirm_status smallint DEFAULT 0 CHECK (email_change_confirm_status >= 0 AND email_change_confirm_status <= 2),
  banned_until timestamptz,
  reauthentication_token varchar(255) DEFAULT '',
  reauthentication_sent_at timestamptz,
  is_sso_user boolean NOT NULL DEFAULT false,
  deleted_at timestamptz,
  is_anonymous boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS users_instance_id_idx ON "{{namespace}}".users (instance_id);
CREATE INDEX IF NOT EXISTS users_instance_id_email_idx ON "{{namespace}}".users (instance_id, lower(email));
CREATE UNIQUE INDEX IF NOT EXISTS users_email_partial_key ON "{{namespace}}".users (email) WHERE is_sso_user = false;
CREATE UNIQUE INDEX IF NOT EXISTS confirmation_token_idx ON "{{namespace}}".users (confirmation_token) WHERE confirmation_token !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX IF NOT EXISTS recovery_token_idx ON "{{namespace}}".users (recovery_token) WHERE recovery_token !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX IF NOT EXISTS email_change_token_current_idx ON "{{namespace}}".users (email_change_token_current) WHERE email_change_token_current !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX IF NOT EXISTS email_change_token_new_idx ON "{{namespace}}".users (email_change_token_new) WHERE email_change_token_new !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX IF NOT EXISTS reauthentication_token_idx ON "{{namespace}}".users (reauthentication_token) WHERE reauthentication_token !~ '^[0-9 ]*$';
CREATE INDEX IF NOT EXISTS users_is_anonymous_idx ON "{{namespace}}".users (is_anonymous);

CREATE TABLE IF NOT EXISTS "{{namespace}}".identities (
  provider_id text NOT NULL,
  user_id uuid NOT NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  identity_data jsonb NOT NULL,
  provider text NOT NULL,
  last_sign_in_at timestamptz,
  created_at timestamptz,
  updated_at timestamptz,
  email text GENERATED ALWAYS AS (lower(identity_data ->> 'email')) STORED,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  CONSTRAINT identities_provider_id_provider_unique UNIQUE (provider_id, provider)
);
CREATE INDEX IF NOT EXISTS identities_user_id_idx ON "{{namespace}}".identities (user_id);
CREATE INDEX IF NOT EXISTS identities_email_idx ON "{{namespace}}".identities (email text_pattern_ops);

CREATE TABLE IF NOT EXISTS "{{namespace}}".sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  created_at timestamptz,
  updated_at timestamptz,
  factor_id uuid,
  aal "{{namespace}}".aal_level,
  not_after timestamptz,
  refreshed_at timestamp without time zone,
  user_agent text,
  ip inet,
  tag text,
  refresh_token_hmac_key text,
  refresh_token_counter bigint
);
CREATE INDEX IF NOT EXISTS sessions_user_id_idx ON "{{namespace}}".sessions (user_id);
CREATE INDEX IF NOT EXISTS user_id_created_at_idx ON "{{namespace}}".sessions (user_id, created_at);
CREATE INDEX IF NOT EXISTS sessions_not_after_idx ON "{{namespace}}".sessions (not_after DESC);

CREATE TABLE IF NOT EXISTS "{{namespace}}".refresh_tokens (
  instance_id uuid,
  id bigserial PRIMARY KEY,
  token varchar(255) UNIQUE,
  user_id varchar(255),
  revoked boolean,
  created_at timestamptz,
  updated_at timestamptz,
  parent varchar(255),
  session_id uuid REFERENCES "{{namespace}}".sessions (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS refresh_tokens_instance_id_idx ON "{{namespace}}".refresh_tokens (instance_id);
CREATE INDEX IF NOT EXISTS refresh_tokens_instance_id_user_id_idx ON "{{namespace}}".refresh_tokens (instance_id, user_id);
CREATE INDEX IF NOT EXISTS refresh_tokens_parent_idx ON "{{namespace}}".refresh_tokens (parent);
CREATE INDEX IF NOT EXISTS refresh_tokens_session_id_revoked_idx ON "{{namespace}}".refresh_tokens (session_id, revoked);
CREATE INDEX IF NOT EXISTS refresh_tokens_updated_at_idx ON "{{namespace}}".refresh_tokens (updated_at DESC);

CREATE TABLE IF NOT EXISTS "{{namespace}}".mfa_amr_claims (
  session_id uuid NOT NULL REFERENCES "{{namespace}}".sessions (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  authentication_method text NOT NULL,
  id uuid PRIMARY KEY,
  CONSTRAINT mfa_amr_claims_session_id_authentication_method_pkey UNIQUE (session_id, authentication_method)
);

CREATE TABLE IF NOT EXISTS "{{namespace}}".one_time_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  token_type "{{namespace}}".one_time_token_type NOT NULL,
  token_hash text NOT NULL CHECK (char_length(token_hash) > 0),
  relates_to text NOT NULL,
  created_at timestamp without time zone NOT NULL DEFAULT now(),
  updated_at timestamp without time zone NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS one_time_tokens_user_id_token_type_key ON "{{namespace}}".one_time_tokens (user_id, token_type);
CREATE INDEX IF NOT EXISTS one_time_tokens_token_hash_hash_idx ON "{{namespace}}".one_time_tokens USING hash (token_hash);
CREATE INDEX IF NOT EXISTS one_time_tokens_relates_to_hash_idx ON "{{namespace}}".one_time_tokens USING hash (relates_to);

CREATE TABLE IF NOT EXISTS "{{namespace}}".flow_state (
  id uuid PRIMARY KEY,
  user_id uuid,
  auth_code text NOT NULL,
  code_challenge_method "{{namespace}}".code_challenge_method NOT NULL,
  code_challenge text NOT NULL,
  provider_type text NOT NULL,
  provider_access_token text,
  provider_refresh_token text,
  created_at timestamptz,
  updated_at timestamptz,
  authentication_method text NOT NULL,
  auth_code_issued_at timestamptz,
  invite_token text,
  referrer text
);
CREATE INDEX IF NOT EXISTS idx_auth_code ON "{{namespace}}".flow_state (auth_code);
CREATE INDEX IF NOT EXISTS idx_user_id_auth_method ON "{{namespace}}".flow_state (user_id, authentication_method);
CREATE INDEX IF NOT EXISTS flow_state_created_at_idx ON "{{namespace}}".flow_state (created_at DESC);

CREATE TABLE IF NOT EXISTS "{{namespace}}".audit_log_entries (
  instance_id uuid,
  id uuid PRIMARY KEY,
  payload json,
  created_at timestamptz,
  ip_address varchar(64) NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS audit_logs_instance_id_idx ON "{{namespace}}".audit_log_entries (instance_id);
