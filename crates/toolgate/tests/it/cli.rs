//! The `toolgate` binary as a user runs it: a fresh SQLite file per test.

fn toolgate(db: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let url = format!("sqlite:{}", db.display());
    let out = crate::common::toolgate()
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

/// A mistyped `listen` or `expose` is refused when the configuration is read: the message
/// names the file, the line with the field, the value and a spelling that works; the same
/// values on the command line are refused by the argument parser before anything starts.
#[test]
fn typed_server_fields_are_refused_with_file_field_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, "[server]\nlisten = \"localhost:8377\"\n").unwrap();
    let (code, out, _) = toolgate(&db, &["--config", config.to_str().unwrap(), "check"]);
    assert_eq!(code, 1, "{out}");
    for part in
        [config.to_str().unwrap(), "listen = \"localhost:8377\"", "not an IP address", "127.0.0.1:8377"]
    {
        assert!(out.contains(part), "`{part}` missing from: {out}");
    }
    std::fs::write(&config, "[server]\nexpose = \"scoped\"\n").unwrap();
    let (code, _, err) = toolgate(&db, &["--config", config.to_str().unwrap(), "serve"]);
    assert_ne!(code, 0);
    assert!(err.contains("expose = \"scoped\"") && err.contains("scoped:<domain>"), "{err}");
    let (code, _, err) = toolgate(&db, &["serve", "--listen", "localhost:1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--listen") && err.contains("not an IP address"), "{err}");
    let (code, _, err) = toolgate(&db, &["serve", "--expose", "all"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--expose") && err.contains("unknown exposure `all`"), "{err}");
    assert!(!db.exists(), "nothing was opened");
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

/// A two-turn OpenAI-compatible model on 127.0.0.1: first a native
/// `execute_tool` call, then an answer, as SSE; every later request gets a 500.
async fn scripted_model() -> String {
    use std::sync::{Arc, Mutex};
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let call = serde_json::json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {
        "name": "execute_tool", "arguments": "{\"tool_name\": \"query_travel_order\", \"parameters\": {}}"}}]});
    let turns = vec![
        format!("{}{}data: [DONE]\n\n", chunk(call, None), chunk(serde_json::json!({}), Some("tool_calls"))),
        format!(
            "{}{}{}data: [DONE]\n\n",
            chunk(serde_json::json!({"content": "You have "}), None),
            chunk(serde_json::json!({"content": "no trips."}), None),
            chunk(serde_json::json!({}), Some("stop"))
        ),
    ];
    let turns = Arc::new(Mutex::new(std::collections::VecDeque::from(turns)));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            let next = turns.lock().unwrap().pop_front();
            async move {
                match next {
                    Some(body) => axum::response::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(axum::body::Body::from(body))
                        .unwrap(),
                    None => axum::response::Response::builder()
                        .status(500)
                        .body(axum::body::Body::empty())
                        .unwrap(),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test]
async fn agent_streams_the_answer_with_a_line_per_tool_call() {
    let model = scripted_model().await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("t.db").display());
    let run = |args: Vec<&str>| {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .arg("--db")
            .arg(&url)
            .arg("agent")
            .args(args)
            .env_remove("TOOLGATE_DATABASE_URL")
            .env("TOOLGATE_AGENT_BASE_URL", &model)
            .env("TOOLGATE_AGENT_MODEL", "scripted")
            .output()
    };
    let out = run(vec!["Which trips do I have?", "--user", "alice", "--role", "member"]).await.unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "You have no trips.");
    assert!(stderr.contains("  -> execute_tool → query_travel_order {}: ok ("), "{stderr}");
    assert!(stderr.contains("[answer after 2 step(s)"), "{stderr}");
    let id = stderr.split("--conversation ").nth(1).unwrap().trim_end().trim_end_matches(']').to_owned();
    assert!(id.starts_with("conv_"), "{id}");
    // Another user cannot continue it; the model is never asked (it would answer 500).
    let out = run(vec!["more", "--user", "eve", "--role", "member", "--conversation", &id]).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("error NOT_FOUND: there is no conversation"), "{stderr}");
    // No model configured: a clear refusal.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["--db", &url, "agent", "hi", "--user", "a", "--role", "member"])
        .env_remove("TOOLGATE_AGENT_BASE_URL")
        .env_remove("TOOLGATE_AGENT_MODEL")
        .current_dir(dir.path())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no model configured"));
}

