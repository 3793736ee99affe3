//! A Python MCP server (official SDK) as a stdio child process.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Caller, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_mcp_upstream::{CALLER_META_KEY, IdentityMode, Transport, UpstreamConfig, Upstreams};

use toolgate_test_support::eventually;

use crate::common::{Recorder, SERVER, call, front, markers, member, python};

pub(crate) fn config(python: &str, markers: &Path) -> UpstreamConfig {
    let mut config = UpstreamConfig::new(
        "weather",
        Transport::Stdio {
            command: vec![python.to_owned(), SERVER.to_owned()],
            env: vec![("MARKER_DIR".into(), toolgate_core::Secret::new(markers.display().to_string()))],
            cwd: None,
        },
    );
    config.read_only_tools = vec!["get_forecast".into()];
    config.backoff_min = Duration::from_millis(100);
    config.backoff_max = Duration::from_millis(400);
    // Generous: a Python importing the SDK on a loaded CI machine takes seconds.
    config.connect_timeout = Duration::from_secs(60);
    config
}

async fn start(config: UpstreamConfig) -> (Gateway, Upstreams) {
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
    (gateway, upstreams)
}

#[tokio::test]
async fn python_tools_are_listed_called_and_checked_like_ours() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (gateway, _upstreams) = start(config(&python, dir.path())).await;

    let names: Vec<String> = gateway.all_specs().into_iter().map(|s| s.name).collect();
    for name in
        ["weather__get_forecast", "weather__fail_always", "weather__count_slowly", "weather__draw_swatch"]
    {
        assert!(names.contains(&name.to_owned()), "{name} missing from {names:?}");
    }
    // A schema exposing `user_id` is refused at registration; the others load.
    assert!(!names.contains(&"weather__lookup_account".to_owned()), "{names:?}");
    let forecast = gateway.spec("weather__get_forecast").unwrap();
    assert!(forecast.effect.is_read(), "read_only_tools makes it a read");
    assert_eq!(forecast.domain, "weather");
    assert!(!gateway.spec("weather__fail_always").unwrap().effect.is_read());

    let ctx = member();
    let ok = call(&gateway, &ctx, "weather__get_forecast", json!({"city": "Oslo", "days": 2})).await;
    assert!(ok.success, "{ok:?}");
    assert_eq!(ok.result.as_ref().unwrap()["city"], "Oslo");
    assert_eq!(ok.result.as_ref().unwrap()["days"][1]["high_c"], 21);

    // Our validator answers before the upstream is asked: every error at once.
    let bad = call(&gateway, &ctx, "weather__get_forecast", json!({"days": 9, "extra": 1})).await;
    assert_eq!(bad.code(), Some(ErrorCode::InvalidParams), "{bad:?}");
    assert_eq!(bad.metadata.attempts, 0);
    let errors = bad.error.as_ref().unwrap().details.as_ref().unwrap()["errors"].as_array().unwrap().len();
    assert!(errors >= 3, "city missing, days too large, extra field: {bad:?}");

    let failed = call(&gateway, &ctx, "weather__fail_always", json!({"reason": "storm"})).await;
    assert_eq!(failed.code(), Some(ErrorCode::ExecutionError), "{failed:?}");
    assert!(failed.error.as_ref().unwrap().message.contains("storm"), "{failed:?}");

    let guest = ToolContext::new(Caller::new("gus", "guest"));
    let denied = call(&gateway, &guest, "weather__get_forecast", json!({"city": "Oslo"})).await;
    assert_eq!(denied.code(), Some(ErrorCode::PermissionDenied), "{denied:?}");
    assert_eq!(denied.error.as_ref().unwrap().details.as_ref().unwrap()["required_role"], "member");

    let injected =
        call(&gateway, &ctx, "weather__get_forecast", json!({"city": "Oslo", "user_id": "x"})).await;
    assert_eq!(injected.code(), Some(ErrorCode::InvalidParams), "{injected:?}");

    // Image content is kept beside the result.
    let swatch = call(&gateway, &ctx, "weather__draw_swatch", json!({})).await;
    assert!(swatch.success, "{swatch:?}");
    assert_eq!(swatch.result, Some(json!("a 2x2 swatch")));
    assert_eq!(swatch.images.len(), 1);
    assert_eq!(swatch.images[0].mime_type, "image/png");
    assert!(swatch.images[0].data.starts_with("iVBORw0KGgo"), "PNG signature in base64");

    // One child serves the rest too: starting the SDK takes seconds.
    progress_comes_back_and_cancellation_goes_up(&gateway, dir.path()).await;
    list_changed_from_the_upstream_updates_our_tools(&gateway).await;
    the_caller_is_not_sent_unless_configured(&gateway).await;
}

