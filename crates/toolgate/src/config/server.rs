//! The serving sections: `[server]` (address, exposure, HTTP defences),
//! `[rate_limits]`, `[audit]` and `[tasks]`.

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};
use toolgate_mcp::Exposure;

/// `[server]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Where to listen; loopback unless told otherwise. An IP address and a
    /// port: parsed when the file is read, so a typo is refused there and
    /// not when the listener binds.
    #[serde(deserialize_with = "listen_field")]
    pub listen: SocketAddr,
    /// `meta` (default), `direct`, or `scoped:DOMAIN[,DOMAIN...]`.
    pub expose: Exposure,
    /// Host names accepted in `Host` and `Origin` (besides localhost, 127.0.0.1 and `[::1]`).
    pub allowed_hosts: Vec<String>,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// This instance's name in audit records (default: host name and process id).
    pub instance: Option<String>,
    /// Lets a scraper off loopback read `/metrics` with `Authorization: Bearer <token>`.
    pub metrics_token: Option<String>,
    /// How long a verified API key is trusted without asking the database,
    /// in milliseconds: bounds how late another instance sees a revocation.
    pub key_cache_ms: u64,
    /// Seconds a client has to send a request's headers (also closes silent
    /// connections and kept-alive connections waiting for a next request).
    pub header_timeout_secs: u64,
    /// Seconds after which a connection with no request running and no byte moving is closed.
    pub idle_timeout_secs: u64,
    /// Most connections open at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// Most of them that have not yet carried a request with a valid API
    /// key; a new one beyond it closes the oldest idle one of them.
    pub max_unauthenticated_connections: usize,
    /// The same per peer IP address.
    pub max_unauthenticated_per_peer: usize,
    /// Most MCP sessions open at once.
    pub max_sessions: usize,
    /// Most MCP sessions one API key may hold open.
    pub max_sessions_per_key: usize,
    /// Seconds without a request after which an MCP session is closed.
    pub session_idle_secs: u64,
    /// Seconds that calls in flight may still take after SIGTERM / Ctrl-C.
    pub drain_grace_secs: u64,
    /// Trace events a `/trace` reader may fall behind before it is dropped.
    pub trace_buffer: usize,
}

/// A listen address from text (the file, `TOOLGATE_LISTEN`, `--listen`),
/// with the fix in the error: host names are not resolved here, because the
/// address a server binds should not depend on a resolver.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse().map_err(|_| {
        format!("{text:?} is not an IP address and port: use e.g. 127.0.0.1:8377, 0.0.0.0:8377 or [::]:8377")
    })
}

fn listen_field<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SocketAddr, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_listen(&text).map_err(serde::de::Error::custom)
}

impl ServerConfig {
    /// The HTTP settings these stand for (hosts, limits, timeouts, caps).
    pub fn http(&self) -> toolgate_mcp::HttpConfig {
        let mut http = toolgate_mcp::HttpConfig {
            max_body_bytes: self.max_body_bytes,
            header_timeout: Duration::from_secs(self.header_timeout_secs),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs),
            max_connections: self.max_connections,
            max_unauthenticated_connections: self.max_unauthenticated_connections,
            max_unauthenticated_per_peer: self.max_unauthenticated_per_peer,
            max_sessions: self.max_sessions,
            max_sessions_per_key: self.max_sessions_per_key,
            session_idle: Duration::from_secs(self.session_idle_secs),
            drain_grace: Duration::from_secs(self.drain_grace_secs),
            trace_buffer: self.trace_buffer,
            ..toolgate_mcp::HttpConfig::default()
        };
        http.allowed_hosts.extend(self.allowed_hosts.iter().cloned());
        http
    }
}

/// The defaults are the libraries' own (`toolgate_mcp::HttpConfig`, the key
/// store's cache), so the binary, the library and the example file (held to
/// them by a test) cannot drift apart.
impl Default for ServerConfig {
    fn default() -> Self {
        let http = toolgate_mcp::HttpConfig::default();
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8377)),
            expose: Exposure::Meta,
            allowed_hosts: Vec::new(),
            max_body_bytes: http.max_body_bytes,
            instance: None,
            metrics_token: None,
            key_cache_ms: toolgate_mcp::KeyStore::DEFAULT_CACHE_TTL.as_millis() as u64,
            header_timeout_secs: http.header_timeout.as_secs(),
            idle_timeout_secs: http.idle_timeout.as_secs(),
            max_connections: http.max_connections,
            max_unauthenticated_connections: http.max_unauthenticated_connections,
            max_unauthenticated_per_peer: http.max_unauthenticated_per_peer,
            max_sessions: http.max_sessions,
            max_sessions_per_key: http.max_sessions_per_key,
            session_idle_secs: http.session_idle.as_secs(),
            drain_grace_secs: http.drain_grace.as_secs(),
            trace_buffer: http.trace_buffer,
        }
    }
}

