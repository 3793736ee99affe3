//! What an upstream may give us is bounded: a Rust rmcp server (in process, streamable HTTP on
//! 127.0.0.1:0) offering a huge description, a wide schema, a long name and too many tools, and a
//! tool that floods progress notifications.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use toolgate_mcp_upstream::{UpstreamConfig, Upstreams};

use crate::common::{Recorder, call, front, member};

/// How many progress notifications `flood` sends.
const FLOOD: u64 = 5000;

#[derive(Clone)]
struct Exotic {
    tools: Arc<Vec<Tool>>,
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("a schema is an object"),
    }
}

/// A schema nested `levels` objects deep.
fn deep_schema(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        schema = json!({"type": "object", "properties": {"inner": schema}});
    }
    schema
}

impl ServerHandler for Exotic {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name == "flood"
            && let Some(token) = context.meta.get_progress_token()
        {
            for i in 1..=FLOOD {
                let mut param = ProgressNotificationParam::new(token.clone(), i as f64);
                param.total = Some(FLOOD as f64);
                let _ = context.peer.notify_progress(param).await;
            }
        }
        Ok(CallToolResult::structured(json!({"tool": request.name.to_string()})).into())
    }
}

/// Serve `tools` on 127.0.0.1:0; the upstream's configuration.
async fn serve(name: &str, tools: Vec<Tool>) -> UpstreamConfig {
    let proto = Exotic { tools: Arc::new(tools) };
    let service = StreamableHttpService::new(
        move || Ok(proto.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // As servers on asyncio, Node and Go do: without TCP_NODELAY a reused connection waits for a
    // delayed ACK between the parts of each answer.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    let mut config = UpstreamConfig::http(name, url);
    config.connect_timeout = Duration::from_secs(10);
    config
}

fn empty() -> Arc<JsonObject> {
    object(json!({"type": "object", "properties": {}}))
}

fn plain(name: &'static str) -> Tool {
    Tool::new(name, "A plain tool.", empty())
}

#[tokio::test]
async fn what_an_upstream_offers_is_bounded() {
    let huge = Tool::new("huge_description", "Says a lot. ".repeat(2 * 1024 * 1024 / 12), empty());
    let wide: serde_json::Map<String, Value> =
        (0..4000).map(|i| (format!("field_{i:05}"), json!({"type": "string", "description": "x"}))).collect();
    let wide =
        Tool::new("wide_schema", "Too many fields.", object(json!({"type": "object", "properties": wide})));
    let long_name = Tool::new("n".repeat(10_000), "A name of 10,000 characters.", empty());
    let mut tools = vec![huge, wide, long_name, plain("normal")];
    tools.extend((0..400).map(|i| {
        Tool::new(
            format!("extra_{i:03}"),
            "One of many.",
            object(json!({"type": "object", "properties": {}})),
        )
    }));
    let config = serve("big", tools).await;
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());

    // A 2 MB description is kept clipped to 8 KiB, with a note; the tool works.
    let spec = gateway.spec("big__huge_description").expect("a long description is clipped, not refused");
    assert!(spec.description.len() <= 8 * 1024 + 200, "{} bytes", spec.description.len());
    assert!(spec.description.starts_with("Says a lot."), "{}", &spec.description[..40]);
    assert!(spec.description.contains("clipped by toolgate"), "{}", &spec.description[8000..]);
    assert!(call(&gateway, &member(), "big__huge_description", json!({})).await.success);

    // A schema of more than 64 KiB and a name past the limit are left out; the others stay.
    assert!(gateway.spec("big__wide_schema").is_none());
    assert!(
        gateway
            .all_specs()
            .iter()
            .all(|s| !s.name.contains("nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"))
    );
    assert!(call(&gateway, &member(), "big__normal", json!({})).await.success);

    // At most 256 tools from one upstream (here 404 were offered, 2 of the first 256 refused).
    let count = gateway.all_specs().len();
    assert_eq!(count, 256 - 2, "{count} tools registered");
}

#[tokio::test]
async fn a_progress_flood_is_throttled_and_keeps_the_first_and_the_last() {
    let flood = Tool::new(
        "flood",
        "Reports progress very often.",
        object(json!({"type": "object", "properties": {}})),
    );
    let config = serve("loud", vec![flood]).await;
    let gateway = front();
    let _upstreams = Upstreams::start(&gateway, vec![config]).await;
    let recorder = Recorder::new();
    let started = Instant::now();
    let answer = call(&gateway, &member().with_progress(recorder.clone()), "loud__flood", json!({})).await;
    let elapsed = started.elapsed();
    assert!(answer.success, "{answer:?}");
    let reports = recorder.reports.lock().unwrap().clone();
    // One per 50 ms at most, plus the first and the last.
    let bound = (elapsed.as_millis() / 50) as usize + 2;
    eprintln!(
        "{} of {FLOOD} progress reports forwarded in {} ms (bound {bound})",
        reports.len(),
        elapsed.as_millis()
    );
    assert!(reports.len() <= bound, "{} reports in {elapsed:?}", reports.len());
    assert!(reports.len() < 200, "{} reports", reports.len());
    assert_eq!(reports.first().unwrap().0, 1.0, "the first report arrives");
    assert_eq!(reports.last().unwrap().0, FLOOD as f64, "the last report arrives");
    assert!(reports.windows(2).all(|w| w[0].0 < w[1].0), "progress only grows");
}

/// A schema nested 100 levels (200 levels of JSON) makes the whole `tools/list` answer
/// unreadable to rmcp (serde_json stops at 128): the listing must not wait for it forever, and
/// the start goes on without that upstream's tools.
#[tokio::test]
async fn a_deep_schema_does_not_hold_up_the_start() {
    let deep = Tool::new("deep", "Nested a hundred levels.", object(deep_schema(100)));
    let mut config = serve("odd", vec![deep, plain("normal")]).await;
    config.connect_timeout = Duration::from_secs(2);
    let gateway = front();
    let started = Instant::now();
    let upstreams = tokio::time::timeout(Duration::from_secs(20), Upstreams::start(&gateway, vec![config]))
        .await
        .expect("the start does not wait forever for an unreadable tool list");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
}

/// A TCP forwarder to `target` on 127.0.0.1:0 that counts the connections it accepts.
async fn counting_proxy(target: std::net::SocketAddr) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                // No Nagle in the forwarder: it must not add delays of its own.
                let _ = inbound.set_nodelay(true);
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                    let _ = outbound.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (format!("http://{addr}/mcp"), accepted)
}