async fn progress_comes_back_and_cancellation_goes_up(gateway: &Gateway, dir: &Path) {
    let recorder = Recorder::new();
    let ctx = member().with_progress(recorder.clone());
    let counted = call(gateway, &ctx, "weather__count_slowly", json!({"steps": 3})).await;
    assert!(counted.success, "{counted:?}");
    let reports = recorder.reports.lock().unwrap().clone();
    assert_eq!(
        reports,
        vec![
            (1.0, Some(3.0), Some("step 1 of 3".into())),
            (2.0, Some(3.0), Some("step 2 of 3".into())),
            (3.0, Some(3.0), Some("step 3 of 3".into())),
        ]
    );

    // Our deadline drops the call; the upstream is told and stops its work.
    let opts = CallOptions::default().timeout_ms(300);
    let timed_out = gateway.execute(&member(), "weather__wait_forever", json!({"label": "t1"}), &opts).await;
    assert_eq!(timed_out.code(), Some(ErrorCode::Timeout), "{timed_out:?}");
    let dir_path = dir.to_owned();
    eventually(Duration::from_secs(5), "the upstream saw notifications/cancelled", || {
        let found = !markers(&dir_path, "cancelled-t1").is_empty();
        async move { found }
    })
    .await;

    // A caller that goes away (an MCP client's cancel drops our future) cancels too.
    let task = {
        let gateway = gateway.clone();
        tokio::spawn(async move {
            call(&gateway, &member(), "weather__wait_forever", json!({"label": "t2"})).await
        })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    task.abort();
    eventually(Duration::from_secs(5), "the upstream saw the dropped call cancelled", || {
        let found = !markers(&dir_path, "cancelled-t2").is_empty();
        async move { found }
    })
    .await;
}

#[tokio::test]
async fn a_crashed_child_answers_unavailable_then_is_restarted() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (gateway, upstreams) = start(config(&python, dir.path())).await;
    assert_eq!(markers(dir.path(), "started-").len(), 1);

    let crashed = call(&gateway, &member(), "weather__crash_now", json!({})).await;
    assert_eq!(crashed.code(), Some(ErrorCode::Unavailable), "{crashed:?}");
    assert!(crashed.error.as_ref().unwrap().message.contains("`weather`"), "{crashed:?}");
    // Its tools stay listed while it is down.
    assert!(gateway.spec("weather__get_forecast").is_some());

    let gateway2 = gateway.clone();
    eventually(Duration::from_secs(15), "the child is restarted and answers", || {
        let gateway = gateway2.clone();
        async move { call(&gateway, &member(), "weather__get_forecast", json!({"city": "Rome"})).await.success }
    })
    .await;
    assert_eq!(markers(dir.path(), "started-").len(), 2, "a new process was started");
    assert!(upstreams.status()[0].connected);
}

async fn list_changed_from_the_upstream_updates_our_tools(gateway: &Gateway) {
    assert!(gateway.spec("weather__late_tool").is_none());
    let mut changes = gateway.tools_changed();
    changes.mark_unchanged();

    let added = call(gateway, &member(), "weather__add_late_tool", json!({})).await;
    assert!(added.success, "{added:?}");
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .expect("a change within 5 s")
        .unwrap();
    let late = call(gateway, &member(), "weather__late_tool", json!({"word": "hello"})).await;
    // The SDK wraps a plain return value as `{"result": ...}` structured content.
    assert_eq!(late.result, Some(json!({"result": "HELLO"})), "{late:?}");
}

async fn the_caller_is_not_sent_unless_configured(gateway: &Gateway) {
    let plain = call(gateway, &member(), "weather__echo_meta", json!({})).await;
    assert!(plain.success, "{plain:?}");
    let text = plain.result.as_ref().unwrap().to_string();
    assert!(!text.contains(CALLER_META_KEY) && !text.contains("mia"), "identity sent unasked: {text}");
    assert!(!text.contains("sk-caller-secret-token"));
}

#[tokio::test]
async fn the_caller_reaches_the_upstream_in_meta_when_configured() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut with_meta = config(&python, dir.path());
    with_meta.identity = IdentityMode::Meta;
    let (gateway, _upstreams) = start(with_meta).await;
    let told = call(&gateway, &member(), "weather__echo_meta", json!({})).await;
    let meta = &told.result.as_ref().unwrap()["meta"];
    assert_eq!(meta[CALLER_META_KEY]["user_id"], "mia", "{told:?}");
    assert_eq!(meta[CALLER_META_KEY]["role"], "member");
    assert!(!told.result.as_ref().unwrap().to_string().contains("sk-caller-secret-token"), "{told:?}");
}

#[tokio::test]
async fn a_dead_upstream_does_not_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut config =
        UpstreamConfig::stdio("ghost", vec![dir.path().join("no-such-program").display().to_string()]);
    config.connect_timeout = Duration::from_secs(2);
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    let status = &upstreams.status()[0];
    assert!(!status.connected);
    assert!(status.reason.as_deref().unwrap().contains("could not start"), "{status:?}");
    assert!(gateway.all_specs().is_empty());
}
