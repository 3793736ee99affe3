//! End to end: gateway -> HTTP executor -> fitness-api -> database, for every tool, read and
//! write, with two users whose tokens keep their data apart. Runs on SQLite, and on PostgreSQL
//! when TOOLGATE_TEST_PG_URL is set.

use serde_json::{Value, json};
use toolgate_core::{Caller, ErrorCode, ToolContext};

use crate::common::Env;

const DAY: &str = "2026-03-14";

async fn body(env: &Env, alice: &ToolContext, bob: &ToolContext) {
    let put = json!({"op": "put_measurement", "date": DAY, "weight_kg": 81.4, "note": "after breakfast"});
    let created = env.ok(alice, "update_body_data", put).await;
    assert_eq!(created["status"], 201);
    assert_eq!(created["method"], "PUT");
    assert_eq!(created["path"], format!("/body/measurements/{DAY}"));
    assert_eq!(created["payload"]["weight_kg"], 81.4);
    let replaced = env
        .ok(
            alice,
            "update_body_data",
            json!({"op": "put_measurement", "date": DAY, "weight_kg": 81.0, "waist_cm": 86}),
        )
        .await;
    assert_eq!(replaced["status"], 200);
    assert_eq!(replaced["payload"]["note"], Value::Null, "a put replaces the whole day");
    env.ok(
        alice,
        "update_body_data",
        json!({"op": "put_measurement", "date": "2026-03-10", "weight_kg": 82.0}),
    )
    .await;

    let one = env.ok(alice, "query_body_data", json!({"op": "get_measurement", "date": DAY})).await;
    assert_eq!(one["payload"]["weight_kg"], 81.0);
    assert_eq!(one["payload"]["waist_cm"], 86.0);
    let range = env
        .ok(alice, "query_body_data", json!({"op": "list_measurements", "from": "2026-03-11", "to": DAY}))
        .await;
    assert_eq!(
        range["payload"]["measurements"].as_array().unwrap().len(),
        1,
        "the query string reached the API"
    );
    let all = env.ok(alice, "query_body_data", json!({"op": "list_measurements"})).await;
    assert_eq!(all["payload"]["measurements"].as_array().unwrap().len(), 2);

    // Bob sees none of it and cannot delete it.
    let theirs = env.call(bob, "query_body_data", json!({"op": "get_measurement", "date": DAY})).await;
    assert_eq!(theirs.code(), Some(ErrorCode::NotFound));
    let list = env.ok(bob, "query_body_data", json!({"op": "list_measurements"})).await;
    assert_eq!(list["payload"]["measurements"], json!([]));
    let del = env.call(bob, "update_body_data", json!({"op": "delete_measurement", "date": DAY})).await;
    assert_eq!(del.code(), Some(ErrorCode::NotFound));

    let deleted = env.ok(alice, "update_body_data", json!({"op": "delete_measurement", "date": DAY})).await;
    assert_eq!(deleted["method"], "DELETE");
    let gone = env.call(alice, "query_body_data", json!({"op": "get_measurement", "date": DAY})).await;
    assert_eq!(gone.code(), Some(ErrorCode::NotFound));
    assert_eq!(gone.metadata.attempts, 1, "a 404 is not retried");
}

