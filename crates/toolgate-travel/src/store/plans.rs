//! The SQL side of the plan store: one row per plan, readable by its user until it expires.

use chrono::{DateTime, Utc};

use super::{Store, dispatch};
use crate::error::Result;

impl Store {
    /// Keep a plan (JSON text) until `expires_at`; expired plans are purged on the way.
    pub(crate) async fn save_plan(
        &self,
        plan_id: &str,
        user_id: &str,
        body: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<()> {
        const PURGE: &str = "DELETE FROM travel_plans WHERE expires_at < $1";
        const INSERT: &str = "INSERT INTO travel_plans (plan_id, user_id, body, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)";
        let now = Utc::now();
        dispatch!(self, |pool| {
            sqlx::query(PURGE).bind(now).execute(pool).await?;
            sqlx::query(INSERT)
                .bind(plan_id)
                .bind(user_id)
                .bind(body)
                .bind(now)
                .bind(expires_at)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// The plan of this user, unless it expired or belongs to someone else.
    pub(crate) async fn load_plan(&self, plan_id: &str, user_id: &str) -> Result<Option<String>> {
        const SQL: &str =
            "SELECT body FROM travel_plans WHERE plan_id = $1 AND user_id = $2 AND expires_at >= $3";
        let now = Utc::now();
        let body = dispatch!(self, |pool| sqlx::query_scalar::<_, String>(SQL)
            .bind(plan_id)
            .bind(user_id)
            .bind(now)
            .fetch_optional(pool)
            .await?);
        Ok(body)
    }
}
