//! [`TravelConfig`]: the weather provider, the key that encrypts stored API
//! keys, and where full itinerary plans are kept.

use std::time::Duration;

use toolgate_core::Secret;

// The variables below are read by the `toolgate` binary, never by this crate;
// they are named here so that messages and the binary spell them alike.

/// Environment variable holding the weather provider's base URL.
pub const ENV_WEATHER_URL: &str = "TOOLGATE_WEATHER_URL";
/// Environment variable holding the 32-byte key (64 hex characters) that
/// encrypts stored provider API keys.
pub const ENV_SECRET_KEY: &str = "TOOLGATE_SECRET_KEY";
/// Environment variable that switches the plan store to Redis.
pub const ENV_REDIS_URL: &str = "TOOLGATE_REDIS_URL";
/// Environment variable with the plan time-to-live in seconds.
pub const ENV_PLAN_TTL: &str = "TOOLGATE_PLAN_TTL_SECS";

/// How long a plan is kept unless configured otherwise: one day.
pub const DEFAULT_PLAN_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The default time limit of one weather provider request.
pub const WEATHER_TIMEOUT: Duration = Duration::from_secs(8);

/// Where `plan_itinerary` keeps full plans for `review_planner_result`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanStoreConfig {
    /// The `travel_plans` table of the travel store (the default).
    Sql {
        /// How long a plan stays readable.
        ttl: Duration,
    },
    /// A Redis server; each plan is one key with this TTL.
    Redis {
        /// `redis://host:port/db`, or `rediss://` for TLS.
        url: String,
        /// How long a plan stays readable.
        ttl: Duration,
        /// A PEM CA bundle (`[tls] ca_file`) the `rediss://` server's certificate must
        /// chain to; `None`: the system roots.
        ca_pem: Option<String>,
    },
}

impl Default for PlanStoreConfig {
    fn default() -> Self {
        PlanStoreConfig::Sql { ttl: DEFAULT_PLAN_TTL }
    }
}

impl PlanStoreConfig {
    /// The plan time-to-live.
    pub fn ttl(&self) -> Duration {
        match self {
            PlanStoreConfig::Sql { ttl } | PlanStoreConfig::Redis { ttl, .. } => *ttl,
        }
    }
}

/// Configuration of the travel tools. The crate never reads the
/// environment or a file: the `toolgate` binary builds this from
/// `toolgate.toml` and the `ENV_*` variables named here.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TravelConfig {
    /// Base URL of the weather provider (`GET {url}?city=..&date=YYYY-MM-DD`).
    /// `None`: `query_weather` answers an `unavailable` signal.
    pub weather_url: Option<String>,
    /// The AEAD key for stored API keys: 64 hex characters (32 bytes).
    /// `None`: `save_flight_api_key` answers UNAVAILABLE.
    pub secret_key: Option<Secret>,
    /// Where full plans are kept.
    pub plan_store: PlanStoreConfig,
    /// The time limit of one weather provider request ([`WEATHER_TIMEOUT`] by default).
    pub weather_timeout: Duration,
    /// A tool of this deployment that forecasts further ahead (another MCP
    /// server's, e.g. `weather__get_forecast`): `query_weather`'s
    /// `beyond_range` signal for a date past its window names it.
    pub weather_upstream_tool: Option<String>,
}

impl Default for TravelConfig {
    fn default() -> Self {
        Self {
            weather_url: None,
            secret_key: None,
            plan_store: PlanStoreConfig::default(),
            weather_timeout: WEATHER_TIMEOUT,
            weather_upstream_tool: None,
        }
    }
}

impl TravelConfig {
    /// Set the weather provider URL.
    pub fn with_weather_url(mut self, url: impl Into<String>) -> Self {
        self.weather_url = Some(url.into());
        self
    }

    /// Set the AEAD key (64 hex characters).
    pub fn with_secret_key(mut self, key: Secret) -> Self {
        self.secret_key = Some(key);
        self
    }

    /// Set the time limit of one weather provider request.
    pub fn with_weather_timeout(mut self, timeout: Duration) -> Self {
        self.weather_timeout = timeout;
        self
    }

    /// Name the tool that forecasts past `query_weather`'s window.
    pub fn with_weather_upstream_tool(mut self, tool: impl Into<String>) -> Self {
        self.weather_upstream_tool = Some(tool.into());
        self
    }

    /// Set the plan store.
    pub fn with_plan_store(mut self, plan_store: PlanStoreConfig) -> Self {
        self.plan_store = plan_store;
        self
    }
}
