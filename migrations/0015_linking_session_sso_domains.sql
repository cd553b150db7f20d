-- Security review 2026-12-01. Both columns are authsvc's own, nullable, and ignored by GoTrue
-- (its models list the columns they read and write), so the tables stay GoTrue's.

-- M2: a manual identity link completes (at the OAuth callback, or at the PKCE code exchange) only
-- while the session that started it still exists, and at aal2 when the user has a verified MFA
-- factor. NULL: started before this migration, or by a token without a session.
ALTER TABLE "{{namespace}}".flow_state ADD COLUMN IF NOT EXISTS linking_session_id uuid NULL;

-- L4: an SSO provider vouches only for the addresses of its own sso_domains, unless this is true
-- (an IdP that legitimately asserts other domains). NULL (a row GoTrue wrote) reads as false.
ALTER TABLE "{{namespace}}".sso_providers ADD COLUMN IF NOT EXISTS allow_any_email_domain boolean NULL;
-- Providers registered before this migration keep what they did where the data shows they need
-- it, so an upgrade signs nobody out: one without any domain (it vouched for every address), and
-- one whose users already carry an address of another domain (a tenant's guests, a subsidiary;
-- or the abuse L4 describes: the admin API shows the switch on, for the operator to review).
-- Every other provider is held to its domains from now on.
UPDATE "{{namespace}}".sso_providers p SET allow_any_email_domain = true
  WHERE p.allow_any_email_domain IS NULL
    AND (NOT EXISTS (SELECT 1 FROM "{{namespace}}".sso_domains d WHERE d.sso_provider_id = p.id)
      OR p.id::text IN (
        SELECT substr(i.provider, 5) FROM "{{namespace}}".identities i JOIN "{{namespace}}".users u ON u.id = i.user_id
        CROSS JOIN LATERAL (VALUES (u.email), (i.identity_data ->> 'email')) AS a(address)
        WHERE i.provider LIKE 'sso:%' AND coalesce(a.address, '') <> ''
          AND NOT EXISTS (SELECT 1 FROM "{{namespace}}".sso_domains d
            WHERE d.sso_provider_id::text = substr(i.provider, 5) AND lower(d.domain) = lower(substring(a.address from '@([^@]*)$')))));
