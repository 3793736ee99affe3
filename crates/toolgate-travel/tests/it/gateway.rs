//! The travel tools behind the gateway: registration (every spec passes
//! `ToolSpec::check`, every schema compiles), contracts (effects, roles,
//! descriptions, examples that validate), and calls end to end.

use crate::common;

use crate::common::{backends, day, trip, user};
use serde_json::{Value, json};
use toolgate_core::{Caller, Effect, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_travel::TravelConfig;

async fn gateway(store: toolgate_travel::Store) -> Gateway {
    Gateway::builder()
        .tools(toolgate_travel::tools(store, TravelConfig::default()))
        .build()
        .expect("travel tools register")
}

fn ctx(user: &str) -> ToolContext {
    ToolContext::new(Caller::new(user, "member"))
}

#[tokio::test]
async fn every_tool_registers_with_a_complete_contract() {
    let b = common::sqlite();
    let gw = gateway(b.store().await).await;
    let specs = gw.all_specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    for name in toolgate_travel::tool_names() {
        assert!(names.contains(&name), "{name} is registered");
    }
    assert_eq!(toolgate_travel::tool_names().len(), 11);
    for name in toolgate_travel::tool_names() {
        let spec = gw.spec(name).unwrap();
        spec.check().unwrap();
        assert_eq!(spec.domain, "travel");
        assert_eq!(spec.input_schema["additionalProperties"], false, "{name}");
        assert!(!spec.input_schema.to_string().contains("user_id"), "{name}");
        let d = &spec.description;
        assert!(d.len() > 200, "{name}: the description says what, when, returns, limits");
        assert!(d.contains("Example") || !spec.examples.is_empty(), "{name}: an example");
        assert!(d.contains("Returns") || d.contains("returns") || d.contains("Answers"), "{name}");
        let expected = match name {
            "submit_travel_approval" | "cancel_travel_order" | "cancel_booking" | "save_flight_api_key" => {
                Effect::Write { idempotent: true }
            }
            _ => Effect::Read,
        };
        assert_eq!(spec.effect, expected, "{name}");
        let role = if name == "query_weather" { "guest" } else { "member" };
        assert_eq!(spec.required_role, role, "{name}");
        // The examples shown to the model are valid calls.
        let validator = toolgate_schema::Validator::new(&spec.input_schema).unwrap();
        for example in &spec.examples {
            assert!(validator.validate(&example.parameters).is_ok(), "{name}: {:?}", example.parameters);
        }
    }
}

#[tokio::test]
async fn a_guest_sees_the_weather_and_nothing_personal() {
    let b = common::sqlite();
    let gw = gateway(b.store().await).await;
    let guest = ToolContext::new(Caller::new("visitor", "guest"));
    let env = gw.execute(&guest, "query_travel_order", json!({}), &CallOptions::default()).await;
    assert_eq!(env.code(), Some(ErrorCode::PermissionDenied));
    let env = gw.execute(&guest, "query_weather", json!({"city": "Hangzhou"}), &CallOptions::default()).await;
    assert!(env.success, "{env:?}");
    assert!(env.has_signal("unavailable"));
}

#[tokio::test]
async fn submit_and_cancel_end_to_end() {
    for b in backends() {
        let gw = gateway(b.store().await).await;
        let u = user("gw");
        let opts = CallOptions::default();
        let env = gw
            .execute(
                &ctx(&u),
                "submit_travel_approval",
                trip("Shanghai", 10, 12, "Through the gateway"),
                &opts,
            )
            .await;
        assert!(env.success, "{b:?}: {env:?}");
        let id = env.result.as_ref().unwrap()["order_id"].as_i64().unwrap();
        let again = gw
            .execute(
                &ctx(&u),
                "submit_travel_approval",
                trip("Shanghai", 10, 12, "Through the gateway"),
                &opts,
            )
            .await;
        assert!(again.has_signal("duplicate"));
        assert_eq!(again.result.unwrap()["order_id"], id);
        let env = gw.execute(&ctx(&u), "cancel_travel_order", json!({"order_id": id}), &opts).await;
        assert_eq!(env.result.unwrap()["status"], "CANCELLED", "{b:?}");
        let other = gw.execute(&ctx(&user("x")), "query_travel_order", json!({"order_id": id}), &opts).await;
        assert_eq!(other.code(), Some(ErrorCode::NotFound));
    }
}

fn pointers(env: &toolgate_core::Envelope) -> Vec<String> {
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams), "{env:?}");
    let mut p: Vec<String> = env.error.as_ref().unwrap().details.as_ref().unwrap()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pointer"].as_str().unwrap().to_string())
        .collect();
    p.sort();
    p.dedup();
    p
}

