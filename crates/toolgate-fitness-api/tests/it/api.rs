//! fitness-api end to end: every route over real HTTP, user isolation, bad input, 401; on
//! SQLite always and on PostgreSQL when TOOLGATE_TEST_PG_URL is set.

use crate::common::{Harness, assert_error};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(
    every_listed_route_is_served,
    unlisted_routes_are_json_errors,
    body_measurements_lifecycle,
    body_list_ranges,
    nutrition_meals_and_summary,
    nutrition_goals_are_read_with_the_day,
    training_workouts_and_sets,
    users_never_see_each_other,
    missing_or_bad_token_is_401,
    bad_input_is_named,
    odd_input_never_breaks_the_server,
    seed_demo_is_repeatable,
    ids_are_opaque,
);

/// Replaces `{var}` in a template with a value valid in shape (the row need not exist).
fn fill(path: &str) -> String {
    path.replace("{date}", "2026-03-01").replace("{meal_id}", "999999").replace("{workout_id}", "999999")
}

async fn every_listed_route_is_served(h: &Harness) {
    let token = h.user("routes").await;
    let routes = toolgate_fitness_api::routes();
    assert_eq!(routes.len(), toolgate_fitness_api::route_specs().len());
    for (method, path) in routes {
        // No body: the route is matched (so neither route_not_found nor 405), then refused
        // or answered on its own terms.
        let (status, body) = h.call(Some(&token), method.clone(), &fill(path), None).await;
        assert_ne!(body["error"]["code"], "route_not_found", "{method} {path}: {body}");
        assert_ne!(status, 405, "{method} {path}: {body}");
    }
}

async fn unlisted_routes_are_json_errors(h: &Harness) {
    let token = h.user("unlisted").await;
    assert_error(&h.get(&token, "/nutrition/items").await, 404, "route_not_found", None);
    assert_error(&h.get(&token, "/nutrition/meals/1").await, 405, "method_not_allowed", None);
    assert_error(&h.get(&token, "/").await, 404, "route_not_found", None);
    assert_error(&h.get(&token, "/body/measurements/2026-03-01/extra").await, 404, "route_not_found", None);
    assert_error(&h.delete(&token, "/training/workouts").await, 405, "method_not_allowed", None);
    assert_error(
        &h.post(&token, "/body/measurements/2026-03-01", json!({})).await,
        405,
        "method_not_allowed",
        None,
    );
}

async fn body_measurements_lifecycle(h: &Harness) {
    let t = h.user("body").await;
    let path = "/body/measurements/2026-03-01";
    assert_error(&h.get(&t, path).await, 404, "not_found", None);

    let input = json!({"weight_kg": 81.5, "body_fat_pct": 18.2, "waist_cm": 88, "note": "  after run "});
    let (status, created) = h.put(&t, path, input.clone()).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        created,
        json!({"date": "2026-03-01", "weight_kg": 81.5, "body_fat_pct": 18.2, "waist_cm": 88.0, "note": "after run"})
    );
    // PUT again: same state, 200.
    let (status, again) = h.put(&t, path, input).await;
    assert_eq!((status, &again), (200, &created));
    assert_eq!(h.get(&t, path).await, (200, created.clone()));

    // PUT replaces the whole record: fields not given become null.
    let (status, replaced) = h.put(&t, path, json!({"weight_kg": 81})).await;
    assert_eq!(status, 200);
    assert_eq!(
        replaced,
        json!({"date": "2026-03-01", "weight_kg": 81.0, "body_fat_pct": null, "waist_cm": null, "note": null})
    );

    let (status, deleted) = h.delete(&t, path).await;
    assert_eq!((status, deleted), (200, json!({"deleted": {"date": "2026-03-01"}})));
    assert_error(&h.get(&t, path).await, 404, "not_found", None);
    assert_error(&h.delete(&t, path).await, 404, "not_found", None);
}

