-- fitness-api schema (SQLite). Every table is prefixed `fit_` so the crate can share a database.
CREATE TABLE IF NOT EXISTS fit_users (
    user_id     TEXT PRIMARY KEY NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- Only the SHA-256 of a token is stored; the token itself is shown once, when issued.
CREATE TABLE IF NOT EXISTS fit_tokens (
    token_sha256 TEXT PRIMARY KEY NOT NULL,
    user_id      TEXT NOT NULL REFERENCES fit_users (user_id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX IF NOT EXISTS fit_tokens_user ON fit_tokens (user_id);

CREATE TABLE IF NOT EXISTS fit_body_measurements (
    user_id      TEXT NOT NULL REFERENCES fit_users (user_id) ON DELETE CASCADE,
    date         TEXT NOT NULL,
    weight_kg    REAL,
    body_fat_pct REAL,
    waist_cm     REAL,
    note         TEXT,
    PRIMARY KEY (user_id, date)
);

CREATE TABLE IF NOT EXISTS fit_meals (
    meal_id  INTEGER PRIMARY KEY,
    user_id  TEXT NOT NULL REFERENCES fit_users (user_id) ON DELETE CASCADE,
    date     TEXT NOT NULL,
    name     TEXT NOT NULL,
    UNIQUE (user_id, date, name)
);

CREATE TABLE IF NOT EXISTS fit_meal_items (
    item_id   INTEGER PRIMARY KEY,
    meal_id   INTEGER NOT NULL REFERENCES fit_meals (meal_id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    name      TEXT NOT NULL,
    grams     REAL NOT NULL,
    kcal      REAL NOT NULL,
    protein_g REAL NOT NULL,
    carbs_g   REAL NOT NULL,
    fat_g     REAL NOT NULL,
    UNIQUE (meal_id, position)
);

CREATE TABLE IF NOT EXISTS fit_workouts (
    workout_id   INTEGER PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES fit_users (user_id) ON DELETE CASCADE,
    date         TEXT NOT NULL,
    name         TEXT NOT NULL,
    duration_min INTEGER,
    notes        TEXT,
    UNIQUE (user_id, date, name)
);

CREATE TABLE IF NOT EXISTS fit_sets (
    set_id     INTEGER PRIMARY KEY,
    workout_id INTEGER NOT NULL REFERENCES fit_workouts (workout_id) ON DELETE CASCADE,
    set_no     INTEGER NOT NULL,
    exercise   TEXT NOT NULL,
    reps       INTEGER NOT NULL,
    weight_kg  REAL,
    UNIQUE (workout_id, set_no)
);
