//! Interop with the official MCP Python SDK: `tests/python/client_check.py`
//! against the real server over streamable HTTP (sessions and stateless,
//! the `initialize` handshake and the `server/discover` lifecycle) and over
//! stdio (the `stdio_demo` example, which `cargo test` builds).
//!
//! Needs a Python with the `mcp` package: `TOOLGATE_PYTHON` names the
//! interpreter (default `python3`). Without one the tests print why they
//! skipped, unless `TOOLGATE_REQUIRE_INTEROP=1`, under which that is a failure.
//!
//! ```text
//! python3 -m venv target/interop-venv && target/interop-venv/bin/pip install mcp
//! TOOLGATE_PYTHON=target/interop-venv/bin/python cargo test -p toolgate-mcp --test it interop::
//! ```

use std::path::PathBuf;
use std::time::Duration;

use crate::common::TestServer;
use toolgate_mcp::{Exposure, HttpConfig, SessionMode};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/client_check.py");

/// The Python with the MCP SDK, or `None` after saying why the test skipped.
fn python() -> Option<String> {
    toolgate_test_support::python::with("import mcp")
}

/// Run the checker; panic with its output when it fails.
async fn check(python: &str, args: &[&str]) {
    let output = tokio::time::timeout(
        Duration::from_secs(180),
        tokio::process::Command::new(python).arg(SCRIPT).args(args).kill_on_drop(true).output(),
    )
    .await
    .expect("client_check.py finishes within 3 minutes")
    .expect("client_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}");
    assert!(output.status.success(), "client_check.py {args:?} failed\n{stdout}\n{stderr}");
    assert!(stdout.contains("PASS"), "{stdout}");
}

/// `target/<profile>/examples/stdio_demo`, next to this test's `deps` folder.
fn stdio_demo() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows where it is");
    let profile = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    let demo = profile.join("examples").join(format!("stdio_demo{}", std::env::consts::EXE_SUFFIX));
    assert!(
        demo.exists(),
        "{} is missing; `cargo test` builds it (or `cargo build -p toolgate-mcp --examples`)",
        demo.display()
    );
    demo
}

#[tokio::test]
async fn python_sdk_over_streamable_http() {
    let Some(python) = python() else { return };
    for sessions in [SessionMode::Stateful, SessionMode::Stateless] {
        let server =
            TestServer::start(Exposure::Meta, HttpConfig { sessions, ..HttpConfig::default() }).await;
        let url = server.url("/mcp");
        for mode in ["legacy", "auto"] {
            check(&python, &["--mode", mode, "http", &url, &server.member]).await;
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn python_sdk_over_stdio() {
    let Some(python) = python() else { return };
    let demo = stdio_demo();
    let demo = demo.to_str().expect("a UTF-8 path");
    for mode in ["legacy", "auto"] {
        check(&python, &["--mode", mode, "stdio", demo, "--user", "mia", "--role", "member"]).await;
    }
}

const LISTEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/listen_check.py");

/// A 2026-07-28 client hears a change of the tool list through
/// `subscriptions/listen` (before, that method was not served and such a
/// client could never hear one): the SDK listens, the test adds a tool to
/// the gateway, the SDK gets the event and finds the tool listed.
#[tokio::test]
async fn python_sdk_hears_a_tool_list_change_through_subscriptions_listen() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let Some(python) = python() else { return };
    let server = TestServer::start(Exposure::Direct, HttpConfig::default()).await;
    let mut child = tokio::process::Command::new(&python)
        .arg(LISTEN)
        .arg(server.url("/mcp"))
        .arg(&server.member)
        .arg("greet_late")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("listen_check.py starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            seen.push(line.clone());
            if line == "LISTENING" {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the SDK did not start listening: {seen:?}"));
    assert_eq!(seen.last().map(String::as_str), Some("LISTENING"), "{seen:?}");

    let spec = toolgate_core::ToolSpec::new(
        "greet_late",
        "Greets. Example: {}.",
        serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .with_role("member");
    let tool = toolgate_core::FnTool::new(spec, |_ctx, _params| {
        Box::pin(async { Ok(toolgate_core::ToolOutput::json(serde_json::json!({"hello": true}))) })
    });
    assert!(server.gateway.replace_source_tools("late", vec![std::sync::Arc::new(tool)]).is_empty());

    let rest = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            seen.push(line);
        }
        child.wait().await.unwrap()
    })
    .await
    .expect("listen_check.py finishes");
    eprintln!("{}", seen.join("\n"));
    assert!(rest.success() && seen.iter().any(|l| l == "PASS"), "{seen:?}");
    server.stop().await;
}
