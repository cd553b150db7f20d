-- authsvc only (issue 46): the refresh token a provider returned at sign-in or identity linking,
-- kept for POST /user/identities/{provider}/token when EXTERNAL_<PROVIDER>_STORE_TOKENS is on. One
-- row per identity, gone with it (unlinking, deleting the user). refresh_token is GoTrue's
-- encrypted-string JSON (SECURITY_DB_ENCRYPTION_*, bound to the row's id; never plain text): a
-- new id is written with each new token. GoTrue ignores the table.
CREATE TABLE IF NOT EXISTS "{{namespace}}".identity_provider_tokens (
  id uuid PRIMARY KEY,
  identity_id uuid NOT NULL REFERENCES "{{namespace}}".identities (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  provider text NOT NULL,
  refresh_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT identity_provider_tokens_identity_id_key UNIQUE (identity_id)
);
CREATE INDEX IF NOT EXISTS identity_provider_tokens_user_id_provider_idx
  ON "{{namespace}}".identity_provider_tokens (user_id, provider);