#[tokio::test]
async fn bad_input_through_the_gateway_lists_every_problem() {
    let b = common::sqlite();
    let gw = gateway(b.store().await).await;
    let u = user("gwbad");
    let opts = CallOptions::default();
    let env = gw
        .execute(
            &ctx(&u),
            "submit_travel_approval",
            json!({"destination": "", "departure_city": "Beijing", "departure_date": "2026-02-30",
                   "return_date": "2026/07/15", "purpose": "x"}),
            &opts,
        )
        .await;
    assert_eq!(pointers(&env), ["/departure_date", "/destination", "/return_date"], "{env:?}");
    // A problem the schema cannot express (return before departure) next to
    // one it can: the tool's `check_params` joins the schema errors.
    let params = json!({"destination": "", "departure_city": "Beijing", "departure_date": day(20),
                        "return_date": day(10), "purpose": "x"});
    let env = gw.execute(&ctx(&u), "submit_travel_approval", params.clone(), &opts).await;
    assert_eq!(pointers(&env), ["/destination", "/return_date"], "{env:?}");
    let tools = toolgate_travel::tools(b.store().await, TravelConfig::default());
    let submit = tools.iter().find(|t| t.spec().name == "submit_travel_approval").unwrap();
    // `check_params` answers only what the schema cannot say; the gateway joins both.
    let found: Vec<String> = submit.check_params(&params).into_iter().map(|e| e.pointer).collect();
    assert_eq!(found, ["/return_date"]);
    assert!(submit.check_params(&trip("Wuhan", 3, 4, "fine")).is_empty());
    let env = gw
        .execute(&ctx(&u), "submit_travel_approval", json!({"user_id": "bob", "destination": "Wuhan"}), &opts)
        .await;
    let p = pointers(&env);
    assert!(p.contains(&"/user_id".to_string()), "{p:?}");
    let _: Value = env.to_value();
}

#[tokio::test]
async fn orders_and_bookings_answer_compact_tables_with_the_structure_unchanged() {
    let b = common::sqlite();
    let store = b.store().await;
    toolgate_travel::seed_demo(&store).await.unwrap();
    let gw = gateway(store).await;
    let (alice, _) = toolgate_travel::DEMO_USERS[0];
    let opts = CallOptions::default();
    let env = gw.execute(&ctx(alice), "query_travel_order", json!({"page_size": 50}), &opts).await;
    let text = gw.render_result(&env);
    let orders = env.result.as_ref().unwrap()["orders"].as_array().unwrap();
    assert!(text.contains("| order | status | route | dates |"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| order")).count(),
        orders.len()
    );
    let first = &orders[0];
    assert!(
        text.contains(&format!("| {} | {} |", first["order_id"], first["status"].as_str().unwrap())),
        "{text}"
    );

    let env = gw.execute(&ctx(alice), "query_booking_record", json!({}), &opts).await;
    let text = gw.render_result(&env);
    let bookings = env.result.as_ref().unwrap()["bookings"].as_array().unwrap();
    assert!(!bookings.is_empty());
    assert!(text.contains("| booking | order | kind | status |"), "{text}");
    assert!(text.contains(bookings[0]["description"].as_str().unwrap()), "{text}");

    let id = first["order_id"].clone();
    let env = gw.execute(&ctx(alice), "query_travel_order", json!({"order_id": id}), &opts).await;
    let text = gw.render_result(&env);
    assert!(text.starts_with(&format!("Order {id}: ")), "{text}");
}

#[tokio::test]
async fn bidi_overrides_and_control_characters_are_refused_in_names() {
    let b = common::sqlite();
    let gw = gateway(b.store().await).await;
    let u = user("bidi");
    let opts = CallOptions::default();
    for (field, value) in [
        ("destination", "Shang\u{202E}iahg"),
        ("departure_city", "Bei\u{0000}jing"),
        ("destination", "Paris\u{2067}"),
        ("departure_city", "\u{0007}Beijing"),
    ] {
        let mut params = trip("Shanghai", 10, 12, "Bidi");
        params[field] = json!(value);
        let env = gw.execute(&ctx(&u), "submit_travel_approval", params, &opts).await;
        assert_eq!(env.code(), Some(ErrorCode::InvalidParams), "{field}={value:?}: {env:?}");
        let text = env.to_value().to_string();
        assert!(text.contains(&format!("/{field}")) && text.contains("bidirectional"), "{text}");
    }
    let env = gw.execute(&ctx(&u), "query_travel_policy", json!({"city": "\u{202D}Beijing"}), &opts).await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
    // Any other Unicode is a name.
    let env =
        gw.execute(&ctx(&u), "submit_travel_approval", trip("Zürich – 北京 🚄", 10, 12, "ok"), &opts).await;
    assert!(env.success, "{env:?}");
}
