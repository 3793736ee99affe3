//! The library surface: connect, users and tokens, the in-process server, concurrent writes.

use crate::common::{Harness, assert_error, unique_user};
use reqwest::Method;
use serde_json::json;

on_both_backends!(racing_writes_never_fail_or_duplicate, users_and_tokens, expiring_tokens_stop_working);

#[tokio::test]
async fn unsupported_urls_are_refused() {
    for url in ["mysql://root@localhost/db", "fitness.db", "", "http://x"] {
        let result = toolgate_fitness_api::connect(url).await;
        assert!(
            matches!(
                result,
                Err(toolgate_fitness_api::Error::Connect(toolgate_db::Error::UnsupportedUrl { .. }))
            ),
            "{url}: {result:?}"
        );
    }
}

#[tokio::test]
async fn in_memory_sqlite_serves_and_shuts_down() {
    let db = toolgate_fitness_api::connect("sqlite::memory:").await.unwrap();
    assert_eq!(db.backend_name(), "sqlite");
    assert_eq!(format!("{db:?}"), r#"Db { backend: "sqlite" }"#);
    let token = toolgate_fitness_api::create_user(&db, "mem").await.unwrap();
    let server = toolgate_fitness_api::spawn("127.0.0.1:0", db).await.unwrap();
    let url = format!("{}/body/measurements/2026-04-01", server.url());
    let client = reqwest::Client::new();
    let put = client.put(&url).bearer_auth(&token).json(&json!({"weight_kg": 72})).send().await.unwrap();
    assert_eq!(put.status().as_u16(), 201);
    let get = client.get(&url).bearer_auth(&token).send().await.unwrap();
    assert_eq!(get.json::<serde_json::Value>().await.unwrap()["weight_kg"], 72.0);
    server.shutdown().await.unwrap();
    assert!(client.get(&url).bearer_auth(&token).send().await.is_err(), "still serving after shutdown");
}

#[tokio::test]
async fn sqlite_file_uses_wal_and_migrates_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("f.db").display());
    let db = toolgate_fitness_api::connect(&url).await.unwrap();
    let token = toolgate_fitness_api::create_user(&db, "walker").await.unwrap();
    db.close().await;
    // Reconnecting applies nothing twice and keeps the data.
    let db = toolgate_fitness_api::connect(&url).await.unwrap();
    let server = toolgate_fitness_api::spawn("127.0.0.1:0", db.clone()).await.unwrap();
    let resp = reqwest::Client::new()
        .put(format!("{}/body/measurements/2026-04-02", server.url()))
        .bearer_auth(&token)
        .json(&json!({"waist_cm": 85}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    assert!(dir.path().join("f.db-wal").exists(), "journal mode is not WAL");
    server.shutdown().await.unwrap();
    db.close().await;
}

#[tokio::test]
async fn serve_runs_on_a_listener_the_caller_owns() {
    let db = toolgate_fitness_api::connect("sqlite::memory:").await.unwrap();
    let token = toolgate_fitness_api::create_user(&db, "owner").await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(toolgate_fitness_api::serve(listener, db));
    let resp = reqwest::Client::new()
        .get(format!("http://{addr}/training/workouts"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    task.abort();
}

async fn users_and_tokens(h: &Harness) {
    let id = unique_user("tokens");
    let first = toolgate_fitness_api::create_user(&h.db, &id).await.unwrap();
    assert!(first.starts_with("fit_") && first.len() == 68, "{first}");
    assert!(matches!(
        toolgate_fitness_api::create_user(&h.db, &id).await,
        Err(toolgate_fitness_api::Error::Conflict(_))
    ));
    let second = toolgate_fitness_api::issue_token(&h.db, &id).await.unwrap();
    assert_ne!(first, second);
    // Both tokens are the same user.
    assert_eq!(h.put(&first, "/body/measurements/2026-04-03", json!({"weight_kg": 75})).await.0, 201);
    assert_eq!(h.get(&second, "/body/measurements/2026-04-03").await.1["weight_kg"], 75.0);

    for bad in ["", "has space", "semi;colon", "quote'", &"x".repeat(129)] {
        let err = toolgate_fitness_api::create_user(&h.db, bad).await.unwrap_err();
        assert!(
            matches!(err, toolgate_fitness_api::Error::Invalid { field: "user_id", .. }),
            "{bad:?}: {err}"
        );
    }
    let missing = toolgate_fitness_api::issue_token(&h.db, &unique_user("ghost")).await;
    assert!(matches!(missing, Err(toolgate_fitness_api::Error::Invalid { field: "user_id", .. })));
    assert!(!toolgate_fitness_api::revoke_token(&h.db, "fit_unknown").await.unwrap());
}

async fn racing_writes_never_fail_or_duplicate(h: &Harness) {
    let t = h.user("race").await;
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (client, base, t) = (h.client.clone(), h.server.url(), t.clone());
        tasks.push(tokio::spawn(async move {
            let put = client
                .put(format!("{base}/body/measurements/2026-04-04"))
                .bearer_auth(&t)
                .json(&json!({"weight_kg": 80 + i}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            let meal = client
                .post(format!("{base}/nutrition/days/2026-04-04/meals"))
                .bearer_auth(&t)
                .json(&json!({"name": "snack", "items": [{"name": "apple", "grams": 150, "kcal": 78}]}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            (put, meal)
        }));
    }
    let mut meal_created = 0;
    for task in tasks {
        let (put, meal) = task.await.unwrap();
        assert!(put == 200 || put == 201, "PUT answered {put}");
        assert!(meal == 201 || meal == 409, "POST meal answered {meal}");
        meal_created += usize::from(meal == 201);
    }
    assert_eq!(meal_created, 1);
    let (_, list) = h.call(Some(&t), Method::GET, "/body/measurements", None).await;
    assert_eq!(list["measurements"].as_array().unwrap().len(), 1);
    let (_, summary) = h.get(&t, "/nutrition/days/2026-04-04/summary").await;
    assert_eq!((summary["meal_count"].clone(), summary["totals"]["kcal"].clone()), (json!(1), json!(78.0)));

    // Sets appended concurrently to one workout: each either lands with its own number or
    // is refused as a conflict, never a 500 or a duplicate number.
    let (_, w) = h.post(&t, "/training/workouts", json!({"date": "2026-04-04", "name": "race"})).await;
    let sets_url = format!("{}/training/workouts/{}/sets", h.server.url(), w["workout_id"]);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (client, url, t) = (h.client.clone(), sets_url.clone(), t.clone());
        tasks.push(tokio::spawn(async move {
            let body = json!({"exercise": "burpee", "reps": 10});
            client.post(url).bearer_auth(&t).json(&body).send().await.unwrap().status().as_u16()
        }));
    }
    let mut added = 0;
    for task in tasks {
        let status = task.await.unwrap();
        assert!(status == 201 || status == 409, "POST set answered {status}");
        added += usize::from(status == 201);
    }
    let (_, w) = h.get(&t, &format!("/training/workouts/{}", w["workout_id"])).await;
    let numbers: Vec<i64> =
        w["sets"].as_array().unwrap().iter().map(|s| s["set_no"].as_i64().unwrap()).collect();
    assert_eq!(numbers, (1..=added as i64).collect::<Vec<_>>());
    assert!(added >= 1);
}

async fn expiring_tokens_stop_working(h: &Harness) {
    let id = unique_user("expiring");
    let ttl = std::time::Duration::from_secs(600);
    let issued = toolgate_fitness_api::issue_expiring_token(&h.db, &id, ttl).await.unwrap();
    let left = issued.expires_at - chrono::Utc::now();
    assert!(left > chrono::Duration::seconds(590) && left <= chrono::Duration::seconds(600), "{left}");
    assert_eq!(
        h.get(&issued.token, "/body/measurements").await.0,
        200,
        "a fresh token works (the user was created)"
    );
    // Time passes: the stored expiry is moved into the past.
    let expired = toolgate_fitness_api::issue_expiring_token(&h.db, &id, ttl).await.unwrap();
    expire_all_tokens_of(h, &id).await;
    let answer = h.get(&expired.token, "/body/measurements").await;
    assert_error(&answer, 401, "unauthorized", None);
    // Expired tokens are deleted when the next one is issued.
    let fresh = toolgate_fitness_api::issue_expiring_token(&h.db, &id, ttl).await.unwrap();
    assert_eq!(h.get(&fresh.token, "/body/measurements").await.0, 200);
    assert_eq!(token_rows_of(h, &id).await, 1, "the expired tokens are gone");
}

async fn expire_all_tokens_of(h: &Harness, user: &str) {
    let past = chrono::Utc::now().timestamp() - 1;
    h.raw_exec("UPDATE fit_tokens SET expires_at = $1 WHERE user_id = $2", past, user).await;
}

async fn token_rows_of(h: &Harness, user: &str) -> i64 {
    h.raw_count("SELECT count(*) FROM fit_tokens WHERE user_id = $1", user).await
}
