//! The web page end to end in headless Chromium: `tests/web/page_check.cjs`
//! (playwright-core) against the real server with an agent over a scripted
//! model: tools, skills, the live trace, a tool's page with a tried call,
//! and a chat with a tool call. It keeps a screenshot at `target/e2e/console.png`.
//!
//! Needs `node`, Chromium (`TOOLGATE_CHROMIUM`, default `/usr/bin/chromium`,
//! Debian's `chromium` package) and `playwright-core` from the npm registry
//! in `TOOLGATE_NODE_MODULES` (default `target/e2e-node/node_modules`).
//! Without them the test prints why it skipped, unless
//! `TOOLGATE_REQUIRE_BROWSER=1`, under which that is a failure.
//!
//! ```text
//! apt-get install chromium
//! mkdir -p target/e2e-node && npm install --prefix target/e2e-node playwright-core
//! cargo test -p toolgate-mcp --test it web::
//! ```

use std::time::Duration;

use crate::chat;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/web/page_check.cjs");

/// Browsers fetch the icon on their own, without the page's key: it is not
/// an API route, so it is no 401 (one in every browser's console before).
#[tokio::test]
async fn the_icon_is_served_without_a_key_and_the_api_still_needs_one() {
    let server = crate::common::TestServer::default().await;
    let icon = server.get(None, "/favicon.ico").await;
    assert_eq!(icon.status, 200, "{}", icon.text);
    assert_eq!(icon.headers["content-type"], "image/svg+xml");
    assert!(icon.text.starts_with("<svg"), "{}", icon.text);
    assert_eq!(server.get(None, "/api/tools").await.status, 401);
    server.stop().await;
}

#[tokio::test]
async fn the_page_shows_tools_skills_the_live_trace_the_console_and_the_chat() {
    let Some(browser) = toolgate_test_support::browser::find() else { return };
    // The chat panel talks to an agent whose model is scripted: one tool call, then the answer.
    let model = chat::model(vec![
        chat::call_turn("query_weather", serde_json::json!({"city": "Oslo"})),
        chat::text_turn(&["Sunny ", "in ", "Oslo."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let server = chat::server_with_agent(&model, &dir).await;
    let shots = toolgate_test_support::workspace().join("target/e2e");
    std::fs::create_dir_all(&shots).unwrap();
    let screenshot = shots.join("console.png");
    let _ = std::fs::remove_file(&screenshot);
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .arg(SCRIPT)
            .args([server.base.as_str(), server.admin.as_str(), server.member.as_str()])
            .arg(&screenshot)
            .env("NODE_PATH", &browser.node_modules)
            .env("CHROMIUM", &browser.chromium)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("page_check.cjs finishes within 2 minutes")
    .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("PASS web"));
    let png = std::fs::read(&screenshot).expect("a screenshot was kept");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} bytes", png.len());
    assert_eq!(model.requests.load(std::sync::atomic::Ordering::SeqCst), 2, "the chat asked the model twice");
    server.stop().await;
}
