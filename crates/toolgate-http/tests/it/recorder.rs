//! A real backend on 127.0.0.1:0 that records every request it receives (method, target,
//! headers, body) and answers `{}`, with a gateway serving route tables against it: what
//! the tests of where fields go share.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use serde_json::Value;
use toolgate_core::{Caller, Envelope, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

/// One request as the backend received it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    /// Path and query, as sent.
    pub(crate) target: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
}

impl Seen {
    /// A header's value, when sent.
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).map(|v| v.to_str().unwrap().to_owned())
    }
}

type Log = Arc<Mutex<Vec<Seen>>>;

async fn record(State(log): State<Log>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> String {
    log.lock().unwrap().push(Seen {
        method: method.to_string(),
        target: uri.path_and_query().map(ToString::to_string).unwrap_or_default(),
        headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
    });
    "{}".to_owned()
}

/// The recording backend and a gateway with `tables` (TOML) served against it, no auth.
pub(crate) struct Recorder {
    gateway: Gateway,
    log: Log,
    _server: tokio::task::JoinHandle<()>,
}

impl Recorder {
    pub(crate) async fn start(tables: &[&str]) -> Self {
        let log: Log = Arc::default();
        let app = Router::new().fallback(record).with_state(log.clone());
        let (gateway, server) = serve_gateway(app, tables, HttpOptions::default()).await;
        Self { gateway, log, _server: server }
    }

    /// Call `tool` as a member, without retries.
    pub(crate) async fn call(&self, tool: &str, params: Value) -> Envelope {
        let ctx = ToolContext::new(Caller::new("alice", "member"));
        self.gateway.execute(&ctx, tool, params, &CallOptions::default().retries(0)).await
    }

    /// The one request the last call made.
    pub(crate) fn take(&self) -> Seen {
        let mut log = self.log.lock().unwrap();
        assert_eq!(log.len(), 1, "one request per call: {log:?}");
        log.pop().unwrap()
    }

    /// Whether no request reached the backend.
    pub(crate) fn nothing_sent(&self) -> bool {
        self.log.lock().unwrap().is_empty()
    }
}

/// `app` served on 127.0.0.1 (a free port), and a gateway with `tables` (TOML) called against
/// it with `options` and no auth.
pub(crate) async fn serve_gateway(
    app: Router,
    tables: &[&str],
    options: HttpOptions,
) -> (Gateway, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let executor = Arc::new(HttpExecutor::new(&url, options.auth(toolgate_http::Auth::None)).unwrap());
    let tables = tables.iter().map(|t| RouteTable::from_toml_str(t).unwrap());
    let gateway = Gateway::builder().tools(executor.tools(tables).unwrap()).build().unwrap();
    (gateway, server)
}

/// The envelope succeeded.
pub(crate) fn ok(envelope: &Envelope) {
    assert!(envelope.success, "{}", serde_json::to_string(envelope).unwrap());
}
