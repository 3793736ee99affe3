//! One attempt of a submit, per backend, and the read-back that follows it.
//!
//! Both backends write the order already SUBMITTED, with the approval id the
//! caller chose, and its PENDING approval only when the order was inserted
//! (no DRAFT step: nothing sees the order between the two inserts), then
//! mark the order answered and read it back in one statement
//! (`UPDATE … RETURNING`), a commit that does not wait for the disk.
//!
//! SQLite runs in-process, where a statement costs no network round trip
//! but each one is a hop to the connection's worker thread: `BEGIN
//! IMMEDIATE`, the two inserts sent as one query, `COMMIT`, then the mark
//! with its pragmas around it. Before, the same was ten statements (a DRAFT
//! insert moved to SUBMITTED, and a separate read-back).
//!
//! On PostgreSQL every statement is a network round trip, so a submit is two:
//! one statement writes the order and its approval in a data-modifying CTE,
//! atomic without `BEGIN`/`COMMIT` (a statement is its own transaction; the
//! foreign key from the approval to the order is checked at the end of the
//! statement); then one statement marks it answered and returns the row as
//! stored. Before, the same was six (`BEGIN`, insert, approval and status,
//! `COMMIT`, read-back, mark answered).

use std::future::Future;

use chrono::{DateTime, Utc};
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

use super::{NewOrder, OrderRow};
use crate::error::{Result, StoreError};
use crate::store::{BeginWriteOn, ids};

/// What one attempt did.
#[derive(Debug)]
pub(super) enum Attempt {
    /// The order and its approval are committed; the order as read back
    /// (`None`: it was not there).
    Created(Option<Box<OrderRow>>),
    /// An identical active order holds the fingerprint; nothing was written.
    Exists,
    /// A fresh id hit an existing one; nothing was written.
    IdCollision,
}

/// The ids and values one attempt writes besides the [`NewOrder`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Fresh<'a> {
    pub(super) id: i64,
    pub(super) approval_id: i64,
    pub(super) process_instance_id: &'a str,
    pub(super) now: DateTime<Utc>,
}

/// A submit's write and read-back on one backend's pool.
pub(super) trait SubmitOn {
    /// Write the order and its approval, then read it back (see the module
    /// docs). A failure once the write may have been committed is
    /// [`StoreError::OutcomeUnknown`].
    fn write_submit<'a>(
        &'a self,
        new: &'a NewOrder,
        fresh: Fresh<'a>,
    ) -> impl Future<Output = Result<Attempt>> + Send + 'a;

    /// Mark the committed order answered and read it back as stored (`None`:
    /// it is not there). Every failure is [`StoreError::OutcomeUnknown`]: the
    /// order was committed.
    fn read_back<'a>(
        &'a self,
        user_id: &'a str,
        id: i64,
    ) -> impl Future<Output = Result<Option<OrderRow>>> + Send + 'a;
}

/// The whole write on SQLite: the order and, only when it was inserted
/// (`changes()` of the statement before), its approval; two statements sent
/// to the connection's worker as one query, inside `BEGIN IMMEDIATE`. Rows
/// affected: 2 written, 0 an identical active order exists.
pub(super) const SUBMIT_SQLITE: &str = concat!(
    "INSERT INTO travel_orders \
     (id, user_id, fingerprint, destination, departure_city, departure_date, return_date, purpose, status, \
      approval_id, process_instance_id, created_at, updated_at, answered) \
     VALUES ($9, $1, $2, $3, $4, $5, $6, $7, 'SUBMITTED', $10, $11, $8, $8, FALSE) \
     ON CONFLICT (user_id, fingerprint) WHERE status IN ",
    active!(),
    " DO NOTHING; \
     INSERT INTO travel_approvals (id, order_id, user_id, process_instance_id, status, created_at, updated_at) \
     SELECT $10, $9, $1, $11, 'PENDING', $8, $8 WHERE changes() = 1"
);

