//! Orders and their approvals: the idempotent submit, reads scoped by user,
//! cancellation by compare-and-set, and the approver's decisions.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};

use super::{BeginWrite, Store, dispatch, ids};
use crate::error::{Result, StoreError};
use crate::model::{ApprovalStatus, OrderStatus};

/// One order as stored, with the status of its approval.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct OrderRow {
    /// The order id.
    pub id: i64,
    /// The owner.
    pub user_id: String,
    /// Hash of the canonical submit parameters (idempotency).
    pub fingerprint: String,
    /// Where the trip goes.
    pub destination: String,
    /// Where the trip starts.
    pub departure_city: String,
    /// First day.
    pub departure_date: NaiveDate,
    /// Last day.
    pub return_date: NaiveDate,
    /// Why.
    pub purpose: String,
    /// Where the order stands.
    pub status: OrderStatus,
    /// The approval bound to the order.
    pub approval_id: Option<i64>,
    /// The approval process id given to the traveller.
    pub process_instance_id: Option<String>,
    /// Where its approval stands.
    pub approval_status: Option<ApprovalStatus>,
    /// When created.
    pub created_at: DateTime<Utc>,
    /// When last changed.
    pub updated_at: DateTime<Utc>,
}

impl OrderRow {
    /// The order as the model sees it (no fingerprint, no user id).
    pub fn to_json(&self) -> Value {
        json!({
            "order_id": self.id,
            "status": self.status,
            "destination": self.destination,
            "departure_city": self.departure_city,
            "departure_date": self.departure_date.to_string(),
            "return_date": self.return_date.to_string(),
            "purpose": self.purpose,
            "process_instance_id": self.process_instance_id,
            "approval_status": self.approval_status,
            "created_at": self.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "updated_at": self.updated_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        })
    }
}

/// What a submit is asked to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrder {
    /// The owner (from the call context).
    pub user_id: String,
    /// Hash of the canonical parameters.
    pub fingerprint: String,
    /// Where the trip goes.
    pub destination: String,
    /// Where the trip starts.
    pub departure_city: String,
    /// First day.
    pub departure_date: NaiveDate,
    /// Last day.
    pub return_date: NaiveDate,
    /// Why.
    pub purpose: String,
}

/// What a submit did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SubmitOutcome {
    /// A new order was committed.
    Created {
        /// The row as it was meant to be written.
        written: OrderRow,
        /// The row as read back after the commit (`None`: it was not there).
        stored: Option<Box<OrderRow>>,
    },
    /// An identical active order existed; this is that order, as stored.
    Duplicate(OrderRow),
}

/// What a cancellation found or did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CancelOutcome<T> {
    /// No such record for this user.
    NotFound,
    /// It was already cancelled; nothing changed.
    AlreadyCancelled(T),
    /// It needs `force=true`; nothing changed.
    NeedConfirm(T),
    /// Its status forbids cancelling; nothing changed.
    Conflict(T),
    /// Cancelled; this is the record before the change.
    Cancelled(T),
}

macro_rules! order_select {
    () => {
        "SELECT o.id, o.user_id, o.fingerprint, o.destination, o.departure_city, o.departure_date, \
         o.return_date, o.purpose, o.status, o.approval_id, o.process_instance_id, \
         a.status AS approval_status, o.created_at, o.updated_at \
         FROM travel_orders o LEFT JOIN travel_approvals a ON a.id = o.approval_id "
    };
}

/// The active statuses, spelled once for every SQL text that needs them (the
/// partial unique index in the migrations spells the same set).
macro_rules! active {
    () => {
        "('DRAFT', 'SUBMITTED', 'APPROVED')"
    };
}

macro_rules! order_by_id {
    () => {
        concat!(order_select!(), "WHERE o.id = $1 AND o.user_id = $2")
    };
}

// After the SQL macros, which it uses.
mod attempt;

use attempt::{Attempt, Fresh, SubmitOn};

