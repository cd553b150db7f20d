-- Counters shared by every instance on this database (GoTrue keeps them in process memory).
-- `count` is the sends in the current window (fixed-window limits) or the tokens left (buckets).
CREATE TABLE IF NOT EXISTS "{{namespace}}".rate_limits (
  key text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  count double precision NOT NULL,
  updated_at timestamptz NOT NULL
);
