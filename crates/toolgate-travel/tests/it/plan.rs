//! `plan_itinerary` and `review_planner_result` with the SQL plan store (on
//! SQLite and PostgreSQL) and the Redis plan store (when configured).

use crate::common;

use std::time::Duration;

use crate::common::{Tools, backends, json, pointers, user};
use serde_json::{Value, json};
use toolgate_core::{Caller, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_travel::{PlanStoreConfig, TravelConfig};

const D: &str = "2027-03-10";

/// `n` outbound, `n` hotels, `n` returns with long ids; a mix of possible and
/// impossible combinations, policy breaches and unscored candidates.
fn candidates(n: usize) -> Value {
    let id = |prefix: &str, i: usize| format!("{prefix}-{i:0>width$}", width = 32 - prefix.len() - 1);
    let outbound: Vec<Value> = (0..n)
        .map(|i| {
            json!({"id": id("OUT", i), "mode": if i % 3 == 0 { "train" } else { "flight" },
                   "price": 600 + (i * 37) % 900, "duration_minutes": 120 + (i * 13) % 200,
                   "depart": format!("{D}T{:02}:00", 6 + i % 8), "arrive": format!("{D}T{:02}:30", 8 + i % 8),
                   "class": if i % 7 == 0 { "business" } else if i % 3 == 0 { "second" } else { "economy" }})
        })
        .collect();
    let hotels: Vec<Value> = (0..n)
        .map(|i| {
            json!({"id": id("HOTEL", i), "name": format!("Hotel {i}"), "price_per_night": 300 + (i * 53) % 700,
                   "check_in": if i % 10 == 9 { "2027-03-11" } else { D }, "check_out": "2027-03-12"})
        })
        .collect();
    let returns: Vec<Value> = (0..n)
        .map(|i| {
            let (date, hour) = if i % 12 == 11 { (D, 7) } else { ("2027-03-12", 12 + i % 9) };
            json!({"id": id("RET", i), "mode": if i % 2 == 0 { "train" } else { "flight" },
                   "price": 500 + (i * 41) % 800, "duration_minutes": 100 + (i * 17) % 250,
                   "depart": format!("{date}T{hour:02}:00"), "arrive": format!("{date}T{:02}:45", hour + 2),
                   "class": if i % 2 == 0 { "second" } else { "economy" }})
        })
        .collect();
    let mut transport_scores = serde_json::Map::new();
    let mut hotel_scores = serde_json::Map::new();
    for i in 0..n {
        if i % 17 != 16 {
            transport_scores.insert(id("OUT", i), json!((i * 7 % 11) as f64 * 0.9));
            transport_scores.insert(id("RET", i), json!((i * 5 % 11) as f64 * 0.9));
            hotel_scores.insert(id("HOTEL", i), json!((i * 3 % 11) as f64 * 0.9));
        }
    }
    json!({
        "destination": "Shanghai",
        "candidates": {"outbound": outbound, "hotels": hotels, "return": returns},
        "scores": {"transport_scores": transport_scores, "hotel_scores": hotel_scores},
        "weights": {"price": 0.5, "time": 0.2, "preference": 0.3}
    })
}

async fn plan_and_review(tools: &Tools, u: &str, label: &str) -> (Value, Value) {
    let out = tools.ok(u, "plan_itinerary", candidates(12)).await;
    let summary = json(&out).clone();
    let plan_id = summary["plan_id"].as_str().unwrap().to_string();
    let reviewed = tools.ok(u, "review_planner_result", json!({"plan_id": plan_id})).await;
    let review = json(&reviewed).clone();
    assert_eq!(review["plan_id"], plan_id, "{label}");
    (summary, review)
}

fn check_review(summary: &Value, review: &Value, label: &str) {
    assert_eq!(summary["combinations"], 12 * 12 * 12, "{label}");
    assert_eq!(summary["policy"]["checked"], true, "{label}: staff policy for Shanghai");
    assert_eq!(summary["policy"]["hotel_cap_per_night"], 600.0);
    let results = review["results"].as_array().unwrap();
    let ids: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["cheapest", "fastest", "best_preference", "best_balanced"], "{label}");
    for (r, p) in results.iter().zip(summary["proposals"].as_array().unwrap()) {
        let breaches = p["breaches"].as_array().unwrap();
        assert_eq!(r["pass"], breaches.is_empty(), "{label}: {r} vs {p}");
        assert_eq!(r["reasons"].as_array().unwrap().len(), breaches.len(), "{label}: one reason per breach");
        assert_eq!(r["outbound"], p["outbound"]);
    }
    let recommended = review["recommended_id"].as_str().expect("something is within policy");
    assert_eq!(review["recommended"]["pass"], true, "{label}");
    assert!(
        ["cheapest", "fastest", "best_preference", "best_balanced", "best_compliant"].contains(&recommended)
    );
}

