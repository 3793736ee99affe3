//! Policy data and demo data: city tiers and policies for every level
//! ([`seed_policies`], idempotent upserts) and a few users with orders in
//! every status and their bookings ([`seed_demo`], applied once per database).

use chrono::{Duration, NaiveDate, Utc};

use crate::error::Result;
use crate::model::{ApprovalStatus, BookingKind, BookingStatus, OrderStatus};
use crate::store::bookings::NewBooking;
use crate::store::{BeginWrite, PolicyRow, Store, dispatch};

/// The demo users and their traveller levels.
pub const DEMO_USERS: [(&str, &str); 3] = [("alice", "staff"), ("bob", "manager"), ("carol", "executive")];

const CITIES: [(&str, i64); 14] = [
    ("Beijing", 1),
    ("Shanghai", 1),
    ("Guangzhou", 1),
    ("Shenzhen", 1),
    ("New York", 1),
    ("London", 1),
    ("Tokyo", 1),
    ("Hangzhou", 2),
    ("Chengdu", 2),
    ("Nanjing", 2),
    ("Wuhan", 2),
    ("Xi'an", 2),
    ("Singapore", 2),
    ("Guilin", 3),
];

/// (level, [cap for tier 1, 2, 3], flight classes, train classes)
const POLICIES: [(&str, [i64; 3], &str, &str); 3] = [
    ("staff", [600, 450, 350], "economy", "second"),
    ("manager", [900, 700, 500], "economy,premium_economy", "second,first"),
    ("executive", [1500, 1100, 800], "economy,premium_economy,business", "second,first,business"),
];

/// Load the city tiers and the policy of every tier and level. Idempotent.
pub async fn seed_policies(store: &Store) -> Result<()> {
    for (city, tier) in CITIES {
        store.upsert_city_tier(city, tier).await?;
    }
    for (level, caps, flight, train) in POLICIES {
        for (i, cap) in caps.into_iter().enumerate() {
            store
                .upsert_policy(&PolicyRow {
                    tier: i as i64 + 1,
                    level: level.into(),
                    hotel_cap_per_night: cap,
                    currency: "CNY".into(),
                    flight_classes: flight.into(),
                    train_classes: train.into(),
                })
                .await?;
        }
    }
    Ok(())
}

struct DemoOrder {
    user: &'static str,
    status: OrderStatus,
    approval: Option<ApprovalStatus>,
    from: &'static str,
    to: &'static str,
    start_in_days: i64,
    days: i64,
    purpose: &'static str,
}

const ORDERS: [DemoOrder; 9] = [
    DemoOrder {
        user: "alice",
        status: OrderStatus::Draft,
        approval: None,
        from: "Beijing",
        to: "Hangzhou",
        start_in_days: 40,
        days: 2,
        purpose: "Draft: partner visit",
    },
    DemoOrder {
        user: "alice",
        status: OrderStatus::Submitted,
        approval: Some(ApprovalStatus::Pending),
        from: "Beijing",
        to: "Shanghai",
        start_in_days: 14,
        days: 3,
        purpose: "Customer workshop at ACME",
    },
    DemoOrder {
        user: "alice",
        status: OrderStatus::Approved,
        approval: Some(ApprovalStatus::Approved),
        from: "Beijing",
        to: "Shenzhen",
        start_in_days: 21,
        days: 4,
        purpose: "Supplier audit",
    },
    DemoOrder {
        user: "alice",
        status: OrderStatus::Rejected,
        approval: Some(ApprovalStatus::Rejected),
        from: "Beijing",
        to: "Tokyo",
        start_in_days: 30,
        days: 5,
        purpose: "Conference (not budgeted)",
    },
    DemoOrder {
        user: "alice",
        status: OrderStatus::Completed,
        approval: Some(ApprovalStatus::Approved),
        from: "Beijing",
        to: "Chengdu",
        start_in_days: -20,
        days: 3,
        purpose: "Quarterly review",
    },
    DemoOrder {
        user: "alice",
        status: OrderStatus::Cancelled,
        approval: Some(ApprovalStatus::Withdrawn),
        from: "Beijing",
        to: "Nanjing",
        start_in_days: 10,
        days: 2,
        purpose: "Training (moved online)",
    },
    DemoOrder {
        user: "bob",
        status: OrderStatus::Submitted,
        approval: Some(ApprovalStatus::Pending),
        from: "Shanghai",
        to: "London",
        start_in_days: 45,
        days: 6,
        purpose: "Sales kickoff",
    },
    DemoOrder {
        user: "bob",
        status: OrderStatus::Approved,
        approval: Some(ApprovalStatus::Approved),
        from: "Shanghai",
        to: "Beijing",
        start_in_days: 7,
        days: 2,
        purpose: "Board meeting",
    },
    DemoOrder {
        user: "carol",
        status: OrderStatus::Approved,
        approval: Some(ApprovalStatus::Approved),
        from: "Shenzhen",
        to: "New York",
        start_in_days: 28,
        days: 5,
        purpose: "Investor roadshow",
    },
];

