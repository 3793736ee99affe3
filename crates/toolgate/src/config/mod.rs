//! `toolgate.toml`: roles, per-tool role overrides, limits, database, Redis,
//! the fitness backend, the weather endpoint, the server, the agent's model, TLS and the
//! declared HTTP domains, with `TOOLGATE_*` environment overrides applied on top.
//!
//! One file per group of sections; this one holds the whole and how it is
//! read (file, relative paths, environment).

mod agent;
mod backends;
mod server;
mod signin;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

pub use agent::{AgentSection, EnvRef};
pub use backends::{
    DatabaseConfig, DiscoveryConfig, FitnessConfig, RedisConfig, SkillsConfig, TlsConfig, WeatherConfig,
};
pub use server::TasksConfig;
pub use server::{AuditConfig, RateLimitsConfig, ServerConfig, parse_listen};
pub use signin::{
    AuthSection, ClientCredentialsSection, GrantSection, IntrospectionSection, OAuthSection,
    TokenExchangeSection, idp_client,
};

/// The whole configuration. Every section is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the tables live.
    pub database: DatabaseConfig,
    /// Roles, overrides and toolsets.
    pub authz: toolgate_authz::AuthzConfig,
    /// Parameter limits, retries and timeouts.
    pub limits: toolgate_gateway::Limits,
    /// The Redis plan store; without it plans go to a SQL table.
    pub redis: RedisConfig,
    /// The fitness backend.
    pub fitness: FitnessConfig,
    /// The weather provider.
    pub weather: WeatherConfig,
    /// The skills.
    pub skills: SkillsConfig,
    /// How discovery ranks tools (by words; with a model, by meaning too).
    pub discovery: DiscoveryConfig,
    /// The MCP server.
    pub server: ServerConfig,
    /// Sign-in beside API keys (`[auth.oauth]`).
    pub auth: AuthSection,
    /// Rate limits and quotas (none by default).
    pub rate_limits: RateLimitsConfig,
    /// The audit trail.
    pub audit: AuditConfig,
    /// How many tasks (long-running calls run as tasks) are kept, and for how long.
    pub tasks: TasksConfig,
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

/// An environment variable that overrides a field of the file.
#[derive(Debug)]
pub struct EnvOverride {
    /// The variable, e.g. `TOOLGATE_DATABASE_URL`.
    pub var: &'static str,
    /// The field it sets, as the file spells it, e.g. `database.url`.
    pub field: &'static str,
    /// Set the field from the variable's (trimmed, non-empty) value.
    apply: fn(&mut Config, String) -> Result<()>,
}

/// The environment variables that override the file: the one list
/// [`Config::apply_env`] reads, so a variable cannot be documented here and
/// forgotten there.
pub const ENV_OVERRIDES: &[EnvOverride] = &[
    EnvOverride {
        var: "TOOLGATE_DATABASE_URL",
        field: "database.url",
        apply: |c, v| {
            c.database.url = v;
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_REDIS_URL",
        field: "redis.url",
        apply: |c, v| {
            c.redis.url = Some(v);
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_PLAN_TTL_SECS",
        field: "redis.plan_ttl_secs",
        apply: |c, v| {
            c.redis.plan_ttl_secs = match v.parse() {
                Ok(n) if n > 0 => n,
                _ => bail!("TOOLGATE_PLAN_TTL_SECS must be a positive number of seconds, got {v:?}"),
            };
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_FITNESS_URL",
        field: "fitness.base_url",
        apply: |c, v| {
            c.fitness.base_url = Some(v);
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_WEATHER_URL",
        field: "weather.url",
        apply: |c, v| {
            c.weather.url = Some(v);
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_SKILLS_DIR",
        field: "skills.dir",
        apply: |c, v| {
            c.skills.dir = Some(PathBuf::from(v));
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_DISCOVERY_MODEL",
        field: "discovery.model",
        apply: |c, v| {
            c.discovery.model = Some(PathBuf::from(v));
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_LISTEN",
        field: "server.listen",
        apply: |c, v| {
            c.server.listen = parse_listen(&v).map_err(|e| anyhow::anyhow!("TOOLGATE_LISTEN: {e}"))?;
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_EXPOSE",
        field: "server.expose",
        apply: |c, v| {
            c.server.expose = v.parse().map_err(|e| anyhow::anyhow!("TOOLGATE_EXPOSE: {e}"))?;
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_INSTANCE",
        field: "server.instance",
        apply: |c, v| {
            c.server.instance = Some(v);
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_METRICS_TOKEN",
        field: "server.metrics_token",
        apply: |c, v| {
            c.server.metrics_token = Some(v);
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_AGENT_BASE_URL",
        field: "agent.base_url",
        apply: |c, v| {
            c.agent.base_url = Some(v);
            Ok(())
        },
    },
    EnvOverride {
        var: "TOOLGATE_AGENT_MODEL",
        field: "agent.model",
        apply: |c, v| {
            c.agent.model = Some(v);
            Ok(())
        },
    },
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

    /// Apply overrides from an environment (a function, so tests need not touch the process's):
    /// every variable of [`ENV_OVERRIDES`] that is set and not blank.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<()> {
        for over in ENV_OVERRIDES {
            if let Some(value) = var(over.var).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
                (over.apply)(self, value)?;
            }
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
            toolgate_mcp::Exposure::Direct,
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
        assert_eq!(config.server.expose, toolgate_mcp::Exposure::Direct, "a refused value changes nothing");
    }

    /// Each variable of the list sets its field (so none is listed and not
    /// read), and each is named in the example file beside its key.
    #[test]
    fn every_listed_variable_sets_its_field_and_is_documented() {
        let example = include_str!("../../../../toolgate.example.toml");
        for over in ENV_OVERRIDES {
            let value = match over.var {
                "TOOLGATE_PLAN_TTL_SECS" => "7",
                "TOOLGATE_LISTEN" => "127.0.0.1:9",
                "TOOLGATE_EXPOSE" => "direct",
                _ => "http://127.0.0.1:9/x",
            };
            let mut config = Config::default();
            config.apply_env(|name| (name == over.var).then(|| value.to_owned())).unwrap();
            assert_ne!(
                toml::to_string(&config).unwrap(),
                toml::to_string(&Config::default()).unwrap(),
                "{} did not change {}",
                over.var,
                over.field
            );
            assert!(example.contains(over.var), "{} is not in toolgate.example.toml", over.var);
        }
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
        assert_eq!(config.domains[0].max_binary_bytes, 1024 * 1024, "files up to 1 MiB by default");
        assert_eq!(config.domains[0].timeout_ms, 10_000);
        assert_eq!(config.tls.ca_file, Some(dir.path().join("ca.pem")));
    }

    #[test]
    fn unknown_fields_are_refused_with_their_name() {
        let err = Config::from_toml("[server]\nlisten_on = \"x\"").unwrap_err().to_string();
        assert!(err.contains("listen_on"), "{err}");
    }
}
