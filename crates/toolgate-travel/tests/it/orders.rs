//! Orders and bookings through the tools, on SQLite and (when configured)
//! PostgreSQL: submit, idempotency, verification, isolation between users,
//! bad input, verbatim text, listing, conflicts and cancellation.

use crate::common::{Tools, backends, day, json, pointers, trip, user};
use serde_json::json;
use toolgate_core::ErrorCode;
use toolgate_travel::TravelConfig;
use toolgate_travel::model::{BookingKind, BookingStatus};
use toolgate_travel::store::NewBooking;

#[tokio::test]
async fn submit_creates_a_submitted_order_with_a_pending_approval() {
    for b in backends() {
        let (_, tools) = b.open().await;
        let alice = user("alice");
        let out = tools.ok(&alice, "submit_travel_approval", trip("Shanghai", 10, 13, "Workshop")).await;
        let r = json(&out);
        assert!(out.signals.is_empty(), "{b:?}: {:?}", out.signals);
        assert_eq!(r["status"], "SUBMITTED", "{b:?}");
        assert_eq!(r["duplicate"], false);
        assert_eq!(r["verified"], true);
        let order_id = r["order_id"].as_i64().unwrap();
        let pi = r["process_instance_id"].as_str().unwrap();
        assert!(pi.starts_with("PI-"), "{pi}");
        assert_eq!(r["order"]["approval_status"], "PENDING");
        assert_eq!(r["order"]["departure_date"], day(10));

        let shown = tools.ok(&alice, "query_travel_order", json!({"order_id": order_id})).await;
        let o = &json(&shown)["order"];
        assert_eq!(o["order_id"], order_id);
        assert_eq!(o["process_instance_id"], pi);
        assert_eq!(o["destination"], "Shanghai");
        assert_eq!(json(&shown)["bookings"], json!([]));
    }
}

#[tokio::test]
async fn identical_submits_return_the_existing_order_and_cancel_frees_the_fingerprint() {
    for b in backends() {
        let tools = Tools::new(b.store().await, TravelConfig::default());
        let u = user("dup");
        let first = tools.ok(&u, "submit_travel_approval", trip("Chengdu", 5, 6, "Audit")).await;
        let id = json(&first)["order_id"].as_i64().unwrap();
        // Same trip, cities spelled differently: still the same order.
        let mut again = trip("  chengdu ", 5, 6, "Audit");
        again["departure_city"] = json!("BEIJING");
        let second = tools.ok(&u, "submit_travel_approval", again).await;
        assert_eq!(json(&second)["order_id"], id, "{b:?}");
        assert_eq!(json(&second)["duplicate"], true);
        assert!(second.signals.iter().any(|s| s.kind() == "duplicate"), "{b:?}");
        // Another user with the same trip gets their own order.
        let other = tools.ok(&user("other"), "submit_travel_approval", trip("Chengdu", 5, 6, "Audit")).await;
        assert_ne!(json(&other)["order_id"], id);
        // Cancelling frees the fingerprint.
        tools.ok(&u, "cancel_travel_order", json!({"order_id": id})).await;
        let third = tools.ok(&u, "submit_travel_approval", trip("Chengdu", 5, 6, "Audit")).await;
        assert_ne!(json(&third)["order_id"], id, "{b:?}");
        assert_eq!(json(&third)["duplicate"], false);
        let all = tools.ok(&u, "query_travel_order", json!({})).await;
        assert_eq!(json(&all)["page"]["total"], 2);
    }
}

