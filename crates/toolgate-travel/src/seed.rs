//! Policy data and demo data: city tiers and policies for every level
//! ([`seed_policies`], idempotent upserts) and a few users with orders in
//! every status and their bookings ([`seed_demo`], applied once per database).
//! The data itself is `seed.toml`; this file writes it.

use chrono::{Duration, NaiveDate, Utc};
use serde::Deserialize;

use crate::error::{Result, StoreError};
use crate::model::{ApprovalStatus, BookingKind, BookingStatus, OrderStatus};
use crate::store::bookings::NewBooking;
use crate::store::{BeginWrite, PolicyRow, Store, dispatch, ids};

/// The demo users and their traveller levels.
pub const DEMO_USERS: [(&str, &str); 3] = [("alice", "staff"), ("bob", "manager"), ("carol", "executive")];

/// The seed data: city tiers, policies and demo orders, kept as data in
/// `seed.toml` beside this file so that changing a price or adding an order
/// is an edit of a table, not of code.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedData {
    tiers: Vec<Tier>,
    policies: Vec<Policy>,
    orders: Vec<DemoOrder>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tier {
    tier: i64,
    cities: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Policy {
    level: String,
    /// The cap per night in tier 1, 2 and 3.
    hotel_caps: [i64; 3],
    flight_classes: String,
    train_classes: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DemoOrder {
    user: String,
    status: OrderStatus,
    approval: Option<ApprovalStatus>,
    from: String,
    to: String,
    start_in_days: i64,
    days: i64,
    purpose: String,
    #[serde(default)]
    bookings: Vec<DemoBooking>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DemoBooking {
    kind: BookingKind,
    status: BookingStatus,
    provider: String,
    reference: String,
    description: String,
    price: i64,
}

/// `seed.toml`, read when seeding (once per start).
fn seed_data() -> Result<SeedData> {
    toml::from_str(include_str!("seed.toml"))
        .map_err(|_| StoreError::Inconsistent("the seed data built into this binary does not parse"))
}

/// Load the city tiers and the policy of every tier and level. Idempotent.
pub async fn seed_policies(store: &Store) -> Result<()> {
    let data = seed_data()?;
    for tier in &data.tiers {
        for city in &tier.cities {
            store.upsert_city_tier(city, tier.tier).await?;
        }
    }
    for policy in &data.policies {
        for (tier, cap) in (1..).zip(policy.hotel_caps) {
            store
                .upsert_policy(&PolicyRow {
                    tier,
                    level: policy.level.clone(),
                    hotel_cap_per_night: cap,
                    currency: "CNY".into(),
                    flight_classes: policy.flight_classes.clone(),
                    train_classes: policy.train_classes.clone(),
                })
                .await?;
        }
    }
    Ok(())
}

/// Load [`seed_policies`], the demo users' levels, and, once per database,
/// demo orders in every status with their approvals and bookings (dates
/// relative to today). Returns whether the orders were created by this call.
pub async fn seed_demo(store: &Store) -> Result<bool> {
    seed_policies(store).await?;
    let orders = seed_data()?.orders;
    for (user, level) in DEMO_USERS {
        store.set_user_level(user, level).await?;
    }
    const CLAIM: &str = "INSERT INTO travel_seed_marks (name, applied_at) VALUES ($1, $2) \
         ON CONFLICT (name) DO NOTHING RETURNING name";
    const ORDER: &str = "INSERT INTO travel_orders (id, user_id, fingerprint, destination, departure_city, departure_date, \
         return_date, purpose, status, created_at, updated_at) VALUES ($10, $1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id";
    const APPROVAL: &str = "INSERT INTO travel_approvals (id, order_id, user_id, process_instance_id, status, created_at, updated_at) \
         VALUES ($6, $1, $2, $3, $4, $5, $5) RETURNING id";
    const LINK: &str = "UPDATE travel_orders SET approval_id = $1, process_instance_id = $2 WHERE id = $3";
    let now = Utc::now();
    let today = now.date_naive();
    let dates = |o: &DemoOrder| -> (NaiveDate, NaiveDate) {
        let from = today + Duration::days(o.start_in_days);
        (from, from + Duration::days(o.days))
    };
    /// What one seeding transaction did.
    enum Seeded {
        /// Another process (or an earlier start) seeded this database.
        AlreadyDone,
        /// A fresh id hit an existing one; everything was rolled back.
        IdCollision,
        /// The orders were written; their ids, in `seed.toml`'s order.
        Orders(Vec<i64>),
    }
    let mut order_ids = None;
    for _ in 0..ids::ATTEMPTS {
        let seeded = dispatch!(store, |pool| {
            let mut tx = pool.begin_write().await?;
            let claimed: Option<String> =
                sqlx::query_scalar(CLAIM).bind("travel-demo-v1").bind(now).fetch_optional(&mut *tx).await?;
            if claimed.is_none() {
                tx.rollback().await?;
                Seeded::AlreadyDone
            } else {
                // The inserts as one fallible step, so that an id collision
                // (opaque ids, see `store::ids`) rolls back and tries fresh ids.
                let written: sqlx::Result<Vec<i64>> = async {
                    let mut order_ids = Vec::new();
                    for (i, o) in orders.iter().enumerate() {
                        let (from, to) = dates(o);
                        let fp = crate::write::submit::fingerprint(
                            &o.to,
                            &o.from,
                            &from.to_string(),
                            &to.to_string(),
                            &o.purpose,
                        );
                        let id: i64 = sqlx::query_scalar(ORDER)
                            .bind(&o.user)
                            .bind(&fp)
                            .bind(&o.to)
                            .bind(&o.from)
                            .bind(from)
                            .bind(to)
                            .bind(&o.purpose)
                            .bind(o.status)
                            .bind(now)
                            .bind(ids::time_ordered())
                            .fetch_one(&mut *tx)
                            .await?;
                        if let Some(approval) = o.approval {
                            let pi = format!("PI-demo-{}-{i}", o.user);
                            let approval_id: i64 = sqlx::query_scalar(APPROVAL)
                                .bind(id)
                                .bind(&o.user)
                                .bind(&pi)
                                .bind(approval)
                                .bind(now)
                                .bind(ids::time_ordered())
                                .fetch_one(&mut *tx)
                                .await?;
                            sqlx::query(LINK).bind(approval_id).bind(&pi).bind(id).execute(&mut *tx).await?;
                        }
                        order_ids.push(id);
                    }
                    Ok(order_ids)
                }
                .await;
                match written {
                    Ok(written) => {
                        tx.commit().await?;
                        Seeded::Orders(written)
                    }
                    Err(e) if ids::is_id_collision(&e) => {
                        tx.rollback().await?;
                        Seeded::IdCollision
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        });
        match seeded {
            Seeded::AlreadyDone => return Ok(false),
            Seeded::IdCollision => continue,
            Seeded::Orders(written) => {
                order_ids = Some(written);
                break;
            }
        }
    }
    let Some(order_ids) = order_ids else {
        return Err(crate::error::StoreError::Inconsistent(
            "no free demo order ids after several fresh ones",
        ));
    };
    for (o, order_id) in orders.iter().zip(order_ids) {
        let (from, to) = dates(o);
        for b in &o.bookings {
            store
                .insert_booking(&NewBooking {
                    user_id: o.user.clone(),
                    order_id: Some(order_id),
                    kind: b.kind,
                    status: b.status,
                    provider: b.provider.clone(),
                    reference: b.reference.clone(),
                    description: b.description.clone(),
                    start_date: from,
                    end_date: if b.kind == BookingKind::Hotel { to } else { from },
                    price: b.price,
                    currency: "CNY".into(),
                })
                .await?;
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_data_parses_and_covers_every_status() {
        let data = seed_data().unwrap();
        assert!(data.tiers.iter().any(|t| t.cities.iter().any(|c| c == "Xi'an")));
        assert_eq!(data.policies.iter().map(|p| p.level.as_str()).collect::<Vec<_>>(), crate::model::LEVELS);
        for status in OrderStatus::ALL {
            assert!(data.orders.iter().any(|o| o.status == *status), "no demo order is {status}");
        }
        for status in BookingStatus::ALL.iter().filter(|s| s.is_active() || **s == BookingStatus::Used) {
            assert!(data.orders.iter().flat_map(|o| &o.bookings).any(|b| b.status == *status), "{status}");
        }
        for o in &data.orders {
            assert!(DEMO_USERS.iter().any(|(u, _)| *u == o.user), "{} is not a demo user", o.user);
        }
    }
}
