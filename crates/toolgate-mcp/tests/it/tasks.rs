//! Tasks (the 2026-07-28 tasks extension) through the official MCP Python
//! SDK (`tests/python/tasks_check.py`): a long-running call asked for as a
//! task is polled to its result, another is hidden from another key of the
//! same user and then cancelled (the tool's future is dropped: the gateway's
//! cancellation), and a client that does not ask gets the plain call. The
//! extension is advertised by `server/discover`, never by `initialize`
//! (revisions before 2026-07-28 do not define it).
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use crate::common::TestServer;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/tasks_check.py");
const TASKS: &str = "io.modelcontextprotocol/tasks";

#[tokio::test]
async fn the_python_sdk_polls_a_task_to_its_result_and_cancels_another() {
    let Some(python) = toolgate_test_support::python::with("import mcp") else { return };
    let server = TestServer::default().await;
    let other_key = server.keys.create("mia", "member").await.unwrap().key.expose().to_owned();
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(&python)
            .arg(SCRIPT)
            .arg(server.url("/mcp"))
            .arg(&server.member)
            .arg(&other_key)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("tasks_check.py finishes within 2 minutes")
    .expect("tasks_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "tasks_check.py failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Three calls started (completed, cancelled, plain); the cancelled one's future was dropped.
    assert_eq!(server.started.load(Ordering::SeqCst), 3);
    toolgate_test_support::eventually(
        Duration::from_secs(5),
        "the cancelled call's future is dropped",
        || async { server.dropped.load(Ordering::SeqCst) == 1 },
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn only_2026_07_28_hears_of_the_tasks_extension() {
    let server = TestServer::default().await;
    let (_session, init) = server.open_session(&server.member).await;
    let capabilities = &init["capabilities"];
    assert!(capabilities["tools"].is_object(), "{init}");
    assert!(capabilities.get("extensions").and_then(|e| e.get(TASKS)).is_none(), "initialize: {init}");
    let discover = json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    let reply = server
        .client
        .post(server.url("/mcp"))
        .bearer_auth(&server.member)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "server/discover")
        .json(&discover)
        .send()
        .await
        .unwrap();
    let reply = toolgate_test_support::mcp::Reply::read(reply).await.unwrap();
    let answer = reply.answer().unwrap_or_else(|| reply.json());
    assert!(answer["result"]["capabilities"]["extensions"][TASKS].is_object(), "discover: {answer}");
    server.stop().await;
}

const TS_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node/tasks_check.mjs");

/// The 2025-11-25 form, through the official TypeScript SDK's tasks client:
/// the capability and `execution.taskSupport` are advertised, a task is
/// streamed to its result, another is hidden from another key, listed and
/// cancelled; a plain call stays plain.
#[tokio::test]
async fn the_typescript_sdk_streams_a_task_to_its_result_and_cancels_another() {
    let modules = toolgate_test_support::gate::path("TOOLGATE_NODE_MODULES", "target/e2e-node/node_modules");
    if !std::path::Path::new(&modules).join("@modelcontextprotocol/sdk").exists() {
        assert!(
            std::env::var("TOOLGATE_REQUIRE_INTEROP").as_deref() != Ok("1"),
            "no @modelcontextprotocol/sdk under {}",
            modules.display()
        );
        eprintln!("skipped: no @modelcontextprotocol/sdk under {}", modules.display());
        return;
    }
    let server = TestServer::start(toolgate_mcp::Exposure::Direct, toolgate_mcp::HttpConfig::default()).await;
    let other_key = server.keys.create("mia", "member").await.unwrap().key.expose().to_owned();
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .arg(TS_SCRIPT)
            .arg(server.url("/mcp"))
            .arg(&server.member)
            .arg(&other_key)
            .env("TOOLGATE_NODE_MODULES", &modules)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("tasks_check.mjs finishes within 2 minutes")
    .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "tasks_check.mjs failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    toolgate_test_support::eventually(
        Duration::from_secs(5),
        "the cancelled call's future is dropped",
        || async { server.dropped.load(Ordering::SeqCst) == 1 },
    )
    .await;
    server.stop().await;
}
