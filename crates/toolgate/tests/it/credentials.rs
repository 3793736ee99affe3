//! A credential goes only to the backend it was made for: `toolgate serve --demo` mints each
//! user a token of the in-process fitness API, and a `[[domains]]` system declared beside it
//! with the default auth (`bearer_from_caller`) must never receive that token. Its backend is
//! a real HTTP server on 127.0.0.1 that records every request and its `Authorization` header.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use serde_json::{Value, json};
use toolgate_test_support::mcp;

use crate::common::{self, key_of, rpc, serving};

const TABLE: &str = r#"
tool = "query_probe"
description = "Reads one probe record. Example: {\"op\": \"get_probe\", \"id\": \"1\"}."
domain = "probe"

[[routes]]
op = "get_probe"
method = "GET"
path = "/probe/{id}"
summary = "One probe record"
"#;

/// The `Authorization` header of every request the probe backend received (`""` when none).
type Seen = Arc<Mutex<Vec<String>>>;

async fn probe_backend() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |headers: HeaderMap| {
        let record = record.clone();
        async move {
            let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
            record.lock().unwrap().push(auth.to_owned());
            axum::Json(json!({"id": "1", "authorization": auth}))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_fitness_token_never_reaches_a_declared_domain() {
    let (backend, seen) = probe_backend().await;
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("routes");
    std::fs::create_dir(&routes).unwrap();
    std::fs::write(routes.join("query_probe.toml"), TABLE).unwrap();
    let db = format!("sqlite:{}", dir.path().join("tg.db").display());
    let config = dir.path().join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"{db}\"\n\n[[domains]]\nname = \"probe\"\nbase_url = \"{backend}\"\nroutes = \"{}\"\n",
            routes.display()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();

    // `toolgate check` says up front that nothing issues this domain a credential.
    let (ok, out) =
        toolgate_test_support::process::output(common::toolgate().args(["--config", config, "check"]));
    assert!(ok, "{out}");
    assert!(out.contains("domain `probe`") && out.contains("no credential"), "{out}");

    let (_served, url, banner) = serving(
        common::toolgate()
            .args(["--config", config, "serve", "--demo", "--listen", "127.0.0.1:0"])
            .stderr(Stdio::null()),
    );
    let key = key_of(&banner, "alice");
    let client = reqwest::Client::new();
    let endpoint = format!("{url}/mcp");
    let (session, _) = mcp::open_session(&client, &endpoint, Some(&key)).await;
    let call = |id: u64, tool: &str, params: Value| {
        let (client, endpoint, key, session) = (&client, &endpoint, &key, &session);
        let body = mcp::execute_tool(id, tool, params);
        async move {
            let (status, _, answer) = rpc(client, endpoint, Some(key), Some(session), &body).await;
            assert_eq!(status, 200, "{answer}");
            answer["result"]["structuredContent"].clone()
        }
    };

    // The fitness tools still get alice's token from the server.
    let fitness = call(2, "query_body_data", json!({"op": "list_measurements"})).await;
    assert_eq!(fitness["success"], true, "{fitness}");
    assert!(!fitness["result"]["payload"]["measurements"].as_array().unwrap().is_empty(), "{fitness}");

    // The declared domain: refused before any I/O, with what is missing and who must fix it.
    let probe = call(3, "query_probe", json!({"op": "get_probe", "id": "1"})).await;
    assert_eq!(probe["success"], false, "{probe}");
    assert_eq!(probe["error"]["code"], "PERMISSION_DENIED", "{probe}");
    let message = probe["error"]["message"].as_str().unwrap();
    assert!(message.contains("the probe API needs a credential"), "{message}");
    assert!(message.contains("operator must configure") && message.contains("do not retry"), "{message}");
    assert_eq!(probe["metadata"]["attempts"], 1, "not retried: {probe}");
    assert!(!probe.to_string().contains("fit_"), "no fitness token in the answer: {probe}");
    assert_eq!(*seen.lock().unwrap(), Vec::<String>::new(), "the probe backend got no request at all");
}