impl Store {
    /// Create the order (SUBMITTED) and its approval (PENDING) atomically,
    /// then read the order back and mark it answered (see `attempt` for the
    /// statements of each backend). Idempotent by the partial unique index
    /// over `(user_id, fingerprint)` of active orders: the insert says
    /// `ON CONFLICT DO NOTHING`, and a conflict returns the existing order.
    /// Never check-then-insert, so racing submits create one order.
    ///
    /// The order and approval ids are opaque (time-ordered with random low bits); a
    /// collision on either primary key rolls the write back and tries
    /// fresh ids. It is told apart from the idempotency conflict, which the
    /// `ON CONFLICT` target absorbs and which never raises.
    pub async fn submit_order(&self, new: &NewOrder) -> Result<SubmitOutcome> {
        // A conflicting order can leave the active set (be cancelled) between
        // our insert and our select; then the insert is simply tried again.
        let mut vanished = 0;
        let mut collisions = 0;
        while vanished < 3 {
            let now = Utc::now();
            let (id, approval_id) = (ids::time_ordered(), ids::time_ordered());
            let process_instance_id = format!("PI-{}", uuid::Uuid::new_v4().simple());
            let fresh = Fresh { id, approval_id, process_instance_id: &process_instance_id, now };
            // A dead connection runs the body again with the same ids (see `attempt`).
            let attempt = dispatch!(self, |pool| pool.write_submit(new, fresh).await?);
            let written = |approval_id| OrderRow {
                id,
                user_id: new.user_id.clone(),
                fingerprint: new.fingerprint.clone(),
                destination: new.destination.clone(),
                departure_city: new.departure_city.clone(),
                departure_date: new.departure_date,
                return_date: new.return_date,
                purpose: new.purpose.clone(),
                status: OrderStatus::Submitted,
                approval_id: Some(approval_id),
                process_instance_id: Some(process_instance_id.clone()),
                approval_status: Some(ApprovalStatus::Pending),
                created_at: now,
                updated_at: now,
            };
            match attempt {
                Attempt::Created(stored) => {
                    return Ok(SubmitOutcome::Created { written: written(approval_id), stored });
                }
                Attempt::IdCollision => {
                    collisions += 1;
                    if collisions >= ids::ATTEMPTS {
                        return Err(StoreError::Inconsistent("no free order id after several fresh ones"));
                    }
                }
                Attempt::Exists => {
                    match self.active_order_by_fingerprint(&new.user_id, &new.fingerprint).await? {
                        // This call's own write, committed by an attempt whose
                        // answer was lost with its connection: ids are fresh per
                        // call, so no other call wrote this id.
                        Some(existing) if existing.id == id => {
                            let stored = dispatch!(self, |pool| pool.read_back(&new.user_id, id).await?);
                            return Ok(SubmitOutcome::Created {
                                written: written(approval_id),
                                stored: stored.map(Box::new),
                            });
                        }
                        Some(existing) => return Ok(SubmitOutcome::Duplicate(existing)),
                        None => vanished += 1,
                    }
                }
            }
        }
        Err(StoreError::Inconsistent("an identical order kept appearing and disappearing during the submit"))
    }

    /// The caller's active order with this fingerprint.
    pub async fn active_order_by_fingerprint(
        &self,
        user_id: &str,
        fingerprint: &str,
    ) -> Result<Option<OrderRow>> {
        const SQL: &str = concat!(
            order_select!(),
            "WHERE o.user_id = $1 AND o.fingerprint = $2 AND o.status IN ",
            active!()
        );
        let row = dispatch!(self, |pool| {
            sqlx::query_as::<_, OrderRow>(SQL).bind(user_id).bind(fingerprint).fetch_optional(pool).await?
        });
        Ok(row)
    }

    /// One order of this user (another user's order is `None`).
    pub async fn get_order(&self, user_id: &str, order_id: i64) -> Result<Option<OrderRow>> {
        const SQL: &str = order_by_id!();
        let row = dispatch!(self, |pool| {
            sqlx::query_as::<_, OrderRow>(SQL).bind(order_id).bind(user_id).fetch_optional(pool).await?
        });
        Ok(row)
    }

    /// A page of this user's orders, newest first, optionally of one status; and the total count.
    pub async fn list_orders(
        &self,
        user_id: &str,
        status: Option<OrderStatus>,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<OrderRow>, i64)> {
        const SQL: &str = concat!(
            order_select!(),
            "WHERE o.user_id = $1 AND ($2 IS NULL OR o.status = $2) ORDER BY o.id DESC LIMIT $3 OFFSET $4"
        );
        const COUNT: &str =
            "SELECT COUNT(*) FROM travel_orders WHERE user_id = $1 AND ($2 IS NULL OR status = $2)";
        let out = dispatch!(self, |pool| {
            let rows = sqlx::query_as::<_, OrderRow>(SQL)
                .bind(user_id)
                .bind(status)
                .bind(limit)
                .bind(offset)
                .fetch_all(pool)
                .await?;
            let total: i64 = sqlx::query_scalar(COUNT).bind(user_id).bind(status).fetch_one(pool).await?;
            (rows, total)
        });
        Ok(out)
    }

