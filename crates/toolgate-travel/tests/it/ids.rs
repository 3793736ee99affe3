//! Issue 9: order and booking ids are opaque, not global counters that tell
//! a traveller how many orders and bookings everyone made; and a colliding
//! id is retried with a fresh one, apart from the idempotency conflict.

use crate::common::{Tools, backends, json, pg_url, trip, user};
use toolgate_travel::TravelConfig;
use toolgate_travel::model::{BookingKind, BookingStatus};
use toolgate_travel::store::NewBooking;

fn booking(user: &str, order_id: i64) -> NewBooking {
    let d = chrono::Utc::now().date_naive() + chrono::Duration::days(30);
    NewBooking {
        user_id: user.into(),
        order_id: Some(order_id),
        kind: BookingKind::Hotel,
        status: BookingStatus::Reserved,
        provider: "Hilton".into(),
        reference: "H1".into(),
        description: "hotel".into(),
        start_date: d,
        end_date: d,
        price: 900,
        currency: "CNY".into(),
    }
}

/// Ids made one after the other: JSON-safe, increasing (newest-first lists
/// still order by id), never one apart, and far above any row count.
fn assert_opaque(what: &str, ids: &[i64]) {
    for &id in ids {
        assert!((1 << 40..1 << 53).contains(&id), "{what}: {id} is a count or not JSON-safe: {ids:?}");
    }
    for w in ids.windows(2) {
        assert!(w[1] - w[0] > 1, "{what}: consecutive or out of order: {ids:?}");
    }
}

#[tokio::test]
async fn order_and_booking_ids_carry_no_count() {
    for b in backends() {
        let (store, tools) = b.open().await;
        let u = user("ids");
        let mut orders = Vec::new();
        for i in 0..3 {
            let out =
                tools.ok(&u, "submit_travel_approval", trip("Xiamen", 20 + i * 3, 21 + i * 3, "ids")).await;
            orders.push(json(&out)["order_id"].as_i64().unwrap());
        }
        assert_opaque(&format!("{b:?} orders"), &orders);
        let mut bookings = Vec::new();
        for _ in 0..3 {
            bookings.push(store.insert_booking(&booking(&u, orders[0])).await.unwrap());
        }
        assert_opaque(&format!("{b:?} bookings"), &bookings);
        // The tools answer them as the same JSON integers, exactly.
        let shown = tools.ok(&u, "query_booking_record", serde_json::json!({"order_id": orders[0]})).await;
        let mut listed: Vec<i64> = json(&shown)["bookings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["booking_id"].as_i64().unwrap())
            .collect();
        listed.sort_unstable();
        assert_eq!(listed, bookings, "{b:?}");
    }
}

/// PostgreSQL: a trigger makes the first insert of this user's order and of
/// its booking collide on the primary key (a sequence survives the rollback,
/// so only the first attempt is trapped). The write succeeds with a fresh
/// id, once, and the squatter's row is rolled back with the failed attempt.
#[tokio::test]
async fn a_colliding_id_is_retried_with_a_fresh_one() {
    let Some(url) = pg_url() else { return };
    let b = backends().into_iter().find(|b| b.is_pg()).expect("the PostgreSQL backend");
    assert_eq!(b.url, url);
    let store = b.store().await;
    let raw = b.raw().await;
    let u = user("idtrap");
    let tag = u.replace(|c: char| !c.is_ascii_alphanumeric(), "_").to_lowercase();
    for table in ["travel_orders", "travel_bookings"] {
        let squat = match table {
            "travel_orders" => {
                "INSERT INTO travel_orders (id, user_id, fingerprint, destination, departure_city, departure_date, \
                 return_date, purpose, status, created_at, updated_at) VALUES (NEW.id, NEW.user_id || '-squatter', \
                 'squat', 'X', 'Y', NEW.departure_date, NEW.return_date, 'squat', 'CANCELLED', NEW.created_at, NEW.created_at)"
            }
            _ => {
                "INSERT INTO travel_bookings (id, user_id, order_id, kind, status, provider, reference, description, \
                 start_date, end_date, price, currency, created_at, updated_at) VALUES (NEW.id, NEW.user_id || '-squatter', \
                 NULL, 'hotel', 'CANCELLED', 'x', 'x', 'x', NEW.start_date, NEW.end_date, 1, 'CNY', NEW.created_at, NEW.created_at)"
            }
        };
        raw.exec(&format!(
            "CREATE SEQUENCE trap_{tag}_{table};
             CREATE FUNCTION trap_{tag}_{table}() RETURNS trigger LANGUAGE plpgsql AS $f$
             BEGIN
               IF NEW.user_id = '{u}' AND nextval('trap_{tag}_{table}') = 1 THEN {squat}; END IF;
               RETURN NEW;
             END $f$;
             CREATE TRIGGER trap_{tag}_{table} BEFORE INSERT ON {table}
               FOR EACH ROW EXECUTE FUNCTION trap_{tag}_{table}();"
        ))
        .await;
    }
    let tools = Tools::new(store.clone(), TravelConfig::default());
    let out = tools.call(&u, "submit_travel_approval", trip("Xiamen", 40, 41, "trap")).await;
    let booked = match &out {
        Ok(o) => Some(store.insert_booking(&booking(&u, json(o)["order_id"].as_i64().unwrap())).await),
        Err(_) => None,
    };
    let fired: Vec<i64> = {
        let mut v = Vec::new();
        for table in ["travel_orders", "travel_bookings"] {
            let sql = format!("SELECT last_value FROM trap_{tag}_{table}");
            v.push(match &raw {
                crate::common::Raw::Postgres(p) => {
                    sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(p).await.unwrap()
                }
                crate::common::Raw::Sqlite(_) => unreachable!("PostgreSQL only"),
            });
        }
        v
    };
    for table in ["travel_orders", "travel_bookings"] {
        raw.exec(&format!(
            "DROP TRIGGER trap_{tag}_{table} ON {table}; DROP FUNCTION trap_{tag}_{table}(); \
             DROP SEQUENCE trap_{tag}_{table};"
        ))
        .await;
    }
    let out = out.unwrap_or_else(|e| panic!("the submit did not retry the colliding id: {e:?}"));
    let booking_id =
        booked.unwrap().unwrap_or_else(|e| panic!("the booking did not retry the colliding id: {e}"));
    assert_eq!(fired, [2, 2], "each trap fired on a first attempt and let a second one through");
    let r = json(&out);
    assert_eq!(r["status"], "SUBMITTED");
    assert_eq!(r["verified"], true);
    assert_eq!(raw.count("travel_orders", &u).await, 1);
    assert_eq!(raw.count("travel_bookings", &u).await, 1);
    let squatter = format!("{u}-squatter");
    assert_eq!(raw.count("travel_orders", &squatter).await, 0, "rolled back with the failed attempt");
    assert_eq!(raw.count("travel_bookings", &squatter).await, 0);
    assert_opaque("retried", &[r["order_id"].as_i64().unwrap()]);
    assert_opaque("retried", &[booking_id]);
}
