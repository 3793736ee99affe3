-- API keys of the MCP server. The same text runs on SQLite and PostgreSQL.
-- Only a SHA-256 digest of each key is stored (see `KeyStore` in src/keys.rs);
-- the plaintext is shown once, when the key is made. Timestamps are RFC 3339
-- text so that both backends read them the same way. Migrations of this crate
-- are tracked in `_toolgate_keys_migrations` because the database may be
-- shared with other crates.

CREATE TABLE IF NOT EXISTS toolgate_api_keys (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    role        TEXT NOT NULL,
    key_hash    TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);
