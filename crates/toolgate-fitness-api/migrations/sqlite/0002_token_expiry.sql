-- Tokens may expire: unix seconds, NULL for a token that never does (issue_token).
ALTER TABLE fit_tokens ADD COLUMN expires_at INTEGER;