    /// This user's active orders whose dates overlap `[from, to]` (both inclusive).
    pub async fn overlapping_orders(
        &self,
        user_id: &str,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<Vec<OrderRow>> {
        const SQL: &str = concat!(
            order_select!(),
            "WHERE o.user_id = $1 AND o.status IN ",
            active!(),
            " AND o.departure_date <= $2 AND o.return_date >= $3 ORDER BY o.departure_date, o.id"
        );
        let rows = dispatch!(self, |pool| {
            sqlx::query_as::<_, OrderRow>(SQL).bind(user_id).bind(to).bind(from).fetch_all(pool).await?
        });
        Ok(rows)
    }

    /// Cancel this user's order. DRAFT and SUBMITTED cancel directly;
    /// APPROVED needs `force`; CANCELLED is reported as already done;
    /// REJECTED and COMPLETED are conflicts. The change is a compare-and-set
    /// on the status that was read, so a concurrent change is never overwritten.
    pub async fn cancel_order(
        &self,
        user_id: &str,
        order_id: i64,
        force: bool,
    ) -> Result<CancelOutcome<OrderRow>> {
        const CANCEL: &str = "UPDATE travel_orders SET status = 'CANCELLED', updated_at = $1 \
             WHERE id = $2 AND user_id = $3 AND status = $4";
        const WITHDRAW: &str = "UPDATE travel_approvals SET status = 'WITHDRAWN', updated_at = $1 \
             WHERE order_id = $2 AND status IN ('PENDING', 'APPROVED')";
        for _ in 0..3 {
            let Some(order) = self.get_order(user_id, order_id).await? else {
                return Ok(CancelOutcome::NotFound);
            };
            match order.status {
                OrderStatus::Cancelled => return Ok(CancelOutcome::AlreadyCancelled(order)),
                OrderStatus::Approved if !force => return Ok(CancelOutcome::NeedConfirm(order)),
                OrderStatus::Draft | OrderStatus::Submitted | OrderStatus::Approved => {}
                OrderStatus::Rejected | OrderStatus::Completed => return Ok(CancelOutcome::Conflict(order)),
            }
            let now = Utc::now();
            let done = dispatch!(self, |pool| {
                let mut tx = pool.begin_write().await?;
                let n = sqlx::query(CANCEL)
                    .bind(now)
                    .bind(order_id)
                    .bind(user_id)
                    .bind(order.status)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if n == 1 {
                    sqlx::query(WITHDRAW).bind(now).bind(order_id).execute(&mut *tx).await?;
                    tx.commit().await?;
                    true
                } else {
                    tx.rollback().await?;
                    false
                }
            });
            if done {
                return Ok(CancelOutcome::Cancelled(order));
            }
        }
        Err(StoreError::Inconsistent("the order kept changing while it was being cancelled"))
    }

    /// The approver's decision on a SUBMITTED order: APPROVED or REJECTED,
    /// for the order and its approval together. Returns whether it changed
    /// anything (false when the order is not SUBMITTED).
    pub async fn decide_order(&self, order_id: i64, approve: bool) -> Result<bool> {
        const ORDER: &str =
            "UPDATE travel_orders SET status = $1, updated_at = $2 WHERE id = $3 AND status = 'SUBMITTED'";
        const APPROVAL: &str = "UPDATE travel_approvals SET status = $1, updated_at = $2 \
             WHERE order_id = $3 AND status = 'PENDING'";
        let (order_status, approval_status) =
            if approve { ("APPROVED", "APPROVED") } else { ("REJECTED", "REJECTED") };
        let now = Utc::now();
        let changed = dispatch!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            let n = sqlx::query(ORDER).bind(order_status).bind(now).bind(order_id).execute(&mut *tx).await?;
            if n.rows_affected() == 1 {
                sqlx::query(APPROVAL)
                    .bind(approval_status)
                    .bind(now)
                    .bind(order_id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                true
            } else {
                tx.rollback().await?;
                false
            }
        });
        Ok(changed)
    }

    /// Mark an APPROVED order COMPLETED (the trip took place). Returns whether it changed.
    pub async fn complete_order(&self, order_id: i64) -> Result<bool> {
        const SQL: &str = "UPDATE travel_orders SET status = 'COMPLETED', updated_at = $1 WHERE id = $2 AND status = 'APPROVED'";
        let now = Utc::now();
        let n = dispatch!(self, |pool| sqlx::query(SQL)
            .bind(now)
            .bind(order_id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(n == 1)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn active_set_matches_the_index_predicate() {
        // The partial unique index and ON CONFLICT target spell the active set
        // by hand; keep them in step with OrderStatus::is_active.
        let active: Vec<&str> =
            crate::model::OrderStatus::ALL.iter().filter(|s| s.is_active()).map(|s| s.as_str()).collect();
        let spelled = format!("('{}')", active.join("', '"));
        assert_eq!(spelled, active!());
        assert!(super::attempt::SUBMIT_SQLITE.contains(active!()));
        assert!(super::attempt::SUBMIT_PG.contains(active!()));
        for dir in ["sqlite", "postgres"] {
            let sql = std::fs::read_to_string(format!(
                "{}/migrations/{dir}/0001_travel_init.sql",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            assert!(sql.contains(concat!("WHERE status IN ", active!())), "{dir}");
        }
    }
}
