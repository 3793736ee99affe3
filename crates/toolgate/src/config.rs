//! `toolgate.toml`: roles, per-tool role overrides, limits, database, Redis,
//! `toolgate.toml`: roles, per-tool role overrides, limits, database, Redis,
//! the fitness backend, the weather endpoint, the server, the agent's model, TLS and the
//! declared HTTP domains, with `TOOLGATE_*` environment overrides applied on top.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The whole configuration. Every section is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the tables live.
    pub database: DatabaseConfig,
    /// Roles, overrides and toolsets.
    pub authz: authz::AuthzConfig,
    /// Parameter limits, retries and timeouts.
    pub limits: gateway::Limits,
    /// The Redis plan store; without it plans go to a SQL table.
    pub redis: RedisConfig,
    /// The fitness backend.
    pub fitness: FitnessConfig,
    /// The weather provider.
    pub weather: WeatherConfig,
    /// The skills.
    pub skills: SkillsConfig,
    /// The MCP server.
    pub server: ServerConfig,
    /// Rate limits and quotas (none by default).
    pub rate_limits: RateLimitsConfig,
    /// The audit trail.
    pub audit: AuditConfig,
    /// The agent's model (`toolgate agent`, `POST /api/chat`).
    pub agent: AgentSection,
    /// TLS trust for every outgoing connection.
    pub tls: TlsConfig,
    /// HTTP systems declared here, each a folder of route tables (`[[domains]]`).
    pub domains: Vec<crate::domains::DomainConfig>,
    /// Other MCP servers whose tools are served beside ours (`[[upstreams]]`).
    pub upstreams: Vec<crate::upstreams::UpstreamEntry>,
}

/// `[tls]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsConfig {
    /// A PEM bundle of certificate authorities trusted besides the system roots (private
    /// CAs); used by HTTP backends and, as `sslrootcert`, by PostgreSQL.
    pub ca_file: Option<PathBuf>,
}

/// `[rate_limits]`: per API key, per key and tool, and at the HTTP transport.
/// Counted in Redis when `[redis] url` is set (shared by every instance),
/// in memory otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimitsConfig {
    /// Tool calls per key over every tool (each counts its tool's cost), and concurrent calls.
    pub per_key: gateway::RateRule,
    /// `[rate_limits.tools.NAME]`: a tool's own limit per key, and its `cost`.
    pub tools: std::collections::HashMap<String, gateway::ToolRate>,
    /// HTTP requests per key at the transport (`requests`, `interval_s`), answered `429`.
    pub http: gateway::RateRule,
}

impl RateLimitsConfig {
    /// The gateway's share.
    pub fn gateway(&self) -> gateway::RateLimits {
        gateway::RateLimits { per_key: self.per_key.clone(), tools: self.tools.clone() }
    }

    /// The transport's share.
    pub fn http(&self) -> Option<mcp_server::HttpRate> {
        self.http.requests.map(|requests| mcp_server::HttpRate {
            requests,
            interval: std::time::Duration::from_secs(self.http.interval_s.unwrap_or(60).max(1)),
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

/// `[database]`: one pool shared by every store of the process (travel,
/// the in-process fitness API, the API keys); see [`db::DbConfig`] for each
/// setting and its default.
pub type DatabaseConfig = db::DbConfig;

/// `[redis]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisConfig {
    /// `redis://127.0.0.1:6379`; empty: no Redis.
    pub url: Option<String>,
    /// How long a plan stays readable, in seconds (in Redis, or in the
    /// database's plan table when no Redis is configured).
    pub plan_ttl_secs: u64,
}

impl Default for RedisConfig {
    fn default() -> Self {
        Self { url: None, plan_ttl_secs: 24 * 60 * 60 }
    }
}

/// `[fitness]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FitnessConfig {
    /// Base URL of the fitness API; empty: run the reference API in-process on the same database.
    pub base_url: Option<String>,
    /// Time limit of one backend request, in milliseconds.
    pub timeout_ms: u64,
    /// In-process API only: how long the one pass-through token per user
    /// lives, in seconds (at least 60); it is replaced before it expires.
    pub token_ttl_secs: u64,
}

impl Default for FitnessConfig {
    fn default() -> Self {
        Self { base_url: None, timeout_ms: 10_000, token_ttl_secs: 3_600 }
    }
}

/// `[weather]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WeatherConfig {
    /// Base URL of the weather provider; empty: `query_weather` says how to enable it.
    pub url: Option<String>,
    /// Time limit of one provider request, in milliseconds.
    pub timeout_ms: u64,
    /// An upstream MCP server's forecast tool, `<upstream>__<tool>` (e.g.
    /// `weather__get_forecast`), that `query_weather`'s `beyond_range`
    /// signal names for dates past its own window.
    pub upstream_tool: Option<String>,
}

impl Default for WeatherConfig {
    fn default() -> Self {
        let timeout_ms = u64::try_from(travel::WEATHER_TIMEOUT.as_millis()).unwrap_or(8_000);
        Self { url: None, timeout_ms, upstream_tool: None }
    }
}

/// `[skills]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillsConfig {
    /// The folder of `<id>/SKILL.md` files; empty: the skills shipped inside the binary.
    pub dir: Option<PathBuf>,
}

