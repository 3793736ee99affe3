//! The `fitness-api` binary: flags, the printed address, demo seeding.

use std::process::{Command, Stdio};

use toolgate_test_support::process::Running;

const BIN: &str = env!("CARGO_BIN_EXE_fitness-api");

#[tokio::test]
async fn binary_prints_its_address_and_serves_the_demo_user() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("bin.db").display());
    let mut child = Running::spawn(
        Command::new(BIN)
            .args(["--listen", "127.0.0.1:0", "--db", &db, "--demo-user", "demo"])
            .stderr(Stdio::piped()),
    );
    let (_, printed) = child.read_until("listening on ");
    let mut lines = printed.lines();
    let demo = lines.next().unwrap();
    let listening = lines.next().unwrap();
    let token = demo.split("token ").nth(1).and_then(|rest| rest.split(' ').next()).unwrap().to_owned();
    let base = listening.strip_prefix("listening on ").unwrap().to_owned();
    assert!(base.starts_with("http://127.0.0.1:") && !base.ends_with(":0"), "{listening}");

    let today = chrono::Utc::now().date_naive();
    let resp = reqwest::Client::new()
        .get(format!("{base}/nutrition/days/{today}/summary"))
        .bearer_auth(&token)
        .send()
        .await;
    drop(child);
    let summary: serde_json::Value = resp.unwrap().json().await.unwrap();
    assert_eq!(summary["meal_count"], 2, "{summary}");
}

#[test]
fn bad_flags_exit_2_with_usage() {
    let out = Command::new(BIN).args(["--port", "8080"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown argument \"--port\"") && stderr.contains("usage:"), "{stderr}");
}

#[test]
fn bad_database_url_exits_1_without_serving() {
    let out = Command::new(BIN).args(["--listen", "127.0.0.1:0", "--db", "mysql://x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported database URL"));
    assert!(out.stdout.is_empty());
}