#[tokio::test]
async fn bad_input_lists_every_problem_at_once() {
    for b in backends() {
        let (store, tools) = b.open().await;
        let u = user("bad");
        let err = tools
            .err(
                &u,
                "submit_travel_approval",
                json!({
                    "destination": "",
                    "departure_city": "   ",
                    "departure_date": "2026-02-30",
                    "return_date": "2026/07/15",
                    "user_id": "someone-else",
                    "extra": 1
                }),
            )
            .await;
        let mut got = pointers(&err);
        got.sort();
        assert_eq!(
            got,
            [
                "/departure_city",
                "/departure_date",
                "/destination",
                "/extra",
                "/purpose",
                "/return_date",
                "/user_id"
            ],
            "{b:?}: {err:?}"
        );
        assert!(err.message.contains("2026-02-30") || err.message.contains("calendar"), "{}", err.message);
        assert!(err.message.contains("YYYY-MM-DD"), "{}", err.message);
        assert!(err.message.contains("session"), "user_id is explained: {}", err.message);

        // Departure after return, and in the past, in one answer.
        let err = tools
            .err(
                &u,
                "submit_travel_approval",
                json!({"destination": "Xi'an", "departure_city": "Beijing", "departure_date": day(9),
                       "return_date": day(3), "purpose": "x"}),
            )
            .await;
        assert_eq!(pointers(&err), ["/return_date"]);
        let err = tools.err(&u, "submit_travel_approval", trip("Xi'an", -3, -5, "late")).await;
        assert_eq!(pointers(&err), ["/departure_date", "/return_date"], "{err:?}");
        // Not an object at all.
        let err = tools.err(&u, "submit_travel_approval", json!(["Shanghai"])).await;
        assert_eq!(err.code, ErrorCode::InvalidParams);
        // Nothing was written by any of this.
        let (rows, total) = store.list_orders(&u, None, 10, 0).await.unwrap();
        assert_eq!((rows.len(), total), (0, 0), "{b:?}");
        // Reads validate too.
        let err = tools
            .err(
                &u,
                "query_travel_order",
                json!({"order_id": 0, "status": "LOST", "page_size": 500, "page": "x"}),
            )
            .await;
        let mut got = pointers(&err);
        got.sort();
        assert_eq!(got, ["/order_id", "/page", "/page_size", "/status"]);
        let err = tools
            .err(
                &u,
                "check_travel_order_conflicts",
                json!({"departure_date": "2027-13-01", "return_date": ""}),
            )
            .await;
        assert_eq!(pointers(&err), ["/departure_date", "/return_date"]);
    }
}

#[tokio::test]
async fn sql_metacharacters_and_any_utf8_are_stored_verbatim() {
    let nasty = [
        ("Robert'); DROP TABLE travel_orders;--", "1' OR '1'='1 \" ; -- /* */ \\ %_ $1 ?"),
        ("北京 → Zürich 🚄", "Ünïcödé: 会议 🧳 \u{200b}zero-width, tab\tand\nnewline"),
        ("  spaced  ", "emoji 👩‍💻 and RTL \u{202e}txet"),
    ];
    for b in backends() {
        let store = b.store().await;
        let tools = Tools::new(store, TravelConfig::default());
        let u = user("utf8");
        for (i, (dest, purpose)) in nasty.iter().enumerate() {
            let params = trip(dest, 20 + i as i64, 22 + i as i64, purpose);
            let out = tools.ok(&u, "submit_travel_approval", params).await;
            let id = json(&out)["order_id"].as_i64().unwrap();
            assert_eq!(json(&out)["order"]["destination"], *dest, "{b:?}");
            let shown = tools.ok(&u, "query_travel_order", json!({"order_id": id})).await;
            assert_eq!(json(&shown)["order"]["destination"], *dest, "{b:?}");
            assert_eq!(json(&shown)["order"]["purpose"], *purpose, "{b:?}");
        }
        // The table is still there and holds exactly these orders.
        let all = tools.ok(&u, "query_travel_order", json!({})).await;
        assert_eq!(json(&all)["page"]["total"], nasty.len(), "{b:?}");
        // NUL cannot be stored by PostgreSQL: refused up front on both.
        let err = tools.err(&u, "submit_travel_approval", trip("Nul\u{0}City", 30, 31, "x")).await;
        assert_eq!(pointers(&err), ["/destination"]);
    }
}