#[test]
fn keys_update_changes_role_and_scope_and_goes_on_the_audit_trail() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = toolgate(&db, &["keys", "create", "--user", "dora", "--role", "admin"]);
    assert_eq!(code, 0, "{err}");
    let (id, key) = out.trim().split_once('\t').unwrap();

    let (code, out, err) = toolgate(
        &db,
        &["keys", "update", id, "--role", "member", "--toolset", "read_only", "--domains", "travel"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"from\":\"admin\"") && out.contains("\"to\":\"member\""), "{out}");
    let (_, list, _) = toolgate(&db, &["keys", "list"]);
    let row = list.lines().find(|l| l.starts_with(id)).unwrap();
    assert!(
        row.contains("\tmember\t") && row.contains("toolset=read_only") && row.ends_with("domains=travel"),
        "{row}"
    );
    let (code, _, err) = toolgate(&db, &["keys", "update", id, "--no-toolset", "--all-domains"]);
    assert_eq!(code, 0, "{err}");
    let (_, list, _) = toolgate(&db, &["keys", "list"]);
    assert!(list.lines().find(|l| l.starts_with(id)).unwrap().ends_with("\t-"), "{list}");

    // Refused before any write: an unknown role or toolset, both toolset flags, nothing to change.
    for (args, says) in [
        (vec!["--role", "emperor"], "unknown role `emperor`"),
        (vec!["--toolset", "nope"], "no toolset `nope`"),
        (vec!["--toolset", "read_only", "--no-toolset"], "cannot be used with"),
        (vec![], "nothing to change"),
    ] {
        let mut all = vec!["keys", "update", id];
        all.extend(args);
        let (code, _, err) = toolgate(&db, &all);
        assert_ne!(code, 0);
        assert!(err.contains(says), "{says}: {err}");
    }
    let (code, _, err) = toolgate(&db, &["keys", "update", "key_0000000000000000", "--role", "guest"]);
    assert_eq!((code, err.trim()), (1, "no active key `key_0000000000000000`"));

    // Both changes are on the trail, by the operator, naming the key by its id only.
    let (code, out, err) = toolgate(&db, &["audit", "--tool", "keys.update", "--json"]);
    assert_eq!(code, 0, "{err}");
    let records: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 2, "{out}");
    assert_eq!(records[1]["params"]["role"], serde_json::json!({"from": "admin", "to": "member"}));
    assert_eq!(records[0]["params"]["toolset"], serde_json::json!({"from": "read_only", "to": null}));
    assert_eq!(records[0]["key_id"], *id);
    assert!(records[0]["user_id"].as_str().unwrap().starts_with("cli:"));
    assert!(!out.contains(key), "the key itself is never recorded");
}

/// `query_weather` without a provider tells the operator a key to set: that very key, in that
/// very table, is one the configuration loader accepts (`weather_url` under [travel] was named,
/// and made `toolgate check` fail).
#[test]
fn the_weather_key_the_unavailable_signal_names_is_accepted_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let url = format!("sqlite:{}", db.display());
    let out = crate::common::toolgate()
        .args(["--db", &url, "call", "query_weather", "--user", "w", "--role", "guest"])
        .args(["--params", r#"{"city": "Oslo"}"#])
        .env_remove("TOOLGATE_DATABASE_URL")
        .env_remove("TOOLGATE_CONFIG")
        .env_remove("TOOLGATE_WEATHER_URL")
        .output()
        .expect("toolgate runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let envelope: serde_json::Value = serde_json::from_str(&text).unwrap();
    let how = envelope["signals"]
        .as_array()
        .and_then(|s| s.iter().find_map(|s| s["how_to_enable"].as_str()))
        .unwrap_or_else(|| panic!("an unavailable signal with how_to_enable: {envelope}"))
        .to_owned();
    // "... sets `KEY` under [TABLE] in toolgate.toml ..."
    let (key, rest) = how.split_once('`').and_then(|(_, r)| r.split_once('`')).expect("a `key`");
    let table = rest
        .trim_start()
        .strip_prefix("under [")
        .and_then(|r| r.split_once(']'))
        .map(|(t, _)| t)
        .unwrap_or_else(|| panic!("`under [table]` after the key: {how}"));
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, format!("[{table}]\n{key} = \"http://127.0.0.1:9/forecast\"\n")).unwrap();
    let (code, out, err) = toolgate(&db, &["--config", config.to_str().unwrap(), "check"]);
    assert_eq!(code, 0, "[{table}] {key} is refused: {out}{err}");
}

/// `toolgate schema X | head`: a reader that closed the pipe ends a printing command quietly,
/// status 0 and no panic with its backtrace (println! panicked on EPIPE).
#[test]
fn a_closed_stdout_pipe_ends_every_printing_command_quietly() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("t.db").display());
    let commands: [&[&str]; 7] = [
        &["schema", "query_nutrition"],
        &["tools"],
        &["catalog", "--role", "member"],
        &["guide", "travel-request"],
        &["call", "query_weather", "--user", "w", "--role", "guest", "--params", r#"{"city": "Oslo"}"#],
        &["check"],
        &["audit"],
    ];
    for args in commands {
        for read_first in [false, true] {
            let mut child = crate::common::toolgate()
                .args(["--db", &url])
                .args(args)
                .env_remove("TOOLGATE_DATABASE_URL")
                .env_remove("TOOLGATE_CONFIG")
                .env_remove("TOOLGATE_WEATHER_URL")
                .env("RUST_BACKTRACE", "1")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("toolgate starts");
            let mut stdout = child.stdout.take().unwrap();
            if read_first {
                // A few bytes, as `head -c 4` reads them; the rest of a large answer meets a closed pipe.
                let _ = stdout.read(&mut [0; 4]);
            }
            drop(stdout);
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            assert_eq!(out.status.code(), Some(0), "{args:?} (read first: {read_first}): {err}");
        }
    }
}