/// `[rate_limits]`: per API key, per key and tool, and at the HTTP transport.
/// Counted in Redis when `[redis] url` is set (shared by every instance),
/// in memory otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimitsConfig {
    /// Tool calls per key over every tool (each counts its tool's cost), and concurrent calls.
    pub per_key: toolgate_gateway::RateRule,
    /// `[rate_limits.tools.NAME]`: a tool's own limit per key, and its `cost`.
    pub tools: std::collections::HashMap<String, toolgate_gateway::ToolRate>,
    /// HTTP requests per key at the transport (`requests`, `interval_s`), answered `429`.
    pub http: toolgate_gateway::RateRule,
}

impl RateLimitsConfig {
    /// The gateway's share.
    pub fn gateway(&self) -> toolgate_gateway::RateLimits {
        let limits = toolgate_gateway::RateLimits::default().with_per_key(self.per_key.clone());
        self.tools.iter().fold(limits, |limits, (tool, rate)| limits.with_tool(tool.clone(), rate.clone()))
    }

    /// The transport's share.
    pub fn http(&self) -> Option<toolgate_mcp::HttpRate> {
        self.http.requests.map(|requests| toolgate_mcp::HttpRate {
            requests,
            interval: Duration::from_secs(self.http.interval_s.unwrap_or(60).max(1)),
        })
    }

    /// Whether any limit is set.
    pub fn is_empty(&self) -> bool {
        self.gateway().is_empty() && self.http.requests.is_none()
    }
}

/// `[audit]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// Record every write call and every refused call (default true).
    pub enabled: bool,
    /// Delete records older than this many days (checked hourly); unset keeps them all.
    pub retention_days: Option<u64>,
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self { enabled: true, retention_days: None }
    }
}

/// `[tasks]`: how many tasks (long-running calls a client asked to run as a task) are kept,
/// and for how long. The defaults are the library's ([`toolgate_mcp::TaskLimits`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TasksConfig {
    /// The most tasks one principal (API key, token subject) holds at a time.
    pub per_owner: usize,
    /// The most tasks the server holds in all.
    pub total: usize,
    /// Seconds a task is kept after it was created (a task still running then is cancelled).
    pub retention_s: u64,
    /// The polling interval suggested to clients, in milliseconds.
    pub poll_interval_ms: u64,
}

impl Default for TasksConfig {
    fn default() -> Self {
        let limits = toolgate_mcp::TaskLimits::default();
        Self {
            per_owner: limits.per_owner,
            total: limits.total,
            retention_s: limits.retention.as_secs(),
            poll_interval_ms: limits.poll_interval.as_millis() as u64,
        }
    }
}

/// The bounds of each `[tasks]` key: below the least, tasks cannot work (0) or clients
/// would poll in a busy loop; above the most, the store would hold more than memory should.
const TASK_BOUNDS: [(&str, u64, u64, &str); 4] = [
    ("per_owner", 1, 100_000, "tasks"),
    ("total", 1, 1_000_000, "tasks"),
    ("retention_s", 1, 7 * 24 * 3600, "seconds (a week)"),
    ("poll_interval_ms", 10, 600_000, "milliseconds (ten minutes)"),
];