#[tokio::test]
async fn users_never_see_or_touch_each_others_records() {
    for b in backends() {
        let (store, tools) = b.open().await;
        let (a, bob) = (user("a"), user("b"));
        let out = tools.ok(&bob, "submit_travel_approval", trip("Wuhan", 8, 9, "Bob's trip")).await;
        let bobs = json(&out)["order_id"].as_i64().unwrap();
        let booking = store
            .insert_booking(&NewBooking {
                user_id: bob.clone(),
                order_id: Some(bobs),
                kind: BookingKind::Train,
                status: BookingStatus::Reserved,
                provider: "China Railway".into(),
                reference: "E1".into(),
                description: "G1".into(),
                start_date: chrono::Utc::now().date_naive() + chrono::Duration::days(8),
                end_date: chrono::Utc::now().date_naive() + chrono::Duration::days(8),
                price: 500,
                currency: "CNY".into(),
            })
            .await
            .unwrap();

        for (tool, params) in [
            ("query_travel_order", json!({"order_id": bobs})),
            ("cancel_travel_order", json!({"order_id": bobs, "force": true})),
            ("query_booking_record", json!({"order_id": bobs})),
            ("cancel_booking", json!({"booking_id": booking, "force": true})),
        ] {
            let err = tools.err(&a, tool, params).await;
            assert_eq!(err.code, ErrorCode::NotFound, "{b:?} {tool}: {err:?}");
            assert!(!err.message.contains("Bob's trip"), "{}", err.message);
        }
        let listed = tools.ok(&a, "query_travel_order", json!({})).await;
        assert_eq!(json(&listed)["page"]["total"], 0);
        let listed = tools.ok(&a, "query_booking_record", json!({})).await;
        assert_eq!(json(&listed)["bookings"], json!([]));
        let conflicts = tools
            .ok(&a, "check_travel_order_conflicts", json!({"departure_date": day(8), "return_date": day(9)}))
            .await;
        assert_eq!(json(&conflicts)["has_conflicts"], false);
        // Bob's order and booking are untouched.
        let still = tools.ok(&bob, "query_travel_order", json!({"order_id": bobs})).await;
        assert_eq!(json(&still)["order"]["status"], "SUBMITTED", "{b:?}");
        let bookings = tools.ok(&bob, "query_booking_record", json!({"order_id": bobs})).await;
        assert_eq!(json(&bookings)["bookings"][0]["status"], "RESERVED");
    }
}

#[tokio::test]
async fn listing_filters_by_status_and_pages() {
    for b in backends() {
        let (store, tools) = b.open().await;
        let u = user("list");
        let mut ids = Vec::new();
        for i in 0..5 {
            let out =
                tools.ok(&u, "submit_travel_approval", trip("Nanjing", 10 + i * 3, 11 + i * 3, "x")).await;
            ids.push(json(&out)["order_id"].as_i64().unwrap());
        }
        assert!(store.decide_order(ids[0], true).await.unwrap());
        assert!(store.decide_order(ids[1], false).await.unwrap());
        assert!(!store.decide_order(ids[1], true).await.unwrap(), "a decided order is not decided again");

        let page = tools.ok(&u, "query_travel_order", json!({"status": "SUBMITTED", "page_size": 2})).await;
        let r = json(&page);
        assert_eq!(r["orders"].as_array().unwrap().len(), 2, "{b:?}");
        assert_eq!(r["page"], json!({"page": 1, "page_size": 2, "total": 3, "has_more": true}));
        assert_eq!(r["orders"][0]["order_id"], ids[4], "newest first");
        let last = tools
            .ok(&u, "query_travel_order", json!({"status": "SUBMITTED", "page": 2, "page_size": 2}))
            .await;
        assert_eq!(json(&last)["page"]["has_more"], false);
        assert_eq!(json(&last)["orders"][0]["order_id"], ids[2]);
        let approved = tools.ok(&u, "query_travel_order", json!({"status": "APPROVED"})).await;
        assert_eq!(json(&approved)["orders"][0]["approval_status"], "APPROVED");
        let rejected = tools.ok(&u, "query_travel_order", json!({"status": "REJECTED"})).await;
        assert_eq!(json(&rejected)["page"]["total"], 1);
        let err =
            tools.err(&u, "query_travel_order", json!({"order_id": ids[0], "status": "APPROVED"})).await;
        assert_eq!(pointers(&err), ["/status"]);
    }
}

