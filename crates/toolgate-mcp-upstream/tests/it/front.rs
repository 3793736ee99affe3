//! The official Python SDK client against a front toolgate (mcp-server in
//! process, as `toolgate serve` runs it) whose gateway serves the Python
//! upstream's tools: direct mode lists and calls them and sees
//! `list_changed`; meta mode reaches them through `execute_tool`.

use std::time::Duration;

use toolgate_mcp::{Exposure, HttpState, KeyStore, serve_http};
use toolgate_mcp_upstream::Upstreams;

use crate::common::{front, python};

const CHECK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/front_check.py");

async fn check(python: &str, exposure: Exposure, mode: &str) {
    let dir = tempfile::tempdir().unwrap();
    let gateway = front();
    let _upstreams = Upstreams::start(&gateway, vec![crate::stdio::config(python, dir.path())]).await;
    let keys = KeyStore::connect(&format!("sqlite:{}", dir.path().join("keys.db").display())).await.unwrap();
    let key = keys.create("mia", "member").await.unwrap().key.expose().to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_http(
        listener,
        HttpState::new(gateway, keys).with_exposure(exposure),
        std::future::pending(),
    ));
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(python).args([CHECK, &url, &key, mode]).kill_on_drop(true).output(),
    )
    .await
    .expect("front_check.py finishes within 2 minutes")
    .expect("front_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "front_check.py {mode} failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("  ok  "), "{stdout}");
}

#[tokio::test]
async fn the_python_sdk_sees_upstream_tools_in_direct_mode() {
    let Some(python) = python() else { return };
    check(&python, Exposure::Direct, "direct").await;
}

#[tokio::test]
async fn the_python_sdk_reaches_upstream_tools_through_execute_tool() {
    let Some(python) = python() else { return };
    check(&python, Exposure::Meta, "meta").await;
}
