//! Routes for balancers, orchestrators and scrapers: `/healthz` (the
//! process answers), `/readyz` (every [`Probe`] passes: database reachable
//! with its migrations, Redis, upstreams) and `/metrics` (Prometheus text).
//! They sit outside the Host and key checks (a balancer or scraper names
//! the instance by address and has no API key); `/metrics` is answered only
//! to a loopback peer or with the metrics token.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use axum::Json;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::{Shared, error_response};

/// One readiness check (`/readyz`): the database, Redis, an upstream.
#[toolgate_core::async_trait]
pub trait Probe: Send + Sync + std::fmt::Debug + 'static {
    /// Its name in the `/readyz` answer (`database`, `redis`, ...).
    fn name(&self) -> &str;
    /// `Err(why)` when not ready; `why` is shown to whoever asks, so it says
    /// what is wrong without URLs or credentials.
    async fn check(&self) -> Result<(), String>;
    /// Shown beside the answer, ready or not (how the last configuration reload went, say);
    /// like `why`, without URLs or credentials. None by default.
    fn detail(&self) -> Option<Value> {
        None
    }
}

/// More metrics for `/metrics` (e.g. database pool use), rendered on scrape.
pub trait MetricsSource: Send + Sync + std::fmt::Debug + 'static {
    /// Append lines in Prometheus text format.
    fn render(&self, out: &mut String);
}

/// A probe that does not answer within this is failed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

pub(super) async fn healthz() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

pub(super) async fn readyz(State(shared): State<Arc<Shared>>) -> Response {
    let checks = shared.state.probes.iter().map(|probe| async move {
        let answer = match tokio::time::timeout(PROBE_TIMEOUT, probe.check()).await {
            Ok(answer) => answer,
            Err(_) => Err(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
        };
        (probe.name().to_owned(), answer, probe.detail())
    });
    let answers = futures::future::join_all(checks).await;
    let ready = answers.iter().all(|(_, a, _)| a.is_ok());
    let checks: Map<String, Value> = answers
        .into_iter()
        .map(|(name, answer, detail)| {
            let mut check =
                answer.map_or_else(|why| json!({"ok": false, "error": why}), |()| json!({"ok": true}));
            if let Some(detail) = detail {
                check["detail"] = detail;
            }
            (name, check)
        })
        .collect();
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let body = json!({"status": if ready { "ready" } else { "not_ready" }, "checks": checks});
    (status, Json(body)).into_response()
}

pub(super) async fn metrics(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
    let loopback = peer.is_some_and(|p| p.ip().is_loopback());
    let token_ok = shared.state.config.metrics_token.as_deref().is_some_and(|token| {
        let sent = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim());
        sent.is_some_and(|sent| constant_time_eq(sent.as_bytes(), token.as_bytes()))
    });
    if !loopback && !token_ok {
        return error_response(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "/metrics is served to loopback, or with `Authorization: Bearer <metrics token>`",
        );
    }
    let mut out = String::with_capacity(4096);
    shared.state.gateway.render_metrics(&mut out);
    out.push_str("# HELP toolgate_http_rate_limited_total HTTP requests refused with 429.\n");
    out.push_str("# TYPE toolgate_http_rate_limited_total counter\n");
    out.push_str(&format!("toolgate_http_rate_limited_total {}\n", shared.http_limited.load(Relaxed)));
    if let Some(manager) = &shared.sessions {
        let open = manager.sessions.read().await.len();
        out.push_str("# HELP toolgate_sessions MCP sessions open on this instance.\n");
        out.push_str("# TYPE toolgate_sessions gauge\n");
        out.push_str(&format!("toolgate_sessions {open}\n"));
    }
    for source in &shared.state.metrics_sources {
        source.render(&mut out);
    }
    let mut response = out.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}

/// Equal bytes, compared without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_compare_whole() {
        assert!(super::constant_time_eq(b"abc", b"abc"));
        assert!(!super::constant_time_eq(b"abc", b"abd"));
        assert!(!super::constant_time_eq(b"abc", b"abcd"));
    }
}
