//! Whether the submit that created an order answered it: the record that
//! tells a retry after a lost answer from a repeat of an answered submit
//! (see `write::submit::JUST_WRITTEN`). The submit marks its own order
//! answered when it reads it back (`orders::attempt`).

use chrono::{DateTime, Utc};

use super::{Store, dispatch};
use crate::error::Result;

impl Store {
    /// Claim an order its creating submit never answered, created between
    /// `not_before` and `not_after`: true for exactly one caller (compare-and-set).
    pub async fn claim_unanswered(
        &self,
        user_id: &str,
        order_id: i64,
        not_before: DateTime<Utc>,
        not_after: DateTime<Utc>,
    ) -> Result<bool> {
        const SQL: &str = "UPDATE travel_orders SET answered = TRUE \
             WHERE id = $1 AND user_id = $2 AND answered = FALSE AND created_at >= $3 AND created_at <= $4";
        let n = dispatch!(self, |pool| sqlx::query(SQL)
            .bind(order_id)
            .bind(user_id)
            .bind(not_before)
            .bind(not_after)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(n == 1)
    }
}
