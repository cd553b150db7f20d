-- MFA factors and challenges (issue 27), GoTrue's final shape (migrations 20221003041349 to
-- 20250925093508) so a GoTrue database keeps working and data moves with plain SQL. Every
-- statement is idempotent: a GoTrue schema already has these tables, enums and indexes.
-- authsvc adds one column, mfa_factors.last_totp_step: the RFC 6238 time step of the last TOTP
-- code accepted for the factor, so a code cannot be used twice (GoTrue has no replay check and
-- never reads or writes the column).

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".factor_type AS ENUM ('totp', 'webauthn', 'phone');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
-- A GoTrue database from before its phone factors (2024-07) has the first two values only.
ALTER TYPE "{{namespace}}".factor_type ADD VALUE IF NOT EXISTS 'phone';

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".factor_status AS ENUM ('unverified', 'verified');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

CREATE TABLE IF NOT EXISTS "{{namespace}}".mfa_factors (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  friendly_name text NULL,
  factor_type "{{namespace}}".factor_type NOT NULL,
  status "{{namespace}}".factor_status NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  secret text NULL,
  phone text NULL,
  last_challenged_at timestamptz NULL UNIQUE,
  web_authn_credential jsonb NULL,
  web_authn_aaguid uuid NULL,
  last_webauthn_challenge_data jsonb NULL
);
ALTER TABLE "{{namespace}}".mfa_factors ADD COLUMN IF NOT EXISTS last_totp_step bigint NULL;
-- A GoTrue older than these columns (v2.150: before v2.158 and v2.163) has mfa_factors and
-- mfa_challenges without them: added in GoTrue's types (issue 31), before anything indexes them.
ALTER TABLE "{{namespace}}".mfa_factors
  ADD COLUMN IF NOT EXISTS phone text DEFAULT NULL,
  ADD COLUMN IF NOT EXISTS last_challenged_at timestamptz UNIQUE DEFAULT NULL,
  ADD COLUMN IF NOT EXISTS web_authn_credential jsonb NULL,
  ADD COLUMN IF NOT EXISTS web_authn_aaguid uuid NULL,
  ADD COLUMN IF NOT EXISTS last_webauthn_challenge_data jsonb NULL;
CREATE UNIQUE INDEX IF NOT EXISTS mfa_factors_user_friendly_name_unique
  ON "{{namespace}}".mfa_factors (friendly_name, user_id) WHERE trim(friendly_name) <> '';
CREATE UNIQUE INDEX IF NOT EXISTS unique_phone_factor_per_user ON "{{namespace}}".mfa_factors (user_id, phone);
CREATE INDEX IF NOT EXISTS factor_id_created_at_idx ON "{{namespace}}".mfa_factors (user_id, created_at);
CREATE INDEX IF NOT EXISTS mfa_factors_user_id_idx ON "{{namespace}}".mfa_factors (user_id);

CREATE TABLE IF NOT EXISTS "{{namespace}}".mfa_challenges (
  id uuid PRIMARY KEY,
  factor_id uuid NOT NULL REFERENCES "{{namespace}}".mfa_factors (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  verified_at timestamptz NULL,
  ip_address inet NOT NULL,
  otp_code text NULL,
  web_authn_session_data jsonb NULL
);
ALTER TABLE "{{namespace}}".mfa_challenges
  ADD COLUMN IF NOT EXISTS otp_code text NULL,
  ADD COLUMN IF NOT EXISTS web_authn_session_data jsonb NULL;
CREATE INDEX IF NOT EXISTS mfa_challenge_created_at_idx ON "{{namespace}}".mfa_challenges (created_at DESC);
