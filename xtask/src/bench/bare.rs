//! The bare rmcp peer of `cargo xtask bench mcp`: one `query_weather` tool on
//! rmcp's own `#[tool]` router, streamable HTTP, no auth, no gateway. It
//! answers the same envelope shape and size as toolgate's demo tool, so the
//! ratio between the two is the price of toolgate's layers.
//!
//! `cargo xtask bench serve-bare [--stateful]` prints
//! `bare-rmcp serving MCP at http://127.0.0.1:PORT/mcp` and serves until killed.

use std::sync::Arc;

use anyhow::{Context, Result};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{Json, ServerHandler, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct WeatherParams {
    /// The city.
    city: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    date: String,
    available: bool,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Signal {
    kind: &'static str,
    reason: &'static str,
    how_to_enable: &'static str,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Metadata {
    tool: &'static str,
    duration_ms: f64,
    attempts: u32,
    timestamp: String,
}

/// toolgate's envelope, written out for this one tool.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Envelope {
    success: bool,
    result: Forecast,
    error: Option<String>,
    signals: Vec<Signal>,
    metadata: Metadata,
}

#[derive(Debug, Clone)]
struct Bare {
    tool_router: ToolRouter<Self>,
}

#[tool_router(router = tool_router)]
impl Bare {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    /// Get the weather forecast for a city today.
    #[tool(name = "query_weather")]
    async fn query_weather(
        &self,
        Parameters(WeatherParams { city }): Parameters<WeatherParams>,
    ) -> Json<Envelope> {
        let started = std::time::Instant::now();
        let now = chrono::Utc::now();
        Json(Envelope {
            success: true,
            result: Forecast { city, date: now.date_naive().to_string(), available: false },
            error: None,
            signals: vec![Signal {
                kind: "unavailable",
                reason: "no weather provider is configured on this server",
                how_to_enable: "an operator sets TOOLGATE_WEATHER_URL (or TravelConfig::weather_url) to the \
                                provider's base URL; until then tell the user the forecast is not available here",
            }],
            metadata: Metadata {
                tool: "query_weather",
                duration_ms: started.elapsed().as_secs_f64() * 1000.0,
                attempts: 1,
                timestamp: now.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
            },
        })
    }
}

#[tool_handler(router = self.tool_router, name = "bare-rmcp")]
impl ServerHandler for Bare {}

/// Serve until killed.
pub(crate) fn serve(stateful: bool) -> Result<()> {
    // One worker thread: the harness pins the server to one core.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let proto = Bare::new();
        let config = StreamableHttpServerConfig::default()
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_legacy_session_mode(stateful);
        let factory = move || Ok(proto.clone());
        let router = if stateful {
            let service =
                StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
            axum::Router::new().nest_service("/mcp", service)
        } else {
            let service =
                StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
            axum::Router::new().nest_service("/mcp", service)
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.context("binding 127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        // TCP_NODELAY as toolgate sets it: with sessions an answer goes out in
        // more than one write, and without it the second waits for the
        // client's delayed ACK (a 44 ms p50 in the first run).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            writeln!(out, "bare-rmcp serving MCP at http://{addr}/mcp")?;
            out.flush()?;
        }
        axum::serve(listener, router.into_make_service()).await.context("serving")
    })
}
