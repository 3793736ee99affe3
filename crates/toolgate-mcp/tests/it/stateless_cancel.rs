//! Stateless cancellation with a client nobody here wrote: the official MCP Python SDK
//! (`tests/python/stateless_cancel_check.py`) abandons a `wait_forever` call at
//! 2025-11-25 against a server without sessions; the SDK's `notifications/cancelled`
//! (a POST of its own) stops the call on the server while the client is still
//! connected, and the next call is served.
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::TestServer;
use toolgate_mcp::{Exposure, HttpConfig, SessionMode};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/stateless_cancel_check.py");

#[tokio::test]
async fn the_python_sdk_cancels_a_call_without_sessions() {
    let Some(python) = toolgate_test_support::python::with("import mcp") else { return };
    let config = HttpConfig { sessions: SessionMode::Stateless, ..HttpConfig::default() };
    let server = TestServer::start(Exposure::Meta, config).await;
    let mut child = tokio::process::Command::new(&python)
        .arg(SCRIPT)
        .arg(server.url("/mcp"))
        .arg(&server.member)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("stateless_cancel_check.py starts");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let mut seen = Vec::new();
    let cancelled = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            seen.push(line.clone());
            if line == "CANCELLED" {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(cancelled, "the client did not abandon its call: {seen:?}");
    assert_eq!(server.started.load(Ordering::SeqCst), 1, "wait_forever started once");
    // The client is still connected (it waits 4 s): the notification, not a closed
    // connection, stopped the call.
    toolgate_test_support::eventually(
        Duration::from_secs(3),
        "the cancelled call's future is dropped",
        || async { server.dropped.load(Ordering::SeqCst) == 1 },
    )
    .await;
    while let Ok(Some(line)) = lines.next_line().await {
        seen.push(line);
    }
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.expect("it ends").unwrap();
    assert!(status.success() && seen.iter().any(|l| l == "PASS"), "{seen:?}");
    server.stop().await;
}
