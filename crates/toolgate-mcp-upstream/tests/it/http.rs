//! A toolgate MCP server (mcp-server in process, direct mode, API key) as
//! a streamable HTTP upstream, and the official Python SDK client against
//! the front gateway served the same way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::{
    BoxFuture, ErrorCode, FnTool, Secret, Tool, ToolContext, ToolOutput, ToolResult, ToolSpec,
};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_mcp::{Exposure, HttpState, KeyStore, serve_http};
use toolgate_mcp_upstream::{Transport, UpstreamConfig, Upstreams};

use crate::common::{Recorder, call, front, member};

fn closed(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn tool<F>(spec: ToolSpec, f: F) -> Arc<dyn Tool>
where
    F: Fn(ToolContext, Value) -> BoxFuture<'static, ToolResult> + Send + Sync + 'static,
{
    Arc::new(FnTool::new(spec, f))
}

/// Sets its flag when dropped: the upstream's tool future was dropped (cancelled).
struct OnDrop(Arc<AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

pub(crate) struct Upstream {
    pub(crate) gateway: Gateway,
    pub(crate) url: String,
    pub(crate) key: String,
    cancelled: Arc<AtomicBool>,
    _dir: tempfile::TempDir,
}

pub(crate) async fn upstream() -> Upstream {
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    let tools = vec![
        tool(
            ToolSpec::new(
                "query_stock",
                "Counts an item in stock.",
                closed(json!({"item": {"type": "string", "minLength": 1}}), &["item"]),
            ),
            |ctx, params| {
                Box::pin(async move {
                    Ok(ToolOutput::json(
                        json!({"item": params["item"], "count": 3, "seen_user": ctx.caller.user_id}),
                    ))
                })
            },
        ),
        tool(
            ToolSpec::new(
                "count_steps",
                "Counts steps, reporting progress.",
                closed(json!({"steps": {"type": "integer", "minimum": 1, "maximum": 10}}), &["steps"]),
            ),
            |ctx, params| {
                Box::pin(async move {
                    let steps = params["steps"].as_u64().unwrap_or(1);
                    for i in 1..=steps {
                        ctx.progress(i as f64, Some(steps as f64), &format!("step {i}"));
                        tokio::time::sleep(Duration::from_millis(30)).await;
                    }
                    Ok(ToolOutput::json(json!({"counted": steps})))
                })
            },
        ),
        tool(
            ToolSpec::new("hang_forever", "Waits until cancelled.", closed(json!({}), &[])),
            move |_ctx, _params| {
                let guard = OnDrop(flag.clone());
                Box::pin(async move {
                    let _guard = guard;
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(ToolOutput::json(json!("never")))
                })
            },
        ),
        tool(ToolSpec::new("break_down", "Always fails.", closed(json!({}), &[])), |_ctx, _params| {
            Box::pin(async { Err(toolgate_core::ToolError::new(ErrorCode::Conflict, "the shelf is locked")) })
        }),
    ];
    let gateway = Gateway::builder().tools(tools).build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let keys = KeyStore::connect(&format!("sqlite:{}", dir.path().join("keys.db").display())).await.unwrap();
    let key = keys.create("front-gateway", "member").await.unwrap().key.expose().to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let state = HttpState::new(gateway.clone(), keys).with_exposure(Exposure::Direct);
    tokio::spawn(serve_http(listener, state, std::future::pending()));
    Upstream { gateway, url, key, cancelled, _dir: dir }
}

pub(crate) fn config(up: &Upstream) -> UpstreamConfig {
    let mut config = UpstreamConfig::new(
        "stock",
        Transport::Http {
            url: up.url.clone(),
            headers: vec![("Authorization".into(), Secret::new(format!("Bearer {}", up.key)))],
        },
    );
    config.read_only_tools = vec!["query_stock".into()];
    config
}

#[tokio::test]
async fn a_toolgate_over_http_is_an_upstream_like_any_other() {
    let up = upstream().await;
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config(&up)]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
    let names: Vec<String> = gateway.all_specs().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        ["stock__break_down", "stock__count_steps", "stock__hang_forever", "stock__query_stock"]
    );

    let ok = call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await;
    assert!(ok.success, "{ok:?}");
    // The upstream's structured content is its envelope; the upstream sees
    // the front's key's user, never our caller's token.
    let inner = &ok.result.as_ref().unwrap()["result"];
    assert_eq!(inner["count"], 3, "{ok:?}");
    assert_eq!(inner["seen_user"], "front-gateway");

    let bad = call(&gateway, &member(), "stock__query_stock", json!({"item": ""})).await;
    assert_eq!(bad.code(), Some(ErrorCode::InvalidParams), "{bad:?}");

    let failed = call(&gateway, &member(), "stock__break_down", json!({})).await;
    assert_eq!(failed.code(), Some(ErrorCode::ExecutionError), "{failed:?}");
    assert!(failed.error.as_ref().unwrap().message.contains("the shelf is locked"), "{failed:?}");

    let guest = ToolContext::new(toolgate_core::Caller::new("gus", "guest"));
    let denied = call(&gateway, &guest, "stock__query_stock", json!({"item": "tent"})).await;
    assert_eq!(denied.code(), Some(ErrorCode::PermissionDenied), "{denied:?}");

    let recorder = Recorder::new();
    let counted =
        call(&gateway, &member().with_progress(recorder.clone()), "stock__count_steps", json!({"steps": 3}))
            .await;
    assert!(counted.success, "{counted:?}");
    let messages: Vec<Option<String>> =
        recorder.reports.lock().unwrap().iter().map(|r| r.2.clone()).collect();
    assert_eq!(messages, [Some("step 1".into()), Some("step 2".into()), Some("step 3".into())]);

    let opts = CallOptions::default().timeout_ms(300);
    let timed_out = gateway.execute(&member(), "stock__hang_forever", json!({}), &opts).await;
    assert_eq!(timed_out.code(), Some(ErrorCode::Timeout), "{timed_out:?}");
    toolgate_test_support::eventually(Duration::from_secs(5), "the upstream's tool was cancelled", || {
        let done = up.cancelled.load(Ordering::SeqCst);
        async move { done }
    })
    .await;
}

