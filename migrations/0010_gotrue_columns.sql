-- Issue 31: over a database GoTrue's own migrations built before v2.196, the columns authsvc reads
-- that GoTrue added later (in GoTrue's types, so GoTrue's own later migrations, which add them
-- with IF NOT EXISTS, still run if the database goes back). Nothing of GoTrue's is altered.
ALTER TABLE "{{namespace}}".sessions
  ADD COLUMN IF NOT EXISTS refresh_token_hmac_key text,
  ADD COLUMN IF NOT EXISTS refresh_token_counter bigint;

ALTER TABLE "{{namespace}}".mfa_factors
  ADD COLUMN IF NOT EXISTS phone text DEFAULT NULL,
  ADD COLUMN IF NOT EXISTS last_challenged_at timestamptz UNIQUE DEFAULT NULL,
  ADD COLUMN IF NOT EXISTS web_authn_credential jsonb NULL,
  ADD COLUMN IF NOT EXISTS web_authn_aaguid uuid NULL,
  ADD COLUMN IF NOT EXISTS last_webauthn_challenge_data jsonb NULL;

ALTER TABLE "{{namespace}}".mfa_challenges
  ADD COLUMN IF NOT EXISTS otp_code text NULL,
  ADD COLUMN IF NOT EXISTS web_authn_session_data jsonb NULL;
