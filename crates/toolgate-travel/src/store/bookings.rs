//! Bookings (flight, hotel, train): reads scoped by user and cancellation by compare-and-set.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};

use super::orders::CancelOutcome;
use super::{Store, dispatch, ids};
use crate::error::{Result, StoreError};
use crate::model::{BookingKind, BookingStatus};

/// One booking as stored.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct BookingRow {
    /// The booking id.
    pub id: i64,
    /// The owner.
    pub user_id: String,
    /// The order it belongs to, if any.
    pub order_id: Option<i64>,
    /// What is booked.
    pub kind: BookingKind,
    /// Where the booking stands.
    pub status: BookingStatus,
    /// Airline, hotel chain, rail operator.
    pub provider: String,
    /// The provider's reference (PNR, confirmation number).
    pub reference: String,
    /// What is booked, in words (e.g. `CA1501 PEK-SHA 08:00`).
    pub description: String,
    /// First day.
    pub start_date: NaiveDate,
    /// Last day.
    pub end_date: NaiveDate,
    /// Price in whole currency units.
    pub price: i64,
    /// ISO currency code.
    pub currency: String,
    /// When created.
    pub created_at: DateTime<Utc>,
    /// When last changed.
    pub updated_at: DateTime<Utc>,
}

impl BookingRow {
    /// The booking as the model sees it.
    pub fn to_json(&self) -> Value {
        json!({
            "booking_id": self.id,
            "order_id": self.order_id,
            "kind": self.kind,
            "status": self.status,
            "provider": self.provider,
            "reference": self.reference,
            "description": self.description,
            "start_date": self.start_date.to_string(),
            "end_date": self.end_date.to_string(),
            "price": self.price,
            "currency": self.currency,
        })
    }

    /// A one-line summary for `related_items`.
    pub fn to_brief(&self) -> Value {
        json!({
            "booking_id": self.id,
            "kind": self.kind,
            "status": self.status,
            "description": self.description,
            "start_date": self.start_date.to_string(),
        })
    }
}

/// A booking to insert (by the booking back office, the seed, tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBooking {
    /// The owner.
    pub user_id: String,
    /// The order it belongs to, if any (must be the owner's).
    pub order_id: Option<i64>,
    /// What is booked.
    pub kind: BookingKind,
    /// Initial status.
    pub status: BookingStatus,
    /// Provider name.
    pub provider: String,
    /// Provider reference.
    pub reference: String,
    /// What is booked.
    pub description: String,
    /// First day.
    pub start_date: NaiveDate,
    /// Last day.
    pub end_date: NaiveDate,
    /// Price in whole currency units.
    pub price: i64,
    /// ISO currency code.
    pub currency: String,
}

macro_rules! booking_select {
    () => {
        "SELECT id, user_id, order_id, kind, status, provider, reference, description, \
         start_date, end_date, price, currency, created_at, updated_at FROM travel_bookings "
    };
}

/// Filters of [`Store::list_bookings`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BookingFilter {
    /// Only bookings of this order.
    pub order_id: Option<i64>,
    /// Only this kind.
    pub kind: Option<BookingKind>,
    /// Only this status.
    pub status: Option<BookingStatus>,
}

impl Store {
    /// Insert a booking; returns its id.
    pub async fn insert_booking(&self, new: &NewBooking) -> Result<i64> {
        const SQL: &str = "INSERT INTO travel_bookings \
             (id, user_id, order_id, kind, status, provider, reference, description, start_date, end_date, price, currency, created_at, updated_at) \
             VALUES ($13, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id";
        let now = Utc::now();
        // The id is opaque (no counter); a collision is retried with a fresh one.
        for _ in 0..ids::ATTEMPTS {
            let id = ids::time_ordered();
            let inserted: Option<i64> = dispatch!(self, |pool| {
                let result = sqlx::query_scalar::<_, i64>(SQL)
                    .bind(&new.user_id)
                    .bind(new.order_id)
                    .bind(new.kind)
                    .bind(new.status)
                    .bind(&new.provider)
                    .bind(&new.reference)
                    .bind(&new.description)
                    .bind(new.start_date)
                    .bind(new.end_date)
                    .bind(new.price)
                    .bind(&new.currency)
                    .bind(now)
                    .bind(id)
                    .fetch_one(pool)
                    .await;
                match result {
                    Err(e) if ids::is_id_collision(&e) => None,
                    other => Some(other?),
                }
            });
            if let Some(id) = inserted {
                return Ok(id);
            }
        }
        Err(StoreError::Inconsistent("no free booking id after several fresh ones"))
    }

