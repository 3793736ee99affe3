//! Travel policy data: city tiers, per-tier-and-level caps and classes, user levels.

use serde_json::{Value, json};

use super::{Store, dispatch};
use crate::error::Result;

/// The policy of one city tier for one traveller level.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PolicyRow {
    /// City tier (1 = most expensive cities).
    pub tier: i64,
    /// Traveller level (`staff`, `manager`, `executive`).
    pub level: String,
    /// Most the hotel may cost per night, whole currency units.
    pub hotel_cap_per_night: i64,
    /// ISO currency code of the cap.
    pub currency: String,
    /// Allowed flight classes, comma-separated (`economy,premium_economy`).
    pub flight_classes: String,
    /// Allowed train classes, comma-separated (`second,first`).
    pub train_classes: String,
}

impl PolicyRow {
    /// The allowed classes of a transport mode (`flight` or `train`).
    pub fn allowed_classes(&self, mode: &str) -> Vec<&str> {
        let list = match mode {
            "flight" => &self.flight_classes,
            "train" => &self.train_classes,
            _ => return Vec::new(),
        };
        list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
    }

    /// Whether `class` is allowed for `mode` (case-insensitive).
    pub fn class_allowed(&self, mode: &str, class: &str) -> bool {
        let class = class.trim().to_lowercase();
        self.allowed_classes(mode).iter().any(|c| c.eq_ignore_ascii_case(&class))
    }

    /// The policy as the model sees it.
    pub fn to_json(&self) -> Value {
        json!({
            "tier": self.tier,
            "level": self.level,
            "hotel_cap_per_night": self.hotel_cap_per_night,
            "currency": self.currency,
            "allowed_classes": {
                "flight": self.allowed_classes("flight"),
                "train": self.allowed_classes("train"),
            },
        })
    }
}

/// The key a city is looked up by: trimmed, Unicode lowercase, inner
/// whitespace collapsed (`"  New   York "` and `"new york"` are one city).
pub fn city_key(city: &str) -> String {
    city.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl Store {
    /// The tier of a city, with its canonical spelling, when it is listed.
    pub async fn city_tier(&self, city: &str) -> Result<Option<(String, i64)>> {
        const SQL: &str = "SELECT city, tier FROM travel_city_tiers WHERE city_key = $1";
        let key = city_key(city);
        let row = dispatch!(self, |pool| sqlx::query_as::<_, (String, i64)>(SQL)
            .bind(&key)
            .fetch_optional(pool)
            .await?);
        Ok(row)
    }

    /// The level of a user, when one is recorded.
    pub async fn user_level(&self, user_id: &str) -> Result<Option<String>> {
        const SQL: &str = "SELECT level FROM travel_user_levels WHERE user_id = $1";
        let row = dispatch!(self, |pool| sqlx::query_scalar::<_, String>(SQL)
            .bind(user_id)
            .fetch_optional(pool)
            .await?);
        Ok(row)
    }

    /// The policy of a tier for a level.
    pub async fn policy(&self, tier: i64, level: &str) -> Result<Option<PolicyRow>> {
        const SQL: &str = "SELECT tier, level, hotel_cap_per_night, currency, flight_classes, train_classes \
             FROM travel_policies WHERE tier = $1 AND level = $2";
        let row = dispatch!(self, |pool| sqlx::query_as::<_, PolicyRow>(SQL)
            .bind(tier)
            .bind(level)
            .fetch_optional(pool)
            .await?);
        Ok(row)
    }

    /// Set the tier of a city (insert or replace).
    pub async fn upsert_city_tier(&self, city: &str, tier: i64) -> Result<()> {
        const SQL: &str = "INSERT INTO travel_city_tiers (city_key, city, tier) VALUES ($1, $2, $3) \
             ON CONFLICT (city_key) DO UPDATE SET city = excluded.city, tier = excluded.tier";
        let key = city_key(city);
        dispatch!(self, |pool| sqlx::query(SQL)
            .bind(&key)
            .bind(city)
            .bind(tier)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(())
    }

    /// Set a policy (insert or replace).
    pub async fn upsert_policy(&self, policy: &PolicyRow) -> Result<()> {
        const SQL: &str = "INSERT INTO travel_policies \
             (tier, level, hotel_cap_per_night, currency, flight_classes, train_classes) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (tier, level) DO UPDATE SET hotel_cap_per_night = excluded.hotel_cap_per_night, \
             currency = excluded.currency, flight_classes = excluded.flight_classes, train_classes = excluded.train_classes";
        dispatch!(self, |pool| sqlx::query(SQL)
            .bind(policy.tier)
            .bind(&policy.level)
            .bind(policy.hotel_cap_per_night)
            .bind(&policy.currency)
            .bind(&policy.flight_classes)
            .bind(&policy.train_classes)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(())
    }

    /// Set the level of a user (insert or replace).
    pub async fn set_user_level(&self, user_id: &str, level: &str) -> Result<()> {
        const SQL: &str = "INSERT INTO travel_user_levels (user_id, level) VALUES ($1, $2) \
             ON CONFLICT (user_id) DO UPDATE SET level = excluded.level";
        dispatch!(self, |pool| sqlx::query(SQL)
            .bind(user_id)
            .bind(level)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn city_keys_fold_case_and_space() {
        assert_eq!(city_key("  New   York "), "new york");
        assert_eq!(city_key("MÜNCHEN"), "münchen");
        assert_eq!(city_key("北京"), "北京");
    }

    #[test]
    fn classes_are_matched_case_insensitively() {
        let p = PolicyRow {
            tier: 1,
            level: "staff".into(),
            hotel_cap_per_night: 600,
            currency: "CNY".into(),
            flight_classes: "economy, premium_economy".into(),
            train_classes: "second".into(),
        };
        assert!(p.class_allowed("flight", "Economy"));
        assert!(p.class_allowed("flight", "premium_economy"));
        assert!(!p.class_allowed("flight", "business"));
        assert!(!p.class_allowed("train", "first"));
        assert!(!p.class_allowed("boat", "economy"));
    }
}
