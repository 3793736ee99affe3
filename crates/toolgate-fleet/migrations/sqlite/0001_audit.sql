-- The audit trail: one row per write call and per refused call. toolgate
-- only appends; the trigger refuses any UPDATE, and rows leave only by the
-- retention pruning (DELETE of rows older than the configured age).
-- Timestamps are RFC 3339 UTC text with milliseconds, so they sort as text.

CREATE TABLE IF NOT EXISTS toolgate_audit (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    role      TEXT NOT NULL,
    key_id    TEXT,
    tool      TEXT NOT NULL,
    params    TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    ids       TEXT NOT NULL,
    instance  TEXT NOT NULL,
    trace_id  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS toolgate_audit_at ON toolgate_audit (at);
CREATE INDEX IF NOT EXISTS toolgate_audit_user ON toolgate_audit (user_id, at);
CREATE INDEX IF NOT EXISTS toolgate_audit_tool ON toolgate_audit (tool, at);

CREATE TRIGGER IF NOT EXISTS toolgate_audit_append_only
BEFORE UPDATE ON toolgate_audit
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
