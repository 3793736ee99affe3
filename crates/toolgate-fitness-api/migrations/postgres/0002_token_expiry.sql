-- Tokens may expire: unix seconds, NULL for a token that never does (issue_token).
ALTER TABLE fit_tokens ADD COLUMN IF NOT EXISTS expires_at BIGINT;
