//! `toolgate serve --stdio` with an `[[upstreams]]` mounted, driven by a client nobody here
//! wrote: the official Python SDK's stdio client (`tests/python/stdio_upstream_check.py`)
//! starts the binary itself, lists the upstream's namespaced tools, calls one and gets the
//! upstream's result, at 2025-11-25 and at 2026-07-28 (where a task of the upstream's
//! task tool is polled to its result too).
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::time::Duration;

use crate::upstream_tasks::upstream_entry;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/stdio_upstream_check.py");

#[tokio::test]
async fn the_python_sdk_calls_an_upstream_tool_through_toolgate_over_stdio() {
    let Some(python) = toolgate_test_support::python::with("from mcp.client.stdio import stdio_client")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, upstream_entry(&python, dir.path())).unwrap();
    let db = format!("sqlite:{}", dir.path().join("t.db").display());
    let output = tokio::time::timeout(
        Duration::from_secs(150),
        tokio::process::Command::new(&python)
            .arg(SCRIPT)
            .arg(env!("CARGO_BIN_EXE_toolgate"))
            .args(["--db", &db, "--config", config.to_str().unwrap()])
            .args(["serve", "--stdio", "--user", "alice", "--role", "member", "--expose", "direct"])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("stdio_upstream_check.py finishes within 150 s")
    .expect("stdio_upstream_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "stdio_upstream_check.py failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Both lifecycles ran their checks (a skipped one would not print its lines).
    assert_eq!(stdout.matches("the result is the upstream's").count(), 2, "{stdout}");
    assert!(stdout.contains("a task: working, then completed"), "{stdout}");
}