async fn nutrition(env: &Env, alice: &ToolContext, bob: &ToolContext) {
    let meal = json!({"op": "log_meal", "date": DAY, "name": "breakfast", "items": [
        {"name": "oatmeal", "grams": 250, "kcal": 180, "protein_g": 6, "carbs_g": 30, "fat_g": 4},
        {"name": "banana", "grams": 120, "kcal": 105}
    ]});
    let logged = env.ok(alice, "update_nutrition", meal.clone()).await;
    assert_eq!(logged["status"], 201);
    assert_eq!(logged["method"], "POST");
    let meal_id = logged["payload"]["meal_id"].as_i64().unwrap();
    assert_eq!(logged["payload"]["totals"]["kcal"], 285.0);

    let again = env.call(alice, "update_nutrition", meal).await;
    assert_eq!(again.code(), Some(ErrorCode::Conflict), "{again:?}");
    assert_eq!(again.metadata.attempts, 1);
    assert!(again.error.as_ref().unwrap().message.contains("breakfast"), "the backend's reason is kept");

    let summary = env.ok(alice, "query_nutrition", json!({"op": "day_summary", "date": DAY})).await;
    assert_eq!(summary["payload"]["totals"]["kcal"], 285.0);
    assert_eq!(summary["payload"]["meal_count"], 1);
    let meals = env.ok(alice, "query_nutrition", json!({"op": "list_meals", "date": DAY})).await;
    assert_eq!(meals["payload"]["meals"][0]["meal_id"], meal_id);
    assert_eq!(meals["payload"]["meals"][0]["items"].as_array().unwrap().len(), 2);

    let bobs = env.ok(bob, "query_nutrition", json!({"op": "day_summary", "date": DAY})).await;
    assert_eq!(bobs["payload"]["meal_count"], 0);
    let steal = env.call(bob, "update_nutrition", json!({"op": "delete_meal", "meal_id": meal_id})).await;
    assert_eq!(steal.code(), Some(ErrorCode::NotFound));

    let deleted = env.ok(alice, "update_nutrition", json!({"op": "delete_meal", "meal_id": meal_id})).await;
    assert_eq!(deleted["path"], format!("/nutrition/meals/{meal_id}"));
    let after = env.ok(alice, "query_nutrition", json!({"op": "list_meals", "date": DAY})).await;
    assert_eq!(after["payload"]["meals"], json!([]));
}

async fn training(env: &Env, alice: &ToolContext, bob: &ToolContext) {
    let workout = json!({"op": "log_workout", "date": DAY, "name": "leg day", "duration_min": 50,
        "sets": [{"exercise": "squat", "reps": 5, "weight_kg": 100}, {"exercise": "lunge", "reps": 12}]});
    let logged = env.ok(alice, "update_training", workout.clone()).await;
    assert_eq!(logged["status"], 201);
    let id = logged["payload"]["workout_id"].as_i64().unwrap();
    assert_eq!(logged["payload"]["sets"].as_array().unwrap().len(), 2);
    let dup = env.call(alice, "update_training", workout).await;
    assert_eq!(dup.code(), Some(ErrorCode::Conflict));

    let set = env
        .ok(
            alice,
            "update_training",
            json!({"op": "add_set", "workout_id": id, "exercise": "squat", "reps": 5, "weight_kg": 105}),
        )
        .await;
    assert_eq!(set["path"], format!("/training/workouts/{id}/sets"));
    assert_eq!(set["payload"]["set"]["set_no"], 3);
    let patched = env
        .ok(
            alice,
            "update_training",
            json!({"op": "update_workout", "workout_id": id, "duration_min": 55, "notes": "felt strong"}),
        )
        .await;
    assert_eq!(patched["method"], "PATCH");
    assert_eq!(patched["payload"]["duration_min"], 55);

    let one = env.ok(alice, "query_training", json!({"op": "get_workout", "workout_id": id})).await;
    assert_eq!(one["payload"]["notes"], "felt strong");
    assert_eq!(one["payload"]["sets"].as_array().unwrap().len(), 3);
    let week = env
        .ok(alice, "query_training", json!({"op": "list_workouts", "from": "2026-03-09", "to": "2026-03-15"}))
        .await;
    assert_eq!(week["payload"]["workouts"].as_array().unwrap().len(), 1);
    let before = env.ok(alice, "query_training", json!({"op": "list_workouts", "to": "2026-03-13"})).await;
    assert_eq!(before["payload"]["workouts"], json!([]));

    for (tool, params) in [
        ("query_training", json!({"op": "get_workout", "workout_id": id})),
        ("update_training", json!({"op": "update_workout", "workout_id": id, "name": "mine now"})),
        ("update_training", json!({"op": "add_set", "workout_id": id, "exercise": "x", "reps": 1})),
        ("update_training", json!({"op": "delete_workout", "workout_id": id})),
    ] {
        let got = env.call(bob, tool, params.clone()).await;
        assert_eq!(got.code(), Some(ErrorCode::NotFound), "bob {params}: {got:?}");
    }
    let bobs = env.ok(bob, "query_training", json!({"op": "list_workouts"})).await;
    assert_eq!(bobs["payload"]["workouts"], json!([]));

    env.ok(alice, "update_training", json!({"op": "delete_workout", "workout_id": id})).await;
    let gone = env.call(alice, "query_training", json!({"op": "get_workout", "workout_id": id})).await;
    assert_eq!(gone.code(), Some(ErrorCode::NotFound));
}

