//! The second step of a submit, inside its transaction: the order's PENDING
//! approval and the move of the order to SUBMITTED (two statements on
//! SQLite, one round trip on PostgreSQL).

use std::future::Future;

use chrono::{DateTime, Utc};

const INSERT_APPROVAL: &str = "INSERT INTO travel_approvals \
     (id, order_id, user_id, process_instance_id, status, created_at, updated_at) \
     VALUES ($5, $1, $2, $3, 'PENDING', $4, $4) RETURNING id";

const MOVE_TO_SUBMITTED: &str = "UPDATE travel_orders \
     SET status = 'SUBMITTED', approval_id = $1, process_instance_id = $2, updated_at = $3 \
     WHERE id = $4 AND status = 'DRAFT'";

/// PostgreSQL does both steps in one round trip: the approval insert in a
/// data-modifying CTE, the move to SUBMITTED in the main statement.
const APPROVE_AND_SUBMIT_PG: &str = "WITH a AS (INSERT INTO travel_approvals \
     (id, order_id, user_id, process_instance_id, status, created_at, updated_at) \
     VALUES ($5, $1, $2, $3, 'PENDING', $4, $4) RETURNING id) \
     UPDATE travel_orders o SET status = 'SUBMITTED', approval_id = a.id, process_instance_id = $3, updated_at = $4 \
     FROM a WHERE o.id = $1 AND o.status = 'DRAFT' RETURNING a.id";

/// Inside the submit transaction, after the DRAFT order is written: create
/// its PENDING approval and move the order to SUBMITTED with the approval id.
/// `approval_id` is the fresh id to give the approval.
/// `Some(approval_id)`, or `None` when the order was no longer DRAFT.
pub(crate) trait ApproveAndSubmit {
    fn approve_and_submit<'c>(
        &'c mut self,
        order_id: i64,
        approval_id: i64,
        user_id: &'c str,
        process_instance_id: &'c str,
        now: DateTime<Utc>,
    ) -> impl Future<Output = sqlx::Result<Option<i64>>> + Send + 'c;
}

impl ApproveAndSubmit for sqlx::SqliteConnection {
    async fn approve_and_submit<'c>(
        &'c mut self,
        order_id: i64,
        approval_id: i64,
        user_id: &'c str,
        process_instance_id: &'c str,
        now: DateTime<Utc>,
    ) -> sqlx::Result<Option<i64>> {
        let approval_id: i64 = sqlx::query_scalar(INSERT_APPROVAL)
            .bind(order_id)
            .bind(user_id)
            .bind(process_instance_id)
            .bind(now)
            .bind(approval_id)
            .fetch_one(&mut *self)
            .await?;
        let moved = sqlx::query(MOVE_TO_SUBMITTED)
            .bind(approval_id)
            .bind(process_instance_id)
            .bind(now)
            .bind(order_id)
            .execute(&mut *self)
            .await?
            .rows_affected();
        Ok((moved == 1).then_some(approval_id))
    }
}

impl ApproveAndSubmit for sqlx::PgConnection {
    fn approve_and_submit<'c>(
        &'c mut self,
        order_id: i64,
        approval_id: i64,
        user_id: &'c str,
        process_instance_id: &'c str,
        now: DateTime<Utc>,
    ) -> impl Future<Output = sqlx::Result<Option<i64>>> + Send + 'c {
        sqlx::query_scalar(APPROVE_AND_SUBMIT_PG)
            .bind(order_id)
            .bind(user_id)
            .bind(process_instance_id)
            .bind(now)
            .bind(approval_id)
            .fetch_optional(self)
    }
}
