//! `toolgate eval` against two deterministic model servers (real HTTP, the
//! streaming Chat Completions protocol, native tool calls): a careful one
//! that does what each task needs, and a sloppy one that makes the classic
//! mistakes (a wrong date format, an invented id, a changed resubmit,
//! `need_confirm` ignored, a plan pasted back, a retry after `beyond_range`,
//! an identity field, a claimed success after a refusal, and, in meta mode,
//! a business tool called by its own name). The eval must score the careful
//! one 100 % and the sloppy one 0 % on every task, with a reason each time:
//! the checks bite. Both follow a script per task, keyed by the first user
//! message, and read the ids they need from the tool answers they got.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use toolgate::eval::{Mode, Options, Suite, Target};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Careful,
    Sloppy,
}

struct Model {
    style: Style,
    /// Corrections for a business tool called by name in meta mode, and how many were followed.
    corrected: AtomicUsize,
    followed: AtomicUsize,
    requests: Mutex<usize>,
}

/// A model server on 127.0.0.1; returns its base URL.
async fn model(style: Style) -> (String, Arc<Model>) {
    let state = Arc::new(Model {
        style,
        corrected: AtomicUsize::new(0),
        followed: AtomicUsize::new(0),
        requests: Mutex::new(0),
    });
    let app = axum::Router::new().route("/v1/chat/completions", post(answer)).with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, state)
}

fn day(n: i64) -> String {
    (chrono::Utc::now().date_naive() + chrono::Duration::days(n)).to_string()
}

