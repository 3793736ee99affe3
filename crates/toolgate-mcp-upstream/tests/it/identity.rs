//! The caller's identity as HTTP headers, per call, against a Python SDK
//! server over streamable HTTP that echoes the headers each call arrived with.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use toolgate_core::{Caller, Secret, ToolContext};
use toolgate_mcp_upstream::{IdentityMode, Transport, UpstreamConfig, Upstreams};

use crate::common::{call, front, python};

const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/header_server.py");

/// The echo server, killed when dropped, and its MCP URL.
async fn echo_server(python: &str) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(python)
        .arg(SERVER)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("header_server.py starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(port) = line.strip_prefix("listening ") {
                return port.trim().to_owned();
            }
        }
        panic!("header_server.py ended without listening");
    })
    .await
    .expect("header_server.py listens within 60 s");
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

fn upstream(name: &str, url: &str, identity: IdentityMode) -> UpstreamConfig {
    let mut config = UpstreamConfig::new(
        name,
        Transport::Http {
            url: url.to_owned(),
            headers: vec![("Authorization".into(), Secret::new("Bearer upstream-own-token"))],
        },
    );
    config.identity = identity;
    config.read_only_tools = vec!["whoami".into()];
    config
}

fn caller(user: &str, role: &str, token: &str) -> ToolContext {
    ToolContext::new(Caller::new(user, role).with_credential("fitness", token))
}

/// The headers the upstream saw for one call.
fn seen(envelope: &toolgate_core::Envelope) -> serde_json::Map<String, Value> {
    assert!(envelope.success, "{envelope:?}");
    envelope.result.as_ref().unwrap()["headers"].as_object().expect("a headers object").clone()
}

#[tokio::test]
async fn each_callers_call_carries_its_own_id_and_no_key_leaves() {
    let Some(python) = python() else { return };
    let (_server, url) = echo_server(&python).await;
    let gateway = front();
    let header =
        IdentityMode::Header { user: "X-Toolgate-User".into(), role: Some("X-Toolgate-Role".into()) };
    let upstreams = Upstreams::start(
        &gateway,
        vec![upstream("who", &url, header), upstream("anon", &url, IdentityMode::None)],
    )
    .await;
    assert!(upstreams.status().iter().all(|s| s.connected), "{:?}", upstreams.status());

    // Two callers at once on the one shared session: each call's POST carries its own caller.
    let mia = caller("mia", "member", "sk-mia-secret-token");
    let ben = caller("ben", "manager", "sk-ben-secret-token");
    let slow = json!({"wait_ms": 300});
    let (a, b) = tokio::join!(
        call(&gateway, &mia, "who__whoami", slow.clone()),
        call(&gateway, &ben, "who__whoami", slow.clone()),
    );
    let (a, b) = (seen(&a), seen(&b));
    assert_eq!(a["x-toolgate-user"], "mia", "{a:?}");
    assert_eq!(a["x-toolgate-role"], "member");
    assert_eq!(b["x-toolgate-user"], "ben", "{b:?}");
    assert_eq!(b["x-toolgate-role"], "manager");
    for headers in [&a, &b] {
        // Only the configured credential goes up, never a caller's token.
        assert_eq!(headers["authorization"], "Bearer upstream-own-token");
        let all = Value::Object(headers.clone()).to_string();
        assert!(!all.contains("sk-mia") && !all.contains("sk-ben"), "a caller's token leaked: {all}");
    }

    // Many interleaved calls never swap ids.
    let calls = (0..12).map(|i| {
        let gateway = gateway.clone();
        async move {
            let user = format!("user{i}");
            let ctx = caller(&user, "member", "sk-x");
            let headers = seen(&call(&gateway, &ctx, "who__whoami", json!({"wait_ms": 20 * (i % 4)})).await);
            (user, headers["x-toolgate-user"].clone())
        }
    });
    for (user, got) in futures::future::join_all(calls).await {
        assert_eq!(got, user.as_str());
    }

    // The default sends nothing about the caller.
    let plain = seen(&call(&gateway, &mia, "anon__whoami", json!({})).await);
    assert!(!plain.contains_key("x-toolgate-user") && !plain.contains_key("x-toolgate-role"), "{plain:?}");
    assert!(!Value::Object(plain).to_string().contains("mia"));
}