#[tokio::test]
async fn a_tool_added_upstream_reaches_the_front_through_list_changed() {
    let up = upstream().await;
    let gateway = front();
    let _upstreams = Upstreams::start(&gateway, vec![config(&up)]).await;
    assert!(gateway.spec("stock__query_extra").is_none());
    let mut changes = gateway.tools_changed();
    changes.mark_unchanged();

    let extra = tool(
        ToolSpec::new("query_extra", "A tool added while serving.", closed(json!({}), &[])),
        |_ctx, _params| Box::pin(async { Ok(ToolOutput::json(json!("extra"))) }),
    );
    assert!(up.gateway.replace_source_tools("late", vec![extra]).is_empty());
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .expect("a change within 5 s")
        .unwrap();
    let answer = call(&gateway, &member(), "stock__query_extra", json!({})).await;
    assert!(answer.success, "{answer:?}");
    assert_eq!(answer.result.as_ref().unwrap()["result"], "extra");
}

/// A server on its own runtime, so that shutting the runtime down kills it
/// the way a crash does: every connection dies at once, mid-request.
pub(crate) fn killable_server(
    gateway: Gateway,
    keys_url: String,
    addr: std::net::SocketAddr,
) -> tokio::runtime::Runtime {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    runtime.spawn(async move {
        let keys = KeyStore::connect(&keys_url).await.unwrap();
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let state = HttpState::new(gateway, keys).with_exposure(Exposure::Direct);
        serve_http(listener, state, std::future::pending()).await
    });
    runtime
}

pub(crate) async fn listening(addr: std::net::SocketAddr) {
    toolgate_test_support::eventually(Duration::from_secs(10), "the server listens", || async move {
        tokio::net::TcpStream::connect(addr).await.is_ok()
    })
    .await;
}

#[tokio::test]
async fn a_killed_http_upstream_answers_unavailable_then_recovers_after_its_restart() {
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
    config.backoff_min = Duration::from_millis(100);
    config.backoff_max = Duration::from_millis(300);
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await.success);

    // Killed while a call is in flight: that call and the next ones answer UNAVAILABLE.
    let pending = {
        let gateway = gateway.clone();
        tokio::spawn(async move {
            let opts = CallOptions::default().timeout_ms(20_000);
            gateway.execute(&member(), "stock__hang_forever", json!({}), &opts).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    first.shutdown_background();
    let down = call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await;
    assert_eq!(down.code(), Some(ErrorCode::Unavailable), "{down:?}");
    // The failed call makes the supervisor start over, which ends the call in
    // flight too (streamable HTTP alone would leave it to its deadline).
    let lost = tokio::time::timeout(Duration::from_secs(10), pending).await.expect("answered").unwrap();
    assert_eq!(lost.code(), Some(ErrorCode::Unavailable), "{lost:?}");
    assert!(gateway.spec("stock__query_stock").is_some(), "its tools stay listed while it is down");

    // Restarted on the same address: the supervisor reconnects on its own.
    let second = killable_server(up.gateway.clone(), keys_url, addr);
    let gateway2 = gateway.clone();
    toolgate_test_support::eventually(Duration::from_secs(20), "the restarted upstream answers", || {
        let gateway = gateway2.clone();
        async move { call(&gateway, &member(), "stock__query_stock", json!({"item": "tent"})).await.success }
    })
    .await;
    assert!(upstreams.status()[0].connected);
    second.shutdown_background();
}
