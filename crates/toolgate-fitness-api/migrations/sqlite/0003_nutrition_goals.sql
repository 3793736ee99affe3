-- Daily nutrition goals, one set per user (they hold for every day). A NULL column is no goal
-- for that quantity: a user may aim at calories only.
CREATE TABLE IF NOT EXISTS fit_nutrition_goals (
    user_id   TEXT PRIMARY KEY NOT NULL REFERENCES fit_users (user_id) ON DELETE CASCADE,
    kcal      REAL,
    protein_g REAL,
    carbs_g   REAL,
    fat_g     REAL
);
