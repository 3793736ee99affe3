//! The `toolgate` binary as a user runs it: a fresh SQLite file per test.

use std::process::Command;

fn toolgate(db: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let url = format!("sqlite:{}", db.display());
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--db")
        .arg(&url)
        .args(args)
        .env_remove("TOOLGATE_DATABASE_URL")
        .env_remove("TOOLGATE_CONFIG")
        .output()
        .expect("toolgate runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn call_prints_the_envelope_and_exits_by_success() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) =
        toolgate(&db, &["call", "query_travel_order", "--user", "alice", "--role", "member"]);
    assert_eq!(code, 0, "{err}");
    let env: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(env["success"], true);

    let (code, out, _) = toolgate(
        &db,
        &[
            "call",
            "submit_travel_approval",
            "--user",
            "alice",
            "--role",
            "member",
            "--params",
            r#"{"destination": ""}"#,
        ],
    );
    assert_eq!(code, 1);
    let env: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(env["error"]["code"], "INVALID_PARAMS");

    let (code, out, _) = toolgate(&db, &["call", "query_travel_order", "--user", "eve", "--role", "guest"]);
    assert_eq!(code, 1);
    assert!(out.contains("PERMISSION_DENIED"));

    let (code, _, err) = toolgate(&db, &["call", "query_travel_order", "--user", "eve", "--role", "emperor"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown role `emperor`"), "{err}");

    let (code, out, _) = toolgate(
        &db,
        &["call", "query_travel_order", "--user", "a", "--role", "member", "--params", "{oops"],
    );
    assert_eq!(code, 1);
    assert!(out.contains("not valid JSON"));
}

#[test]
fn fitness_tools_work_through_the_in_process_api() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let put = r#"{"op": "put_measurement", "date": "2026-07-15", "weight_kg": 71.5}"#;
    let (code, out, err) =
        toolgate(&db, &["call", "update_body_data", "--user", "ada", "--role", "member", "--params", put]);
    assert_eq!(code, 0, "{out}{err}");
    let get = r#"{"op": "get_measurement", "date": "2026-07-15"}"#;
    let (code, out, _) =
        toolgate(&db, &["call", "query_body_data", "--user", "ada", "--role", "member", "--params", get]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("71.5"));
    // Another user does not see it.
    let (code, out, _) =
        toolgate(&db, &["call", "query_body_data", "--user", "bea", "--role", "member", "--params", get]);
    assert_eq!(code, 1);
    assert!(out.contains("NOT_FOUND"), "{out}");
}

#[test]
fn discovery_commands() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, _) = toolgate(&db, &["tools", "--filter", "nutrition"]);
    assert_eq!(code, 0);
    let names: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(names, ["query_nutrition", "run_daily_nutrition_review", "update_nutrition"], "{out}");
    let (code, out, _) = toolgate(&db, &["tools", "--role", "guest"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("query_weather"), "{out}");
    let (code, out, _) = toolgate(&db, &["schema", "query_nutrition", "--format", "gemini"]);
    assert_eq!(code, 0);
    assert!(out.contains("\"parameters\""), "{out}");
    let (code, out, _) = toolgate(&db, &["guide", "travel-request"]);
    assert_eq!(code, 0);
    assert!(out.contains("submit_travel_approval"));
    let (code, _, err) = toolgate(&db, &["guide", "no-such-skill"]);
    assert_eq!(code, 1);
    assert!(err.contains("SKILL_NOT_FOUND"));
    let (code, out, _) = toolgate(&db, &["catalog", "--role", "member"]);
    assert_eq!(code, 0);
    assert!(out.contains("`travel-request`"));
    let (code, out, _) = toolgate(&db, &["migrate"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn meta_mode_costs_at_most_10_percent_of_direct_mode_and_2000_tokens_with_200_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = toolgate(&dir.path().join("t.db"), &["budget"]);
    assert_eq!(code, 0, "{err}");
    let share: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("meta / direct: "))
        .and_then(|rest| rest.split('%').next())
        .and_then(|n| n.trim().parse().ok())
        .expect("a share line");
    assert!(share <= 10.0, "meta mode is {share}% of direct mode:\n{out}");
    assert!(out.contains("scoped:nutrition"));
    // "generated: meta N tokens, X% of direct"
    let generated = out.lines().find_map(|l| l.strip_prefix("generated: meta ")).expect("a generated line");
    let tokens: usize = generated.split(' ').next().and_then(|n| n.parse().ok()).expect("tokens");
    let share: f64 = generated
        .split(", ")
        .nth(1)
        .and_then(|r| r.split('%').next())
        .and_then(|n| n.parse().ok())
        .expect("share");
    assert!(tokens <= 2_000, "meta mode with 200 tools is {tokens} tokens:\n{out}");
    assert!(share <= 10.0, "meta mode with 200 tools is {share}% of direct mode:\n{out}");
}
