//! Scoped exposure: a session limited to the nutrition domain can neither see nor call the
//! training (or body) tools, on any surface.

use serde_json::json;
use toolgate_core::ErrorCode;
use toolgate_gateway::{CallOptions, Filter};

use crate::common::Env;

#[tokio::test]
async fn a_nutrition_session_sees_and_calls_only_nutrition_tools() {
    let env = Env::sqlite().await;
    let full = env.user("scope").await;
    let mut scoped = full.clone();
    scoped.caller = scoped.caller.clone().with_domains(["nutrition"]);

    // Discovery, catalog and schemas.
    let everything: Vec<String> =
        env.gateway.discover(&full.caller, &Filter::default()).into_iter().map(|s| s.name).collect();
    // six route tables, and render_weight_chart with the `charts` feature
    assert_eq!(everything.len(), 6 + usize::from(cfg!(feature = "charts")));
    let visible: Vec<String> =
        env.gateway.discover(&scoped.caller, &Filter::default()).into_iter().map(|s| s.name).collect();
    assert_eq!(visible, ["query_nutrition", "update_nutrition"]);
    assert!(env.gateway.discover(&scoped.caller, &Filter::default().domain("training")).is_empty());
    let catalog = env.gateway.catalog(&scoped.caller);
    assert!(catalog.contains("query_nutrition"), "{catalog}");
    for hidden in
        ["query_training", "update_training", "query_body_data", "update_body_data", "render_weight_chart"]
    {
        assert!(!catalog.contains(hidden), "{hidden} in the catalog:\n{catalog}");
        assert!(env.gateway.tool_schema(&scoped.caller, hidden).is_err(), "{hidden} schema");
        let meta = env.gateway.call_meta(&scoped, "get_tool_schema", json!({"tool_name": hidden})).await;
        assert!(!meta.success, "{hidden} via get_tool_schema");
        assert!(!serde_json::to_string(&meta).unwrap().contains("workout_id"), "nothing of the schema leaks");
    }
    assert!(env.gateway.tool_schema(&scoped.caller, "query_nutrition").is_ok());

    // Calls: refused before anything is sent.
    let log = json!({"op": "log_workout", "date": "2026-03-14", "name": "sneaky"});
    for (tool, params) in [
        ("update_training", log.clone()),
        ("query_training", json!({"op": "list_workouts"})),
        ("update_body_data", json!({"op": "put_measurement", "date": "2026-03-14", "weight_kg": 80})),
    ] {
        let got = env.gateway.execute(&scoped, tool, params.clone(), &CallOptions::default()).await;
        assert!(!got.success, "{tool} ran in a nutrition session");
        assert!(matches!(got.code(), Some(ErrorCode::PermissionDenied | ErrorCode::ToolNotFound)), "{got:?}");
        assert_eq!(got.metadata.attempts, 0);
        let meta = env
            .gateway
            .call_meta(&scoped, "execute_tool", json!({"tool_name": tool, "parameters": params}))
            .await;
        assert!(!meta.success, "{tool} via execute_tool");
    }
    let workouts = env.ok(&full, "query_training", json!({"op": "list_workouts"})).await;
    assert_eq!(workouts["payload"]["workouts"], json!([]), "the refused write never reached the API");
    let body =
        env.call(&full, "query_body_data", json!({"op": "get_measurement", "date": "2026-03-14"})).await;
    assert_eq!(body.code(), Some(ErrorCode::NotFound));

    // The nutrition tools work in the scoped session.
    let meal = json!({"op": "log_meal", "date": "2026-03-14", "name": "lunch", "items": [{"name": "soup", "grams": 300, "kcal": 210}]});
    env.ok(&scoped, "update_nutrition", meal).await;
    let day = env.ok(&scoped, "query_nutrition", json!({"op": "day_summary", "date": "2026-03-14"})).await;
    assert_eq!(day["payload"]["totals"]["kcal"], 210.0);
}
