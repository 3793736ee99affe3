//! The operator's section of the web page: `tests/web/operator_page.cjs` in headless Chromium
//! against the real `toolgate serve --demo` (SQLite), with an `[[upstreams]]` entry nobody
//! serves and a configuration file broken after the start. A member does not see the section;
//! the admin (carol) sees the sources with their reachability and numbers, the keys, the audit
//! trail and the last reload; makes, changes and revokes a key through the page; filters the
//! trail; asks for a reload that is refused. The section's screenshot is kept at
//! `target/e2e/operator-page.png` (the README's is `docs/operator-page.png`).
//!
//! Needs `node`, Chromium and playwright-core (see `toolgate_test_support::browser`);
//! skips without them unless `TOOLGATE_REQUIRE_BROWSER=1`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::key_of;
use crate::serve::launch;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/web/operator_page.cjs");

/// `POST /api/call` as `key`: whether the envelope says success.
async fn call(client: &reqwest::Client, base: &str, key: &str, tool: &str, parameters: Value) -> bool {
    let response = client
        .post(format!("{base}/api/call"))
        .bearer_auth(key)
        .json(&json!({"tool": tool, "parameters": parameters}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{tool}");
    let body: Value = response.json().await.unwrap();
    body["envelope"]["success"] == true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_page_shows_sources_keys_audit_and_reload_to_the_highest_role_only() {
    let Some(browser) = toolgate_test_support::browser::find() else { return };
    let dead = {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        taken.local_addr().unwrap()
    }; // closed again: nobody serves MCP there
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    let ghost = format!("[[upstreams]]\nname = \"ghost\"\nurl = \"http://{dead}/mcp\"\n");
    std::fs::write(&config, &ghost).unwrap();
    let demo = launch(&[], &[("TOOLGATE_CONFIG", config.to_str().unwrap())], None);
    let (carol, alice) = (key_of(&demo.banner, "carol"), key_of(&demo.banner, "alice"));
    let visitor = key_of(&demo.banner, "visitor");
    // Calls for the metrics and the audit trail: two answered, one refused for its parameters,
    // one refused to a guest (the trail keeps refusals and writes).
    let client = reqwest::Client::new();
    assert!(call(&client, &demo.url, &alice, "query_travel_policy", json!({"city": "Shenzhen"})).await);
    assert!(call(&client, &demo.url, &alice, "query_travel_policy", json!({"city": "Shenzhen"})).await);
    assert!(!call(&client, &demo.url, &alice, "query_travel_order", json!({"page_size": "many"})).await);
    assert!(!call(&client, &demo.url, &visitor, "cancel_travel_order", json!({"order_id": 1})).await);
    // Broken after the start: the page's reload must be refused, and say why.
    let broken = format!(
        "{ghost}\n[[domains]]\nname = \"inventory\"\nbase_url = \"http://127.0.0.1:9\"\nroutes = \"{}\"\n",
        dir.path().join("no-such-routes").display()
    );
    std::fs::write(&config, broken).unwrap();

    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/e2e");
    std::fs::create_dir_all(&shots).unwrap();
    let screenshot = shots.join("operator-page.png");
    let _ = std::fs::remove_file(&screenshot);
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .arg(SCRIPT)
            .args([demo.url.as_str(), carol.as_str(), alice.as_str()])
            .arg(&screenshot)
            .env("NODE_PATH", &browser.node_modules)
            .env("CHROMIUM", &browser.chromium)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("operator_page.cjs finishes within 2 minutes")
    .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("PASS operator page"), "{stdout}");

    // Read back here too, not only by the page's script.
    let last: Value = client
        .get(format!("{}/api/admin/reload", demo.url))
        .bearer_auth(&carol)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(last["last"]["reloaded"], false, "{last}");
    let keys: Value = client
        .get(format!("{}/api/admin/keys", demo.url))
        .bearer_auth(&carol)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let dora: Vec<&Value> =
        keys["keys"].as_array().unwrap().iter().filter(|k| k["user_id"] == "dora").collect();
    assert_eq!(dora.len(), 1, "{keys}");
    assert_eq!(
        (dora[0]["role"].as_str(), dora[0]["active"].as_bool()),
        (Some("manager"), Some(false)),
        "{keys}"
    );
    assert!(
        call(&client, &demo.url, &alice, "query_travel_policy", json!({"city": "Shenzhen"})).await,
        "still serving"
    );
    let png = std::fs::read(&screenshot).expect("a screenshot was kept");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} bytes", png.len());
    eprintln!("screenshot: {}", screenshot.display());
}