async fn credentials(env: &Env) {
    // No token in the session: refused before anything is sent.
    let anonymous = ToolContext::new(Caller::new("someone", "member"));
    let got = env.call(&anonymous, "query_body_data", json!({"op": "list_measurements"})).await;
    assert_eq!(got.code(), Some(ErrorCode::PermissionDenied));
    assert!(got.error.as_ref().unwrap().message.contains("this caller has none"), "{got:?}");
    // A real fitness token filed for another backend is not the fitness API's: refused too.
    let owner = env.user("elsewhere").await;
    let token = owner.caller.credentials.get(toolgate_fitness::BACKEND_ID).unwrap().expose().to_owned();
    let misfiled = ToolContext::new(Caller::new("someone", "member").with_credential("crm", token));
    let got = env.call(&misfiled, "query_body_data", json!({"op": "list_measurements"})).await;
    assert_eq!(got.code(), Some(ErrorCode::PermissionDenied), "{got:?}");
    // A token the API does not know: its 401 becomes PERMISSION_DENIED, never retried.
    let stranger = ToolContext::new(
        Caller::new("someone", "member")
            .with_credential(toolgate_fitness::BACKEND_ID, "fit_not-a-real-token"),
    );
    let got = env.call(&stranger, "query_body_data", json!({"op": "list_measurements"})).await;
    assert_eq!(got.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(got.metadata.attempts, 1);
    let text = serde_json::to_string(&got).unwrap();
    assert!(!text.contains("fit_not-a-real-token"), "the token is never echoed: {text}");
    // The token comes from the session only: the same user id with another user's token is
    // that other user, whatever the caller's user_id says.
    let alice = env.user("alias").await;
    env.ok(&alice, "update_body_data", json!({"op": "put_measurement", "date": DAY, "weight_kg": 70})).await;
    let mut impostor = env.user("impostor").await;
    impostor.caller.user_id = alice.caller.user_id.clone();
    let got = env.call(&impostor, "query_body_data", json!({"op": "get_measurement", "date": DAY})).await;
    assert_eq!(got.code(), Some(ErrorCode::NotFound), "the token decides whose data it is");
}

async fn scenario(env: &Env) {
    let alice = env.user("alice").await;
    let bob = env.user("bob").await;
    body(env, &alice, &bob).await;
    nutrition(env, &alice, &bob).await;
    training(env, &alice, &bob).await;
    credentials(env).await;
}

#[tokio::test]
async fn every_tool_reads_and_writes_per_user_on_sqlite() {
    let env = Env::sqlite().await;
    scenario(&env).await;
}

#[tokio::test]
async fn every_tool_reads_and_writes_per_user_on_postgres() {
    let Some(env) = Env::postgres().await else { return };
    assert_eq!(env.backend, "postgres");
    scenario(&env).await;
}

#[tokio::test]
async fn a_stopped_backend_is_unavailable_and_reads_are_tried_twice() {
    let env = Env::sqlite().await;
    let alice = env.user("stopped").await;
    let Env { server, gateway, .. } = env;
    server.shutdown().await.unwrap();
    let got = gateway
        .execute(
            &alice,
            "query_nutrition",
            json!({"op": "day_summary", "date": DAY}),
            &toolgate_gateway::CallOptions::default(),
        )
        .await;
    // Down for both attempts: UNAVAILABLE at the top, retryable.
    assert_eq!(got.code(), Some(ErrorCode::Unavailable), "{got:?}");
    assert_eq!(got.metadata.attempts, 2);
    assert_eq!(got.error.as_ref().unwrap().details.as_ref().unwrap()["retryable"], true);
    let write =
        json!({"op": "log_meal", "date": DAY, "name": "x", "items": [{"name": "a", "grams": 1, "kcal": 1}]});
    let got =
        gateway.execute(&alice, "update_nutrition", write, &toolgate_gateway::CallOptions::default()).await;
    assert_eq!(got.code(), Some(ErrorCode::Unavailable), "{got:?}");
    assert_eq!(got.metadata.attempts, 1, "a write is never retried");
}
