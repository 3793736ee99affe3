//! Row ids of orders, approvals and bookings that say nothing about volume:
//! no global counter, so an id seen by one traveller tells nothing about how
//! many orders or bookings others made. All stay below 2^53, so every JSON
//! number reader gets them exactly and no tool schema changes type.

use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since 2024-01-01 (40 bits, until 2058) then 13 random bits:
/// ids still sort by creation ("newest first" lists keep ordering by id).
/// Within one process the millisecond part strictly increases (a second id
/// in the same millisecond takes the next one), so ids made one after the
/// other are ordered and never collide with each other; ids of two gateway
/// instances in the same millisecond collide with odds 1/8192, and the
/// insert, which supplies the id, retries a collision ([`is_id_collision`])
/// with a fresh one.
pub(crate) fn time_ordered() -> i64 {
    const EPOCH_2024_MS: i64 = 1_704_067_200_000;
    static LAST_MS: AtomicI64 = AtomicI64::new(0);
    let now = (chrono::Utc::now().timestamp_millis() - EPOCH_2024_MS).max(0);
    let step = |last: i64| now.max(last + 1);
    // `fetch_update` with a closure that always answers `Some` never fails.
    let last = LAST_MS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| Some(step(last)));
    let ms = step(last.unwrap_or_else(|last| last)).min((1 << 40) - 1);
    (ms << 13) | i64::from(rand::random::<u16>() & 0x1fff)
}

/// How many fresh ids a write tries before giving up.
pub(crate) const ATTEMPTS: usize = 8;

/// Tables whose `id` primary key is supplied by [`time_ordered`].
const TABLES: [&str; 3] = ["travel_orders", "travel_approvals", "travel_bookings"];

/// Whether `error` is a unique violation on the `id` primary key of one of
/// the travel tables with opaque ids: a fresh id fixes it. Any other unique
/// violation (the idempotency index over `(user_id, fingerprint)`, the
/// approval's process instance id) is not an id collision and is never
/// retried as one. PostgreSQL names the constraint (`<table>_pkey`); SQLite
/// names the columns in its message (`UNIQUE constraint failed: <table>.id`).
pub(crate) fn is_id_collision(error: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = error else { return false };
    if !db.is_unique_violation() {
        return false;
    }
    TABLES.iter().any(|table| {
        db.constraint() == Some(format!("{table}_pkey").as_str())
            || db.message().ends_with(&format!(": {table}.id"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_json_safe_and_carry_no_count() {
        let ids: Vec<i64> = (0..64).map(|_| time_ordered()).collect();
        assert!(ids.iter().all(|&id| id > 1 << 40 && id < 1 << 53), "{ids:?}");
        // Made in (almost) the same millisecond, still strictly increasing
        // (no collision, creation order kept), yet never counting up by one.
        assert!(ids.windows(2).all(|w| w[1] - w[0] > 1), "{ids:?}");
    }

    async fn insert_order(
        store: &crate::store::Store,
        id: i64,
        fingerprint: &str,
    ) -> crate::error::Result<sqlx::Result<u64>> {
        const SQL: &str = "INSERT INTO travel_orders (id, user_id, fingerprint, destination, departure_city, \
             departure_date, return_date, purpose, status, created_at, updated_at) VALUES ($1, 'u', $2, 'X', 'Y', \
             '2030-01-01', '2030-01-02', 'p', 'SUBMITTED', '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z')";
        Ok(crate::store::dispatch!(store, |pool| {
            sqlx::query(SQL).bind(id).bind(fingerprint).execute(pool).await.map(|r| r.rows_affected())
        }))
    }

    #[tokio::test]
    async fn only_a_primary_key_violation_is_an_id_collision() {
        let store = crate::store::Store::connect("sqlite::memory:").await.unwrap();
        let id = time_ordered();
        assert_eq!(insert_order(&store, id, "f1").await.unwrap().unwrap(), 1);
        let same_id = insert_order(&store, id, "f2").await.unwrap().unwrap_err();
        assert!(is_id_collision(&same_id), "{same_id}");
        // The idempotency index (an active order with the same fingerprint) is
        // a unique violation too, and must never be retried as a collision.
        let same_fingerprint = insert_order(&store, time_ordered(), "f1").await.unwrap().unwrap_err();
        assert!(matches!(&same_fingerprint, sqlx::Error::Database(d) if d.is_unique_violation()));
        assert!(!is_id_collision(&same_fingerprint), "{same_fingerprint}");
    }
}
