//! `toolgate.toml`: roles, per-tool role overrides, limits, database, Redis,
//! the fitness backend, the weather endpoint, the server, the agent's model, TLS and the
//! declared HTTP domains, with `TOOLGATE_*` environment overrides applied on top.
//!
//! One file per group of sections; this one holds the whole and how it is
//! read (file, relative paths, environment).

mod agent;
mod backends;
mod server;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

pub use agent::{AgentSection, EnvRef};
pub use backends::{DatabaseConfig, FitnessConfig, RedisConfig, SkillsConfig, TlsConfig, WeatherConfig};
pub use server::{AuditConfig, RateLimitsConfig, ServerConfig, parse_listen};

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
    /// OpenTelemetry span export (off unless an OTLP endpoint is set).
    pub telemetry: crate::telemetry::TelemetryConfig,
    /// The agent's model (`toolgate agent`, `POST /api/chat`).
    pub agent: AgentSection,
    /// TLS trust for every outgoing connection.
    pub tls: TlsConfig,
    /// HTTP systems declared here, each a folder of route tables (`[[domains]]`).
    pub domains: Vec<crate::domains::DomainConfig>,
    /// Other MCP servers whose tools are served beside ours (`[[upstreams]]`).
    pub upstreams: Vec<crate::upstreams::UpstreamEntry>,
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
            self.server.listen = parse_listen(&v).map_err(|e| anyhow::anyhow!("TOOLGATE_LISTEN: {e}"))?;
        }
        if let Some(v) = get("TOOLGATE_EXPOSE") {
            self.server.expose = v.parse().map_err(|e| anyhow::anyhow!("TOOLGATE_EXPOSE: {e}"))?;
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
        let text = include_str!("../../../../toolgate.example.toml");
        let config = Config::from_toml(text).unwrap();
        assert_eq!(config.authz.roles, ["guest", "member", "manager", "admin"]);
        assert_eq!(config.server.listen, ServerConfig::default().listen);
        assert_eq!(config.server.listen.to_string(), "127.0.0.1:8377");
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
        assert_eq!(
            config.server.expose,
            mcp_server::Exposure::Direct,
            "a blank variable leaves the file's value"
        );
        let err = config.apply_env(|n| (n == "TOOLGATE_PLAN_TTL_SECS").then(|| "-1".to_owned())).unwrap_err();
        assert!(err.to_string().contains("TOOLGATE_PLAN_TTL_SECS"));
        config.apply_env(|n| (n == "TOOLGATE_LISTEN").then(|| " 0.0.0.0:9 ".to_owned())).unwrap();
        assert_eq!(config.server.listen.to_string(), "0.0.0.0:9");
        for (name, bad) in [("TOOLGATE_LISTEN", "localhost:1"), ("TOOLGATE_EXPOSE", "scoped:")] {
            let err = config.apply_env(|n| (n == name).then(|| bad.to_owned())).unwrap_err().to_string();
            assert!(err.starts_with(name) && err.contains(bad), "{err}");
        }
        assert_eq!(config.server.expose, mcp_server::Exposure::Direct, "a refused value changes nothing");
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
    fn unknown_fields_are_refused_with_their_name() {
        let err = Config::from_toml("[server]\nlisten_on = \"x\"").unwrap_err().to_string();
        assert!(err.contains("listen_on"), "{err}");
    }
}
