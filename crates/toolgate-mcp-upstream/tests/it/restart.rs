//! An HTTP upstream that restarts is reached on the next call, not when the
//! supervisor's backoff (grown to seconds while it was down) runs out: a call
//! that finds the link down asks for a connection now and waits a moment for
//! it. While it is down, calls say what happened in plain words: no URL, no
//! address, no rmcp or reqwest type names.

use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_core::{ErrorCode, Secret};
use toolgate_mcp::KeyStore;
use toolgate_mcp_upstream::{Transport, Upstreams};

use crate::common::{call, front, member};
use crate::http::{config, killable_server, listening, upstream};

#[tokio::test]
async fn a_restarted_http_upstream_answers_the_next_call_and_its_outage_names_no_internals() {
    let up = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let keys_url = format!("sqlite:{}", dir.path().join("keys.db").display());
    let key = KeyStore::connect(&keys_url).await.unwrap().create("front-gateway", "member").await.unwrap();
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let first = killable_server(up.gateway.clone(), keys_url.clone(), addr);
    listening(addr).await;
    let mut config = config(&up);
    config.transport = Transport::Http {
        url: format!("http://{addr}/mcp"),
        headers: vec![("Authorization".into(), Secret::new(format!("Bearer {}", key.key.expose())))],
    };
    // The default backoff (0.5 s doubling to 30 s): after a few seconds down the
    // supervisor waits seconds between attempts.
    let gateway = front();
    let _upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await.success);

    first.shutdown_background();
    let mut messages = Vec::new();
    for _ in 0..2 {
        let down = call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await;
        assert_eq!(down.code(), Some(ErrorCode::Unavailable), "{down:?}");
        let error = down.error.unwrap();
        messages.push(format!("{} {}", error.message, error.details.unwrap_or_default()));
    }
    let port = format!(":{}", addr.port());
    for text in &messages {
        for internal in [
            "http://",
            "127.0.0.1",
            port.as_str(),
            "rmcp",
            "reqwest",
            "Client error",
            "StreamableHttp",
            "error sending request",
            "os error",
        ] {
            assert!(!text.contains(internal), "`{internal}` in {text}");
        }
        assert!(text.contains("`stock`") && text.contains("try again later"), "{text}");
    }
    assert!(
        messages.iter().any(|m| m.contains("connection refused") || m.contains("could not be opened")),
        "what happened is said: {messages:?}"
    );
    eprintln!("while down: {messages:?}");
    // Long enough down for the backoff to have grown past 2 s.
    tokio::time::sleep(Duration::from_secs(4)).await;

    let second = killable_server(up.gateway.clone(), keys_url, addr);
    listening(addr).await;
    let restarted = Instant::now();
    let first_good = loop {
        if call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await.success {
            break restarted.elapsed();
        }
        assert!(restarted.elapsed() < Duration::from_secs(20), "the restarted upstream never answered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    eprintln!("first good call {} ms after the upstream listened again", first_good.as_millis());
    assert!(first_good < Duration::from_millis(1500), "first good call after {first_good:?}");
    second.shutdown_background();
}