/// Marks the order answered and returns it as stored, with its approval's
/// status (SQLite's `RETURNING` names only the updated table; the approval
/// is a scalar subquery).
const READ_BACK_SQLITE: &str = "UPDATE travel_orders SET answered = TRUE WHERE id = $1 AND user_id = $2 \
     RETURNING id, user_id, fingerprint, destination, departure_city, departure_date, return_date, purpose, \
     status, approval_id, process_instance_id, \
     (SELECT a.status FROM travel_approvals a WHERE a.id = travel_orders.approval_id) AS approval_status, \
     created_at, updated_at";

/// The whole write in one statement: the order (no DRAFT step: nothing can
/// see it between the two inserts) and, only when it was inserted, its approval.
pub(super) const SUBMIT_PG: &str = concat!(
    "WITH o AS (INSERT INTO travel_orders \
     (id, user_id, fingerprint, destination, departure_city, departure_date, return_date, purpose, status, \
      approval_id, process_instance_id, created_at, updated_at, answered) \
     VALUES ($9, $1, $2, $3, $4, $5, $6, $7, 'SUBMITTED', $10, $11, $8, $8, FALSE) \
     ON CONFLICT (user_id, fingerprint) WHERE status IN ",
    active!(),
    " DO NOTHING RETURNING id) \
     INSERT INTO travel_approvals (id, order_id, user_id, process_instance_id, status, created_at, updated_at) \
     SELECT $10, o.id, $1, $11, 'PENDING', $8, $8 FROM o RETURNING id"
);

/// Marks the order answered and returns it as the update left it (after any
/// trigger), with its approval's status. Its commit does not wait for the
/// WAL flush (`synchronous_commit` off for this one transaction, set inside
/// the statement: PostgreSQL reads the setting at commit): the order itself
/// was made durable by the statement before, and the mark is a hint that
/// tells a retry after a lost answer from a repeat. A crash that loses it
/// makes a repeat within the recovery window answer with the same order as
/// recovered instead of as a duplicate; nothing is written twice either way.
const READ_BACK_PG: &str = "WITH o AS (UPDATE travel_orders SET answered = TRUE \
     FROM (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush \
     WHERE id = $1 AND user_id = $2 \
     RETURNING id, user_id, fingerprint, destination, departure_city, departure_date, return_date, purpose, \
     status, approval_id, process_instance_id, created_at, updated_at) \
     SELECT o.id, o.user_id, o.fingerprint, o.destination, o.departure_city, o.departure_date, o.return_date, \
     o.purpose, o.status, o.approval_id, o.process_instance_id, a.status AS approval_status, o.created_at, \
     o.updated_at FROM o LEFT JOIN travel_approvals a ON a.id = o.approval_id";

/// The parameters of [`SUBMIT_SQLITE`] and [`SUBMIT_PG`], `$1` to `$11`, in order.
macro_rules! bind_submit {
    ($query:expr, $new:expr, $fresh:expr) => {
        $query
            .bind(&$new.user_id)
            .bind(&$new.fingerprint)
            .bind(&$new.destination)
            .bind(&$new.departure_city)
            .bind($new.departure_date)
            .bind($new.return_date)
            .bind(&$new.purpose)
            .bind($fresh.now)
            .bind($fresh.id)
            .bind($fresh.approval_id)
            .bind($fresh.process_instance_id)
    };
}

impl SubmitOn for SqlitePool {
    async fn write_submit<'a>(&'a self, new: &'a NewOrder, fresh: Fresh<'a>) -> Result<Attempt> {
        let mut conn = self.acquire().await?;
        let mut tx = conn.begin_write_on().await?;
        let written = bind_submit!(sqlx::query(SUBMIT_SQLITE), new, fresh)
            .execute(&mut *tx)
            .await
            .map(|done| done.rows_affected());
        match written {
            Err(e) if ids::is_id_collision(&e) => {
                tx.rollback().await?;
                Ok(Attempt::IdCollision)
            }
            Err(e) => Err(e.into()),
            Ok(0) => {
                tx.rollback().await?;
                Ok(Attempt::Exists)
            }
            Ok(2) => {
                // From here on the order may exist: a failure is an unknown outcome, not "nothing changed".
                tx.commit().await.map_err(StoreError::OutcomeUnknown)?;
                // The read-back on the same connection: one pool acquire, a fresh statement after the commit.
                let stored = read_back_sqlite(&mut conn, &new.user_id, fresh.id).await?;
                Ok(Attempt::Created(stored.map(Box::new)))
            }
            Ok(_) => {
                tx.rollback().await?;
                Err(StoreError::Inconsistent("the new order was written without its approval"))
            }
        }
    }

    async fn read_back<'a>(&'a self, user_id: &'a str, id: i64) -> Result<Option<OrderRow>> {
        let mut conn = self.acquire().await.map_err(StoreError::OutcomeUnknown)?;
        read_back_sqlite(&mut conn, user_id, id).await
    }
}

