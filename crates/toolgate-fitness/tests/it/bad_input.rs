//! Bad input answers INVALID_PARAMS naming the errors of the branch whose `op` matches (not the
//! raw `oneOf` failure), before anything is sent: the backend stays untouched.

use serde_json::{Value, json};
use toolgate_core::ErrorCode;

use crate::common::Env;

/// The parts of an envelope the model reads, for a snapshot.
fn answer(env: &toolgate_core::Envelope) -> Value {
    let error = env.error.as_ref().expect("the call failed");
    let errors: Vec<Value> = error
        .details
        .as_ref()
        .and_then(|d| d["errors"].as_array())
        .map(|errors| {
            errors
                .iter()
                .map(|e| json!({"pointer": e["pointer"], "expected": e["expected"], "message": e["message"]}))
                .collect()
        })
        .unwrap_or_default();
    json!({"code": error.code, "message": error.message, "errors": errors, "attempts": env.metadata.attempts})
}

#[tokio::test]
async fn bad_parameters_get_the_matching_branch_errors() {
    let env = Env::sqlite().await;
    let alice = env.user("bad").await;
    let cases: [(&str, &str, Value); 10] = [
        ("unknown_op", "query_nutrition", json!({"op": "get_everything", "date": "2026-03-14"})),
        ("missing_op", "query_nutrition", json!({"date": "2026-03-14"})),
        (
            "another_ops_fields",
            "query_training",
            json!({"op": "get_workout", "from": "2026-03-01", "to": "2026-03-31"}),
        ),
        (
            "extra_field",
            "update_body_data",
            json!({"op": "put_measurement", "date": "2026-03-14", "weight_kg": 80, "height_cm": 180}),
        ),
        (
            "wrong_types",
            "update_training",
            json!({"op": "log_workout", "date": "2026-03-14", "name": 7, "duration_min": "fifty",
                   "sets": [{"exercise": "squat", "reps": "5"}]}),
        ),
        ("missing_path_variable", "query_nutrition", json!({"op": "day_summary"})),
        ("path_variable_not_a_date", "query_body_data", json!({"op": "get_measurement", "date": "../admin"})),
        (
            "out_of_range",
            "update_nutrition",
            json!({"op": "log_meal", "date": "2026-03-14", "name": "x", "items": []}),
        ),
        ("not_a_calendar_day", "query_nutrition", json!({"op": "day_summary", "date": "2026-02-30"})),
        (
            "injected_user_id",
            "query_nutrition",
            json!({"op": "day_summary", "date": "2026-03-14", "user_id": "bob"}),
        ),
    ];
    for (name, tool, params) in cases {
        let got = env.call(&alice, tool, params).await;
        assert_eq!(got.code(), Some(ErrorCode::InvalidParams), "{name}: {got:?}");
        assert_eq!(got.metadata.attempts, 0, "{name}: nothing ran");
        insta::assert_json_snapshot!(name, answer(&got));
    }
    // Nothing reached the backend: alice has no rows at all.
    let day = env.ok(&alice, "query_nutrition", json!({"op": "list_meals", "date": "2026-03-14"})).await;
    assert_eq!(day["payload"]["meals"], json!([]));
}

#[tokio::test]
async fn values_the_schema_cannot_judge_are_refused_by_the_backend_with_its_message() {
    let env = Env::sqlite().await;
    let alice = env.user("backend-refusal").await;
    let cases: [(&str, &str, Value); 2] = [
        (
            "backend_empty_measurement",
            "update_body_data",
            json!({"op": "put_measurement", "date": "2026-03-14"}),
        ),
        ("backend_empty_patch", "update_training", json!({"op": "update_workout", "workout_id": 1})),
    ];
    for (name, tool, params) in cases {
        let got = env.call(&alice, tool, params).await;
        // (The API checks a patch's body before it looks the workout up.)
        assert_eq!(got.code(), Some(ErrorCode::InvalidParams), "{name}: {got:?}");
        assert_eq!(got.metadata.attempts, 1, "{name}: sent once, not retried");
        insta::assert_json_snapshot!(name, answer(&got));
    }
}

/// Names shown to people (meals, foods, workouts, exercises) refuse blanks,
/// control characters and bidirectional overrides in the schema: nothing
/// reaches the backend, and the answer names every offending field.
#[tokio::test]
async fn names_with_control_or_bidi_characters_are_refused_before_the_backend() {
    let env = Env::sqlite().await;
    let alice = env.user("plain-names").await;
    let cases: [(&str, Value, &[&str]); 3] = [
        (
            "update_nutrition",
            json!({"op": "log_meal", "date": "2026-03-14", "name": "  ", "items": [{"name": "oat\u{202E}meal", "grams": 1, "kcal": 1}]}),
            &["/name", "/items/0/name"],
        ),
        (
            "update_training",
            json!({"op": "log_workout", "date": "2026-03-14", "name": "leg\u{0007}day", "sets": [{"exercise": "\u{2066}squat", "reps": 5}]}),
            &["/name", "/sets/0/exercise"],
        ),
        (
            "update_training",
            json!({"op": "update_workout", "workout_id": 1, "name": "a\u{200F}b"}),
            &["/name"],
        ),
    ];
    for (tool, params, pointers) in cases {
        let got = env.call(&alice, tool, params).await;
        assert_eq!(got.code(), Some(ErrorCode::InvalidParams), "{tool}: {got:?}");
        assert_eq!(got.metadata.attempts, 0, "{tool}: nothing sent");
        let seen = answer(&got)["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["pointer"].as_str().unwrap_or("").to_owned())
            .collect::<Vec<_>>();
        for pointer in pointers {
            assert!(seen.iter().any(|p| p == pointer), "{tool}: {pointer} not among {seen:?}");
        }
    }
    let day = env.ok(&alice, "query_nutrition", json!({"op": "list_meals", "date": "2026-03-14"})).await;
    assert_eq!(day["payload"]["meals"], json!([]));
}
