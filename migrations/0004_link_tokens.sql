-- Link tokens that cannot be computed from an address and a code (security review 2026-11-25, H1).
-- GoTrue's link value is token_hash = sha224(address + code): 20 bits for a known address. authsvc
-- now mails a separate random value (256 bits) and keeps only its SHA-256 here; token_hash stays
-- the code's hash, which is checked only with the address and under the per-code attempt limit.
-- A row whose link_hash is NULL was written before this migration (or by GoTrue): its old link is
-- honoured until the code expires, under a global miss budget (src/flows/link-tokens.ts).
ALTER TABLE "{{namespace}}".one_time_tokens ADD COLUMN IF NOT EXISTS link_hash text NULL;
CREATE INDEX IF NOT EXISTS one_time_tokens_link_hash_hash_idx ON "{{namespace}}".one_time_tokens USING hash (link_hash);

-- Manual identity linking started with PKCE completes at POST /token?grant_type=pkce, by the
-- client holding the verifier (review M1): the provider's identity waits here until then.
ALTER TABLE "{{namespace}}".flow_state ADD COLUMN IF NOT EXISTS linking_identity jsonb NULL;
