//! Policies by city tier and traveller level, and the demo seed.

use crate::common;

use crate::common::{Tools, backends, json, pointers, user};
use serde_json::json;
use toolgate_core::ErrorCode;
use toolgate_travel::TravelConfig;

#[tokio::test]
async fn the_policy_follows_the_city_tier_and_the_callers_level() {
    for b in backends() {
        let store = b.store().await;
        toolgate_travel::seed_policies(&store).await.unwrap();
        let (staff, manager, executive) = (user("staff"), user("manager"), user("exec"));
        store.set_user_level(&manager, "manager").await.unwrap();
        store.set_user_level(&executive, "executive").await.unwrap();
        let tools = Tools::new(store, TravelConfig::default());

        let out = tools.ok(&staff, "query_travel_policy", json!({"city": "  shanghai "})).await;
        let r = json(&out);
        assert_eq!(r["city"], "Shanghai", "{b:?}");
        assert_eq!((r["tier"].clone(), r["level"].clone()), (json!(1), json!("staff")));
        assert_eq!(r["hotel_cap_per_night"], 600);
        assert_eq!(r["allowed_classes"], json!({"flight": ["economy"], "train": ["second"]}));

        let out = tools.ok(&manager, "query_travel_policy", json!({"city": "Hangzhou"})).await;
        assert_eq!(
            (json(&out)["tier"].clone(), json(&out)["hotel_cap_per_night"].clone()),
            (json!(2), json!(700))
        );
        let out = tools.ok(&executive, "query_travel_policy", json!({"city": "New York"})).await;
        assert!(json(&out)["allowed_classes"]["flight"].as_array().unwrap().contains(&json!("business")));

        // Not listed: tier 3, said so.
        let out = tools.ok(&staff, "query_travel_policy", json!({"city": "Atlantis"})).await;
        assert_eq!(json(&out)["city_listed"], false);
        assert_eq!(json(&out)["tier"], 3);
        assert_eq!(json(&out)["hotel_cap_per_night"], 350);

        let err = tools.err(&staff, "query_travel_policy", json!({"city": "", "level": "executive"})).await;
        let mut p = pointers(&err);
        p.sort();
        assert_eq!(p, ["/city", "/level"], "the level never comes from parameters");
    }
}

#[tokio::test]
async fn without_policies_the_answer_is_not_found() {
    let b = common::sqlite();
    let tools = Tools::new(b.store().await, TravelConfig::default());
    let err = tools.err(&user("u"), "query_travel_policy", json!({"city": "Shanghai"})).await;
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(err.message.contains("policies"), "{}", err.message);
}

#[tokio::test]
async fn the_demo_seed_runs_once_and_covers_every_status() {
    for b in backends() {
        let store = b.store().await;
        let first = toolgate_travel::seed_demo(&store).await.unwrap();
        if !b.is_pg() {
            assert!(first, "a fresh database is seeded");
        }
        assert!(!toolgate_travel::seed_demo(&store).await.unwrap(), "{b:?}: the second seed adds no orders");
        let tools = Tools::new(store, TravelConfig::default());
        let (alice, _) = toolgate_travel::DEMO_USERS[0];
        for status in toolgate_travel::model::OrderStatus::ALL {
            let out = tools.ok(alice, "query_travel_order", json!({"status": status})).await;
            assert_eq!(json(&out)["page"]["total"], 1, "{b:?}: alice has one {status} order");
        }
        let out = tools.ok(alice, "query_booking_record", json!({"page_size": 50})).await;
        assert!(json(&out)["page"]["total"].as_i64().unwrap() >= 4, "{b:?}");
        for (user, level) in toolgate_travel::DEMO_USERS {
            let out = tools.ok(user, "query_travel_policy", json!({"city": "Beijing"})).await;
            assert_eq!(json(&out)["level"], level);
        }
    }
}
