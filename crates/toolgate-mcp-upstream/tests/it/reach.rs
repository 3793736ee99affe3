//! Reaching an upstream: one never reached since start (a port that refuses, then serves)
//! answers UNAVAILABLE for its whole namespace and is named in the catalog until its tools
//! appear; an `https://` upstream behind a TLS front whose certificate comes from a CA made
//! in the test is used when that CA is trusted, and refused with the certificate message
//! when it is not.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Caller, ErrorCode, Secret};
use toolgate_mcp::KeyStore;
use toolgate_mcp_upstream::{Transport, Upstreams};

use crate::common::{call, front, member};
use crate::http::{config, killable_server, listening, upstream};

#[tokio::test]
async fn an_upstream_never_reached_answers_unavailable_until_it_serves() {
    let up = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let keys_url = format!("sqlite:{}", dir.path().join("keys.db").display());
    let key = KeyStore::connect(&keys_url).await.unwrap().create("front-gateway", "member").await.unwrap();
    // A port nobody listens on: connections are refused until the server starts there.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut config = config(&up);
    config.transport = Transport::Http {
        url: format!("http://{addr}/mcp"),
        headers: vec![("Authorization".into(), Secret::new(format!("Bearer {}", key.key.expose())))],
    };
    config.backoff_min = Duration::from_millis(100);
    config.backoff_max = Duration::from_millis(300);
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(!upstreams.status()[0].connected);
    assert!(gateway.all_specs().is_empty(), "no tool is known before the first listing");

    // Any name in its namespace: UNAVAILABLE with the reason, not TOOL_NOT_FOUND.
    for name in ["stock__query_stock", "stock__anything_at_all"] {
        let down = call(&gateway, &member(), name, json!({"item": "tent"})).await;
        assert_eq!(down.code(), Some(ErrorCode::Unavailable), "{down:?}");
        let error = down.error.as_ref().unwrap();
        assert!(error.message.contains("`stock` has not been reached"), "{error:?}");
        let reason = error.details.as_ref().unwrap()["reason"].as_str().unwrap().to_owned();
        assert!(!reason.is_empty() && error.message.contains(&reason), "{error:?}");
    }
    let other = call(&gateway, &member(), "weather__get_forecast", json!({})).await;
    assert_eq!(other.code(), Some(ErrorCode::ToolNotFound), "another namespace is simply unknown");
    let caller = Caller::new("mia", "member");
    assert!(gateway.catalog(&caller).contains("`stock` (another MCP server): not reached since start"));

    // It starts serving on that port: its tools appear, our clients are told, calls work.
    let mut changes = gateway.tools_changed();
    changes.mark_unchanged();
    let server = killable_server(up.gateway.clone(), keys_url, addr);
    listening(addr).await;
    tokio::time::timeout(Duration::from_secs(20), changes.changed())
        .await
        .expect("the tool list changed once it was reached")
        .unwrap();
    let gateway2 = gateway.clone();
    toolgate_test_support::eventually(Duration::from_secs(20), "the upstream's tool answers", || {
        let gateway = gateway2.clone();
        async move { call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await.success }
    })
    .await;
    assert!(upstreams.status()[0].connected);
    assert!(!gateway.catalog(&caller).contains("not reached since start"));
    let unknown = call(&gateway, &member(), "stock__anything_at_all", json!({})).await;
    assert_eq!(unknown.code(), Some(ErrorCode::ToolNotFound), "once reached, its real list decides");
    server.shutdown_background();
}

/// A TLS front on 127.0.0.1:0 that forwards each connection to `backend` (plain HTTP); the
/// `https://localhost:PORT` base it serves.
async fn tls_front(backend: std::net::SocketAddr, cert_der: Vec<u8>, key_der: Vec<u8>) -> String {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert_der.into()], rustls::pki_types::PrivateKeyDer::Pkcs8(key_der.into()))
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    format!("https://localhost:{port}")
}

#[tokio::test]
async fn an_https_upstream_is_used_when_its_ca_is_trusted_and_refused_clearly_when_not() {
    let up = upstream().await;
    let backend: std::net::SocketAddr =
        up.url.trim_start_matches("http://").trim_end_matches("/mcp").parse().unwrap();
    let pki = toolgate_test_support::tls::Pki::new(&["localhost"]);
    let ca_pem = pki.ca_pem.clone();
    let base = tls_front(backend, pki.cert_der, pki.key_der).await;
    let https = |ca: Option<&str>| {
        let mut config = config(&up);
        config.transport = Transport::Http {
            url: format!("{base}/mcp"),
            headers: vec![("Authorization".into(), Secret::new(format!("Bearer {}", up.key)))],
        };
        config.ca_bundle_pem = ca.map(str::to_owned);
        config.connect_timeout = Duration::from_secs(5);
        config
    };

    // Trusted through the CA bundle (`[tls] ca_file`): listed and called over TLS.
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![https(Some(&ca_pem))]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
    assert!(gateway.spec("stock__query_stock").is_some());
    let ok = call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await;
    assert!(ok.success, "{ok:?}");
    assert_eq!(ok.result.as_ref().unwrap()["result"]["count"], 3, "{ok:?}");
    drop(upstreams);

    // Untrusted: not connected, and its calls say it is a certificate problem and the fix.
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![https(None)]).await;
    let status = &upstreams.status()[0];
    assert!(!status.connected);
    let reason = status.reason.as_deref().unwrap();
    assert!(reason.contains("certificate is not trusted") && reason.contains("ca_file"), "{reason}");
    let refused = call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await;
    assert_eq!(refused.code(), Some(ErrorCode::Unavailable), "{refused:?}");
    let message = &refused.error.as_ref().unwrap().message;
    assert!(message.contains("certificate problem") && message.contains("ca_file"), "{message}");
    assert!(!message.contains(&up.key), "the token never shows: {message}");
}
