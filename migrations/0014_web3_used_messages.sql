-- authsvc only (issue 39): the Web3 sign-in messages already used, each kept until it could no
-- longer be accepted anyway, so a captured SIWE/SIWS message and signature sign nobody in twice
-- (GoTrue keeps none: a message replays while it is valid). The key is a SHA-256 of the chain and
-- the exact message; the primary key makes one of two concurrent uses win. GoTrue ignores the table.
CREATE TABLE IF NOT EXISTS "{{namespace}}".web3_used_messages (
  message_hash text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (message_hash)
);
CREATE INDEX IF NOT EXISTS web3_used_messages_expires_at_idx ON "{{namespace}}".web3_used_messages (expires_at);