/// Mark the order answered and read it back in one statement; the mark's
/// commit does not wait for the disk (as on PostgreSQL, see [`READ_BACK_PG`];
/// in-process, the pragmas around it cost no round trip). When the mark
/// fails (say the write lock stays busy), the order is read back unmarked: a
/// retry would only answer it as recovered.
async fn read_back_sqlite(
    conn: &mut PoolConnection<sqlx::Sqlite>,
    user_id: &str,
    id: i64,
) -> Result<Option<OrderRow>> {
    use toolgate_db::NoFlush as _;
    let marked = match conn.no_flush().await {
        Ok(lowered) => {
            let marked = sqlx::query_as::<_, OrderRow>(READ_BACK_SQLITE)
                .bind(id)
                .bind(user_id)
                .fetch_optional(&mut **conn)
                .await;
            if let Err(e) = conn.restore_flush(lowered).await {
                // The connection is closed when dropped, never handed out weaker.
                tracing::warn!(target: "toolgate_travel::store", error = %e, "could not restore a connection's durability");
            }
            marked
        }
        Err(e) => Err(e),
    };
    match marked {
        Ok(stored) => Ok(stored),
        Err(e) => {
            tracing::warn!(target: "toolgate_travel::store", error = %e, "could not mark the order answered");
            sqlx::query_as::<_, OrderRow>(order_by_id!())
                .bind(id)
                .bind(user_id)
                .fetch_optional(&mut **conn)
                .await
                .map_err(StoreError::OutcomeUnknown)
        }
    }
}

impl SubmitOn for PgPool {
    async fn write_submit<'a>(&'a self, new: &'a NewOrder, fresh: Fresh<'a>) -> Result<Attempt> {
        // Acquired apart, so that a failure to connect is never taken for one of the statement.
        let mut conn = self.acquire().await?;
        let written = bind_submit!(sqlx::query_scalar::<_, i64>(SUBMIT_PG), new, fresh)
            .fetch_optional(&mut *conn)
            .await;
        match written {
            Ok(Some(_)) => {
                let stored = read_back_pg(&mut conn, &new.user_id, fresh.id).await?;
                Ok(Attempt::Created(stored.map(Box::new)))
            }
            Ok(None) => Ok(Attempt::Exists),
            Err(e) if ids::is_id_collision(&e) => Ok(Attempt::IdCollision),
            // A dead pooled connection fails before the statement left (then
            // running it again is right) or after it committed: the next
            // attempt reuses this attempt's ids, so `submit_order` recognizes
            // its own order by its id.
            Err(e) if toolgate_db::classify(&e) == toolgate_db::ErrorClass::Stale => Err(e.into()),
            // The connection broke otherwise while the statement was out: it may have committed.
            Err(e @ (sqlx::Error::Io(_) | sqlx::Error::Protocol(_))) => Err(StoreError::OutcomeUnknown(e)),
            // The server answered with an error (the statement was rolled
            // back), or the statement never left (no connection, pool closed).
            Err(e) => Err(e.into()),
        }
    }

    async fn read_back<'a>(&'a self, user_id: &'a str, id: i64) -> Result<Option<OrderRow>> {
        let mut conn = self.acquire().await.map_err(StoreError::OutcomeUnknown)?;
        read_back_pg(&mut conn, user_id, id).await
    }
}

async fn read_back_pg(conn: &mut sqlx::PgConnection, user_id: &str, id: i64) -> Result<Option<OrderRow>> {
    sqlx::query_as::<_, OrderRow>(READ_BACK_PG)
        .bind(id)
        .bind(user_id)
        .fetch_optional(conn)
        .await
        .map_err(StoreError::OutcomeUnknown)
}
