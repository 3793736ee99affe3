//! Rate limits and quotas: requests per interval and concurrent calls, per
//! API key and per key and tool, with cost weights for expensive tools.
//!
//! The gateway decides (which counters, which limits, what the model is
//! told); a [`RateStore`] only counts. [`MemoryRateStore`] counts in this
//! process; a store shared by several instances (Redis) lives in an I/O
//! crate (toolgate-fleet's) and implements the same trait, so the fleet shares one budget.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use toolgate_core::{Caller, ToolError};

/// A store that cannot answer. The gateway lets the call through (and logs
/// it): a limit is protection, and a Redis outage must not stop every call.
#[derive(Debug, thiserror::Error)]
#[error("rate-limit store: {0}")]
pub struct RateStoreError(pub String);

/// Counters behind the limits. Keys are opaque strings chosen by the gateway.
#[async_trait::async_trait]
pub trait RateStore: Send + Sync + std::fmt::Debug + 'static {
    /// Add `cost` to the fixed window `key` (which starts at its first hit
    /// and lasts `window`); the total after adding and the milliseconds left
    /// in the window.
    async fn hit(&self, key: &str, cost: u64, window: Duration) -> Result<(u64, u64), RateStoreError>;

    /// Take one of `limit` concurrent slots of `key`; `false` when all are
    /// taken. A slot left behind by a crashed process frees itself after `lease`.
    async fn enter(&self, key: &str, limit: u64, lease: Duration) -> Result<bool, RateStoreError>;

    /// Give a slot of `key` back.
    async fn leave(&self, key: &str);
}

/// One limit: requests (weighted by cost) per interval, and concurrent calls.
/// An unset field is no limit. Read from configuration, or built with
/// `RateRule::default()` and the `with_*` methods.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct RateRule {
    /// Requests per interval (each call counts its tool's cost).
    pub requests: Option<u64>,
    /// The interval, in seconds (default 60).
    pub interval_s: Option<u64>,
    /// Calls running at once.
    pub concurrent: Option<u64>,
}

impl RateRule {
    /// Limit the requests per interval (each call counts its tool's cost).
    pub fn with_requests(mut self, requests: u64) -> Self {
        self.requests = Some(requests);
        self
    }

    /// Set the interval, in seconds (at least 1).
    pub fn with_interval_s(mut self, seconds: u64) -> Self {
        self.interval_s = Some(seconds);
        self
    }

    /// Limit the calls running at once.
    pub fn with_concurrent(mut self, calls: u64) -> Self {
        self.concurrent = Some(calls);
        self
    }

    fn interval(&self) -> Duration {
        Duration::from_secs(self.interval_s.unwrap_or(60).max(1))
    }
}

/// A tool's own limit (counted per key and tool) and its cost weight in the
/// key-wide budget. Read from configuration, or built with `ToolRate::default()` and the
/// `with_*` methods.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ToolRate {
    /// Requests per interval of this tool, per key (each call counts 1).
    pub requests: Option<u64>,
    /// The interval, in seconds (default 60).
    pub interval_s: Option<u64>,
    /// Calls of this tool running at once, per key.
    pub concurrent: Option<u64>,
    /// What one call counts in the key-wide budget (default 1), e.g. 5 for
    /// a planner that fans out to many backend calls.
    pub cost: Option<u64>,
}

/// Every limit of a deployment. The default limits nothing; add limits with
/// [`RateLimits::with_per_key`] and [`RateLimits::with_tool`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct RateLimits {
    /// Per API key (per user without a key), over all tools.
    pub per_key: RateRule,
    /// Per key and tool, and cost weights, by tool name.
    pub tools: HashMap<String, ToolRate>,
}

impl ToolRate {
    /// Limit this tool's requests per interval, per key (each call counts 1).
    pub fn with_requests(mut self, requests: u64) -> Self {
        self.requests = Some(requests);
        self
    }

    /// Set the interval, in seconds (at least 1).
    pub fn with_interval_s(mut self, seconds: u64) -> Self {
        self.interval_s = Some(seconds);
        self
    }

    /// Limit this tool's calls running at once, per key.
    pub fn with_concurrent(mut self, calls: u64) -> Self {
        self.concurrent = Some(calls);
        self
    }

