-- Issue 39 (security review 2026-12-01, M1): wrong TOTP and phone codes are counted per factor,
-- across challenges. Every fifth wrong code in a row locks the factor until
-- verification_locked_until (src/mfa/failure-lock.ts, the rule recovery codes follow); a right
-- code resets both. Two columns GoTrue neither reads nor writes: its inserts name their columns,
-- so a factor GoTrue enrols gets the defaults, and its reads select only the columns it knows.
-- Nothing of GoTrue's is altered.
ALTER TABLE "{{namespace}}".mfa_factors
  ADD COLUMN IF NOT EXISTS failed_verification_count integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS verification_locked_until timestamptz NULL;