/// `[server]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Where to listen; loopback unless told otherwise.
    pub listen: String,
    /// `meta` (default), `direct`, or `scoped:DOMAIN[,DOMAIN...]`.
    pub expose: String,
    /// Host names accepted in `Host` and `Origin` (besides localhost, 127.0.0.1 and [::1]).
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

impl ServerConfig {
    /// The HTTP settings these stand for (hosts, limits, timeouts, caps).
    pub fn http(&self) -> mcp_server::HttpConfig {
        let mut http = mcp_server::HttpConfig {
            max_body_bytes: self.max_body_bytes,
            header_timeout: Duration::from_secs(self.header_timeout_secs),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs),
            max_connections: self.max_connections,
            max_sessions: self.max_sessions,
            max_sessions_per_key: self.max_sessions_per_key,
            session_idle: Duration::from_secs(self.session_idle_secs),
            drain_grace: Duration::from_secs(self.drain_grace_secs),
            trace_buffer: self.trace_buffer,
            ..mcp_server::HttpConfig::default()
        };
        http.allowed_hosts.extend(self.allowed_hosts.iter().cloned());
        http
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8377".into(),
            expose: "meta".into(),
            allowed_hosts: Vec::new(),
            max_body_bytes: 1024 * 1024,
            instance: None,
            metrics_token: None,
            key_cache_ms: 500,
            header_timeout_secs: 10,
            idle_timeout_secs: 60,
            max_connections: 1024,
            max_sessions: 1000,
            max_sessions_per_key: 32,
            session_idle_secs: 300,
            drain_grace_secs: 10,
            trace_buffer: 256,
        }
    }
}

/// `[agent]`: the OpenAI-compatible model the agent runtime talks to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSection {
    /// Base URL up to `/v1` (OpenAI, vLLM, Ollama `http://127.0.0.1:11434/v1`, llama.cpp); unset: no agent.
    pub base_url: Option<String>,
    /// The model name.
    pub model: Option<String>,
    /// Where the API key comes from: `{ env = "OPENAI_API_KEY" }`. Never the key itself.
    pub api_key: Option<EnvRef>,
    /// Most model turns per message.
    pub max_steps: u32,
    /// Sampling temperature; unset: the server's default.
    pub temperature: Option<f32>,
    /// `meta` (the three meta-tools) or `direct` (every permitted tool).
    pub exposure: agent::Exposure,
    /// `native` (the `tools` field) or `text` (`<tool_call>` blocks, for servers without tool support).
    pub tool_calling: agent::ToolCalling,
    /// The whole run's time limit, in seconds.
    pub deadline_secs: u64,
    /// Longest wait for the model's next byte, in seconds.
    pub idle_timeout_secs: u64,
    /// Extra attempts after a transient model error.
    pub retries: u32,
    /// Text put before the generated system prompt.
    pub instructions: Option<String>,
}

impl Default for AgentSection {
    fn default() -> Self {
        Self {
            base_url: None,
            model: None,
            api_key: None,
            max_steps: 12,
            temperature: None,
            exposure: agent::Exposure::Meta,
            tool_calling: agent::ToolCalling::Native,
            deadline_secs: 300,
            idle_timeout_secs: 60,
            retries: 2,
            instructions: None,
        }
    }
}

/// A value read from an environment variable, so secrets stay out of files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvRef {
    /// The variable's name.
    pub env: String,
}