#[tokio::test]
async fn conflicts_are_overlaps_with_active_orders() {
    for b in backends() {
        let (_, tools) = b.open().await;
        let u = user("conf");
        let a = tools.ok(&u, "submit_travel_approval", trip("Shanghai", 10, 14, "a")).await;
        let a = json(&a)["order_id"].as_i64().unwrap();
        let c = tools.ok(&u, "submit_travel_approval", trip("Hangzhou", 20, 22, "c")).await;
        let c = json(&c)["order_id"].as_i64().unwrap();
        tools.ok(&u, "cancel_travel_order", json!({"order_id": c})).await;

        let check = |from: i64, to: i64| json!({"departure_date": day(from), "return_date": day(to), "destination": "SHANGHAI"});
        let out = tools.ok(&u, "check_travel_order_conflicts", check(14, 16)).await;
        let r = json(&out);
        assert_eq!(r["has_conflicts"], true, "{b:?}: touching end days overlap");
        assert_eq!(r["conflicts"][0]["order_id"], a);
        assert_eq!(r["conflicts"][0]["same_destination"], true);
        let out = tools.ok(&u, "check_travel_order_conflicts", check(15, 16)).await;
        assert_eq!(json(&out)["has_conflicts"], false, "{b:?}");
        let out = tools.ok(&u, "check_travel_order_conflicts", check(19, 23)).await;
        assert_eq!(json(&out)["has_conflicts"], false, "{b:?}: cancelled orders do not conflict");
        let out = tools.ok(&u, "check_travel_order_conflicts", check(1, 30)).await;
        assert_eq!(json(&out)["conflicts"].as_array().unwrap().len(), 1);
        let err = tools.err(&u, "check_travel_order_conflicts", check(16, 15)).await;
        assert_eq!(pointers(&err), ["/return_date"]);
    }
}

fn booking(user: &str, order_id: i64, kind: BookingKind, status: BookingStatus) -> NewBooking {
    let d = chrono::Utc::now().date_naive() + chrono::Duration::days(12);
    NewBooking {
        user_id: user.into(),
        order_id: Some(order_id),
        kind,
        status,
        provider: "Air China".into(),
        reference: "PNR1".into(),
        description: format!("{kind} booking"),
        start_date: d,
        end_date: d,
        price: 1000,
        currency: "CNY".into(),
    }
}

#[tokio::test]
async fn cancelling_orders_confirms_approved_ones_and_names_impossible_states() {
    for b in backends() {
        let (store, tools) = b.open().await;
        let u = user("cancel");
        let submit = |d: i64| trip("Shenzhen", d, d + 1, "t");
        let approved =
            json(&tools.ok(&u, "submit_travel_approval", submit(12)).await)["order_id"].as_i64().unwrap();
        store.decide_order(approved, true).await.unwrap();
        let flight = store
            .insert_booking(&booking(&u, approved, BookingKind::Flight, BookingStatus::Ticketed))
            .await
            .unwrap();
        let hotel = store
            .insert_booking(&booking(&u, approved, BookingKind::Hotel, BookingStatus::Reserved))
            .await
            .unwrap();
        store
            .insert_booking(&booking(&u, approved, BookingKind::Train, BookingStatus::Cancelled))
            .await
            .unwrap();

        // APPROVED without force: need_confirm, nothing changes.
        let out = tools.ok(&u, "cancel_travel_order", json!({"order_id": approved})).await;
        assert_eq!(json(&out)["cancelled"], false, "{b:?}");
        assert_eq!(json(&out)["status"], "APPROVED");
        let confirm = out.signals.iter().find(|s| s.kind() == "need_confirm").expect("need_confirm");
        let confirm = serde_json::to_value(confirm).unwrap();
        assert_eq!(confirm["confirm_param"], "force");
        assert_eq!(confirm["confirm_value"], true);
        let shown = tools.ok(&u, "query_travel_order", json!({"order_id": approved})).await;
        assert_eq!(json(&shown)["order"]["status"], "APPROVED");

        // With force: cancelled, read back, bookings left behind reported.
        let out = tools.ok(&u, "cancel_travel_order", json!({"order_id": approved, "force": true})).await;
        let r = json(&out);
        assert_eq!((r["cancelled"].clone(), r["status"].clone()), (json!(true), json!("CANCELLED")), "{b:?}");
        assert_eq!(r["previous_status"], "APPROVED");
        let related = out.signals.iter().find(|s| s.kind() == "related_items").expect("related_items");
        let related = serde_json::to_value(related).unwrap();
        let mut left: Vec<i64> =
            related["items"].as_array().unwrap().iter().map(|i| i["booking_id"].as_i64().unwrap()).collect();
        left.sort();
        assert_eq!(left, [flight, hotel], "{b:?}: only active bookings are listed");
        let shown = tools.ok(&u, "query_travel_order", json!({"order_id": approved})).await;
        assert_eq!(json(&shown)["order"]["status"], "CANCELLED");
        assert_eq!(json(&shown)["order"]["approval_status"], "WITHDRAWN");

        // Again: idempotent success.
        let out = tools.ok(&u, "cancel_travel_order", json!({"order_id": approved})).await;
        assert_eq!(json(&out)["already_cancelled"], true);

        // SUBMITTED: cancelled at once, no signals.
        let submitted =
            json(&tools.ok(&u, "submit_travel_approval", submit(30)).await)["order_id"].as_i64().unwrap();
        let out = tools.ok(&u, "cancel_travel_order", json!({"order_id": submitted})).await;
        assert_eq!(json(&out)["cancelled"], true);
        assert!(out.signals.is_empty(), "{:?}", out.signals);

        // REJECTED and COMPLETED: CONFLICT naming the status.
        let rejected =
            json(&tools.ok(&u, "submit_travel_approval", submit(40)).await)["order_id"].as_i64().unwrap();
        store.decide_order(rejected, false).await.unwrap();
        let completed =
            json(&tools.ok(&u, "submit_travel_approval", submit(50)).await)["order_id"].as_i64().unwrap();
        store.decide_order(completed, true).await.unwrap();
        assert!(store.complete_order(completed).await.unwrap());
        for (id, status) in [(rejected, "REJECTED"), (completed, "COMPLETED")] {
            let err = tools.err(&u, "cancel_travel_order", json!({"order_id": id, "force": true})).await;
            assert_eq!(err.code, ErrorCode::Conflict, "{b:?}");
            assert!(err.message.contains(status), "{}", err.message);
            assert_eq!(err.details.unwrap()["current_status"], status);
        }
        let err = tools.err(&u, "cancel_travel_order", json!({"order_id": 987_654_321})).await;
        assert_eq!(err.code, ErrorCode::NotFound);
        let err = tools.err(&u, "cancel_travel_order", json!({"order_id": "12", "force": "yes"})).await;
        assert_eq!(pointers(&err), ["/order_id", "/force"]);
    }
}

