//! The model-facing text of the read tools (their tables' `result_template`): a nutrition day
//! as a totals table (totals vs goals once the user set goals), meals, measurements and workouts as compact markdown tables; the
//! structured result stays what the API answered.

use serde_json::json;

use crate::common::Env;

#[tokio::test]
async fn read_tools_answer_compact_tables() {
    let env = Env::sqlite().await;
    let alice = env.user("text").await;
    let meal = json!({"op": "log_meal", "date": "2026-03-14", "name": "breakfast", "items": [
        {"name": "oatmeal", "grams": 250, "kcal": 180, "protein_g": 6, "carbs_g": 30, "fat_g": 4},
        {"name": "banana", "grams": 120, "kcal": 105, "protein_g": 1.3, "carbs_g": 27, "fat_g": 0.4}]});
    env.ok(&alice, "update_nutrition", meal).await;
    env.ok(
        &alice,
        "update_body_data",
        json!({"op": "put_measurement", "date": "2026-03-14", "weight_kg": 81.4}),
    )
    .await;
    env.ok(
        &alice,
        "update_training",
        json!({"op": "log_workout", "date": "2026-03-14", "name": "leg day", "duration_min": 50,
        "sets": [{"exercise": "squat", "reps": 5, "weight_kg": 100}]}),
    )
    .await;

    let text = |tool: &'static str, params: serde_json::Value| {
        let (env, alice) = (&env, &alice);
        async move {
            let envelope = env.call(alice, tool, params).await;
            assert!(envelope.success, "{envelope:?}");
            assert!(
                envelope.result.as_ref().unwrap()["payload"].is_object(),
                "the structured result is kept"
            );
            env.gateway.render_result(&envelope)
        }
    };
    let summary = text("query_nutrition", json!({"op": "day_summary", "date": "2026-03-14"})).await;
    assert!(
        summary.starts_with("Nutrition on 2026-03-14: 285 kcal from 1 meal(s) and 2 item(s)."),
        "{summary}"
    );
    assert!(summary.contains("| protein | 7.3 g |") && summary.contains("| carbs | 57 g |"), "{summary}");
    let meals = text("query_nutrition", json!({"op": "list_meals", "date": "2026-03-14"})).await;
    assert!(
        meals.contains("| meal_id | meal | items |")
            && meals.contains("| breakfast | oatmeal, banana | 285 |"),
        "{meals}"
    );
    let body = text("query_body_data", json!({"op": "list_measurements"})).await;
    assert!(body.starts_with("1 measurement(s).") && body.contains("| 2026-03-14 | 81.4 |"), "{body}");
    let workouts = text("query_training", json!({"op": "list_workouts"})).await;
    assert!(workouts.contains("| leg day | 50 | 1 |"), "{workouts}");
    let empty = text("query_nutrition", json!({"op": "list_meals", "date": "2026-03-15"})).await;
    assert_eq!(empty, "0 meal(s) on 2026-03-15.");
    // One record (not a list) falls back to its JSON.
    let one = text("query_body_data", json!({"op": "get_measurement", "date": "2026-03-14"})).await;
    assert!(one.contains("81.4") && one.starts_with('{'), "{one}");
}

/// Once the user set goals (`update_nutrition` `set_goals`), the day reads as eaten vs goal vs
/// left, a quantity without a goal shows `-`, and a goal passed shows a negative "left"; the
/// structured result carries the goals as the API answered them.
#[tokio::test]
async fn a_nutrition_day_reads_as_totals_vs_goals() {
    let env = Env::sqlite().await;
    let alice = env.user("goals").await;
    let meal = json!({"op": "log_meal", "date": "2026-03-14", "name": "dinner", "items": [
        {"name": "pasta", "grams": 400, "kcal": 2350.5, "protein_g": 52.25, "carbs_g": 310, "fat_g": 71}]});
    env.ok(&alice, "update_nutrition", meal).await;
    let goals = json!({"op": "set_goals", "kcal": 2200, "protein_g": 140, "fat_g": 70});
    let stored = env.ok(&alice, "update_nutrition", goals).await;
    assert_eq!(stored["status"], 201, "{stored}");
    let envelope =
        env.call(&alice, "query_nutrition", json!({"op": "day_summary", "date": "2026-03-14"})).await;
    assert!(envelope.success, "{envelope:?}");
    let payload = &envelope.result.as_ref().unwrap()["payload"];
    assert_eq!(payload["goals"], json!({"kcal": 2200.0, "protein_g": 140.0, "carbs_g": null, "fat_g": 70.0}));
    insta::assert_snapshot!("nutrition_day_vs_goals", env.gateway.render_result(&envelope));
}