impl AgentSection {
    /// The agent's typed configuration; `var` reads the environment (a
    /// function, so tests need not touch the process's).
    pub fn to_config(&self, var: impl Fn(&str) -> Option<String>) -> Result<agent::AgentConfig> {
        let Some(base_url) = self.base_url.clone().filter(|u| !u.trim().is_empty()) else {
            bail!(
                "no model configured: set [agent] base_url and model in toolgate.toml (or TOOLGATE_AGENT_BASE_URL and TOOLGATE_AGENT_MODEL)"
            );
        };
        let Some(model) = self.model.clone().filter(|m| !m.trim().is_empty()) else {
            bail!("[agent] model is not set (or TOOLGATE_AGENT_MODEL)");
        };
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            bail!("[agent] base_url must start with http:// or https://, got {base_url:?}");
        }
        if self.max_steps == 0 || self.deadline_secs == 0 || self.idle_timeout_secs == 0 {
            bail!("[agent] max_steps, deadline_secs and idle_timeout_secs must be at least 1");
        }
        let mut config = agent::AgentConfig::new(base_url, model);
        if let Some(key) = &self.api_key {
            match var(&key.env).filter(|v| !v.trim().is_empty()) {
                Some(value) => config.api_key = Some(tool_core::Secret::new(value.trim())),
                None => bail!("[agent] api_key names the environment variable {}, which is not set", key.env),
            }
        }
        config.max_steps = self.max_steps;
        config.temperature = self.temperature;
        config.exposure = self.exposure;
        config.tool_calling = self.tool_calling;
        config.deadline = std::time::Duration::from_secs(self.deadline_secs);
        config.idle_timeout = std::time::Duration::from_secs(self.idle_timeout_secs);
        config.model_retries = self.retries;
        config.instructions = self.instructions.clone();
        Ok(config)
    }
}

/// The environment variables that override the file, and the field each sets.
pub const ENV_OVERRIDES: &[(&str, &str)] = &[
    ("TOOLGATE_DATABASE_URL", "database.url"),
    ("TOOLGATE_REDIS_URL", "redis.url"),
    ("TOOLGATE_PLAN_TTL_SECS", "redis.plan_ttl_secs"),
    ("TOOLGATE_FITNESS_URL", "fitness.base_url"),
    ("TOOLGATE_WEATHER_URL", "weather.url"),
    ("TOOLGATE_SKILLS_DIR", "skills.dir"),
    ("TOOLGATE_LISTEN", "server.listen"),
    ("TOOLGATE_EXPOSE", "server.expose"),
    ("TOOLGATE_INSTANCE", "server.instance"),
    ("TOOLGATE_METRICS_TOKEN", "server.metrics_token"),
    ("TOOLGATE_AGENT_BASE_URL", "agent.base_url"),
    ("TOOLGATE_AGENT_MODEL", "agent.model"),
];