#[tokio::test]
async fn plans_are_kept_in_the_sql_store_and_reviewed_only_by_their_user() {
    for b in backends() {
        let store = b.store().await;
        toolgate_travel::seed_policies(&store).await.unwrap();
        let tools = Tools::new(store, TravelConfig::default());
        let u = user("planner");
        let (summary, review) = plan_and_review(&tools, &u, b.name).await;
        check_review(&summary, &review, b.name);
        let plan_id = summary["plan_id"].clone();
        let err = tools.err(&user("intruder"), "review_planner_result", json!({"plan_id": plan_id})).await;
        assert_eq!(err.code, ErrorCode::NotFound, "{b:?}: a plan is visible only to its user");
        let err = tools.err(&u, "review_planner_result", json!({"plan_id": "plan_missing"})).await;
        assert_eq!(err.code, ErrorCode::NotFound);
    }
}

#[tokio::test]
async fn plans_expire() {
    let b = common::sqlite();
    let store = b.store().await;
    let config =
        TravelConfig::default().with_plan_store(PlanStoreConfig::Sql { ttl: Duration::from_millis(1) });
    let tools = Tools::new(store, config);
    let u = user("expire");
    let out = tools.ok(&u, "plan_itinerary", candidates(3)).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let err = tools.err(&u, "review_planner_result", json!({"plan_id": json(&out)["plan_id"]})).await;
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(err.message.contains("plan_itinerary"), "{}", err.message);
}

#[tokio::test]
async fn fifty_cubed_candidates_answer_in_under_two_kilobytes() {
    let b = common::sqlite();
    let store = b.store().await;
    toolgate_travel::seed_policies(&store).await.unwrap();
    let gw =
        Gateway::builder().tools(toolgate_travel::tools(store, TravelConfig::default())).build().unwrap();
    let ctx = ToolContext::new(Caller::new(user("big"), "member"));
    let env = gw.execute(&ctx, "plan_itinerary", candidates(50), &CallOptions::default()).await;
    assert!(env.success, "{env:?}");
    let result = env.result.as_ref().unwrap();
    assert_eq!(result["combinations"], 125_000);
    let feasible = result["feasible"].as_u64().unwrap();
    let dropped = &result["dropped"];
    assert!(feasible > 0 && dropped["return_before_arrival"].as_u64().unwrap() > 0);
    assert!(dropped["hotel_nights_mismatch"].as_u64().unwrap() > 0);
    assert_eq!(
        feasible
            + dropped["return_before_arrival"].as_u64().unwrap()
            + dropped["hotel_nights_mismatch"].as_u64().unwrap(),
        125_000
    );
    assert!(result["missing_scores"]["count"].as_u64().unwrap() > 0, "unscored ids are reported");
    assert!(result["with_policy_breaches"].as_u64().unwrap() > 0);
    let result_bytes = serde_json::to_string(result).unwrap().len();
    let envelope_bytes = serde_json::to_string(&env).unwrap().len();
    assert!(result_bytes < 2048, "result is {result_bytes} bytes");
    assert!(envelope_bytes < 2048, "whole envelope is {envelope_bytes} bytes");
    // The full plan stayed on the server and is reviewable.
    let review = gw
        .execute(
            &ctx,
            "review_planner_result",
            json!({"plan_id": result["plan_id"]}),
            &CallOptions::default(),
        )
        .await;
    assert!(review.success, "{review:?}");
    assert!(review.result.unwrap()["recommended_id"].is_string());
}

