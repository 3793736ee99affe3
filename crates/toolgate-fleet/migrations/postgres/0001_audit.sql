-- The audit trail: one row per write call and per refused call. toolgate
-- only appends; the trigger refuses any UPDATE, and rows leave only by the
-- retention pruning (DELETE of rows older than the configured age).
-- Timestamps are RFC 3339 UTC text with milliseconds, so they sort as text
-- and read the same on SQLite.

CREATE TABLE IF NOT EXISTS toolgate_audit (
    id        BIGSERIAL PRIMARY KEY,
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

CREATE OR REPLACE FUNCTION toolgate_audit_refuse_update() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only';
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS toolgate_audit_append_only ON toolgate_audit;
CREATE TRIGGER toolgate_audit_append_only
BEFORE UPDATE ON toolgate_audit
FOR EACH ROW EXECUTE FUNCTION toolgate_audit_refuse_update();