impl Config {
    /// Read `path` (or `toolgate.toml` in the current folder when it exists,
    /// else the defaults), then apply the `TOOLGATE_*` overrides.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let mut config = match path {
            Some(path) => Self::from_file(path)?,
            None if Path::new("toolgate.toml").exists() => Self::from_file(Path::new("toolgate.toml"))?,
            None => Self::default(),
        };
        config.apply_env(|name| std::env::var(name).ok())?;
        Ok(config)
    }

    /// Parse a file. Relative paths in it (`[[domains]] routes`, `[tls] ca_file`) are taken
    /// from the file's folder, so a configuration and its route tables can live together in
    /// a repository and be used from anywhere.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut config = Self::from_toml(&text).with_context(|| format!("in {}", path.display()))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            config.relative_to(dir);
        }
        Ok(config)
    }

    /// Resolve relative file paths against `dir`.
    pub fn relative_to(&mut self, dir: &Path) {
        for domain in &mut self.domains {
            if domain.routes.is_relative() {
                domain.routes = dir.join(&domain.routes);
            }
        }
        if let Some(ca) = self.tls.ca_file.as_mut().filter(|ca| ca.is_relative()) {
            *ca = dir.join(&*ca);
        }
    }

    /// Parse TOML text.
    pub fn from_toml(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// Apply overrides from an environment (a function, so tests need not touch the process's).
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<()> {
        let get = |name: &str| var(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        if let Some(v) = get("TOOLGATE_DATABASE_URL") {
            self.database.url = v;
        }
        if let Some(v) = get("TOOLGATE_REDIS_URL") {
            self.redis.url = Some(v);
        }
        if let Some(v) = get("TOOLGATE_PLAN_TTL_SECS") {
            self.redis.plan_ttl_secs = match v.parse() {
                Ok(n) if n > 0 => n,
                _ => bail!("TOOLGATE_PLAN_TTL_SECS must be a positive number of seconds, got {v:?}"),
            };
        }
        if let Some(v) = get("TOOLGATE_FITNESS_URL") {
            self.fitness.base_url = Some(v);
        }
        if let Some(v) = get("TOOLGATE_WEATHER_URL") {
            self.weather.url = Some(v);
        }
        if let Some(v) = get("TOOLGATE_SKILLS_DIR") {
            self.skills.dir = Some(PathBuf::from(v));
        }
        if let Some(v) = get("TOOLGATE_LISTEN") {
            self.server.listen = v;
        }
        if let Some(v) = get("TOOLGATE_EXPOSE") {
            self.server.expose = v;
        }
        if let Some(v) = get("TOOLGATE_INSTANCE") {
            self.server.instance = Some(v);
        }
        if let Some(v) = get("TOOLGATE_METRICS_TOKEN") {
            self.server.metrics_token = Some(v);
        }
        if let Some(v) = get("TOOLGATE_AGENT_BASE_URL") {
            self.agent.base_url = Some(v);
        }
        if let Some(v) = get("TOOLGATE_AGENT_MODEL") {
            self.agent.model = Some(v);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_file_parses() {
        let text = include_str!("../../../toolgate.example.toml");
        let config = Config::from_toml(text).unwrap();
        assert_eq!(config.authz.roles, ["guest", "member", "manager", "admin"]);
        assert_eq!(config.server.listen, "127.0.0.1:8377");
    }

    #[test]
    fn environment_overrides_the_file() {
        let mut config =
            Config::from_toml("[database]\nurl = \"sqlite:a.db\"\n[server]\nexpose = \"direct\"").unwrap();
        let env = |name: &str| match name {
            "TOOLGATE_DATABASE_URL" => Some("postgres://x@127.0.0.1/test".to_owned()),
            "TOOLGATE_EXPOSE" => Some("  ".to_owned()),
            _ => None,
        };
        config.apply_env(env).unwrap();
        assert_eq!(config.database.url, "postgres://x@127.0.0.1/test");
        assert_eq!(config.server.expose, "direct", "a blank variable leaves the file's value");
        let err = config.apply_env(|n| (n == "TOOLGATE_PLAN_TTL_SECS").then(|| "-1".to_owned())).unwrap_err();
        assert!(err.to_string().contains("TOOLGATE_PLAN_TTL_SECS"));
    }

    #[test]
    fn relative_paths_are_taken_from_the_configuration_files_folder() {
        let dir = tempfile::tempdir().unwrap();
        let text = "[tls]\nca_file = \"ca.pem\"\n[[domains]]\nname = \"crm\"\nbase_url = \"https://crm.example\"\nroutes = \"routes/crm\"\n[[domains]]\nname = \"abs\"\nbase_url = \"https://a.example\"\nroutes = \"/srv/routes\"\n";
        let path = dir.path().join("toolgate.toml");
        std::fs::write(&path, text).unwrap();
        let config = Config::from_file(&path).unwrap();
        assert_eq!(config.domains[0].routes, dir.path().join("routes/crm"));
        assert_eq!(config.domains[1].routes, PathBuf::from("/srv/routes"));
        assert_eq!(config.domains[0].auth, crate::domains::AuthConfig::BearerFromCaller, "the default auth");
        assert_eq!(config.domains[0].timeout_ms, 10_000);
        assert_eq!(config.tls.ca_file, Some(dir.path().join("ca.pem")));
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
    fn the_agent_section_reads_its_key_from_the_environment_only() {
        let config = Config::from_toml(
            "[agent]\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"qwen\"\napi_key = { env = \"MY_KEY\" }\nexposure = \"direct\"",
        )
        .unwrap();
        let agent = config.agent.to_config(|n| (n == "MY_KEY").then(|| "sk-1234".to_owned())).unwrap();
        assert_eq!(agent.api_key.as_ref().map(|k| k.expose()), Some("sk-1234"));
        assert_eq!(agent.exposure, agent::Exposure::Direct);
        assert!(!format!("{agent:?}").contains("sk-1234"));
        let err = config.agent.to_config(|_| None).unwrap_err().to_string();
        assert!(err.contains("MY_KEY") && err.contains("not set"), "{err}");
        let err = Config::from_toml("[agent]\napi_key = \"sk-literal\"").unwrap_err().to_string();
        assert!(err.contains("api_key"), "a literal key is refused: {err}");
        let err = Config::default().agent.to_config(|_| None).unwrap_err().to_string();
        assert!(err.contains("base_url"), "{err}");
    }

    #[test]
    fn the_database_section_is_one_set_of_pool_settings() {
        let config = Config::from_toml(
            "[database]\nurl = \"postgres://u@h/db\"\nmax_connections = 6\nacquire_timeout_ms = 750\n\
             sqlite_synchronous = \"normal\"",
        )
        .unwrap();
        assert_eq!(config.database.max_connections, 6);
        assert_eq!(config.database.acquire_timeout_ms, 750);
        assert_eq!(config.database.sqlite_synchronous, db::Synchronous::Normal);
        assert_eq!(config.database.connect_retry_secs, db::DbConfig::default().connect_retry_secs);
        let err = Config::from_toml("[database]\nmax_conections = 6").unwrap_err().to_string();
        assert!(err.contains("max_conections"), "{err}");
    }

    #[test]
    fn unknown_fields_are_refused_with_their_name() {
        let err = Config::from_toml("[server]\nlisten_on = \"x\"").unwrap_err().to_string();
        assert!(err.contains("listen_on"), "{err}");
    }
}