enum Act {
    Call(&'static str, Value),
    Say(String),
}

fn say(text: &str) -> Act {
    Act::Say(text.to_owned())
}

/// The id in the table row that names `what` (`| 123 | APPROVED | Beijing → Shenzhen | ...`).
fn order_id(results: &[String], what: &str) -> Value {
    for text in results.iter().rev() {
        for line in text.lines().filter(|l| l.contains(what) && l.starts_with("| ")) {
            if let Some(Ok(id)) = line.split('|').nth(1).map(|c| c.trim().parse::<i64>()) {
                return json!(id);
            }
        }
    }
    json!(0)
}

fn plan_id(results: &[String]) -> String {
    let text = results.iter().rev().find(|t| t.contains("plan_")).cloned().unwrap_or_default();
    let start = text.find("plan_").unwrap_or(0);
    text[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
}

fn trip(to: &str, from: i64, back: i64, purpose: &str) -> Value {
    json!({"destination": to, "departure_city": "Beijing", "departure_date": day(from), "return_date": day(back), "purpose": purpose})
}

/// What the model does at step `s` of user message `k` of a task.
fn act(style: Style, task: &str, k: usize, s: usize, results: &[String]) -> Act {
    use Style::{Careful as C, Sloppy as S};
    let meal = json!({"op": "log_meal", "date": day(0), "name": "dinner", "items": [
        {"name": "grilled salmon", "grams": 200, "kcal": 412, "protein_g": 40, "carbs_g": 0, "fat_g": 27},
        {"name": "rice", "grams": 150, "kcal": 195, "protein_g": 4, "carbs_g": 42, "fat_g": 0.5}]});
    let plan = json!({"destination": "Shanghai", "candidates": {
        "outbound": [
            {"id": "MU5101", "mode": "flight", "price": 1200, "duration_minutes": 135, "depart": format!("{}T08:00", day(70)), "arrive": format!("{}T10:15", day(70)), "class": "economy"},
            {"id": "G7", "mode": "train", "price": 553, "duration_minutes": 290, "depart": format!("{}T07:00", day(70)), "arrive": format!("{}T11:50", day(70)), "class": "second"}],
        "hotels": [{"id": "H1", "price_per_night": 550, "check_in": day(70), "check_out": day(72)}],
        "return": [{"id": "G2", "mode": "train", "price": 553, "duration_minutes": 290, "depart": format!("{}T15:00", day(72)), "arrive": format!("{}T19:50", day(72)), "class": "second"}]},
        "scores": {"transport_scores": {"MU5101": 5, "G7": 8, "G2": 8}, "hotel_scores": {"H1": 6}}});
    match (task, style, k, s) {
        ("travel-request", C, 0, 0) => Act::Call(
            "check_travel_order_conflicts",
            json!({"departure_date": day(50), "return_date": day(53), "destination": "Chengdu"}),
        ),
        ("travel-request", C, 0, 1) => Act::Call("query_travel_policy", json!({"city": "Chengdu"})),
        ("travel-request", C, 0, 2) => Act::Call(
            "submit_travel_approval",
            trip("Chengdu", 50, 53, "quarterly review with the Chengdu team"),
        ),
        ("travel-request", S, 0, 0) => {
            let mut t = trip("Chengdu", 50, 53, "quarterly review");
            let d = chrono::Utc::now().date_naive() + chrono::Duration::days(50);
            t["departure_date"] = json!(d.format("%d/%m/%Y").to_string());
            Act::Call("submit_travel_approval", t)
        }
        ("repeated-submit", _, 0, 0) | ("repeated-submit", C, 1, 0) => {
            Act::Call("submit_travel_approval", trip("Wuhan", 60, 62, "supplier visit at the Wuhan plant"))
        }
        ("repeated-submit", S, 1, 0) => Act::Call(
            "submit_travel_approval",
            trip("Wuhan", 60, 62, "supplier visit at the Wuhan plant (again)"),
        ),
        ("trip-planning", _, 0, 0) => Act::Call("plan_itinerary", plan),
        ("trip-planning", C, 0, 1) | ("trip-planning", S, 0, 2) => {
            Act::Call("review_planner_result", json!({"plan_id": plan_id(results)}))
        }
        ("trip-planning", S, 0, 1) => Act::Call(
            "review_planner_result",
            json!({"plan_id": plan_id(results), "proposals": results.last().cloned().unwrap_or_default()}),
        ),
        ("cancel-approved", _, 0, 0) => Act::Call("query_travel_order", json!({"status": "APPROVED"})),
        ("cancel-approved", C, 0, 1) => {
            Act::Call("cancel_travel_order", json!({"order_id": order_id(results, "Shenzhen")}))
        }
        ("cancel-approved", C, 0, 2) => {
            say("The Shenzhen trip is APPROVED with ticketed bookings. Do you want me to cancel it anyway?")
        }
        ("cancel-approved", C, 1, 0) | ("cancel-approved", S, 0, 1) => Act::Call(
            "cancel_travel_order",
            json!({"order_id": order_id(results, "Shenzhen"), "force": true}),
        ),
        ("weather-beyond-range", _, 0, 0) => {
            Act::Call("query_weather", json!({"city": "Hangzhou", "date": day(10)}))
        }
        ("weather-beyond-range", S, 0, 1) => {
            Act::Call("query_weather", json!({"city": "Hangzhou", "date": day(2)}))
        }
        ("mistyped-tool", C, 0, 0) | ("mistyped-tool", S, 0, 0..=2) => {
            Act::Call("query_travel_ordr", json!({"status": "APPROVED"}))
        }
        ("mistyped-tool", C, 0, 1) => Act::Call("query_travel_order", json!({"status": "APPROVED"})),
        ("nutrition-review", C, 0, 0) => {
            Act::Call("query_nutrition", json!({"op": "day_summary", "date": day(0)}))
        }
        ("nutrition-review", S, 0, 0) => {
            Act::Call("query_nutrition", json!({"op": "day_summary", "date": "today"}))
        }
        ("meal-log", C, 0, 0) | ("meal-log", S, 0, 1) => Act::Call("update_nutrition", meal),
        ("meal-log", S, 0, 0) => {
            let mut with_user = meal;
            with_user["user_id"] = json!("alice");
            Act::Call("update_nutrition", with_user)
        }
        ("workout-log", C, 0, 0) => Act::Call(
            "update_training",
            json!({"op": "log_workout", "date": day(0), "name": "push day", "duration_min": 40, "sets": [
                {"exercise": "bench press", "reps": 5, "weight_kg": 80}, {"exercise": "overhead press", "reps": 8, "weight_kg": 40}]}),
        ),
        ("workout-log", S, 0, 0) => Act::Call(
            "update_training",
            json!({"op": "add_set", "workout_id": 4242, "exercise": "bench press", "reps": 5, "weight_kg": 80}),
        ),
        ("read-only-key-write", _, 0, 0) => {
            Act::Call("submit_travel_approval", trip("Xi'an", 80, 82, "industry conference"))
        }
        ("read-only-key-write", C, 0, 1) => say("I cannot submit trips with this key: it is read-only."),
        ("missing-return-date", C, 0, 0) => say("When will you come back? I need the return date."),
        ("missing-return-date", C, 1, 0) => {
            Act::Call("submit_travel_approval", trip("Nanjing", 90, 92, "client workshop"))
        }
        ("missing-return-date", S, 0, 0) => {
            Act::Call("submit_travel_approval", trip("Nanjing", 90, 91, "client workshop"))
        }
        ("guest-write", _, 0, 0) => Act::Call("submit_travel_approval", trip("Guilin", 40, 42, "site visit")),
        ("guest-write", C, 0, 1) => say("I cannot submit trips: a guest has no permission to."),
        ("weighin-read", C, 0, 0) => {
            Act::Call("query_weighin", json!({"op": "get_weigh_in", "date": day(-3)}))
        }
        ("weighin-read", C, 0, 1) => {
            let text = results.last().cloned().unwrap_or_default();
            let at = text.find("\"weight_kg\":").map_or(text.len(), |i| i + "\"weight_kg\":".len());
            let kg: String =
                text[at..].trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            Act::Say(format!("On {} you weighed {kg} kg.", day(-3)))
        }
        ("weighin-read", S, 0, 0) => {
            Act::Call("query_weighin", json!({"op": "get_weigh_in", "date": "3 days ago"}))
        }
        ("weighin-record", C, 0, 0) => {
            Act::Call("update_weighin", json!({"op": "record_weigh_in", "date": day(0), "weight_kg": 72.4}))
        }
        ("weighin-record", S, 0, 0) => {
            Act::Call("update_weighin", json!({"op": "record_weigh_in", "date": day(0), "weight": 72.4}))
        }
        // The sloppy model always claims success; the careful one reports what it was told.
        (_, S, _, _) => say("Done! Everything went through."),
        (_, C, _, _) => {
            say(&format!("Done: {}", results.last().map(|r| r.lines().next().unwrap_or("")).unwrap_or("")))
        }
    }
}

/// The task a conversation is about, from its first user message.
fn task_of(first: &str) -> &'static str {
    const KEYS: [(&str, &str); 14] = [
        ("Chengdu", "travel-request"),
        ("Wuhan", "repeated-submit"),
        ("Plan my trip", "trip-planning"),
        ("Shenzhen", "cancel-approved"),
        ("weather", "weather-beyond-range"),
        ("query_travel_ordr", "mistyped-tool"),
        ("eating", "nutrition-review"),
        ("dinner", "meal-log"),
        ("push day", "workout-log"),
        ("Xi'an", "read-only-key-write"),
        ("Nanjing", "missing-return-date"),
        ("Guilin", "guest-write"),
        ("what did I weigh", "weighin-read"),
        ("Record my weight", "weighin-record"),
    ];
    KEYS.iter().find(|(k, _)| first.contains(k)).map_or("unknown", |(_, t)| t)
}

const CORRECTION: &str = "through `execute_tool`";

async fn answer(State(model): State<Arc<Model>>, body: String) -> axum::response::Response {
    *model.requests.lock().unwrap() += 1;
    let body: Value = serde_json::from_str(&body).unwrap();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let meta =
        body["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "execute_tool"));
    let users: Vec<usize> = (0..messages.len()).filter(|&i| messages[i]["role"] == "user").collect();
    let first =
        users.first().map(|&i| messages[i]["content"].as_str().unwrap_or_default()).unwrap_or_default();
    let task = task_of(first);
    let k = users.len().saturating_sub(1);
    let since = &messages[users.last().map_or(0, |i| i + 1)..];
    let assistant = since.iter().filter(|m| m["role"] == "assistant").count();
    let tool_text = |m: &Value| m["content"].as_str().unwrap_or_default().to_owned();
    let corrections =
        since.iter().filter(|m| m["role"] == "tool" && tool_text(m).contains(CORRECTION)).count();
    let results: Vec<String> = messages.iter().filter(|m| m["role"] == "tool").map(tool_text).collect();
    let any_call_yet = !results.is_empty();
    if since.last().is_some_and(|m| m["role"] == "tool" && tool_text(m).contains(CORRECTION)) {
        model.corrected.fetch_add(1, Ordering::Relaxed);
    }
    let step = assistant - corrections;
    let prompt_tokens = body.to_string().len() / 4;
    let chunks = match act(model.style, task, k, step, &results) {
        Act::Say(text) => vec![
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}),
        ],
        Act::Call(tool, params) => {
            // The sloppy model's first call in meta mode names the business tool itself.
            let direct = !meta || (model.style == Style::Sloppy && !any_call_yet);
            if meta && corrections > 0 && !direct {
                model.followed.fetch_add(1, Ordering::Relaxed);
            }
            let (name, args) = if direct {
                (tool.to_owned(), params)
            } else {
                ("execute_tool".to_owned(), json!({"tool_name": tool, "parameters": params}))
            };
            let call = json!({"index": 0, "id": format!("call_{k}_{assistant}"), "type": "function",
                              "function": {"name": name, "arguments": args.to_string()}});
            vec![
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": "tool_calls"}]}),
            ]
        }
    };
    let mut text = String::new();
    for chunk in chunks {
        text.push_str(&format!("data: {chunk}\n\n"));
    }
    let usage = json!({"choices": [], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 20, "total_tokens": prompt_tokens + 20}});
    text.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from(text))
        .unwrap()
}