#[tokio::test]
async fn cancelling_bookings_follows_the_same_rules() {
    for b in backends() {
        let (store, tools) = b.open().await;
        let u = user("bk");
        let order =
            json(&tools.ok(&u, "submit_travel_approval", trip("Tokyo", 15, 18, "t")).await)["order_id"]
                .as_i64()
                .unwrap();
        let ticket = store
            .insert_booking(&booking(&u, order, BookingKind::Flight, BookingStatus::Ticketed))
            .await
            .unwrap();
        let room = store
            .insert_booking(&booking(&u, order, BookingKind::Hotel, BookingStatus::Reserved))
            .await
            .unwrap();
        let used =
            store.insert_booking(&booking(&u, order, BookingKind::Train, BookingStatus::Used)).await.unwrap();

        let listed = tools.ok(&u, "query_booking_record", json!({"order_id": order, "kind": "flight"})).await;
        assert_eq!(json(&listed)["bookings"][0]["booking_id"], ticket, "{b:?}");

        let out = tools.ok(&u, "cancel_booking", json!({"booking_id": ticket})).await;
        assert_eq!(json(&out)["cancelled"], false);
        assert!(out.signals.iter().any(|s| s.kind() == "need_confirm"));
        let out = tools.ok(&u, "cancel_booking", json!({"booking_id": ticket, "force": true})).await;
        assert_eq!(json(&out)["status"], "CANCELLED", "{b:?}");
        let related =
            serde_json::to_value(out.signals.iter().find(|s| s.kind() == "related_items").unwrap()).unwrap();
        assert_eq!(related["items"][0]["booking_id"], room, "the room is still held");

        let out = tools.ok(&u, "cancel_booking", json!({"booking_id": room})).await;
        assert_eq!(json(&out)["cancelled"], true);
        assert!(out.signals.is_empty(), "nothing active is left: {:?}", out.signals);
        let out = tools.ok(&u, "cancel_booking", json!({"booking_id": room})).await;
        assert_eq!(json(&out)["already_cancelled"], true);

        let err = tools.err(&u, "cancel_booking", json!({"booking_id": used, "force": true})).await;
        assert_eq!(err.code, ErrorCode::Conflict);
        assert!(err.message.contains("USED"), "{}", err.message);

        let cancelled = tools.ok(&u, "query_booking_record", json!({"status": "CANCELLED"})).await;
        assert_eq!(json(&cancelled)["page"]["total"], 2, "{b:?}");
    }
}

