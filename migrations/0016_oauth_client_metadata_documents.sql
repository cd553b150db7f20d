-- Client ID Metadata Documents (issue 40; the OAuth working group's client-id-metadata-document
-- draft, preferred by the MCP authorization spec of 2025-11-25): a client whose client_id is an
-- https URL. Its document is fetched and kept as an ordinary public client row, so that
-- authorizations, consents and sessions refer to it by uuid as to every other client; the URL is
-- its public id, and the row is refreshed from the document once metadata_expires_at has passed.
-- GoTrue reads these rows as dynamic public clients and ignores both columns.
ALTER TABLE "{{namespace}}".oauth_clients ADD COLUMN IF NOT EXISTS client_id_metadata_url text NULL
  CHECK (char_length(client_id_metadata_url) <= 2048);
ALTER TABLE "{{namespace}}".oauth_clients ADD COLUMN IF NOT EXISTS metadata_expires_at timestamptz NULL;
CREATE UNIQUE INDEX IF NOT EXISTS oauth_clients_metadata_url_key ON "{{namespace}}".oauth_clients (client_id_metadata_url);