impl TasksConfig {
    /// The limits these stand for, or every key whose value is out of its bounds.
    pub fn limits(&self) -> Result<toolgate_mcp::TaskLimits, Vec<String>> {
        let values = [self.per_owner as u64, self.total as u64, self.retention_s, self.poll_interval_ms];
        let mut problems: Vec<String> = TASK_BOUNDS
            .iter()
            .zip(values)
            .filter(|((_, least, most, _), value)| value < least || value > most)
            .map(|((key, least, most, unit), value)| {
                format!("[tasks] {key} = {value}: must be from {least} to {most} {unit}")
            })
            .collect();
        if problems.is_empty() && self.per_owner > self.total {
            problems.push(format!(
                "[tasks] per_owner = {} is more than total = {}: one caller can never hold more tasks than the server keeps; lower per_owner or raise total",
                self.per_owner, self.total
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(toolgate_mcp::TaskLimits {
            per_owner: self.per_owner,
            total: self.total,
            retention: Duration::from_secs(self.retention_s),
            poll_interval: Duration::from_millis(self.poll_interval_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;

    #[test]
    fn task_limits_are_read_and_bounded_by_key() {
        assert_eq!(Config::default().tasks.limits().unwrap(), toolgate_mcp::TaskLimits::default());
        let example = Config::from_toml(include_str!("../../../../toolgate.example.toml")).unwrap();
        assert_eq!(example.tasks, super::TasksConfig::default(), "the example file says the defaults");
        let config = Config::from_toml(
            "[tasks]\nper_owner = 2\ntotal = 10\nretention_s = 60\npoll_interval_ms = 250\n",
        )
        .unwrap();
        let limits = config.tasks.limits().unwrap();
        assert_eq!((limits.per_owner, limits.total), (2, 10));
        assert_eq!((limits.retention.as_secs(), limits.poll_interval.as_millis()), (60, 250));
        let config = Config::from_toml("[tasks]\nper_owner = 0\nretention_s = 99999999\n").unwrap();
        let problems = config.tasks.limits().unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("[tasks] per_owner = 0: must be from 1"), "{problems:?}");
        assert!(
            problems[1].starts_with("[tasks] retention_s = 99999999: must be from 1 to 604800"),
            "{problems:?}"
        );
        let problems =
            Config::from_toml("[tasks]\nper_owner = 50\ntotal = 5\n").unwrap().tasks.limits().unwrap_err();
        assert!(problems[0].contains("per_owner = 50 is more than total = 5"), "{problems:?}");
        let err = Config::from_toml("[tasks]\nper_user = 3\n").unwrap_err().to_string();
        assert!(err.contains("per_user"), "{err}");
        let err = Config::from_toml("[tasks]\ntotal = -1\n").unwrap_err().to_string();
        assert!(err.contains("total"), "{err}");
    }

    #[test]
    fn rate_limits_and_audit_parse() {
        let config = Config::from_toml(
            "[rate_limits]\nper_key = { requests = 600, interval_s = 60, concurrent = 8 }\nhttp = { requests = 1200 }\n\
             [rate_limits.tools.plan_itinerary]\ncost = 5\nconcurrent = 2\n[audit]\nretention_days = 90\n",
        )
        .unwrap();
        let limits = config.rate_limits.gateway();
        assert_eq!(limits.per_key.requests, Some(600));
        assert_eq!(limits.tools["plan_itinerary"].cost, Some(5));
        assert_eq!(config.rate_limits.http().unwrap().requests, 1200);
        assert_eq!(config.rate_limits.http().unwrap().interval.as_secs(), 60);
        assert!(config.audit.enabled);
        assert_eq!(config.audit.retention_days, Some(90));
        assert!(Config::default().rate_limits.is_empty());
        let err = Config::from_toml("[rate_limits.tools.x]\nweight = 2").unwrap_err().to_string();
        assert!(err.contains("weight"), "{err}");
    }

    #[test]
    fn the_example_file_says_every_server_default() {
        let example = Config::from_toml(include_str!("../../../../toolgate.example.toml")).unwrap();
        // Every [server] key the example sets is the default; the two it leaves
        // commented out (instance, metrics_token) have none.
        assert_eq!(example.server, super::ServerConfig::default());
        let mcp = toolgate_mcp::HttpConfig::default();
        let http = super::ServerConfig::default().http();
        assert_eq!(
            (http.max_connections, http.max_unauthenticated_connections, http.max_unauthenticated_per_peer),
            (mcp.max_connections, mcp.max_unauthenticated_connections, mcp.max_unauthenticated_per_peer),
            "the binary's defaults are the library's"
        );
        assert_eq!((http.header_timeout, http.session_idle), (mcp.header_timeout, mcp.session_idle));
        let config = Config::from_toml(
            "[server]\nmax_unauthenticated_connections = 16\nmax_unauthenticated_per_peer = 4\n",
        )
        .unwrap();
        let http = config.server.http();
        assert_eq!((http.max_unauthenticated_connections, http.max_unauthenticated_per_peer), (16, 4));
    }

    #[test]
    fn listen_and_expose_are_typed_when_the_file_is_read() {
        let config =
            Config::from_toml("[server]\nlisten = \"[::]:9000\"\nexpose = \"scoped:nutrition, body\"")
                .unwrap();
        assert_eq!(config.server.listen, "[::]:9000".parse().unwrap());
        assert_eq!(
            config.server.expose,
            toolgate_mcp::Exposure::Scoped(vec!["nutrition".into(), "body".into()])
        );
        // Each refusal names the field (TOML's pointer at the line), the value, and the fix.
        let err = Config::from_toml("[server]\nlisten = \"localhost:8377\"").unwrap_err().to_string();
        assert!(
            err.contains("listen = ") && err.contains("\"localhost:8377\" is not an IP address"),
            "{err}"
        );
        assert!(err.contains("127.0.0.1:8377"), "the fix is shown: {err}");
        let err = Config::from_toml("[server]\nexpose = \"scope:x\"").unwrap_err().to_string();
        assert!(
            err.contains("expose = ") && err.contains("`scope:x`") && err.contains("scoped:<domain>"),
            "{err}"
        );
        let err = Config::from_toml("[server]\nlisten = 8377").unwrap_err().to_string();
        assert!(err.contains("listen = 8377") && err.contains("string"), "{err}");
    }
}