    /// Count each call of this tool as `cost` in the key-wide budget.
    pub fn with_cost(mut self, cost: u64) -> Self {
        self.cost = Some(cost);
        self
    }
}

impl RateLimits {
    /// Limit each API key (each user without a key) over all tools.
    pub fn with_per_key(mut self, rule: RateRule) -> Self {
        self.per_key = rule;
        self
    }

    /// Limit one tool per key, or weigh it in the key-wide budget; replaces an earlier rate
    /// of the same tool.
    pub fn with_tool(mut self, tool: impl Into<String>, rate: ToolRate) -> Self {
        self.tools.insert(tool.into(), rate);
        self
    }

    /// Whether any limit is set (when none is, the gateway skips the store).
    pub fn is_empty(&self) -> bool {
        self.per_key == RateRule::default() && self.tools.is_empty()
    }
}

/// How long a concurrency slot outlives a process that died holding it.
const LEASE: Duration = Duration::from_secs(300);
/// What a caller refused for concurrency is told to wait.
const CONCURRENCY_RETRY_MS: u64 = 250;

/// The limiter the gateway runs: the rules and where they are counted.
#[derive(Debug, Clone)]
pub(crate) struct Limiter {
    pub(crate) limits: RateLimits,
    pub(crate) store: Arc<dyn RateStore>,
    health: Arc<StoreHealth>,
}

/// The store as the limiter sees it: every check it failed is counted
/// (`toolgate_rate_store_errors_total`), and an outage is logged once when it
/// begins and once when the store answers again, not once per call.
#[derive(Debug, Default)]
struct StoreHealth {
    errors: AtomicU64,
    down: AtomicBool,
}

impl StoreHealth {
    fn failed(&self, error: &RateStoreError) {
        self.errors.fetch_add(1, Relaxed);
        if !self.down.swap(true, Relaxed) {
            tracing::warn!(
                %error,
                "the rate-limit store does not answer; calls are let through unlimited until it does \
                 (each such call counts in toolgate_rate_store_errors_total)"
            );
        }
    }

    fn answered(&self) {
        if self.down.load(Relaxed) && self.down.swap(false, Relaxed) {
            tracing::info!("the rate-limit store answers again; limits apply again");
        }
    }
}

/// Append `toolgate_rate_store_errors_total` (0 without a limiter) in Prometheus text format.
pub(crate) fn render_store_errors(limiter: Option<&Limiter>, out: &mut String) {
    use std::fmt::Write as _;
    out.push_str(
        "# HELP toolgate_rate_store_errors_total Rate-limit checks the store did not answer (the call was let through).\n",
    );
    out.push_str("# TYPE toolgate_rate_store_errors_total counter\n");
    let errors = limiter.map_or(0, |l| l.health.errors.load(Relaxed));
    let _ = writeln!(out, "toolgate_rate_store_errors_total {errors}");
}

/// Concurrency slots held by a running call; given back when dropped.
#[derive(Debug, Default)]
pub(crate) struct Permit {
    held: Vec<String>,
    store: Option<Arc<dyn RateStore>>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let (Some(store), false) = (self.store.take(), self.held.is_empty()) else { return };
        let held = std::mem::take(&mut self.held);
        // Drop cannot await; the slot is given back right after.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                for key in held {
                    store.leave(&key).await;
                }
            });
        }
    }
}

/// Who is counted: the key id, or the user for callers without a key (stdio, embedders).
pub fn subject(caller: &Caller) -> String {
    match &caller.key_id {
        Some(id) => format!("key:{id}"),
        None => format!("user:{}", caller.user_id),
    }
}

impl Limiter {
    pub(crate) fn new(limits: RateLimits, store: Arc<dyn RateStore>) -> Self {
        Self { limits, store, health: Arc::default() }
    }

