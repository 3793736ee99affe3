//! An upstream's `elicitation/create` reaches the end client, end to end with
//! clients nobody here wrote: `toolgate serve --demo` with mcp-upstream's Python SDK
//! upstream (`ask_name` elicits), and the official Python SDK as the client
//! (`tests/python/upstream_elicit_check.py`): accepted, declined, and not askable at
//! 2025-11-25, and accepted at 2026-07-28; at 2026-07-28 also its sampling and roots
//! requests, one and two in a call, as `input_required` rounds.
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::time::Duration;

use crate::common::key_of;
use crate::serve::launch;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/upstream_elicit_check.py");
const UPSTREAM: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../toolgate-mcp-upstream/tests/python/upstream_server.py");

#[tokio::test]
async fn the_python_sdk_answers_an_upstreams_question_through_toolgate() {
    let Some(python) = toolgate_test_support::python::with("import mcp") else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[[upstreams]]\nname = \"weather\"\ncommand = [{python:?}, {UPSTREAM:?}]\nenv = {{ MARKER_DIR = {:?} }}\n\
             connect_timeout_ms = 60000\n",
            dir.path().display().to_string()
        ),
    )
    .unwrap();
    let demo = launch(&[], &[("TOOLGATE_CONFIG", config.to_str().unwrap())], None);
    let alice = key_of(&demo.banner, "alice");
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(&python)
            .arg(SCRIPT)
            .arg(format!("{}/mcp", demo.url))
            .arg(&alice)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("upstream_elicit_check.py finishes within 2 minutes")
    .expect("upstream_elicit_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "upstream_elicit_check.py failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