/// `toolgate check` on a folder of tables: the domain's table count and the tool count agree,
/// and the shipped fitness tables (checked too) are counted apart, not added in silently (21
/// tables were reported as 27 HTTP tools).
#[test]
fn check_counts_a_folders_tables_and_the_shipped_ones_apart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let routes = dir.path().join("routes");
    std::fs::create_dir(&routes).unwrap();
    for (i, thing) in ["notes", "tags", "folders"].iter().enumerate() {
        let table = format!(
            "tool = \"query_{thing}\"\ndescription = \"Read {thing}.\"\ndomain = \"notes\"\n\n[[routes]]\nop = \"list_{thing}\"\nmethod = \"GET\"\npath = \"/{thing}\"\nsummary = \"List {thing}\"\n"
        );
        std::fs::write(routes.join(format!("{i}-{thing}.toml")), table).unwrap();
    }
    let config = dir.path().join("toolgate.toml");
    let entry = format!(
        "[[domains]]\nname = \"notes\"\nbase_url = \"http://127.0.0.1:9\"\nroutes = {:?}\nauth = {{ kind = \"none\" }}\n",
        routes.to_str().unwrap()
    );
    std::fs::write(&config, entry).unwrap();
    let (code, out, err) = toolgate(&db, &["--config", config.to_str().unwrap(), "check"]);
    assert_eq!(code, 0, "{out}{err}");
    let shipped = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../toolgate-fitness/routes"))
        .unwrap()
        .count();
    assert!(out.contains("domain `notes`: 3 table(s)"), "{out}");
    let tools = format!(
        "{} HTTP tool(s) registered (3 from the domains' tables, {shipped} from the shipped fitness tables)",
        3 + shipped
    );
    assert!(out.contains(&tools), "`{tools}` missing from: {out}");
}

/// `check` and `serve` judge a configuration by one plan: each of these is refused by both,
/// with the same words (check used to pass every one of them and serve refused them).
#[test]
fn check_refuses_exactly_what_serve_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let cases = [
        (
            "[[upstreams]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/mcp\"\nrequired_role = \"owner\"\n",
            "requires role `owner`, which is not in [authz] roles",
        ),
        (
            "[[upstreams]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { Authorization = { env = \"TG_TEST_UNSET_VAR\" } }\n",
            "TG_TEST_UNSET_VAR",
        ),
        ("[weather]\nupstream_tool = \"weather__get_forecast\"\n", "is not a tool of a configured upstream"),
        // A model folder that is not there (or not a model) is refused, not left for the first query.
        (
            "[discovery]\nmodel = \"/nonexistent/all-MiniLM-L6-v2\"\n",
            "in [discovery] model (/nonexistent/all-MiniLM-L6-v2): cannot read",
        ),
        (
            "[auth.oauth]\nissuer = \"https://idp.example\"\nresource = \"https://mcp.example/mcp\"\nroles = { g = \"owner\" }\n",
            "owner",
        ),
    ];
    for (i, (toml, expect)) in cases.iter().enumerate() {
        let config = dir.path().join(format!("case{i}.toml"));
        std::fs::write(&config, toml).unwrap();
        let config = config.to_str().unwrap();
        let (code, out, err) = toolgate(&db, &["--config", config, "check"]);
        assert_eq!(code, 1, "check passed {toml}: {out}{err}");
        assert!(out.contains(expect), "check: {out}");
        let (code, out, err) = toolgate(&db, &["--config", config, "serve", "--listen", "127.0.0.1:0"]);
        assert_ne!(code, 0, "serve started with {toml}: {out}{err}");
        assert!(format!("{out}{err}").contains(expect), "serve: {out}{err}");
        assert!(format!("{out}{err}").contains("nothing was started"), "serve: {out}{err}");
    }
}