#[tokio::test]
async fn bad_candidates_are_all_reported_with_their_pointers() {
    let b = common::sqlite();
    let tools = Tools::new(b.store().await, TravelConfig::default());
    let mut params = candidates(2);
    params["candidates"]["outbound"][0]["depart"] = json!("2027-03-10 08:00");
    params["candidates"]["hotels"][1]["check_out"] = json!("2027-02-30");
    params["candidates"]["return"][0]["mode"] = json!("boat");
    params["candidates"]["return"][1]["price"] = json!(-5);
    params["scores"]["hotel_scores"] = json!({"HOTEL-x": 11});
    params["user_id"] = json!("bob");
    let err = tools.err(&user("p"), "plan_itinerary", params).await;
    let mut got = pointers(&err);
    got.sort();
    assert_eq!(
        got,
        [
            "/candidates/hotels/1/check_out",
            "/candidates/outbound/0/depart",
            "/candidates/return/0/mode",
            "/candidates/return/1/price",
            "/scores/hotel_scores/HOTEL-x",
            "/user_id",
        ],
        "{err:?}"
    );
    // What the schema cannot say runs on the typed value: reported together
    // once every field has its type.
    let mut params = candidates(2);
    params["candidates"]["outbound"][1]["id"] = params["candidates"]["return"][1]["id"].clone();
    params["candidates"]["outbound"][0]["arrive"] = params["candidates"]["outbound"][0]["depart"].clone();
    params["candidates"]["hotels"][0]["check_out"] = params["candidates"]["hotels"][0]["check_in"].clone();
    params["weights"] = json!({"price": 0, "time": 0, "preference": 0});
    let err = tools.err(&user("p"), "plan_itinerary", params).await;
    let mut got = pointers(&err);
    got.sort();
    assert_eq!(
        got,
        [
            "/candidates/hotels/0/check_out",
            "/candidates/outbound/0/arrive",
            "/candidates/return/1/id",
            "/weights",
        ],
        "{err:?}"
    );
    let err = tools.err(&user("p"), "plan_itinerary", json!({"destination": "Shanghai"})).await;
    assert_eq!(pointers(&err), ["/candidates", "/scores"]);
}

#[tokio::test]
async fn plans_can_live_in_redis_with_a_ttl() {
    let Some(url) = common::redis_url() else { return };
    let b = common::sqlite();
    let store = b.store().await;
    toolgate_travel::seed_policies(&store).await.unwrap();
    let config = TravelConfig::default().with_plan_store(PlanStoreConfig::Redis {
        url: url.clone(),
        ttl: Duration::from_secs(600),
        ca_pem: None,
    });
    let tools = Tools::new(store.clone(), config);
    let u = user("redis");
    let (summary, review) = plan_and_review(&tools, &u, "redis").await;
    check_review(&summary, &review, "redis");
    let plan_id = summary["plan_id"].as_str().unwrap();

    let client = redis::Client::open(url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let key = format!("toolgate:travel:plan:{plan_id}");
    let ttl: i64 = redis::cmd("TTL").arg(&key).query_async(&mut conn).await.unwrap();
    assert!(ttl > 0 && ttl <= 600, "the plan expires: ttl {ttl}");
    let err = tools.err(&user("intruder"), "review_planner_result", json!({"plan_id": plan_id})).await;
    assert_eq!(err.code, ErrorCode::NotFound);
    let _: () = redis::cmd("DEL").arg(&key).query_async(&mut conn).await.unwrap();
    let err = tools.err(&u, "review_planner_result", json!({"plan_id": plan_id})).await;
    assert_eq!(err.code, ErrorCode::NotFound, "gone from Redis, gone");
}

#[tokio::test]
async fn an_unreachable_redis_is_unavailable() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let b = common::sqlite();
    let config = TravelConfig::default().with_plan_store(PlanStoreConfig::Redis {
        url: format!("redis://127.0.0.1:{port}/"),
        ttl: Duration::from_secs(60),
        ca_pem: None,
    });
    let tools = Tools::new(b.store().await, config);
    let err = tools.err(&user("r"), "plan_itinerary", candidates(2)).await;
    assert_eq!(err.code, ErrorCode::Unavailable, "{err:?}");
    let tools = Tools::new(
        b.store().await,
        TravelConfig::default().with_plan_store(PlanStoreConfig::Redis {
            url: "http://127.0.0.1/".into(),
            ttl: Duration::from_secs(60),
            ca_pem: None,
        }),
    );
    let err = tools.err(&user("r"), "review_planner_result", json!({"plan_id": "plan_x"})).await;
    assert_eq!(err.code, ErrorCode::Unavailable);
    assert!(!err.transient);
}

