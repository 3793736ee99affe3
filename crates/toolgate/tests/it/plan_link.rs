//! toolgate's own large result as a resource link, through a client nobody here
//! wrote: the official MCP Python SDK (`tests/python/plan_link_check.py`) against a
//! real `toolgate serve --demo` plans a trip as alice, finds a `resource_link` to
//! `toolgate://plans/<plan_id>` beside the summary, reads the whole plan with
//! `resources/read` at 2025-11-25 and 2026-07-28, and gets "resource not found" as bob
//! and for a plan that never existed.
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::time::Duration;

use crate::common::key_of;
use crate::serve::start;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/plan_link_check.py");

#[tokio::test]
async fn the_python_sdk_reads_a_full_plan_through_its_resource_link_and_another_user_cannot() {
    let Some(python) = toolgate_test_support::python::with("import mcp") else { return };
    let demo = start(&[]);
    let alice = key_of(&demo.banner, "alice");
    let bob = key_of(&demo.banner, "bob");
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(&python)
            .arg(SCRIPT)
            .arg(format!("{}/mcp", demo.url))
            .arg(&alice)
            .arg(&bob)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("plan_link_check.py finishes within 2 minutes")
    .expect("plan_link_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "plan_link_check.py failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
