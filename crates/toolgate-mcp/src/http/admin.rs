//! The operator's routes under `/api/admin/`, for the highest role only:
//! `GET /api/admin/sources` here (each source of tools: reachable or not,
//! its last error, its tools, and their calls, error rate and latency from
//! the gateway's metrics), the keys in [`super::admin_keys`], the reload in
//! [`super::reload`]. A lower role gets `403` with a structured error.
//!
//! What a source is, and whether it answers, is the deployment's
//! ([`Sources`]); the numbers are the gateway's ([`toolgate_gateway::Gateway::tool_stats`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json, extract::State};
use serde_json::{Value, json};

use super::{Shared, error_response};
use crate::handler::Authenticated;

/// How long [`Sources::sources`] may take before the page is answered without it.
const SOURCES_TIMEOUT: Duration = Duration::from_secs(5);

/// One source of tools as the deployment sees it now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceState {
    /// Its name. Its tools are those whose domain, or one of whose tags, is
    /// this name (an upstream's tools have its name as their domain; a
    /// route-table system tags each of its tools with its name).
    pub name: String,
    /// What kind of source (`domain`, `upstream`, `built-in`, ...).
    pub kind: String,
    /// Where it is (a base URL without credentials, a command), when there is one to show.
    pub target: Option<String>,
    /// Whether it answered when last asked; `None` when that is not known.
    pub reachable: Option<bool>,
    /// Why it did not (or the last thing that went wrong with it).
    pub error: Option<String>,
}

impl SourceState {
    /// A source whose reachability is not known (yet).
    pub fn new(name: impl Into<String>, kind: impl Into<String>) -> Self {
        Self { name: name.into(), kind: kind.into(), target: None, reachable: None, error: None }
    }

    /// Where it is.
    pub fn with_target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// It answered (`Ok`), or why not.
    pub fn with_reach(mut self, reach: Result<(), String>) -> Self {
        match reach {
            Ok(()) => self.reachable = Some(true),
            Err(why) => {
                self.reachable = Some(false);
                self.error = Some(why);
            }
        }
        self
    }
}

/// The deployment's sources of tools, for `GET /api/admin/sources`: asked on
/// every request of that route (the highest role's page), so it may check
/// each backend, within a few seconds in all.
#[toolgate_core::async_trait]
pub trait Sources: Send + Sync + std::fmt::Debug + 'static {
    /// Every source, as it is now.
    async fn sources(&self) -> Vec<SourceState>;
}

/// `Ok` when the request's caller holds the highest role; else the `403`,
/// naming `what` is refused and which role it needs.
pub(super) fn highest_only(shared: &Shared, auth: &Authenticated, what: &str) -> Result<(), Response> {
    let policy = shared.state.gateway.policy();
    let highest = policy.hierarchy().highest();
    if policy.role_satisfies(&auth.caller.role, highest) {
        Ok(())
    } else {
        Err(error_response(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            &format!("{what} is for role `{highest}`"),
        ))
    }
}

/// Calls, errors and latency of a set of tools, added up.
#[derive(Default)]
struct Totals {
    tools: usize,
    calls: u64,
    errors: BTreeMap<&'static str, u64>,
    latency_sum_seconds: f64,
    buckets: Vec<u64>,
}

impl Totals {
    fn add(&mut self, stats: Option<&toolgate_gateway::ToolStats>) {
        self.tools += 1;
        let Some(stats) = stats else { return };
        self.calls += stats.calls;
        for (code, n) in &stats.errors {
            *self.errors.entry(code).or_insert(0) += n;
        }
        self.latency_sum_seconds += stats.latency_sum_seconds;
        if self.buckets.len() < stats.latency_buckets.len() {
            self.buckets.resize(stats.latency_buckets.len(), 0);
        }
        for (sum, n) in self.buckets.iter_mut().zip(&stats.latency_buckets) {
            *sum += n;
        }
    }

    fn json(&self, source: &SourceState) -> Value {
        let errors: u64 = self.errors.values().sum();
        let rate = (self.calls > 0).then(|| errors as f64 / self.calls as f64);
        let mean_ms = (self.calls > 0).then(|| self.latency_sum_seconds * 1000.0 / self.calls as f64);
        json!({
            "name": source.name,
            "kind": source.kind,
            "target": source.target,
            "reachable": source.reachable,
            "error": source.error,
            "tools": self.tools,
            "calls": self.calls,
            "errors": errors,
            "error_rate": rate,
            "error_codes": self.errors,
            "latency_ms": { "mean": mean_ms, "p95_at_most": self.p95_ms() },
        })
    }

    /// The upper bound of the bucket the 95th percentile falls in, in ms;
    /// `None` without calls or when it is beyond the last bound.
    fn p95_ms(&self) -> Option<f64> {
        if self.calls == 0 {
            return None;
        }
        let want = (self.calls as f64 * 0.95).ceil() as u64;
        let mut seen = 0;
        for (bound, n) in toolgate_gateway::LATENCY_BUCKETS.iter().zip(&self.buckets) {
            seen += n;
            if seen >= want {
                return Some(bound * 1000.0);
            }
        }
        None
    }
}

/// `GET /api/admin/sources`: `{sources: [{name, kind, target, reachable,
/// error, tools, calls, errors, error_rate, error_codes, latency_ms: {mean,
/// p95_at_most}}]}`. Tools no source claims are listed by their domain, with
/// `kind` `tools` and reachability unknown, so every tool is counted once.
pub(super) async fn sources(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    if let Err(refused) = highest_only(&shared, &auth, "the sources page") {
        return refused;
    }
    let mut listed = match &shared.state.sources {
        Some(sources) => match tokio::time::timeout(SOURCES_TIMEOUT, sources.sources()).await {
            Ok(listed) => listed,
            Err(_) => {
                return error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "UNAVAILABLE",
                    "the sources did not answer within 5 s; try again",
                );
            }
        },
        None => Vec::new(),
    };
    let gateway = &shared.state.gateway;
    let stats: HashMap<String, toolgate_gateway::ToolStats> =
        gateway.tool_stats().into_iter().map(|s| (s.tool.clone(), s)).collect();
    let mut totals: Vec<Totals> = listed.iter().map(|_| Totals::default()).collect();
    let mut unclaimed: BTreeMap<String, Totals> = BTreeMap::new();
    for spec in gateway.all_specs() {
        let owner = listed.iter().position(|s| s.name == spec.domain || spec.tags.contains(&s.name));
        let slot = match owner {
            Some(at) => &mut totals[at],
            None => unclaimed.entry(spec.domain.clone()).or_default(),
        };
        slot.add(stats.get(&spec.name));
    }
    for (domain, total) in unclaimed {
        listed.push(SourceState::new(domain, "tools"));
        totals.push(total);
    }
    let rows: Vec<Value> = listed.iter().zip(&totals).map(|(source, total)| total.json(source)).collect();
    let checked_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Json(json!({ "sources": rows, "checked_at": checked_at })).into_response()
}