async fn body_list_ranges(h: &Harness) {
    let t = h.user("range").await;
    for (day, kg) in [("2026-01-30", 80.0), ("2026-01-31", 80.4), ("2026-02-01", 80.2), ("2026-02-02", 79.9)]
    {
        assert_eq!(h.put(&t, &format!("/body/measurements/{day}"), json!({"weight_kg": kg})).await.0, 201);
    }
    let dates = |v: &Value| -> Vec<String> {
        v["measurements"].as_array().unwrap().iter().map(|m| m["date"].as_str().unwrap().to_owned()).collect()
    };
    let (status, all) = h.get(&t, "/body/measurements").await;
    assert_eq!(status, 200);
    assert_eq!(dates(&all), ["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]);
    assert_eq!(all["truncated"], false);
    let (_, some) = h.get(&t, "/body/measurements?from=2026-01-31&to=2026-02-01").await;
    assert_eq!(dates(&some), ["2026-01-31", "2026-02-01"]);
    assert_eq!(some["measurements"][0]["weight_kg"], 80.4);
    let (_, open_end) = h.get(&t, "/body/measurements?from=2026-02-01").await;
    assert_eq!(dates(&open_end), ["2026-02-01", "2026-02-02"]);
    let (_, open_start) = h.get(&t, "/body/measurements?to=2026-01-30").await;
    assert_eq!(dates(&open_start), ["2026-01-30"]);
    let (_, none) = h.get(&t, "/body/measurements?from=2027-01-01").await;
    assert_eq!(dates(&none), Vec::<String>::new());
}

async fn nutrition_meals_and_summary(h: &Harness) {
    let t = h.user("nutrition").await;
    let day = "/nutrition/days/2026-03-02";
    let (status, empty) = h.get(&t, &format!("{day}/summary")).await;
    assert_eq!(status, 200);
    assert_eq!(
        empty,
        json!({"date": "2026-03-02", "meal_count": 0, "item_count": 0,
               "totals": {"grams": 0.0, "kcal": 0.0, "protein_g": 0.0, "carbs_g": 0.0, "fat_g": 0.0},
               "goals": null})
    );
    assert_eq!(h.get(&t, &format!("{day}/meals")).await, (200, json!({"date": "2026-03-02", "meals": []})));

    let breakfast = json!({"name": "breakfast", "items": [
        {"name": "oatmeal", "grams": 80, "kcal": 300, "protein_g": 10.5, "carbs_g": 54, "fat_g": 5.5},
        {"name": "coffee", "grams": 200, "kcal": 2.1}
    ]});
    let (status, meal) = h.post(&t, &format!("{day}/meals"), breakfast.clone()).await;
    assert_eq!(status, 201, "{meal}");
    let meal_id = meal["meal_id"].as_i64().unwrap();
    assert_eq!(meal["name"], "breakfast");
    assert_eq!(meal["date"], "2026-03-02");
    assert_eq!(meal["items"].as_array().unwrap().len(), 2);
    assert_eq!(meal["items"][0]["name"], "oatmeal");
    assert_eq!(meal["items"][1]["protein_g"], 0.0, "macros default to 0");
    assert!(meal["items"][0]["item_id"].as_i64().is_some());
    assert_eq!(
        meal["totals"],
        json!({"grams": 280.0, "kcal": 302.1, "protein_g": 10.5, "carbs_g": 54.0, "fat_g": 5.5})
    );

    // Same name on the same day: 409 naming the existing meal; nothing is added.
    let conflict = h.post(&t, &format!("{day}/meals"), breakfast).await;
    assert_error(&conflict, 409, "conflict", None);
    assert!(conflict.1["error"]["message"].as_str().unwrap().contains(&format!("meal_id {meal_id}")));

    let lunch = json!({"name": "lunch", "items": [
        {"name": "rice", "grams": 180, "kcal": 234, "protein_g": 4.9, "carbs_g": 51, "fat_g": 0.5}
    ]});
    assert_eq!(h.post(&t, &format!("{day}/meals"), lunch).await.0, 201);
    // The same meal name on another day is fine.
    let other_day = json!({"name": "breakfast", "items": [{"name": "egg", "grams": 60, "kcal": 90}]});
    assert_eq!(h.post(&t, "/nutrition/days/2026-03-03/meals", other_day).await.0, 201);

    let (_, meals) = h.get(&t, &format!("{day}/meals")).await;
    let names: Vec<&str> =
        meals["meals"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["breakfast", "lunch"]);

    let (_, summary) = h.get(&t, &format!("{day}/summary")).await;
    assert_eq!(summary["meal_count"], 2);
    assert_eq!(summary["item_count"], 3);
    assert_eq!(
        summary["totals"],
        json!({"grams": 460.0, "kcal": 536.1, "protein_g": 15.4, "carbs_g": 105.0, "fat_g": 6.0})
    );

    let (status, deleted) = h.delete(&t, &format!("/nutrition/meals/{meal_id}")).await;
    assert_eq!((status, deleted), (200, json!({"deleted": {"meal_id": meal_id}})));
    assert_error(&h.delete(&t, &format!("/nutrition/meals/{meal_id}")).await, 404, "not_found", None);
    let (_, summary) = h.get(&t, &format!("{day}/summary")).await;
    assert_eq!((summary["meal_count"].clone(), summary["totals"]["kcal"].clone()), (json!(1), json!(234.0)));
}

/// Goals are the user's own, hold for every day, are replaced whole by `PUT`, and come back
/// beside the day's totals; bad goals are refused naming the field and change nothing.
async fn nutrition_goals_are_read_with_the_day(h: &Harness) {
    let t = h.user("goals").await;
    let other = h.user("goals-other").await;
    let goals = json!({"kcal": 2200, "protein_g": 140, "carbs_g": 250, "fat_g": 70});
    let (status, stored) = h.put(&t, "/nutrition/goals", goals).await;
    assert_eq!(status, 201, "{stored}");
    assert_eq!(stored, json!({"kcal": 2200.0, "protein_g": 140.0, "carbs_g": 250.0, "fat_g": 70.0}));
    let meal =
        json!({"name": "lunch", "items": [{"name": "rice", "grams": 180, "kcal": 234, "protein_g": 4.9}]});
    assert_eq!(h.post(&t, "/nutrition/days/2026-03-04/meals", meal).await.0, 201);
    for day in ["2026-03-04", "2031-12-31"] {
        let (_, summary) = h.get(&t, &format!("/nutrition/days/{day}/summary")).await;
        assert_eq!(summary["goals"], stored, "goals hold for every day: {summary}");
    }
    let (_, summary) = h.get(&t, "/nutrition/days/2026-03-04/summary").await;
    assert_eq!(
        (summary["totals"]["kcal"].clone(), summary["goals"]["kcal"].clone()),
        (json!(234.0), json!(2200.0))
    );
    // Another user sees none of them.
    let (_, theirs) = h.get(&other, "/nutrition/days/2026-03-04/summary").await;
    assert_eq!(theirs["goals"], Value::Null, "{theirs}");

    // A second PUT replaces the whole set: an absent goal is no goal.
    let (status, replaced) = h.put(&t, "/nutrition/goals", json!({"kcal": 1800.5})).await;
    assert_eq!(
        (status, replaced.clone()),
        (200, json!({"kcal": 1800.5, "protein_g": null, "carbs_g": null, "fat_g": null}))
    );
    let (_, summary) = h.get(&t, "/nutrition/days/2026-03-04/summary").await;
    assert_eq!(summary["goals"], replaced);

    // Refused: out of range, negative, unknown field, empty set. The stored goals stay.
    assert_error(
        &h.put(&t, "/nutrition/goals", json!({"kcal": 20001})).await,
        422,
        "invalid_params",
        Some("kcal"),
    );
    assert_error(
        &h.put(&t, "/nutrition/goals", json!({"kcal": 2000, "fat_g": -1})).await,
        422,
        "invalid_params",
        Some("fat_g"),
    );
    assert_eq!(h.put(&t, "/nutrition/goals", json!({"kcal": 2000, "sugar_g": 30})).await.0, 422);
    assert_error(&h.put(&t, "/nutrition/goals", json!({})).await, 422, "invalid_params", Some("body"));
    let (_, summary) = h.get(&t, "/nutrition/days/2026-03-04/summary").await;
    assert_eq!(summary["goals"], replaced, "nothing refused was written");
}

async fn training_workouts_and_sets(h: &Harness) {
    let t = h.user("training").await;
    let input = json!({"date": "2026-03-04", "name": "leg day", "duration_min": 55, "notes": "heavy",
        "sets": [{"exercise": "squat", "reps": 5, "weight_kg": 100}, {"exercise": "squat", "reps": 5, "weight_kg": 102.5}]});
    let (status, w) = h.post(&t, "/training/workouts", input.clone()).await;
    assert_eq!(status, 201, "{w}");
    let id = w["workout_id"].as_i64().unwrap();
    assert_eq!(
        (&w["date"], &w["name"], &w["duration_min"], &w["notes"]),
        (&json!("2026-03-04"), &json!("leg day"), &json!(55), &json!("heavy"))
    );
    let set_nos: Vec<i64> =
        w["sets"].as_array().unwrap().iter().map(|s| s["set_no"].as_i64().unwrap()).collect();
    assert_eq!(set_nos, [1, 2]);
    assert_eq!(w["sets"][1]["weight_kg"], 102.5);
    let path = format!("/training/workouts/{id}");
    assert_eq!(h.get(&t, &path).await, (200, w.clone()));

    assert_error(&h.post(&t, "/training/workouts", input).await, 409, "conflict", None);
    // A workout without sets, on another day.
    let (status, rest) =
        h.post(&t, "/training/workouts", json!({"date": "2026-03-06", "name": "mobility"})).await;
    assert_eq!(status, 201);
    assert_eq!(
        (&rest["sets"], &rest["duration_min"], &rest["notes"]),
        (&json!([]), &json!(null), &json!(null))
    );
    let rest_id = rest["workout_id"].as_i64().unwrap();

    // Append sets: numbered after the last one.
    let (status, added) = h.post(&t, &format!("{path}/sets"), json!({"exercise": "lunge", "reps": 10})).await;
    assert_eq!(status, 201, "{added}");
    assert_eq!(added["workout_id"], id);
    assert_eq!(
        (&added["set"]["set_no"], &added["set"]["exercise"], &added["set"]["weight_kg"]),
        (&json!(3), &json!("lunge"), &json!(null))
    );
    let (_, again) =
        h.post(&t, &format!("{path}/sets"), json!({"exercise": "lunge", "reps": 8, "weight_kg": 20})).await;
    assert_eq!(again["set"]["set_no"], 4);

    // PATCH changes only what is given; "" clears notes.
    let (status, patched) = h.patch(&t, &path, json!({"duration_min": 70, "notes": ""})).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(
        (&patched["duration_min"], &patched["notes"], &patched["name"]),
        (&json!(70), &json!(null), &json!("leg day"))
    );
    assert_eq!(patched["sets"].as_array().unwrap().len(), 4);
    let (_, moved) = h.patch(&t, &path, json!({"date": "2026-03-05", "name": "legs"})).await;
    assert_eq!((&moved["date"], &moved["name"]), (&json!("2026-03-05"), &json!("legs")));
    // Renaming onto another workout's (date, name): 409.
    let clash = h.patch(&t, &path, json!({"date": "2026-03-06", "name": "mobility"})).await;
    assert_error(&clash, 409, "conflict", None);
    assert!(clash.1["error"]["message"].as_str().unwrap().contains(&format!("workout_id {rest_id}")));

    let (_, listed) = h.get(&t, "/training/workouts?from=2026-03-01&to=2026-03-31").await;
    let ids: Vec<i64> =
        listed["workouts"].as_array().unwrap().iter().map(|w| w["workout_id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [id, rest_id]);
    assert_eq!(listed["workouts"][0]["sets"].as_array().unwrap().len(), 4);
    let (_, only_first) = h.get(&t, "/training/workouts?to=2026-03-05").await;
    assert_eq!(only_first["workouts"].as_array().unwrap().len(), 1);

    let (status, deleted) = h.delete(&t, &path).await;
    assert_eq!((status, deleted), (200, json!({"deleted": {"workout_id": id}})));
    assert_error(&h.get(&t, &path).await, 404, "not_found", None);
    assert_error(
        &h.post(&t, &format!("{path}/sets"), json!({"exercise": "x", "reps": 1})).await,
        404,
        "not_found",
        None,
    );
    assert_error(&h.patch(&t, &path, json!({"notes": "x"})).await, 404, "not_found", None);
    assert_error(&h.delete(&t, &path).await, 404, "not_found", None);
}

async fn users_never_see_each_other(h: &Harness) {
    let a = h.user("alice").await;
    let b = h.user("bob").await;
    assert_eq!(h.put(&a, "/body/measurements/2026-03-07", json!({"weight_kg": 70})).await.0, 201);
    let (_, meal) = h
        .post(
            &a,
            "/nutrition/days/2026-03-07/meals",
            json!({"name": "dinner", "items": [{"name": "soup", "grams": 300, "kcal": 150}]}),
        )
        .await;
    let meal_id = meal["meal_id"].as_i64().unwrap();
    let (_, w) = h
        .post(&a, "/training/workouts", json!({"date": "2026-03-07", "name": "run", "duration_min": 30}))
        .await;
    let wid = w["workout_id"].as_i64().unwrap();

    // B reads nothing of A's.
    assert_error(&h.get(&b, "/body/measurements/2026-03-07").await, 404, "not_found", None);
    assert_eq!(h.get(&b, "/body/measurements").await.1["measurements"], json!([]));
    assert_eq!(h.get(&b, "/nutrition/days/2026-03-07/meals").await.1["meals"], json!([]));
    assert_eq!(h.get(&b, "/nutrition/days/2026-03-07/summary").await.1["meal_count"], 0);
    assert_eq!(h.get(&b, "/training/workouts").await.1["workouts"], json!([]));
    assert_error(&h.get(&b, &format!("/training/workouts/{wid}")).await, 404, "not_found", None);
    // B changes nothing of A's: same 404 as for a row that does not exist.
    assert_error(&h.delete(&b, "/body/measurements/2026-03-07").await, 404, "not_found", None);
    assert_error(&h.delete(&b, &format!("/nutrition/meals/{meal_id}")).await, 404, "not_found", None);
    assert_error(
        &h.patch(&b, &format!("/training/workouts/{wid}"), json!({"notes": "mine"})).await,
        404,
        "not_found",
        None,
    );
    assert_error(
        &h.post(&b, &format!("/training/workouts/{wid}/sets"), json!({"exercise": "x", "reps": 1})).await,
        404,
        "not_found",
        None,
    );
    assert_error(&h.delete(&b, &format!("/training/workouts/{wid}")).await, 404, "not_found", None);
    // B may use the same day and names for its own rows.
    assert_eq!(h.put(&b, "/body/measurements/2026-03-07", json!({"weight_kg": 90})).await.0, 201);
    assert_eq!(h.post(&b, "/training/workouts", json!({"date": "2026-03-07", "name": "run"})).await.0, 201);

    // A's rows are intact.
    assert_eq!(h.get(&a, "/body/measurements/2026-03-07").await.1["weight_kg"], 70.0);
    assert_eq!(h.get(&a, "/nutrition/days/2026-03-07/meals").await.1["meals"][0]["meal_id"], meal_id);
    let (status, still) = h.get(&a, &format!("/training/workouts/{wid}")).await;
    assert_eq!((status, &still["notes"], still["sets"].as_array().unwrap().len()), (200, &json!(null), 0));
}

async fn missing_or_bad_token_is_401(h: &Harness) {
    let good = h.user("auth").await;
    for (method, path) in toolgate_fitness_api::routes() {
        for token in [None, Some("fit_not-a-real-token")] {
            let answer = h.call(token, method.clone(), &fill(path), Some(json!({"bogus": true}))).await;
            assert_error(&answer, 401, "unauthorized", None);
        }
    }
    // The challenge header, and other schemes.
    let resp = h.client.get(h.url("/body/measurements")).send().await.unwrap();
    assert_eq!(resp.headers().get("www-authenticate").unwrap(), "Bearer");
    let basic = h
        .client
        .get(h.url("/body/measurements"))
        .header("authorization", format!("Basic {good}"))
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status().as_u16(), 401);
    let lower = h
        .client
        .get(h.url("/body/measurements"))
        .header("authorization", format!("bearer {good}"))
        .send()
        .await
        .unwrap();
    assert_eq!(lower.status().as_u16(), 200);
    // The message never echoes the token.
    let (_, body) = h.call(Some("fit_secret-value-123"), Method::GET, "/body/measurements", None).await;
    assert!(!body.to_string().contains("secret-value-123"));
    // A revoked token stops working; a second token of the same user keeps working.
    let user = toolgate_fitness_api::create_user(&h.db, &crate::common::unique_user("revoke")).await.unwrap();
    assert_eq!(h.get(&user, "/body/measurements").await.0, 200);
    assert!(toolgate_fitness_api::revoke_token(&h.db, &user).await.unwrap());
    assert_error(&h.get(&user, "/body/measurements").await, 401, "unauthorized", None);
}

async fn bad_input_is_named(h: &Harness) {
    let t = h.user("bad").await;
    // Path variables.
    assert_error(&h.get(&t, "/body/measurements/2026-02-30").await, 400, "invalid_params", Some("date"));
    assert_error(
        &h.put(&t, "/body/measurements/2026-13-01", json!({"weight_kg": 80})).await,
        400,
        "invalid_params",
        Some("date"),
    );
    assert_error(&h.get(&t, "/nutrition/days/yesterday/summary").await, 400, "invalid_params", Some("date"));
    assert_error(&h.get(&t, "/training/workouts/abc").await, 400, "invalid_params", Some("workout_id"));
    assert_error(&h.get(&t, "/training/workouts/-3").await, 400, "invalid_params", Some("workout_id"));
    assert_error(&h.delete(&t, "/nutrition/meals/0").await, 400, "invalid_params", Some("meal_id"));
    assert_error(&h.delete(&t, "/nutrition/meals/..%2Fadmin").await, 400, "invalid_params", Some("meal_id"));
    // An HTTP client normalises `%2e%2e` away (WHATWG URL); whatever arrives is refused as JSON.
    let (status, _) = h.get(&t, "/training/workouts/%2e%2e").await;
    assert!(status == 400 || status == 404, "{status}");
    // Query parameters.
    assert_error(&h.get(&t, "/body/measurements?from=2026-02-30").await, 400, "invalid_params", Some("from"));
    assert_error(
        &h.get(&t, "/training/workouts?from=2026-03-02&to=2026-03-01").await,
        400,
        "invalid_params",
        Some("from"),
    );
    assert_error(&h.get(&t, "/body/measurements?limit=5").await, 400, "invalid_params", Some("limit"));

    // Bodies: out of range, unknown fields, wrong types, missing fields — each named.
    let m = "/body/measurements/2026-03-08";
    assert_error(&h.put(&t, m, json!({"weight_kg": -80})).await, 422, "invalid_params", Some("weight_kg"));
    assert_error(
        &h.put(&t, m, json!({"body_fat_pct": 101})).await,
        422,
        "invalid_params",
        Some("body_fat_pct"),
    );
    assert_error(
        &h.put(&t, m, json!({"weight_kg": 80, "user_id": "someone"})).await,
        422,
        "invalid_params",
        Some("user_id"),
    );
    assert_error(
        &h.put(&t, m, json!({"weight_kg": "heavy"})).await,
        422,
        "invalid_params",
        Some("weight_kg"),
    );
    assert_error(&h.put(&t, m, json!({})).await, 422, "invalid_params", Some("body"));
    assert_error(&h.put(&t, m, json!([1, 2])).await, 422, "invalid_params", None);
    let meals = "/nutrition/days/2026-03-08/meals";
    let negative =
        h.post(&t, meals, json!({"name": "x", "items": [{"name": "a", "grams": -5, "kcal": 1}]})).await;
    assert_error(&negative, 422, "invalid_params", Some("items[0].grams"));
    // Every refused field at once.
    let many = h
        .post(
            &t,
            meals,
            json!({"name": " ", "items": [{"name": "a", "grams": 1, "kcal": -1, "fat_g": 2000}]}),
        )
        .await;
    assert_error(&many, 422, "invalid_params", Some("name"));
    assert_error(&many, 422, "invalid_params", Some("items[0].kcal"));
    assert_error(&many, 422, "invalid_params", Some("items[0].fat_g"));
    assert_error(
        &h.post(&t, meals, json!({"name": "x", "items": []})).await,
        422,
        "invalid_params",
        Some("items"),
    );
    assert_error(&h.post(&t, meals, json!({"name": "x"})).await, 422, "invalid_params", Some("items"));
    let typo = h.post(&t, meals, json!({"name": "x", "items": [{"name": "a", "gram": 5, "kcal": 1}]})).await;
    assert_error(&typo, 422, "invalid_params", Some("gram"));
    let too_many: Vec<Value> =
        (0..51).map(|i| json!({"name": format!("i{i}"), "grams": 1, "kcal": 1})).collect();
    assert_error(
        &h.post(&t, meals, json!({"name": "x", "items": too_many})).await,
        422,
        "invalid_params",
        Some("items"),
    );
    let workouts = "/training/workouts";
    assert_error(
        &h.post(&t, workouts, json!({"date": "2026-02-30", "name": "x"})).await,
        422,
        "invalid_params",
        Some("date"),
    );
    assert_error(
        &h.post(&t, workouts, json!({"date": "2026-03-08"})).await,
        422,
        "invalid_params",
        Some("name"),
    );
    let frac = h
        .post(
            &t,
            workouts,
            json!({"date": "2026-03-08", "name": "x", "sets": [{"exercise": "a", "reps": 1.5}]}),
        )
        .await;
    assert_error(&frac, 422, "invalid_params", Some("sets[0].reps"));
    let neg = h.post(&t, workouts, json!({"date": "2026-03-08", "name": "x", "duration_min": -1, "sets": [{"exercise": "a", "reps": -2}]})).await;
    assert_error(&neg, 422, "invalid_params", Some("duration_min"));
    assert_error(&neg, 422, "invalid_params", Some("sets[0].reps"));
    let (_, w) = h.post(&t, workouts, json!({"date": "2026-03-08", "name": "ok"})).await;
    let path = format!("/training/workouts/{}", w["workout_id"]);
    assert_error(&h.patch(&t, &path, json!({})).await, 422, "invalid_params", Some("body"));
    assert_error(
        &h.patch(&t, &path, json!({"date": "2026-02-29"})).await,
        422,
        "invalid_params",
        Some("date"),
    );
    assert_error(&h.patch(&t, &path, json!({"sets": []})).await, 422, "invalid_params", Some("sets"));
    assert_error(
        &h.post(&t, &format!("{path}/sets"), json!({"exercise": "a", "reps": 3, "weight_kg": -1})).await,
        422,
        "invalid_params",
        Some("weight_kg"),
    );
    // Nothing of the refused writes was stored.
    assert_eq!(h.get(&t, "/nutrition/days/2026-03-08/summary").await.1["meal_count"], 0);
    assert_eq!(h.get(&t, "/training/workouts").await.1["workouts"].as_array().unwrap().len(), 1);

    // Not JSON at all.
    let raw = |body: &'static str, ctype: Option<&'static str>| {
        let mut req = h.client.put(h.url(m)).bearer_auth(&t).body(body);
        if let Some(c) = ctype {
            req = req.header("content-type", c);
        }
        req.send()
    };
    let resp = raw("{\"weight_kg\": 80", Some("application/json")).await.unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    assert_eq!(resp.json::<Value>().await.unwrap()["error"]["code"], "invalid_params");
    let resp = raw("weight_kg=80", Some("application/x-www-form-urlencoded")).await.unwrap();
    assert_eq!(resp.status().as_u16(), 415);
    assert_eq!(resp.json::<Value>().await.unwrap()["error"]["code"], "unsupported_media_type");
    let resp = raw("{\"weight_kg\": 80}", None).await.unwrap();
    assert_eq!(resp.status().as_u16(), 415);
}

async fn odd_input_never_breaks_the_server(h: &Harness) {
    let t = h.user("odd").await;
    let long = "x".repeat(5000);
    let odd_values = [
        json!(null),
        json!(true),
        json!(1e308),
        json!(-0.0),
        json!(i64::MAX),
        json!(u64::MAX),
        json!("💪"),
        json!(long),
        json!([]),
        json!({"a": {"b": [1]}}),
    ];
    let bodies: Vec<(&str, &str, Vec<&str>)> = vec![
        ("PUT", "/body/measurements/2026-03-09", vec!["weight_kg", "body_fat_pct", "waist_cm", "note"]),
        ("POST", "/nutrition/days/2026-03-09/meals", vec!["name", "items"]),
        ("POST", "/training/workouts", vec!["date", "name", "duration_min", "notes", "sets"]),
    ];
    for (method, path, fields) in bodies {
        let method: Method = method.parse().unwrap();
        for field in fields {
            for value in &odd_values {
                // `call` asserts the answer is JSON and below 500.
                let (status, _) = h.call(Some(&t), method.clone(), path, Some(json!({ field: value }))).await;
                assert!(
                    matches!(status, 200 | 201 | 400 | 409 | 422),
                    "{method} {path} {field}={value}: {status}"
                );
            }
        }
    }
    let item = json!({"name": "x", "items": [{"name": "🍌".repeat(201), "grams": 1e300, "kcal": 1}]});
    let (status, body) = h.call(Some(&t), Method::POST, "/nutrition/days/2026-03-09/meals", Some(item)).await;
    assert_eq!(status, 422, "{body}");
    // A body over axum's 2 MiB limit, and a method nobody routes: still JSON, still below 500.
    let huge = json!({"note": "n".repeat(3 << 20)});
    let (status, body) = h.call(Some(&t), Method::PUT, "/body/measurements/2026-03-09", Some(huge)).await;
    assert_eq!(status, 413, "{body}");
    assert_error(
        &h.call(Some(&t), Method::OPTIONS, "/training/workouts", None).await,
        405,
        "method_not_allowed",
        None,
    );
    for path in
        ["/body/measurements/%FF", "/training/workouts/99999999999999999999999", "/nutrition/days/%00/meals"]
    {
        let (status, _) = h.call(Some(&t), Method::GET, path, None).await;
        assert_eq!(status, 400, "{path}");
    }
}

async fn seed_demo_is_repeatable(h: &Harness) {
    let user = crate::common::unique_user("demo");
    let token = toolgate_fitness_api::create_user(&h.db, &user).await.unwrap();
    let today = chrono::NaiveDate::from_ymd_opt(2026, 3, 15).unwrap();
    let first = toolgate_fitness_api::seed_demo(&h.db, &user, today).await.unwrap();
    assert_eq!((first.measurements, first.meals, first.workouts), (14, 2, 2));
    let second = toolgate_fitness_api::seed_demo(&h.db, &user, today).await.unwrap();
    assert_eq!((second.meals, second.workouts), (0, 0));

    let (_, m) = h.get(&token, "/body/measurements?from=2026-03-02&to=2026-03-15").await;
    assert_eq!(m["measurements"].as_array().unwrap().len(), 14);
    let (_, s) = h.get(&token, "/nutrition/days/2026-03-15/summary").await;
    assert_eq!((s["meal_count"].clone(), s["item_count"].clone()), (json!(2), json!(6)));
    let (_, w) = h.get(&token, "/training/workouts?from=2026-03-13").await;
    let names: Vec<&str> =
        w["workouts"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["leg day", "upper body"]);

    let missing = toolgate_fitness_api::seed_demo(&h.db, &crate::common::unique_user("nobody"), today).await;
    assert!(matches!(missing, Err(toolgate_fitness_api::Error::Invalid { field: "user_id", .. })));
}

/// Meal, workout and set ids are no counters: two rows made one after the other are not
/// numbered n and n + 1, and no id is small enough to count rows (issue 9: they leaked volume).
async fn ids_are_opaque(h: &Harness) {
    let t = h.user("ids").await;
    let mut workouts = Vec::new();
    let mut sets = Vec::new();
    let mut meals = Vec::new();
    for n in 0..3 {
        let body = json!({"date": "2026-05-01", "name": format!("w{n}"), "sets": [{"exercise": "squat", "reps": 5}]});
        let (status, w) = h.post(&t, "/training/workouts", body).await;
        assert_eq!(status, 201, "{w}");
        workouts.push(w["workout_id"].as_i64().unwrap());
        sets.push(w["sets"][0]["set_id"].as_i64().unwrap());
        let meal = json!({"name": format!("m{n}"), "items": [{"name": "oats", "grams": 50, "kcal": 190, "protein_g": 6, "carbs_g": 33, "fat_g": 3}]});
        let (status, m) = h.post(&t, "/nutrition/days/2026-05-01/meals", meal).await;
        assert_eq!(status, 201, "{m}");
        meals.push(m["meal_id"].as_i64().unwrap());
    }
    for (what, ids) in [("workout", &workouts), ("set", &sets), ("meal", &meals)] {
        assert!(ids.iter().all(|&id| id > 1 << 32 && id < 1 << 53), "{what} ids {ids:?}");
        assert!(ids.windows(2).all(|w| w[1] != w[0] + 1), "{what} ids are consecutive: {ids:?}");
    }
    // The day still lists them in the order they were made.
    let (_, listed) = h.get(&t, "/training/workouts?from=2026-05-01&to=2026-05-01").await;
    let names: Vec<&str> =
        listed["workouts"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["w0", "w1", "w2"], "{listed}");
}