    /// One booking of this user.
    pub async fn get_booking(&self, user_id: &str, booking_id: i64) -> Result<Option<BookingRow>> {
        const SQL: &str = concat!(booking_select!(), "WHERE id = $1 AND user_id = $2");
        let row = dispatch!(self, |pool| {
            sqlx::query_as::<_, BookingRow>(SQL).bind(booking_id).bind(user_id).fetch_optional(pool).await?
        });
        Ok(row)
    }

    /// A page of this user's bookings (oldest trip first), and the total count.
    pub async fn list_bookings(
        &self,
        user_id: &str,
        filter: &BookingFilter,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<BookingRow>, i64)> {
        const SQL: &str = concat!(
            booking_select!(),
            "WHERE user_id = $1 AND ($2 IS NULL OR order_id = $2) AND ($3 IS NULL OR kind = $3) \
             AND ($4 IS NULL OR status = $4) ORDER BY start_date, id LIMIT $5 OFFSET $6"
        );
        const COUNT: &str = "SELECT COUNT(*) FROM travel_bookings WHERE user_id = $1 AND ($2 IS NULL OR order_id = $2) \
             AND ($3 IS NULL OR kind = $3) AND ($4 IS NULL OR status = $4)";
        let out = dispatch!(self, |pool| {
            let rows = sqlx::query_as::<_, BookingRow>(SQL)
                .bind(user_id)
                .bind(filter.order_id)
                .bind(filter.kind)
                .bind(filter.status)
                .bind(limit)
                .bind(offset)
                .fetch_all(pool)
                .await?;
            let total: i64 = sqlx::query_scalar(COUNT)
                .bind(user_id)
                .bind(filter.order_id)
                .bind(filter.kind)
                .bind(filter.status)
                .fetch_one(pool)
                .await?;
            (rows, total)
        });
        Ok(out)
    }

    /// This user's bookings of an order that still hold a seat or room.
    pub async fn active_bookings_of_order(&self, user_id: &str, order_id: i64) -> Result<Vec<BookingRow>> {
        const SQL: &str = concat!(
            booking_select!(),
            "WHERE user_id = $1 AND order_id = $2 AND status IN ('RESERVED', 'TICKETED') ORDER BY start_date, id"
        );
        let rows = dispatch!(self, |pool| {
            sqlx::query_as::<_, BookingRow>(SQL).bind(user_id).bind(order_id).fetch_all(pool).await?
        });
        Ok(rows)
    }

    /// Cancel this user's booking. RESERVED cancels directly; TICKETED needs
    /// `force` (a fee may apply); CANCELLED is reported as already done; USED
    /// is a conflict. Compare-and-set on the status that was read.
    pub async fn cancel_booking(
        &self,
        user_id: &str,
        booking_id: i64,
        force: bool,
    ) -> Result<CancelOutcome<BookingRow>> {
        const CANCEL: &str = "UPDATE travel_bookings SET status = 'CANCELLED', updated_at = $1 \
             WHERE id = $2 AND user_id = $3 AND status = $4";
        for _ in 0..3 {
            let Some(booking) = self.get_booking(user_id, booking_id).await? else {
                return Ok(CancelOutcome::NotFound);
            };
            match booking.status {
                BookingStatus::Cancelled => return Ok(CancelOutcome::AlreadyCancelled(booking)),
                BookingStatus::Ticketed if !force => return Ok(CancelOutcome::NeedConfirm(booking)),
                BookingStatus::Reserved | BookingStatus::Ticketed => {}
                BookingStatus::Used => return Ok(CancelOutcome::Conflict(booking)),
            }
            let now = Utc::now();
            let n = dispatch!(self, |pool| {
                sqlx::query(CANCEL)
                    .bind(now)
                    .bind(booking_id)
                    .bind(user_id)
                    .bind(booking.status)
                    .execute(pool)
                    .await?
                    .rows_affected()
            });
            if n == 1 {
                return Ok(CancelOutcome::Cancelled(booking));
            }
        }
        Err(StoreError::Inconsistent("the booking kept changing while it was being cancelled"))
    }
}