#[tokio::test]
async fn combinations_past_the_quota_are_refused_before_any_work() {
    let b = common::sqlite();
    let tools = Tools::new(b.store().await, TravelConfig::default());
    // 100 × 100 × 100 = 1,000,000 combinations: four times the quota.
    let err = tools.err(&user("q"), "plan_itinerary", candidates(100)).await;
    assert_eq!(pointers(&err), ["/candidates"], "{err:?}");
    assert!(err.message.contains("1000000") && err.message.contains("250000"), "{}", err.message);
    assert!(err.message.contains("fewer candidates"), "{}", err.message);
}

/// A progress sink that keeps what it hears.
#[derive(Default)]
struct Heard(std::sync::Mutex<Vec<(f64, Option<f64>, String)>>);

impl toolgate_core::ProgressSink for Heard {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.0.lock().unwrap().push((progress, total, message.unwrap_or_default().to_owned()));
    }
}

#[tokio::test]
async fn planning_reports_its_phases_and_combination_counts() {
    let b = common::sqlite();
    let store = b.store().await;
    toolgate_travel::seed_policies(&store).await.unwrap();
    let tools = Tools::new(store, TravelConfig::default());
    let heard = std::sync::Arc::new(Heard::default());
    let ctx = common::ctx(&user("progress")).with_progress(heard.clone());
    tools.get("plan_itinerary").call(&ctx, candidates(4)).await.unwrap();
    let heard = heard.0.lock().unwrap().clone();
    let messages: Vec<&str> = heard.iter().map(|h| h.2.as_str()).collect();
    assert_eq!(messages.first(), Some(&"reading the travel policy"), "{messages:?}");
    assert!(messages.contains(&"combined 16 of 64 combinations"), "{messages:?}");
    assert!(messages.contains(&"combined 64 of 64 combinations"), "{messages:?}");
    assert_eq!(messages.last(), Some(&"plan saved"), "{messages:?}");
    assert!(heard.iter().all(|h| h.1 == Some(64.0)), "{heard:?}");
    assert!(heard.windows(2).all(|w| w[0].0 <= w[1].0), "progress never goes back: {heard:?}");
}

#[tokio::test]
async fn the_plan_answers_its_four_proposals_as_text_with_the_structure_unchanged() {
    let b = common::sqlite();
    let store = b.store().await;
    toolgate_travel::seed_policies(&store).await.unwrap();
    let gw =
        Gateway::builder().tools(toolgate_travel::tools(store, TravelConfig::default())).build().unwrap();
    let ctx = ToolContext::new(Caller::new(user("text"), "member"));
    let env = gw.execute(&ctx, "plan_itinerary", candidates(6), &CallOptions::default()).await;
    assert!(env.success, "{env:?}");
    let text = gw.render_result(&env);
    let result = env.result.as_ref().unwrap();
    assert!(text.contains(result["plan_id"].as_str().unwrap()), "{text}");
    for label in ["cheapest", "fastest", "best_preference", "best_balanced"] {
        assert!(text.contains(&format!("| {label} |")), "{label} in {text}");
    }
    assert!(text.contains("review_planner_result"), "{text}");
    assert_eq!(result["proposals"].as_array().unwrap().len(), 4, "the structured result keeps its shape");
}
