-- SAML 2.0 SSO (issue 32; GoTrue migrations 20221021082433, 20230818113222, 20240115144230,
-- 20240314092811, 20250717082212): GoTrue's four tables with their columns, checks and indexes,
-- so a GoTrue database's SSO providers work here and back. Every statement is a no-op over a
-- GoTrue schema that has them already.
CREATE TABLE IF NOT EXISTS "{{namespace}}".sso_providers (
  id uuid NOT NULL,
  resource_id text NULL,
  created_at timestamptz NULL,
  updated_at timestamptz NULL,
  PRIMARY KEY (id),
  CONSTRAINT "resource_id not empty" CHECK (resource_id = NULL OR char_length(resource_id) > 0)
);
ALTER TABLE "{{namespace}}".sso_providers ADD COLUMN IF NOT EXISTS disabled boolean NULL;
CREATE UNIQUE INDEX IF NOT EXISTS sso_providers_resource_id_idx ON "{{namespace}}".sso_providers (lower(resource_id));
CREATE INDEX IF NOT EXISTS sso_providers_resource_id_pattern_idx ON "{{namespace}}".sso_providers (resource_id text_pattern_ops);

CREATE TABLE IF NOT EXISTS "{{namespace}}".sso_domains (
  id uuid NOT NULL,
  sso_provider_id uuid NOT NULL,
  domain text NOT NULL,
  created_at timestamptz NULL,
  updated_at timestamptz NULL,
  PRIMARY KEY (id),
  FOREIGN KEY (sso_provider_id) REFERENCES "{{namespace}}".sso_providers (id) ON DELETE CASCADE,
  CONSTRAINT "domain not empty" CHECK (char_length(domain) > 0)
);
CREATE INDEX IF NOT EXISTS sso_domains_sso_provider_id_idx ON "{{namespace}}".sso_domains (sso_provider_id);
CREATE UNIQUE INDEX IF NOT EXISTS sso_domains_domain_idx ON "{{namespace}}".sso_domains (lower(domain));

CREATE TABLE IF NOT EXISTS "{{namespace}}".saml_providers (
  id uuid NOT NULL,
  sso_provider_id uuid NOT NULL,
  entity_id text NOT NULL UNIQUE,
  metadata_xml text NOT NULL,
  metadata_url text NULL,
  attribute_mapping jsonb NULL,
  created_at timestamptz NULL,
  updated_at timestamptz NULL,
  PRIMARY KEY (id),
  FOREIGN KEY (sso_provider_id) REFERENCES "{{namespace}}".sso_providers (id) ON DELETE CASCADE,
  CONSTRAINT "metadata_xml not empty" CHECK (char_length(metadata_xml) > 0),
  CONSTRAINT "metadata_url not empty" CHECK (metadata_url = NULL OR char_length(metadata_url) > 0),
  CONSTRAINT "entity_id not empty" CHECK (char_length(entity_id) > 0)
);
ALTER TABLE "{{namespace}}".saml_providers ADD COLUMN IF NOT EXISTS name_id_format text NULL;
CREATE INDEX IF NOT EXISTS saml_providers_sso_provider_id_idx ON "{{namespace}}".saml_providers (sso_provider_id);

CREATE TABLE IF NOT EXISTS "{{namespace}}".saml_relay_states (
  id uuid NOT NULL,
  sso_provider_id uuid NOT NULL,
  request_id text NOT NULL,
  for_email text NULL,
  redirect_to text NULL,
  created_at timestamptz NULL,
  updated_at timestamptz NULL,
  PRIMARY KEY (id),
  FOREIGN KEY (sso_provider_id) REFERENCES "{{namespace}}".sso_providers (id) ON DELETE CASCADE,
  CONSTRAINT "request_id not empty" CHECK (char_length(request_id) > 0)
);
ALTER TABLE "{{namespace}}".saml_relay_states
  ADD COLUMN IF NOT EXISTS flow_state_id uuid REFERENCES "{{namespace}}".flow_state (id) ON DELETE CASCADE DEFAULT NULL;
CREATE INDEX IF NOT EXISTS saml_relay_states_sso_provider_id_idx ON "{{namespace}}".saml_relay_states (sso_provider_id);
CREATE INDEX IF NOT EXISTS saml_relay_states_for_email_idx ON "{{namespace}}".saml_relay_states (for_email);
CREATE INDEX IF NOT EXISTS saml_relay_states_created_at_idx ON "{{namespace}}".saml_relay_states (created_at DESC);

-- authsvc only: the assertion ids already used, each kept until its assertion could no longer be
-- accepted anyway, so a captured SAML response signs nobody in twice (GoTrue keeps none: its
-- IdP-initiated responses can be replayed while they are valid). GoTrue ignores the table.
CREATE TABLE IF NOT EXISTS "{{namespace}}".saml_used_assertions (
  sso_provider_id uuid NOT NULL REFERENCES "{{namespace}}".sso_providers (id) ON DELETE CASCADE,
  assertion_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (sso_provider_id, assertion_id)
);
CREATE INDEX IF NOT EXISTS saml_used_assertions_expires_at_idx ON "{{namespace}}".saml_used_assertions (expires_at);
