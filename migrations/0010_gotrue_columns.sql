-- Issue 31: over a database GoTrue's own migrations built before v2.181, the session columns
-- authsvc reads that GoTrue added later (in GoTrue's types, so GoTrue's own later migrations,
-- which add them with IF NOT EXISTS, still run if the database goes back; the MFA ones are in
-- 0005, before anything indexes them). Nothing of GoTrue's is altered.
ALTER TABLE "{{namespace}}".sessions
  ADD COLUMN IF NOT EXISTS refresh_token_hmac_key text,
  ADD COLUMN IF NOT EXISTS refresh_token_counter bigint;

-- GoTrue before its migration 20240427152123 (e.g. v2.150) kept pending links and codes only in
-- users.*_token; authsvc finds a link through one_time_tokens. When that table is empty (it was
-- just created over such a database), each pending token gets the row GoTrue itself writes
-- since then (the address it relates to, created when it was sent), so the link keeps working
-- until it expires. On any other database the table already holds these rows: nothing happens.
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM "{{namespace}}".one_time_tokens) THEN
    INSERT INTO "{{namespace}}".one_time_tokens (id, user_id, token_type, token_hash, relates_to, created_at, updated_at)
    SELECT gen_random_uuid(), t.user_id, t.token_type::"{{namespace}}".one_time_token_type, t.token_hash, t.relates_to,
           coalesce(t.sent_at, now()) AT TIME ZONE 'UTC', coalesce(t.sent_at, now()) AT TIME ZONE 'UTC'
    FROM "{{namespace}}".users u
    CROSS JOIN LATERAL (VALUES
      (u.id, 'confirmation_token', u.confirmation_token, coalesce(nullif(lower(u.email), ''), u.phone), u.confirmation_sent_at),
      (u.id, 'recovery_token', u.recovery_token, lower(u.email), u.recovery_sent_at),
      (u.id, 'email_change_token_new', u.email_change_token_new, lower(u.email_change), u.email_change_sent_at),
      (u.id, 'email_change_token_current', u.email_change_token_current, lower(u.email), u.email_change_sent_at),
      (u.id, 'phone_change_token', u.phone_change_token, u.phone_change, u.phone_change_sent_at),
      (u.id, 'reauthentication_token', u.reauthentication_token, coalesce(nullif(lower(u.email), ''), u.phone), u.reauthentication_sent_at)
    ) AS t(user_id, token_type, token_hash, relates_to, sent_at)
    WHERE coalesce(t.token_hash, '') <> '' AND coalesce(t.relates_to, '') <> ''
    ON CONFLICT DO NOTHING;
  END IF;
END $$;
