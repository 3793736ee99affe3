//! Asking the human through the official MCP TypeScript SDK
//! (`tests/node/elicit_check.mjs`) against a real `toolgate serve --demo`:
//! cancelling alice's APPROVED trip, a declined `elicitation/create` changes
//! nothing and says so, an accepted one cancels the order in the same call;
//! each state read back through the database.
//!
//! Needs `TOOLGATE_NODE_MODULES` with `@modelcontextprotocol/sdk`; skips
//! without it unless `TOOLGATE_REQUIRE_INTEROP=1`.

use std::time::Duration;

use crate::common::key_of;
use crate::serve::start;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node/elicit_check.mjs");

#[tokio::test]
async fn the_typescript_sdk_declines_then_confirms_a_cancellation_it_is_asked_about() {
    let modules = toolgate_test_support::gate::path("TOOLGATE_NODE_MODULES", "target/e2e-node/node_modules");
    if !modules.join("@modelcontextprotocol/sdk").exists() {
        assert!(
            std::env::var("TOOLGATE_REQUIRE_INTEROP").as_deref() != Ok("1"),
            "no @modelcontextprotocol/sdk under {}",
            modules.display()
        );
        eprintln!("skipped: no @modelcontextprotocol/sdk under {}", modules.display());
        return;
    }
    let demo = start(&[]);
    let alice = key_of(&demo.banner, "alice");
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .arg(SCRIPT)
            .arg(format!("{}/mcp", demo.url))
            .arg(&alice)
            .env("TOOLGATE_NODE_MODULES", &modules)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("elicit_check.mjs finishes within 2 minutes")
    .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "elicit_check.mjs failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
