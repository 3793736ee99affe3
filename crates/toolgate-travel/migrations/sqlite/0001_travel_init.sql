-- travel tables for SQLite. Every table is prefixed `travel_` because the
-- database may be shared with other crates; migrations are tracked in
-- `_travel_migrations` for the same reason.

CREATE TABLE IF NOT EXISTS travel_orders (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id             TEXT        NOT NULL,
    fingerprint         TEXT        NOT NULL,
    destination         TEXT        NOT NULL,
    departure_city      TEXT        NOT NULL,
    departure_date      DATE        NOT NULL,
    return_date         DATE        NOT NULL,
    purpose             TEXT        NOT NULL,
    status              TEXT        NOT NULL CHECK (status IN ('DRAFT', 'SUBMITTED', 'APPROVED', 'REJECTED', 'COMPLETED', 'CANCELLED')),
    approval_id         BIGINT,
    process_instance_id TEXT,
    created_at          DATETIME    NOT NULL,
    updated_at          DATETIME    NOT NULL,
    CHECK (departure_date <= return_date)
);

-- Idempotency of submit_travel_approval: one ACTIVE order per (user, fingerprint).
-- Cancelled, rejected and completed orders leave the index, which frees the fingerprint.
CREATE UNIQUE INDEX IF NOT EXISTS travel_orders_active_fingerprint
    ON travel_orders (user_id, fingerprint)
    WHERE status IN ('DRAFT', 'SUBMITTED', 'APPROVED');

CREATE INDEX IF NOT EXISTS travel_orders_user_status ON travel_orders (user_id, status, id);
CREATE INDEX IF NOT EXISTS travel_orders_user_dates ON travel_orders (user_id, departure_date, return_date);

CREATE TABLE IF NOT EXISTS travel_approvals (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id            BIGINT      NOT NULL REFERENCES travel_orders (id),
    user_id             TEXT        NOT NULL,
    process_instance_id TEXT        NOT NULL UNIQUE,
    status              TEXT        NOT NULL CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED', 'WITHDRAWN')),
    created_at          DATETIME    NOT NULL,
    updated_at          DATETIME    NOT NULL
);

CREATE INDEX IF NOT EXISTS travel_approvals_order ON travel_approvals (order_id);

CREATE TABLE IF NOT EXISTS travel_bookings (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     TEXT        NOT NULL,
    order_id    BIGINT      REFERENCES travel_orders (id),
    kind        TEXT        NOT NULL CHECK (kind IN ('flight', 'hotel', 'train')),
    status      TEXT        NOT NULL CHECK (status IN ('RESERVED', 'TICKETED', 'CANCELLED', 'USED')),
    provider    TEXT        NOT NULL,
    reference   TEXT        NOT NULL,
    description TEXT        NOT NULL,
    start_date  DATE        NOT NULL,
    end_date    DATE        NOT NULL,
    price       BIGINT      NOT NULL,
    currency    TEXT        NOT NULL,
    created_at  DATETIME    NOT NULL,
    updated_at  DATETIME    NOT NULL
);

CREATE INDEX IF NOT EXISTS travel_bookings_user ON travel_bookings (user_id, id);
CREATE INDEX IF NOT EXISTS travel_bookings_order ON travel_bookings (order_id);

CREATE TABLE IF NOT EXISTS travel_city_tiers (
    city_key TEXT   PRIMARY KEY,
    city     TEXT   NOT NULL,
    tier     BIGINT NOT NULL CHECK (tier BETWEEN 1 AND 9)
);

CREATE TABLE IF NOT EXISTS travel_policies (
    tier                BIGINT NOT NULL,
    level               TEXT   NOT NULL,
    hotel_cap_per_night BIGINT NOT NULL,
    currency            TEXT   NOT NULL,
    flight_classes      TEXT   NOT NULL,
    train_classes       TEXT   NOT NULL,
    PRIMARY KEY (tier, level)
);

CREATE TABLE IF NOT EXISTS travel_user_levels (
    user_id TEXT PRIMARY KEY,
    level   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS travel_api_keys (
    user_id    TEXT        NOT NULL,
    provider   TEXT        NOT NULL,
    nonce      BLOB        NOT NULL,
    ciphertext BLOB        NOT NULL,
    created_at DATETIME    NOT NULL,
    updated_at DATETIME    NOT NULL,
    PRIMARY KEY (user_id, provider)
);

CREATE TABLE IF NOT EXISTS travel_plans (
    plan_id    TEXT        PRIMARY KEY,
    user_id    TEXT        NOT NULL,
    body       TEXT        NOT NULL,
    created_at DATETIME    NOT NULL,
    expires_at DATETIME    NOT NULL
);

CREATE INDEX IF NOT EXISTS travel_plans_expires ON travel_plans (expires_at);

CREATE TABLE IF NOT EXISTS travel_seed_marks (
    name       TEXT        PRIMARY KEY,
    applied_at DATETIME    NOT NULL
);