    /// Count one call of `tool`; `RATE_LIMITED` with `retry_after_ms` when over a limit.
    pub(crate) async fn admit(&self, caller: &Caller, tool: &str) -> Result<Permit, ToolError> {
        let who = subject(caller);
        let rate = self.limits.tools.get(tool);
        let cost = rate.and_then(|r| r.cost).unwrap_or(1).max(1);
        let mut permit = Permit { held: Vec::new(), store: Some(self.store.clone()) };
        let per_key = &self.limits.per_key;
        if let Some(limit) = per_key.requests {
            let key = format!("rq:{who}");
            self.window(&key, cost, limit, per_key.interval(), || {
                format!("this API key may make {limit} requests per {} s", per_key.interval().as_secs())
            })
            .await?;
        }
        if let Some(rate) = rate
            && let Some(limit) = rate.requests
        {
            let interval = Duration::from_secs(rate.interval_s.unwrap_or(60).max(1));
            let key = format!("rq:{who}:{tool}");
            self.window(&key, 1, limit, interval, || {
                format!("`{tool}` may be called {limit} times per {} s", interval.as_secs())
            })
            .await?;
        }
        if let Some(limit) = per_key.concurrent {
            self.slot(&mut permit, format!("cc:{who}"), limit, || {
                format!("this API key may run {limit} calls at once")
            })
            .await?;
        }
        if let Some(limit) = rate.and_then(|r| r.concurrent) {
            self.slot(&mut permit, format!("cc:{who}:{tool}"), limit, || {
                format!("`{tool}` may run {limit} times at once per API key")
            })
            .await?;
        }
        Ok(permit)
    }

    async fn window(
        &self,
        key: &str,
        cost: u64,
        limit: u64,
        interval: Duration,
        what: impl FnOnce() -> String,
    ) -> Result<(), ToolError> {
        match self.store.hit(key, cost, interval).await {
            Ok((count, left_ms)) => {
                self.health.answered();
                if count > limit { Err(refused(what(), left_ms.max(1))) } else { Ok(()) }
            }
            Err(error) => {
                self.health.failed(&error);
                Ok(())
            }
        }
    }

    async fn slot(
        &self,
        permit: &mut Permit,
        key: String,
        limit: u64,
        what: impl FnOnce() -> String,
    ) -> Result<(), ToolError> {
        match self.store.enter(&key, limit, LEASE).await {
            Ok(true) => {
                self.health.answered();
                permit.held.push(key);
                Ok(())
            }
            Ok(false) => {
                self.health.answered();
                Err(refused(what(), CONCURRENCY_RETRY_MS))
            }
            Err(error) => {
                self.health.failed(&error);
                Ok(())
            }
        }
    }
}

fn refused(what: String, retry_after_ms: u64) -> ToolError {
    ToolError::rate_limited(
        format!(
            "rate limit reached: {what}. Wait {retry_after_ms} ms (details.retry_after_ms) before calling again; do not retry at once."
        ),
        retry_after_ms,
    )
}

/// Counters in this process: for one instance, tests and embedders.
#[derive(Debug, Default)]
pub struct MemoryRateStore {
    windows: Mutex<HashMap<String, (u64, Instant)>>,
    slots: Mutex<HashMap<String, u64>>,
}

impl MemoryRateStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Windows kept before expired ones are swept.
const SWEEP_AT: usize = 4096;

#[async_trait::async_trait]
impl RateStore for MemoryRateStore {
    async fn hit(&self, key: &str, cost: u64, window: Duration) -> Result<(u64, u64), RateStoreError> {
        let now = Instant::now();
        let mut windows = self.windows.lock().map_err(|_| RateStoreError("poisoned".into()))?;
        if windows.len() >= SWEEP_AT {
            windows.retain(|_, (_, end)| *end > now);
        }
        let entry = windows.entry(key.to_owned()).or_insert((0, now + window));
        if entry.1 <= now {
            *entry = (0, now + window);
        }
        entry.0 = entry.0.saturating_add(cost);
        Ok((entry.0, entry.1.saturating_duration_since(now).as_millis() as u64))
    }

    async fn enter(&self, key: &str, limit: u64, _lease: Duration) -> Result<bool, RateStoreError> {
        let mut slots = self.slots.lock().map_err(|_| RateStoreError("poisoned".into()))?;
        let taken = slots.entry(key.to_owned()).or_insert(0);
        if *taken >= limit {
            return Ok(false);
        }
        *taken += 1;
        Ok(true)
    }

    async fn leave(&self, key: &str) {
        if let Ok(mut slots) = self.slots.lock()
            && let Some(taken) = slots.get_mut(key)
        {
            *taken = taken.saturating_sub(1);
            if *taken == 0 {
                slots.remove(key);
            }
        }
    }
}
