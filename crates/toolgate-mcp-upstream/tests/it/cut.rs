//! A stdio upstream killed with SIGKILL while one of its tools runs: a write whose request
//! had reached it is answered "may or may not have been applied" and is not retryable; a read
//! cut the same way, and calls while it is down, are told in plain words (no Rust debug text,
//! no rmcp type names).

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Envelope, ErrorCode};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_mcp_upstream::Upstreams;

use toolgate_test_support::eventually;

use crate::common::{call, front, markers, member, python};

/// The pid of the one upstream process started since `seen` were counted.
async fn newest_pid(dir: &Path, seen: usize) -> u32 {
    let dir2 = dir.to_owned();
    eventually(Duration::from_secs(30), "the upstream process started", || {
        let count = markers(&dir2, "started-").len();
        async move { count > seen }
    })
    .await;
    let mut pids: Vec<(std::time::SystemTime, u32)> = markers(dir, "started-")
        .into_iter()
        .map(|p| {
            let pid =
                p.file_name().unwrap().to_str().unwrap().trim_start_matches("started-").parse().unwrap();
            (std::fs::metadata(&p).unwrap().modified().unwrap(), pid)
        })
        .collect();
    pids.sort();
    pids.last().unwrap().1
}

/// Start `tool` with `label`, wait until the upstream has begun it, kill the upstream
/// process with SIGKILL, and return the call's answer.
async fn cut(
    gateway: &Gateway,
    dir: &Path,
    pid: u32,
    tool: &str,
    label: &str,
    opts: CallOptions,
) -> Envelope {
    let pending = {
        let (gateway, tool, label) = (gateway.clone(), tool.to_owned(), label.to_owned());
        tokio::spawn(async move { gateway.execute(&member(), &tool, json!({"label": label}), &opts).await })
    };
    let dir2 = dir.to_owned();
    let marker = format!("began-{label}");
    eventually(Duration::from_secs(10), "the upstream began the call", || {
        let began = !markers(&dir2, &marker).is_empty();
        async move { began }
    })
    .await;
    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    tokio::time::timeout(Duration::from_secs(10), pending).await.expect("answered after the kill").unwrap()
}

fn plain_words(envelope: &Envelope) -> String {
    let text = serde_json::to_string(envelope.error.as_ref().unwrap()).unwrap();
    for internal in ["Ok(", "Err(", "Closed)", "rmcp", "reqwest", "ServiceError", "TransportClosed"] {
        assert!(!text.contains(internal), "`{internal}` reaches the model: {text}");
    }
    envelope.error.as_ref().unwrap().message.clone()
}

#[tokio::test]
async fn an_upstream_killed_mid_call_says_a_write_may_have_been_applied() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut config = crate::stdio::config(&python, dir.path());
    config.read_only_tools.push("hold_read".into());
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());

    // A write that had reached the upstream: its outcome is unknown, and it is not retryable.
    let pid = newest_pid(dir.path(), 0).await;
    let write = cut(&gateway, dir.path(), pid, "weather__hold_write", "w1", CallOptions::default()).await;
    assert_eq!(write.code(), Some(ErrorCode::Unavailable), "{write:?}");
    let message = plain_words(&write);
    assert!(message.contains("may or may not have been applied"), "{message}");
    assert!(message.contains("never repeat the write blindly"), "{message}");
    assert!(!message.contains("not reachable") && !message.contains("try again later"), "{message}");
    assert_eq!(write.metadata.attempts, 1, "a write is never retried");
    let details = write.error.as_ref().unwrap().details.as_ref().unwrap();
    assert_ne!(details.get("retryable"), Some(&json!(true)), "{details}");
    assert_eq!(details["sent"], true, "{details}");

    // While it is down, a call says what happened in words.
    let down = call(&gateway, &member(), "weather__get_forecast", json!({"city": "Oslo"})).await;
    if !down.success {
        assert_eq!(down.code(), Some(ErrorCode::Unavailable), "{down:?}");
        plain_words(&down);
    }

    // Restarted; a read cut the same way says so plainly and that it changed nothing.
    let gateway2 = gateway.clone();
    eventually(Duration::from_secs(30), "the child is restarted and answers", || {
        let gateway = gateway2.clone();
        async move { call(&gateway, &member(), "weather__get_forecast", json!({"city": "Rome"})).await.success }
    })
    .await;
    let pid = newest_pid(dir.path(), 1).await;
    let read =
        cut(&gateway, dir.path(), pid, "weather__hold_read", "r1", CallOptions::default().retries(0)).await;
    assert_eq!(read.code(), Some(ErrorCode::Unavailable), "{read:?}");
    let message = plain_words(&read);
    assert!(message.contains("closed the connection before answering"), "{message}");
    assert!(!message.contains("may or may not"), "a read changes nothing: {message}");

    // With the gateway's retries, a read cut off answers in words too.
    let gateway2 = gateway.clone();
    eventually(Duration::from_secs(30), "the child is restarted again", || {
        let gateway = gateway2.clone();
        async move { call(&gateway, &member(), "weather__get_forecast", json!({"city": "Rome"})).await.success }
    })
    .await;
    let pid = newest_pid(dir.path(), 2).await;
    let retried = cut(&gateway, dir.path(), pid, "weather__hold_read", "r2", CallOptions::default()).await;
    // The retry either finds the link still down (UNAVAILABLE) or, since a call that finds it
    // down reconnects at once (74dfd4b), reaches the restarted child, whose hold_read holds
    // again until the deadline (RETRY_EXHAUSTED: UNAVAILABLE, then TIMEOUT). Either way the
    // answer is retryable and in plain words.
    assert!(
        matches!(retried.code(), Some(ErrorCode::Unavailable | ErrorCode::RetryExhausted)),
        "{retried:?}"
    );
    assert_eq!(
        retried.error.as_ref().and_then(|e| e.details.as_ref()).map(|d| d["retryable"] == true),
        Some(true),
        "{retried:?}"
    );
    plain_words(&retried);
}
