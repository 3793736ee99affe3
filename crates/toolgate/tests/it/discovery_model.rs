//! `[discovery] model` as an operator sets it (here through `TOOLGATE_DISCOVERY_MODEL`, the
//! folder of all-MiniLM-L6-v2 that `TOOLGATE_TEST_MODEL_DIR` names): `toolgate check` loads
//! and reports it, and `toolgate serve` ranks `get_tool_schema`'s `query` by meaning too, so
//! that a request sharing no word with its tool finds it. Skipped without the folder unless
//! `TOOLGATE_REQUIRE_MODEL=1`.

use serde_json::json;
use toolgate_test_support::mcp;

/// The folder `TOOLGATE_TEST_MODEL_DIR` names; `None` (the test skipped, saying so) without
/// one, unless `TOOLGATE_REQUIRE_MODEL=1`.
pub(crate) fn model_dir() -> Option<String> {
    match std::env::var("TOOLGATE_TEST_MODEL_DIR") {
        Ok(dir) => Some(dir),
        Err(_) if std::env::var("TOOLGATE_REQUIRE_MODEL").is_ok_and(|v| v == "1") => {
            panic!("TOOLGATE_REQUIRE_MODEL=1 but TOOLGATE_TEST_MODEL_DIR is not set")
        }
        Err(_) => {
            eprintln!("skipped: TOOLGATE_TEST_MODEL_DIR is not set");
            None
        }
    }
}

/// The names `get_tool_schema` answers `query` with, in its order.
async fn found(url: &str, key: &str, query: &str) -> Vec<String> {
    let client = reqwest::Client::new();
    let endpoint = format!("{url}/mcp");
    let (session, _) = mcp::open_session(&client, &endpoint, Some(key)).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "get_tool_schema", "arguments": {"query": query, "limit": 3}}});
    let (_, _, value) = crate::common::rpc(&client, &endpoint, Some(key), Some(&session), &call).await;
    value["result"]["structuredContent"]["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{value}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
}

#[tokio::test]
async fn a_served_request_sharing_no_word_with_its_tool_finds_it_by_meaning() {
    let Some(dir) = model_dir() else { return };
    let query = "what did I have for lunch";
    // By words alone: no tool carries "lunch" (the rest are stop words or "have").
    let plain = crate::serve::launch(&[], &[], None);
    let alice = crate::common::key_of(&plain.banner, "alice");
    let words = found(&plain.url, &alice, query).await;
    assert!(!words.iter().any(|n| n == "query_nutrition"), "{words:?}");
    drop(plain);
    let served = crate::serve::launch(&[], &[("TOOLGATE_DISCOVERY_MODEL", &dir)], None);
    let alice = crate::common::key_of(&served.banner, "alice");
    let meaning = found(&served.url, &alice, query).await;
    assert!(meaning.iter().any(|n| n == "query_nutrition"), "{meaning:?}");
    assert!(meaning.iter().all(|n| n.contains("nutrition")), "{meaning:?}");
    // The words still count: a request naming its tool finds it first.
    let named = found(&served.url, &alice, "cancel a booking").await;
    assert_eq!(named.first().map(String::as_str), Some("cancel_booking"), "{named:?}");
}

#[test]
fn check_loads_the_model_and_says_so() {
    let Some(dir) = model_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = crate::common::toolgate()
        .args(["--db", &format!("sqlite:{}", tmp.path().join("t.db").display()), "check"])
        .env("TOOLGATE_DISCOVERY_MODEL", &dir)
        .env_remove("TOOLGATE_CONFIG")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("discovery ranks by meaning too") && text.contains("384 dimensions"), "{text}");
}
