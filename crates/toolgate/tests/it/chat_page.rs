//! The web page's chat asks its person: `tests/web/chat_elicit.cjs` in
//! headless Chromium against the real `toolgate serve --demo` with a chat
//! model scripted on 127.0.0.1 (an OpenAI-compatible SSE server) that
//! cancels alice's APPROVED trip, twice. The page shows the confirmation as a
//! form in the transcript; Decline keeps the order, Confirm cancels it, each
//! read back through `/api/call`. Then, with `[limits] ask_for_missing`, a
//! call without its required `city` is a form of that field, answered. A screenshot is kept at
//! `target/e2e/chat_elicit.png`.
//!
//! Needs `node`, Chromium and playwright-core (see `toolgate_test_support::browser`);
//! skips without them unless `TOOLGATE_REQUIRE_BROWSER=1`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::key_of;
use crate::serve::launch;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/web/chat_elicit.cjs");

fn sse(chunks: &[Value]) -> String {
    let mut text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    text
}

/// A turn that calls `tool` through `execute_tool`, as call `id`.
fn call_turn(id: &str, tool: &str, params: Value) -> String {
    let args = json!({"tool_name": tool, "parameters": params}).to_string();
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": "execute_tool", "arguments": args}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ])
}

fn text_turn(text: &str) -> String {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"content": text}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}),
    ])
}

/// A scripted model on 127.0.0.1: its URL (`…/v1`), the turns it plays in
/// order (then 500s), and how many requests it got.
struct Model {
    url: String,
    turns: Arc<Mutex<VecDeque<String>>>,
    requests: Arc<AtomicUsize>,
}

async fn scripted_model() -> Model {
    let turns = Arc::new(Mutex::new(VecDeque::new()));
    let requests = Arc::new(AtomicUsize::new(0));
    let (queue, counted) = (turns.clone(), requests.clone());
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            let next = queue.lock().unwrap().pop_front();
            async move {
                let builder = axum::response::Response::builder();
                match next {
                    Some(body) => builder
                        .header("content-type", "text/event-stream")
                        .body(axum::body::Body::from(body))
                        .unwrap(),
                    None => builder.status(500).body(axum::body::Body::empty()).unwrap(),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Model { url, turns, requests }
}

/// `POST /api/call` as `key`: the envelope's `result`.
async fn call(client: &reqwest::Client, base: &str, key: &str, tool: &str, parameters: Value) -> Value {
    let response = client
        .post(format!("{base}/api/call"))
        .bearer_auth(key)
        .json(&json!({"tool": tool, "parameters": parameters}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{tool}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["envelope"]["success"], true, "{body}");
    body["envelope"]["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_chat_asks_its_person_to_confirm_a_cancellation_and_for_a_missing_value() {
    let Some(browser) = toolgate_test_support::browser::find() else { return };
    let model = scripted_model().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, "[limits]\nask_for_missing = true\n").unwrap();
    let env = [
        ("TOOLGATE_AGENT_BASE_URL", model.url.as_str()),
        ("TOOLGATE_AGENT_MODEL", "scripted"),
        ("TOOLGATE_CONFIG", config.to_str().unwrap()),
    ];
    let demo = launch(&[], &env, None);
    let alice = key_of(&demo.banner, "alice");
    let client = reqwest::Client::new();
    let listed = call(
        &client,
        &demo.url,
        &alice,
        "query_travel_order",
        json!({"status": "APPROVED", "page_size": 50}),
    )
    .await;
    let order = listed["orders"]
        .as_array()
        .and_then(|orders| orders.iter().find(|o| o["destination"] == "Shenzhen"))
        .unwrap_or_else(|| panic!("alice has an APPROVED trip to Shenzhen: {listed}"))["order_id"]
        .clone();
    // Two runs, each: cancel the trip (the gateway asks the person first), then answer.
    model.turns.lock().unwrap().extend([
        call_turn("c1", "cancel_travel_order", json!({"order_id": order})),
        text_turn("Kept it."),
        call_turn("c2", "cancel_travel_order", json!({"order_id": order})),
        text_turn("Cancelled."),
        call_turn("c3", "query_travel_policy", json!({})),
        text_turn("Tier 1."),
    ]);
    // Beside the crate under test (test_support's own path may be another checkout's).
    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/e2e");
    std::fs::create_dir_all(&shots).unwrap();
    let screenshot = shots.join("chat_elicit.png");
    let _ = std::fs::remove_file(&screenshot);
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .arg(SCRIPT)
            .args([demo.url.as_str(), alice.as_str(), &order.to_string()])
            .arg(&screenshot)
            .env("NODE_PATH", &browser.node_modules)
            .env("CHROMIUM", &browser.chromium)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("chat_elicit.cjs finishes within 2 minutes")
    .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("PASS chat elicitation"), "{stdout}");
    assert_eq!(model.requests.load(Ordering::SeqCst), 6, "three runs, two model turns each");
    // Read back here too, not only by the page's script.
    let found = call(&client, &demo.url, &alice, "query_travel_order", json!({"order_id": order})).await;
    let status = found.get("status").or_else(|| found.pointer("/order/status"));
    assert_eq!(status, Some(&json!("CANCELLED")), "{found}");
    let png = std::fs::read(&screenshot).expect("a screenshot was kept");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} bytes", png.len());
    eprintln!("screenshot: {}", screenshot.display());
}
