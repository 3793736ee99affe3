-- Agent conversations. The same text runs on SQLite and PostgreSQL; the
-- migrations of this crate are tracked in `_toolgate_agent_migrations`
-- because the database is shared with other crates. Timestamps are RFC 3339
-- text. A message row holds the Chat Completions message as JSON (what is
-- sent back to the model when the conversation continues), and for tool
-- results the envelope and for model turns the usage.

CREATE TABLE IF NOT EXISTS agent_conversations (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS agent_conversations_user ON agent_conversations (user_id);

CREATE TABLE IF NOT EXISTS agent_messages (
    conversation_id  TEXT NOT NULL REFERENCES agent_conversations (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    role             TEXT NOT NULL,
    message          TEXT NOT NULL,
    envelope         TEXT,
    usage            TEXT,
    created_at       TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
