-- External OAuth sign-in (GoTrue migrations 20251201000000 and 20260115000000): every /authorize
-- writes a flow_state row whose id is the OAuth `state`, PKCE or not, so the PKCE columns become
-- optional; the row carries the invite token, the redirect target, the manual-linking target and
-- the provider-side PKCE verifier's row.
CREATE TABLE IF NOT EXISTS "{{namespace}}".oauth_client_states (
  id uuid PRIMARY KEY,
  provider_type text NOT NULL,
  code_verifier text,
  created_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_oauth_client_states_created_at ON "{{namespace}}".oauth_client_states (created_at);

ALTER TABLE "{{namespace}}".flow_state
  ADD COLUMN IF NOT EXISTS oauth_client_state_id uuid NULL,
  ADD COLUMN IF NOT EXISTS linking_target_id uuid NULL,
  ADD COLUMN IF NOT EXISTS email_optional boolean NOT NULL DEFAULT false;
ALTER TABLE "{{namespace}}".flow_state
  ALTER COLUMN code_challenge DROP NOT NULL,
  ALTER COLUMN code_challenge_method DROP NOT NULL,
  ALTER COLUMN auth_code DROP NOT NULL;
