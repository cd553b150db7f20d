-- OAuth 2.1 / OpenID Connect authorization server (issue 30): GoTrue's tables in their final
-- shape (migrations 20250731150234 … 20260121000000), so clients, consents and OAuth sessions
-- move between GoTrue and authsvc with plain SQL. Client secrets are stored as GoTrue stores
-- them: base64url(SHA-256(secret)), never the secret.
-- authsvc additions: oauth_authorizations.session_id (the session an exchanged code issued: a
-- second use of the code ends it) and sessions.resource (RFC 8707: the audience of the session's
-- access tokens). The sessions index is partial so ordinary sign-ins do not pay for it.

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".oauth_registration_type AS ENUM ('dynamic', 'manual');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".oauth_client_type AS ENUM ('public', 'confidential');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".oauth_authorization_status AS ENUM ('pending', 'approved', 'denied', 'expired');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

DO $$ BEGIN
  CREATE TYPE "{{namespace}}".oauth_response_type AS ENUM ('code');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

CREATE TABLE IF NOT EXISTS "{{namespace}}".oauth_clients (
  id uuid PRIMARY KEY,
  client_secret_hash text NULL,
  registration_type "{{namespace}}".oauth_registration_type NOT NULL,
  redirect_uris text NOT NULL,
  grant_types text NOT NULL,
  client_name text NULL CHECK (char_length(client_name) <= 1024),
  client_uri text NULL CHECK (char_length(client_uri) <= 2048),
  logo_uri text NULL CHECK (char_length(logo_uri) <= 2048),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz NULL,
  client_type "{{namespace}}".oauth_client_type NOT NULL DEFAULT 'confidential',
  token_endpoint_auth_method text NOT NULL
    CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'none'))
);
CREATE INDEX IF NOT EXISTS oauth_clients_deleted_at_idx ON "{{namespace}}".oauth_clients (deleted_at);

CREATE TABLE IF NOT EXISTS "{{namespace}}".oauth_authorizations (
  id uuid PRIMARY KEY,
  authorization_id text NOT NULL UNIQUE,
  client_id uuid NOT NULL REFERENCES "{{namespace}}".oauth_clients (id) ON DELETE CASCADE,
  user_id uuid NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  redirect_uri text NOT NULL CHECK (char_length(redirect_uri) <= 2048),
  scope text NOT NULL CHECK (char_length(scope) <= 4096),
  state text NULL CHECK (char_length(state) <= 4096),
  resource text NULL CHECK (char_length(resource) <= 2048),
  code_challenge text NULL CHECK (char_length(code_challenge) <= 128),
  code_challenge_method "{{namespace}}".code_challenge_method NULL,
  response_type "{{namespace}}".oauth_response_type NOT NULL DEFAULT 'code',
  status "{{namespace}}".oauth_authorization_status NOT NULL DEFAULT 'pending',
  authorization_code text NULL UNIQUE CHECK (char_length(authorization_code) <= 255),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL DEFAULT (now() + interval '3 minutes'),
  approved_at timestamptz NULL,
  nonce text NULL CHECK (char_length(nonce) <= 255),
  CHECK (expires_at > created_at)
);
CREATE INDEX IF NOT EXISTS oauth_auth_pending_exp_idx ON "{{namespace}}".oauth_authorizations (expires_at) WHERE status = 'pending';
ALTER TABLE "{{namespace}}".oauth_authorizations ADD COLUMN IF NOT EXISTS session_id uuid NULL;

CREATE TABLE IF NOT EXISTS "{{namespace}}".oauth_consents (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  client_id uuid NOT NULL REFERENCES "{{namespace}}".oauth_clients (id) ON DELETE CASCADE,
  scopes text NOT NULL CHECK (char_length(scopes) <= 2048) CHECK (char_length(trim(scopes)) > 0),
  granted_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz NULL CHECK (revoked_at IS NULL OR revoked_at >= granted_at),
  CONSTRAINT oauth_consents_user_client_unique UNIQUE (user_id, client_id)
);
CREATE INDEX IF NOT EXISTS oauth_consents_user_order_idx ON "{{namespace}}".oauth_consents (user_id, granted_at DESC);

ALTER TABLE "{{namespace}}".sessions ADD COLUMN IF NOT EXISTS oauth_client_id uuid NULL
  REFERENCES "{{namespace}}".oauth_clients (id) ON DELETE CASCADE;
ALTER TABLE "{{namespace}}".sessions ADD COLUMN IF NOT EXISTS scopes text NULL CHECK (char_length(scopes) <= 4096);
ALTER TABLE "{{namespace}}".sessions ADD COLUMN IF NOT EXISTS resource text NULL;
CREATE INDEX IF NOT EXISTS sessions_oauth_client_id_idx ON "{{namespace}}".sessions (oauth_client_id) WHERE oauth_client_id IS NOT NULL;
