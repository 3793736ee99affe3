//! Issue 11's call contract as a client nobody here wrote meets it: the
//! official MCP Python SDK (`tests/python/contract_check.py`) against two real
//! `toolgate serve --demo` servers (meta and direct exposure) over streamable
//! HTTP, with a real local weather provider that answers, hangs, or fails
//! once then hangs, per city. The script checks deadlines and retries,
//! option spellings, discovery, progress, result templates and goals, the
//! 3-day weather default, key and session scopes, images and the trace's
//! start, end and cancelled events (see its docstring).
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::key_of;
use crate::serve::{Demo, create_key, launch};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/contract_check.py");
/// The provider never answers for this city.
const HANG: &str = "Hangtown";
/// The provider answers 503 to the first request for this city, then never answers.
const FLAKY: &str = "Flaky";
/// The server's limit on one provider request (`[weather] timeout_ms`).
const PROVIDER_TIMEOUT_MS: u64 = 1_000;

/// A weather provider speaking the provider contract (`GET ?city=&date=`) on
/// 127.0.0.1: sunny for every city but [`HANG`] and [`FLAKY`]. Its base URL.
async fn weather_provider() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/forecast", listener.local_addr().unwrap());
    let flaky_seen = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        loop {
            let Ok((mut tcp, _)) = listener.accept().await else { return };
            let flaky_seen = flaky_seen.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = tcp.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]);
                let line = head.lines().next().unwrap_or_default();
                let city =
                    |c: &str| line.contains(&format!("city={c}&")) || line.contains(&format!("city={c} "));
                let hang = city(HANG) || (city(FLAKY) && flaky_seen.fetch_add(1, Ordering::SeqCst) > 0);
                if hang {
                    // Hold the connection open without a byte of answer.
                    tokio::time::sleep(Duration::from_secs(600)).await;
                    return;
                }
                let (status, body) = if city(FLAKY) {
                    ("503 Service Unavailable", r#"{"error":"overloaded"}"#)
                } else {
                    ("200 OK", r#"{"summary":"sunny","temp_c":21}"#)
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tcp.write_all(reply.as_bytes()).await;
            });
        }
    });
    url
}

/// alice's demo key, and two keys of hers made with `toolgate keys create`:
/// an "info agent" (`--toolset read_only`) and a nutrition-only one.
fn keys(demo: &Demo) -> serde_json::Value {
    let member = ["--user", "alice", "--role", "member"];
    json!({
        "alice": key_of(&demo.banner, "alice"),
        "info": create_key(demo, &[&member[..], &["--toolset", "read_only"]].concat()),
        "nutrition": create_key(demo, &[&member[..], &["--domains", "nutrition"]].concat()),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_contract_through_the_official_python_sdk() {
    let Some(python) = toolgate_test_support::python::with("import mcp") else { return };
    let weather = weather_provider().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, format!("[weather]\ntimeout_ms = {PROVIDER_TIMEOUT_MS}\n")).unwrap();
    let config = config.to_str().unwrap();
    let env = [("TOOLGATE_WEATHER_URL", weather.as_str()), ("TOOLGATE_CONFIG", config)];
    let meta = launch(&[], &env, None);
    let direct = launch(&["--expose", "direct"], &env, None);
    let cfg = json!({
        "url": meta.url,
        "direct_url": direct.url,
        "keys": keys(&meta),
        "direct_keys": keys(&direct),
        "user": "alice",
        "hang_city": HANG,
        "flaky_city": FLAKY,
        "provider_timeout_ms": PROVIDER_TIMEOUT_MS,
    });
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(&python).arg(SCRIPT).arg(cfg.to_string()).kill_on_drop(true).output(),
    )
    .await
    .expect("contract_check.py finishes within 2 minutes")
    .expect("contract_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}");
    assert!(
        output.status.success(),
        "contract_check.py failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("PASS contract"), "{stdout}");
    // Every check printed its line: a script that skipped a part would pass with fewer.
    let checks = stdout.lines().filter(|l| l.starts_with("  ok  ")).count();
    assert!(checks >= 79, "only {checks} checks ran:\n{stdout}");
}
