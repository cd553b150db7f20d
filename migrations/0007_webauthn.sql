-- Passkeys (issue 28): GoTrue's webauthn_credentials and webauthn_challenges tables, as its
-- migration 20260302000000_add_passkeys creates them, so data moves with plain SQL. Every
-- statement is idempotent: a GoTrue schema already has these tables and indexes.
-- WebAuthn MFA factors need no new column (0005 has web_authn_credential and friends); authsvc
-- adds one index: a credential id stored on a factor is unique across all users, as a passkey's
-- is (GoTrue does not enforce it for factors).

CREATE TABLE IF NOT EXISTS "{{namespace}}".webauthn_credentials (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  credential_id bytea NOT NULL,
  public_key bytea NOT NULL,
  attestation_type text NOT NULL DEFAULT '',
  aaguid uuid NULL,
  sign_count bigint NOT NULL DEFAULT 0,
  transports jsonb NOT NULL DEFAULT '[]'::jsonb,
  backup_eligible boolean NOT NULL DEFAULT false,
  backed_up boolean NOT NULL DEFAULT false,
  friendly_name text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NULL,
  CONSTRAINT webauthn_credentials_pkey PRIMARY KEY (id)
);

CREATE UNIQUE INDEX IF NOT EXISTS webauthn_credentials_credential_id_key
  ON "{{namespace}}".webauthn_credentials (credential_id);
CREATE INDEX IF NOT EXISTS webauthn_credentials_user_id_idx
  ON "{{namespace}}".webauthn_credentials (user_id);

CREATE TABLE IF NOT EXISTS "{{namespace}}".webauthn_challenges (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_id uuid NULL REFERENCES "{{namespace}}".users (id) ON DELETE CASCADE,
  challenge_type text NOT NULL CHECK (challenge_type IN ('signup', 'registration', 'authentication')),
  session_data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CONSTRAINT webauthn_challenges_pkey PRIMARY KEY (id)
);

CREATE INDEX IF NOT EXISTS webauthn_challenges_user_id_idx
  ON "{{namespace}}".webauthn_challenges (user_id);
CREATE INDEX IF NOT EXISTS webauthn_challenges_expires_at_idx
  ON "{{namespace}}".webauthn_challenges (expires_at);

CREATE UNIQUE INDEX IF NOT EXISTS mfa_factors_web_authn_credential_id_key
  ON "{{namespace}}".mfa_factors ((web_authn_credential ->> 'id'))
  WHERE web_authn_credential IS NOT NULL;
