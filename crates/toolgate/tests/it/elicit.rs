//! Asking the human through a client nobody here wrote: the official MCP
//! Python SDK (`tests/python/elicit_check.py`) with and without an
//! elicitation callback against a real `toolgate serve --demo`, cancelling
//! alice's APPROVED trip: no capability keeps today's `need_confirm` signal,
//! a declined question changes nothing, an accepted one cancels the order in
//! the same call; then bob's APPROVED trip at 2026-07-28, where the question
//! is an `input_required` result the SDK's `Client` answers by retrying;
//! each state read back through the database.
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::time::Duration;

use crate::common::key_of;
use crate::serve::start;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/elicit_check.py");

#[tokio::test]
async fn the_python_sdk_confirms_and_declines_a_cancellation_it_is_asked_about() {
    let Some(python) = toolgate_test_support::python::with("import mcp") else { return };
    let demo = start(&[]);
    let key = key_of(&demo.banner, "alice");
    let bob = key_of(&demo.banner, "bob");
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(&python)
            .arg(SCRIPT)
            .arg(format!("{}/mcp", demo.url))
            .arg(&key)
            .arg(&bob)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("elicit_check.py finishes within 2 minutes")
    .expect("elicit_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "elicit_check.py failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