/// (order index, kind, status, provider, reference, description, price)
const BOOKINGS: [(usize, BookingKind, BookingStatus, &str, &str, &str, i64); 7] = [
    (
        1,
        BookingKind::Train,
        BookingStatus::Reserved,
        "China Railway",
        "E12345678",
        "G1 Beijing South - Shanghai Hongqiao 09:00",
        553,
    ),
    (
        2,
        BookingKind::Flight,
        BookingStatus::Ticketed,
        "Air China",
        "PNR7KQ2ZD",
        "CA1301 PEK-SZX 08:30 economy",
        1480,
    ),
    (
        2,
        BookingKind::Hotel,
        BookingStatus::Reserved,
        "Futian Business Hotel",
        "HB-55120",
        "4 nights, standard room",
        1720,
    ),
    (
        4,
        BookingKind::Flight,
        BookingStatus::Used,
        "Sichuan Airlines",
        "PNR3LM8XA",
        "3U8888 PEK-CTU 07:45 economy",
        1210,
    ),
    (
        7,
        BookingKind::Flight,
        BookingStatus::Ticketed,
        "China Eastern",
        "PNR9PQ4RT",
        "MU5101 SHA-PEK 08:00 premium_economy",
        1650,
    ),
    (
        7,
        BookingKind::Hotel,
        BookingStatus::Reserved,
        "Wangfujing Grand",
        "HB-77310",
        "2 nights, deluxe room",
        1560,
    ),
    (
        8,
        BookingKind::Flight,
        BookingStatus::Ticketed,
        "Air China",
        "PNR2NY5CX",
        "CA981 PEK-JFK 13:00 business",
        18800,
    ),
];

/// Load [`seed_policies`], the demo users' levels, and, once per database,
/// demo orders in every status with their approvals and bookings (dates
/// relative to today). Returns whether the orders were created by this call.
pub async fn seed_demo(store: &Store) -> Result<bool> {
    seed_policies(store).await?;
    for (user, level) in DEMO_USERS {
        store.set_user_level(user, level).await?;
    }
    const CLAIM: &str = "INSERT INTO travel_seed_marks (name, applied_at) VALUES ($1, $2) \
         ON CONFLICT (name) DO NOTHING RETURNING name";
    const ORDER: &str = "INSERT INTO travel_orders (user_id, fingerprint, destination, departure_city, departure_date, \
         return_date, purpose, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id";
    const APPROVAL: &str = "INSERT INTO travel_approvals (order_id, user_id, process_instance_id, status, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $5) RETURNING id";
    const LINK: &str = "UPDATE travel_orders SET approval_id = $1, process_instance_id = $2 WHERE id = $3";
    let now = Utc::now();
    let today = now.date_naive();
    let dates = |o: &DemoOrder| -> (NaiveDate, NaiveDate) {
        let from = today + Duration::days(o.start_in_days);
        (from, from + Duration::days(o.days))
    };
    let order_ids: Option<Vec<i64>> = dispatch!(store, |pool| {
        let mut tx = pool.begin_write().await?;
        let claimed: Option<String> =
            sqlx::query_scalar(CLAIM).bind("travel-demo-v1").bind(now).fetch_optional(&mut *tx).await?;
        if claimed.is_none() {
            tx.rollback().await?;
            None
        } else {
            let mut ids = Vec::new();
            for (i, o) in ORDERS.iter().enumerate() {
                let (from, to) = dates(o);
                let fp = crate::write::submit::fingerprint(
                    o.to,
                    o.from,
                    &from.to_string(),
                    &to.to_string(),
                    o.purpose,
                );
                let id: i64 = sqlx::query_scalar(ORDER)
                    .bind(o.user)
                    .bind(&fp)
                    .bind(o.to)
                    .bind(o.from)
                    .bind(from)
                    .bind(to)
                    .bind(o.purpose)
                    .bind(o.status)
                    .bind(now)
                    .fetch_one(&mut *tx)
                    .await?;
                if let Some(approval) = o.approval {
                    let pi = format!("PI-demo-{}-{i}", o.user);
                    let approval_id: i64 = sqlx::query_scalar(APPROVAL)
                        .bind(id)
                        .bind(o.user)
                        .bind(&pi)
                        .bind(approval)
                        .bind(now)
                        .fetch_one(&mut *tx)
                        .await?;
                    sqlx::query(LINK).bind(approval_id).bind(&pi).bind(id).execute(&mut *tx).await?;
                }
                ids.push(id);
            }
            tx.commit().await?;
            Some(ids)
        }
    });
    let Some(order_ids) = order_ids else { return Ok(false) };
    for (index, kind, status, provider, reference, description, price) in BOOKINGS {
        let o = &ORDERS[index];
        let (from, to) = dates(o);
        store
            .insert_booking(&NewBooking {
                user_id: o.user.into(),
                order_id: Some(order_ids[index]),
                kind,
                status,
                provider: provider.into(),
                reference: reference.into(),
                description: description.into(),
                start_date: from,
                end_date: if kind == BookingKind::Hotel { to } else { from },
                price,
                currency: "CNY".into(),
            })
            .await?;
    }
    Ok(true)
}