/// Calls to an HTTP upstream reuse their connections: 40 calls opened 40
/// TCP connections before (one per POST, TIME_WAIT piling up on our side and
/// the upstream paying a handshake per call).
#[tokio::test]
async fn calls_to_an_http_upstream_reuse_their_connections() {
    let direct = serve("pooled", vec![plain("normal")]).await;
    let direct_url = match &direct.transport {
        toolgate_mcp_upstream::Transport::Http { url, .. } => url.clone(),
        other => unreachable!("{other:?}"),
    };
    let target = direct_url.trim_start_matches("http://").trim_end_matches("/mcp").parse().unwrap();
    let (url, accepted) = counting_proxy(target).await;
    let mut config = UpstreamConfig::http("pooled", url);
    config.connect_timeout = Duration::from_secs(10);
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
    let before = accepted.load(std::sync::atomic::Ordering::SeqCst);
    let started = Instant::now();
    for _ in 0..40 {
        let answer = call(&gateway, &member(), "pooled__normal", json!({})).await;
        assert!(answer.success, "{answer:?}");
    }
    let opened = accepted.load(std::sync::atomic::Ordering::SeqCst) - before;
    eprintln!(
        "40 calls opened {opened} connections ({before} for the handshake and listing) in {:?}",
        started.elapsed()
    );
    assert!(opened <= 2, "40 calls opened {opened} connections");
}
