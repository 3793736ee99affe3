//! The web page shows the images a call returned, in its live trace:
//! `tests/web/trace_image.cjs` in headless Chromium against the real
//! `toolgate serve --demo`, with `render_weight_chart` called over MCP by the
//! connected user (alice, whose demo data has a weight trend).
//!
//! Needs `node`, Chromium and playwright-core (see `toolgate_test_support::browser`);
//! skips without them unless `TOOLGATE_REQUIRE_BROWSER=1`.

use std::time::Duration;

use crate::common::key_of;
use crate::serve::start;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/web/trace_image.cjs");

#[tokio::test]
async fn the_page_shows_a_chart_from_the_trace() {
    let Some(browser) = toolgate_test_support::browser::find() else { return };
    let demo = start(&[]);
    let alice = key_of(&demo.banner, "alice");
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .arg(SCRIPT)
            .args([demo.url.as_str(), alice.as_str()])
            .env("NODE_PATH", &browser.node_modules)
            .env("CHROMIUM", &browser.chromium)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("trace_image.cjs finishes within 2 minutes")
    .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("PASS trace image"), "{stdout}");
}