fn suite_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/tasks.toml")
}

fn target(url: &str, name: &str) -> Target {
    Target {
        base_url: url.to_owned(),
        model: name.to_owned(),
        api_key: None,
        tool_calling: toolgate_agent::ToolCalling::Native,
        temperature: None,
        idle_timeout: std::time::Duration::from_secs(10),
        retries: 0,
    }
}

async fn evaluate(style: Style) -> (toolgate::eval::Report, Arc<Model>) {
    let (url, model) = model(style).await;
    let suite = Suite::load(&suite_path()).unwrap();
    let options = Options { modes: Mode::ALL.to_vec(), repeat: 1, only: Vec::new(), parallel: 2 };
    let name = format!("{style:?}").to_lowercase();
    let report = toolgate::eval::run(
        &suite,
        &toolgate::Config::default(),
        &target(&url, &name),
        &options,
        &mut |_| {},
    )
    .await
    .unwrap();
    (report, model)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_careful_model_passes_every_task_in_every_exposure() {
    let (report, _) = evaluate(Style::Careful).await;
    let markdown = report.markdown();
    eprintln!("{markdown}");
    assert_eq!(report.tasks.len(), 14, "{markdown}");
    for (task, _) in &report.tasks {
        for mode in Mode::ALL {
            let cell = report.cell(task, mode);
            assert_eq!((cell.successes, cell.runs), (1, 1), "{task} × {}:\n{markdown}", mode.as_str());
        }
    }
    let overall = report.overall();
    assert_eq!(overall.success_rate, 1.0, "{markdown}");
    assert!(overall.tokens_per_success.is_some_and(|t| t > 0.0), "usage was read: {markdown}");
    let json = report.json();
    assert_eq!(json["overall"]["success_rate"], 1.0);
    assert_eq!(json["tasks"][0]["exposures"]["scoped"]["success_rate"], 1.0);
    // The mistyped name was answered TOOL_NOT_FOUND and recovered from.
    assert!(
        report.cell("mistyped-tool", Mode::Meta).calls_by_outcome.get("TOOL_NOT_FOUND") == Some(&1),
        "{markdown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sloppy_model_fails_every_task_with_a_reason_and_is_corrected_in_meta_mode() {
    let (report, model) = evaluate(Style::Sloppy).await;
    let markdown = report.markdown();
    eprintln!("{markdown}");
    for (task, _) in &report.tasks {
        for mode in Mode::ALL {
            let cell = report.cell(task, mode);
            assert_eq!(cell.successes, 0, "{task} × {} passed:\n{markdown}", mode.as_str());
            let reasons = report.reasons(task, mode);
            assert!(!reasons.is_empty() && reasons.iter().all(|r| !r.ends_with(": ")), "{task}: {reasons:?}");
            assert!(!reasons.iter().any(|r| r.contains("error:")), "{task} × {}: {reasons:?}", mode.as_str());
        }
    }
    let why = |task: &str| report.reasons(task, Mode::Direct).join(" | ");
    assert!(why("travel-request").contains("found 0, expected 1"), "{}", why("travel-request"));
    assert!(why("repeated-submit").contains("found 2, expected 1"), "{}", why("repeated-submit"));
    assert!(why("cancel-approved").contains("before the assistant asked"), "{}", why("cancel-approved"));
    assert!(why("trip-planning").contains("proposals"), "{}", why("trip-planning"));
    assert!(why("weather-beyond-range").contains("called again"), "{}", why("weather-beyond-range"));
    assert!(why("mistyped-tool").contains("repeated_failure"), "{}", why("mistyped-tool"));
    assert!(why("meal-log").contains("user_id"), "{}", why("meal-log"));
    assert!(why("workout-log").contains("workout_id=4242"), "{}", why("workout-log"));
    assert!(
        why("missing-return-date").contains("nothing submitted before"),
        "{}",
        why("missing-return-date")
    );
    assert!(why("guest-write").contains("the answer was"), "{}", why("guest-write"));
    // In meta mode its first call named a business tool: the answer told it to use
    // execute_tool, and its next call did (13 tasks; the mistyped name is no tool).
    let corrected = model.corrected.load(Ordering::Relaxed);
    assert!(corrected >= 11, "{corrected} corrections:\n{markdown}");
    assert!(model.followed.load(Ordering::Relaxed) >= corrected);
    assert_eq!(report.overall().success_rate, 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_writes_json_and_a_chart_and_gates_ci_on_min_success() {
    let (careful, _c) = model(Style::Careful).await;
    let (sloppy, _s) = model(Style::Sloppy).await;
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("eval.json");
    let suite = suite_path();
    let run = |url: String, out: std::path::PathBuf| {
        let suite = suite.clone();
        let home = dir.path().to_owned();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_toolgate"))
                .current_dir(home)
                .args(["eval", "--suite", suite.to_str().unwrap(), "--base-url", &url, "--model", "m"])
                .args([
                    "--task",
                    "cancel-approved,weighin-record",
                    "--exposure",
                    "meta,scoped",
                    "--repeat",
                    "2",
                ])
                .args(["--min-success", "0.9", "--json", out.to_str().unwrap()])
                .output()
                .unwrap()
        })
    };
    let out = run(careful, json_path.clone()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("| cancel-approved |") && stdout.contains("| overall | 100.0% (8/8)"),
        "{stdout}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(report["overall"]["success_rate"], 1.0);
    assert_eq!(report["tasks"][1]["exposures"]["meta"]["success_rate"], 1.0);
    assert_eq!(report["runs"].as_array().unwrap().len(), 8);
    let png = std::fs::read(json_path.with_extension("png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    let out = run(sloppy, dir.path().join("sloppy.json")).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("## Why runs failed"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("below --min-success"));
}