#[tokio::test]
async fn an_in_memory_database_works_for_embedding_and_tests() {
    let store = toolgate_travel::connect("sqlite::memory:").await.unwrap();
    let tools = Tools::new(store, TravelConfig::default());
    let u = user("mem");
    let out = tools.ok(&u, "submit_travel_approval", trip("Hangzhou", 4, 5, "in memory")).await;
    let id = json(&out)["order_id"].as_i64().unwrap();
    let shown = tools.ok(&u, "query_travel_order", json!({"order_id": id})).await;
    assert_eq!(json(&shown)["order"]["status"], "SUBMITTED");
}

/// Issue 9: a submit whose COMMIT succeeded but whose answer was lost leaves
/// the order unanswered; the caller's identical retry gets it as its own
/// success, once, and later repeats get `duplicate`.
#[tokio::test]
async fn a_retry_after_a_lost_answer_gets_the_order_as_its_success() {
    for b in backends() {
        let (_, tools) = b.open().await;
        let u = user("lost");
        let params = trip("Xiamen", 7, 9, "Lost answer");
        let first = tools.ok(&u, "submit_travel_approval", params.clone()).await;
        let id = json(&first)["order_id"].clone();
        // What a lost answer leaves behind: committed, never answered.
        let raw = b.raw().await;
        raw.exec(&format!("UPDATE travel_orders SET answered = FALSE WHERE user_id = '{u}'")).await;
        // Within the grace second it is a racing identical submit: duplicate.
        let racing = tools.ok(&u, "submit_travel_approval", params.clone()).await;
        assert_eq!(json(&racing)["duplicate"], true, "{b:?}");
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        let retry = tools.ok(&u, "submit_travel_approval", params.clone()).await;
        let r = json(&retry);
        assert_eq!(r["order_id"], id, "{b:?}");
        assert_eq!(
            (r["duplicate"].clone(), r["recovered"].clone()),
            (json!(false), json!(true)),
            "{b:?}: {r}"
        );
        assert!(retry.signals.is_empty(), "{b:?}: no duplicate signal: {:?}", retry.signals);
        // Claimed once: the next identical submit is a duplicate again.
        let again = tools.ok(&u, "submit_travel_approval", params).await;
        assert_eq!(json(&again)["duplicate"], true, "{b:?}");
        assert_eq!(raw.count("travel_orders", &u).await, 1, "{b:?}: one order throughout");
    }
}

/// The `answered` mark is committed without waiting for the disk, and only
/// it: afterwards every connection of the pool is back at its own
/// durability (SQLite `synchronous = FULL`, PostgreSQL `synchronous_commit
/// = on`), so the next order is flushed as before; the mark itself still
/// works (the repeat is a duplicate).
#[tokio::test]
async fn marking_an_order_answered_leaves_every_connection_durable() {
    for b in backends() {
        let (store, tools) = b.open().await;
        let alice = user("alice");
        for n in 0..6 {
            let out =
                tools.ok(&alice, "submit_travel_approval", trip("Oslo", 10 + n, 12 + n, "Durable")).await;
            assert_eq!(json(&out)["duplicate"], false, "{b:?}");
        }
        let repeat = tools.ok(&alice, "submit_travel_approval", trip("Oslo", 10, 12, "Durable")).await;
        assert_eq!(json(&repeat)["duplicate"], true, "{b:?}: the mark was written");
        match store.db().pool() {
            toolgate_db::Pool::Sqlite(pool) => {
                let mut held = Vec::new();
                for _ in 0..pool.size() {
                    let mut conn = pool.acquire().await.unwrap();
                    let level: i64 =
                        sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut *conn).await.unwrap();
                    assert_eq!(level, 2, "{b:?}: a connection was left at synchronous {level}");
                    held.push(conn);
                }
                assert!(!held.is_empty());
            }
            toolgate_db::Pool::Postgres(pool) => {
                let mut held = Vec::new();
                for _ in 0..pool.size() {
                    let mut conn = pool.acquire().await.unwrap();
                    let level: String =
                        sqlx::query_scalar("SHOW synchronous_commit").fetch_one(&mut *conn).await.unwrap();
                    assert_eq!(level, "on", "{b:?}");
                    held.push(conn);
                }
                assert!(!held.is_empty());
            }
        }
    }
}
