//! Build the gateway a deployment serves from its configuration: every
//! domain (travel, fitness), the skills, the policy and the limits. The
//! server and the CLI both go through [`App::start`], so they serve the same tools.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use toolgate_core::Secret;
use toolgate_gateway::Gateway;
use toolgate_skills::{Skill, SkillError, SkillSet};

use crate::config::Config;

/// The SKILL.md files shipped inside the binary, by id.
pub const SHIPPED_SKILLS: &[(&str, &str)] = &[
    ("travel-request", include_str!("../../../skills/travel-request/SKILL.md")),
    ("trip-planning", include_str!("../../../skills/trip-planning/SKILL.md")),
    ("cancel-trip", include_str!("../../../skills/cancel-trip/SKILL.md")),
    ("daily-nutrition-review", include_str!("../../../skills/daily-nutrition-review/SKILL.md")),
    ("log-workout", include_str!("../../../skills/log-workout/SKILL.md")),
];

/// A running deployment: the gateway and what it needs kept alive.
#[derive(Debug)]
pub struct App {
    /// The one database pool every store of the process shares (travel, the
    /// in-process fitness API, the API keys).
    pub db: toolgate_db::Db,
    /// The gateway every transport serves.
    pub gateway: Gateway,
    /// The travel store (for seeding and migrations).
    pub travel: toolgate_travel::Store,
    /// The fitness API's database when it runs in-process (for tokens and seeding).
    pub fitness_db: Option<toolgate_fitness_api::Db>,
    /// The in-process fitness API, when no base URL is configured.
    pub fitness_server: Option<toolgate_fitness_api::Server>,
    /// How long a pass-through token of the in-process fitness API lives.
    pub fitness_token_ttl: Duration,
    /// Problems found in the skills (bad files, unknown tools); the others still load.
    pub skill_problems: Vec<SkillError>,
    /// The upstream MCP servers, kept connected while the app lives.
    /// (Behind a lock: a reload adds and removes upstreams while serving.)
    pub upstreams: Arc<tokio::sync::Mutex<toolgate_mcp_upstream::Upstreams>>,
    /// Every source of tools (the compiled-in domains, `[[domains]]`, `[[upstreams]]`), for
    /// reloads and the stop.
    pub sources: crate::tool_source::Sources,
    /// Their prompts, resources and the rest of their MCP surface.
    pub federation: toolgate_mcp_upstream::Federation,
    /// The resources toolgate serves itself (full itinerary plans).
    pub resources: Arc<dyn toolgate_core::Resources>,
    /// Upstream tools the configuration or the skills name that their
    /// connected upstream did not list (warnings; the names answer NOT_FOUND).
    pub upstream_problems: Vec<String>,
    /// The audit trail, unless `[audit] enabled = false`.
    pub audit: Option<toolgate_fleet::SqlAudit>,
    /// Where rate-limit counters live (Redis when configured), when any limit is set.
    pub rate_store: Option<Arc<dyn toolgate_gateway::RateStore>>,
    /// The Redis counters, for `/readyz`.
    pub redis_rates: Option<Arc<toolgate_fleet::RedisRateStore>>,
    /// The OpenTelemetry exporter, when an OTLP endpoint is configured;
    /// dropping the app sends the spans still queued.
    pub telemetry: Option<crate::telemetry::Telemetry>,
    /// The verifier of `[auth.oauth]` access tokens, when sign-in is configured.
    pub oauth: Option<toolgate_oauth::resource::Verifier>,
    /// The `[tasks]` limits, checked by the plan, for every MCP server of the process.
    pub task_limits: toolgate_mcp::TaskLimits,
}

/// This instance's name in audit records: the configured one, else host name and process id.
pub fn instance_name(config: &Config) -> String {
    config.server.instance.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "toolgate".into());
        format!("{host}:{}", std::process::id())
    })
}

impl App {
    /// Connect the databases (running migrations), start the in-process
    /// fitness API when none is configured, and build the gateway.
    pub async fn start(config: &Config) -> Result<Self> {
        // Configuration problems first, all of them, exactly as `toolgate check` finds them:
        // a broken table, CA file, upstream or role never half-starts a server.
        let env = |name: &str| std::env::var(name).ok();
        let plan = crate::plan::Plan::build(config, &env).map_err(|p| crate::plan::refusal(&p))?;
        for warning in &plan.warnings {
            tracing::warn!("{warning}");
        }
        let (ca_pem, oauth) = (plan.ca_pem.clone(), plan.oauth.clone());
        let database =
            config.database.clone().with_url(with_ca(&config.database.url, config.tls.ca_file.as_deref()));
        let db = connect_db(&database).await?;
        let travel_store =
            toolgate_travel::Store::open(db.clone()).await.context("opening the travel store")?;
        let (fitness_url, fitness_db, fitness_server) = match &config.fitness.base_url {
            Some(base) => (base.clone(), None, None),
            None => {
                let db =
                    toolgate_fitness_api::Db::open(db.clone()).await.context("opening the fitness store")?;
                let server = toolgate_fitness_api::spawn("127.0.0.1:0", db.clone())
                    .await
                    .context("starting the in-process fitness API")?;
                (server.url(), Some(db), Some(server))
            }
        };
        let travel_config = travel_config(config, ca_pem.as_deref());
        let resources: Arc<dyn toolgate_core::Resources> =
            Arc::new(toolgate_travel::PlanResources::new(travel_store.clone(), &travel_config));
        let travel_tools = toolgate_travel::tools(travel_store.clone(), travel_config);
        let fitness_tools = toolgate_fitness::with_chart(
            fitness_domain(config, &fitness_url, ca_pem.as_deref())?
                .tools(toolgate_fitness::with_examples)
                .map_err(anyhow::Error::msg)?,
        );
        // Every source of tools through one registry, its tools under its name, so that a
        // reload replaces each as a whole (the compiled-in ones keep theirs).
        let upstream_source = Arc::new(crate::tool_source::Upstreams::default());
        let sources = crate::tool_source::Sources::new()
            .register(Arc::new(crate::tool_source::Builtin::new("builtin:travel", travel_tools)))
            .register(Arc::new(crate::tool_source::Builtin::new("builtin:fitness", fitness_tools)))
            .register(Arc::new(crate::tool_source::Domains))
            .register(upstream_source.clone());
        let prepared = sources
            .prepare(config, &plan, crate::tool_source::Phase::Start)
            .map_err(|p| crate::plan::refusal(&p))?;
        let (skill_set, mut skill_problems) =
            load_skills(config.skills.dir.as_deref(), plan.policy.hierarchy());
        // Skills may name upstream tools, which are listed only once connected.
        let mut builder = prepared
            .build_into(Gateway::builder().policy(plan.policy.clone()).limits(config.limits.clone()))
            .skills(skill_set);
        if let Some(encoder) = plan.encoder.clone() {
            builder = builder.embedder(encoder);
        }
        let audit = if config.audit.enabled {
            let audit = toolgate_fleet::SqlAudit::open(db.clone(), instance_name(config))
                .await
                .context("opening the audit trail")?;
            builder = builder.audit(Arc::new(audit.clone()));
            Some(audit)
        } else {
            None
        };
        let (mut rate_store, mut redis_rates) = (None, None);
        if !config.rate_limits.is_empty() {
            let store: Arc<dyn toolgate_gateway::RateStore> = match &config.redis.url {
                Some(url) => {
                    let redis = Arc::new(
                        toolgate_fleet::RedisRateStore::with_ca(url, ca_pem.as_deref())
                            .context("in [redis] url (for the rate limits)")?,
                    );
                    redis_rates = Some(redis.clone());
                    redis
                }
                None => Arc::new(toolgate_gateway::MemoryRateStore::new()),
            };
            builder = builder.rate_limits(config.rate_limits.gateway(), store.clone());
            rate_store = Some(store);
        }
        let telemetry = match crate::telemetry::Telemetry::start(&config.telemetry, &env)? {
            Some((telemetry, observer)) => {
                builder = builder.observer(observer);
                Some(telemetry)
            }
            None => None,
        };
        let gateway = builder.build().context("building the gateway")?;
        skill_problems.extend(gateway.skill_problems().iter().cloned());
        for problem in &skill_problems {
            tracing::warn!("{problem}");
        }
        // Connected after the gateway exists: their tools join it as they are
        // listed, and a dead upstream only delays the start by its connect timeout.
        if let Some(verifier) = oauth.clone() {
            // Found out now rather than at the first token; a provider that is down is
            // retried by the verifier when tokens come.
            tokio::spawn(async move {
                let issuer = verifier.config().issuer.clone();
                match verifier.discover().await {
                    Ok(()) => {
                        tracing::info!(issuer, "sign-in: the identity provider's metadata and keys are read")
                    }
                    Err(error) => tracing::warn!(
                        issuer,
                        "sign-in: the identity provider could not be read ({error}); tokens are refused with 503 until it can"
                    ),
                }
            });
        }
        sources.start(&gateway, config, &plan).await;
        let upstreams_handle = upstream_source.running().context("the upstreams did not start")?;
        let upstreams = upstreams_handle.lock().await;
        let upstream_problems =
            crate::upstreams::unlisted_tools(&gateway, &upstreams, config.weather.upstream_tool.as_deref());
        let collisions = upstreams.collisions();
        if !collisions.is_empty() {
            anyhow::bail!("names collide between tool sources:\n  {}", collisions.join("\n  "));
        }
        let federation = upstreams.federation();
        drop(upstreams);
        let upstreams = upstreams_handle;
        for problem in &upstream_problems {
            tracing::warn!("{problem}");
        }
        Ok(Self {
            db,
            gateway,
            travel: travel_store,
            fitness_db,
            fitness_server,
            fitness_token_ttl: Duration::from_secs(config.fitness.token_ttl_secs.max(60)),
            skill_problems,
            upstreams,
            sources,
            federation,
            resources,
            upstream_problems,
            audit,
            rate_store,
            redis_rates,
            telemetry,
            oauth,
            task_limits: plan.tasks,
        })
    }

    /// A pass-through token for a user of the in-process fitness API (demo and
    /// CLI use): the user is created when missing. `None` when the fitness API
    /// is an external service, whose tokens the caller must bring.
    pub async fn fitness_token(&self, user_id: &str) -> Result<Option<Secret>> {
        let Some(db) = &self.fitness_db else { return Ok(None) };
        let token = match toolgate_fitness_api::create_user(db, user_id).await {
            Ok(token) => token,
            Err(toolgate_fitness_api::Error::Conflict(_)) => {
                toolgate_fitness_api::issue_token(db, user_id).await?
            }
            Err(e) => return Err(e.into()),
        };
        Ok(Some(Secret::new(token)))
    }

    /// `caller` with its [`App::fitness_token`] filed for the fitness API
    /// ([`toolgate_fitness::BACKEND_ID`]): only the fitness tools will send it.
    pub async fn with_fitness_credential(
        &self,
        mut caller: toolgate_core::Caller,
    ) -> Result<toolgate_core::Caller> {
        if let Some(token) = self.fitness_token(&caller.user_id).await? {
            caller.credentials.insert(toolgate_fitness::BACKEND_ID, token);
        }
        Ok(caller)
    }
}

/// The verifier of `[auth.oauth]`, its roles checked against the policy's hierarchy and its
/// toolsets against the policy's (`[authz.toolsets]` and the built-in `read_only`); `None`
/// without the section.
pub fn oauth_verifier(
    config: &Config,
    policy: &toolgate_authz::Policy,
    ca_pem: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<toolgate_oauth::resource::Verifier>> {
    let Some(section) = &config.auth.oauth else { return Ok(None) };
    let client = crate::config::idp_client(ca_pem)?;
    let known = |name: &str| policy.toolset(name).is_some();
    Ok(Some(section.verifier(client, policy.hierarchy().roles().to_vec(), &known, var)?))
}

/// The `[tls] ca_file` PEM text, checked to hold certificates.
pub fn read_ca_file(config: &Config) -> Result<Option<String>> {
    let Some(path) = &config.tls.ca_file else { return Ok(None) };
    let pem = std::fs::read_to_string(path).with_context(|| {
        format!("[tls] ca_file {}: cannot read it; fix the path or remove the key", path.display())
    })?;
    toolgate_http::parse_ca_bundle(&pem).with_context(|| format!("[tls] ca_file {}", path.display()))?;
    Ok(Some(pem))
}

/// Every `[[domains]]` entry, checked; the error names every problem at once.
pub fn declared_domains(
    config: &Config,
    ca_pem: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<crate::domains::Declared>> {
    crate::domains::prepare(&config.domains, ca_pem, var).map_err(|problems| {
        anyhow::anyhow!(
            "the declared domains have {} problem(s); nothing was started:\n  {}",
            problems.len(),
            problems.join("\n  ")
        )
    })
}

/// The compiled-in fitness domain, loaded through the same path as a `[[domains]]` entry:
/// its shipped route files, checked, with the caller's bearer credential made for the fitness
/// API ([`toolgate_fitness::BACKEND_ID`]).
pub fn fitness_domain(
    config: &Config,
    base_url: &str,
    ca_pem: Option<&str>,
) -> Result<crate::domains::Declared> {
    let files: Vec<crate::domains::RouteFile> = toolgate_fitness::ROUTE_FILES
        .iter()
        .map(|(name, text)| crate::domains::RouteFile {
            name: format!("crates/toolgate-fitness/routes/{name}.toml"),
            text: (*text).to_owned(),
        })
        .collect();
    let tables = crate::domains::load_tables(&files)
        .map_err(|p| anyhow::anyhow!("fitness tables: {}", p.join("; ")))?;
    let mut options = toolgate_http::HttpOptions::default()
        .timeout(Duration::from_millis(config.fitness.timeout_ms))
        .backend_name("the fitness API")
        .backend_id(toolgate_fitness::BACKEND_ID);
    if let Some(pem) = ca_pem {
        options = options.ca_bundle_pem(pem);
    }
    Ok(crate::domains::Declared {
        name: "fitness".into(),
        domain: None,
        base_url: base_url.to_owned(),
        tables,
        options,
    })
}

/// A PostgreSQL URL trusts `[tls] ca_file` too (`sslrootcert`), unless it names its own.
pub fn with_ca(url: &str, ca_file: Option<&Path>) -> String {
    match ca_file {
        Some(path) if url.starts_with("postgres") && !url.contains("sslrootcert=") => {
            let sep = if url.contains('?') { '&' } else { '?' };
            let path = path.display().to_string().replace('%', "%25").replace('&', "%26").replace(' ', "%20");
            format!("{url}{sep}sslrootcert={path}")
        }
        _ => url.to_owned(),
    }
}

impl App {
    /// The agent over this deployment's gateway, with its conversations on
    /// the deployment's one pool. Fails when no model is configured.
    pub async fn agent(&self, config: &Config) -> Result<toolgate_agent::Agent> {
        let agent_config = config.agent.to_config(|name| std::env::var(name).ok())?;
        let store = toolgate_agent::ConversationStore::new(self.db.clone())
            .await
            .context("preparing the conversation tables")?;
        let agent = toolgate_agent::Agent::new(self.gateway.clone(), agent_config)
            .context("building the model client")?;
        Ok(agent.with_store(store))
    }
}

/// Load skills from a folder, or the shipped ones when none is given.
pub fn load_skills(
    dir: Option<&Path>,
    hierarchy: &toolgate_authz::RoleHierarchy,
) -> (SkillSet, Vec<SkillError>) {
    match dir {
        Some(dir) => SkillSet::load_dir_with(dir, hierarchy),
        None => {
            let mut problems = Vec::new();
            let mut skills = Vec::new();
            for (id, text) in SHIPPED_SKILLS {
                match Skill::parse_with(text, format!("skills/{id}/SKILL.md"), hierarchy) {
                    Ok(skill) => skills.push(skill),
                    Err(errors) => problems.extend(errors),
                }
            }
            (SkillSet::from_skills(skills), problems)
        }
    }
}

/// Open the process's one pool as `[database]` says (the SQLite file is
/// created when missing). The error names the cause and the server, never
/// the password.
pub async fn connect_db(config: &toolgate_db::DbConfig) -> Result<toolgate_db::Db> {
    let config = config.clone().with_url(sqlite_create(&config.url));
    toolgate_db::Db::connect(&config)
        .await
        .context("connecting to the database ([database] in toolgate.toml)")
}

/// SQLite URLs create the file when it is missing.
pub fn sqlite_create(url: &str) -> String {
    if url.starts_with("sqlite:") && !url.contains("mode=") && !url.contains(":memory:") {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}mode=rwc")
    } else {
        url.to_owned()
    }
}

/// A database URL without its password, for messages.
pub fn redact_url(url: &str) -> String {
    toolgate_db::redact(url)
}

/// The travel tools' settings, from the configuration (the plan TTL applies
/// to the SQL plan store too, not only to Redis) and, for the key that seals
/// stored API keys, the environment only: a secret is never written to a file.
fn travel_config(config: &Config, ca_pem: Option<&str>) -> toolgate_travel::TravelConfig {
    let ttl = Duration::from_secs(config.redis.plan_ttl_secs.max(1));
    let plan_store = match &config.redis.url {
        Some(url) => toolgate_travel::PlanStoreConfig::Redis {
            url: url.clone(),
            ttl,
            ca_pem: ca_pem.map(str::to_owned),
        },
        None => toolgate_travel::PlanStoreConfig::Sql { ttl },
    };
    let mut travel_config = toolgate_travel::TravelConfig::default()
        .with_plan_store(plan_store)
        .with_weather_timeout(Duration::from_millis(config.weather.timeout_ms.max(1)));
    if let Some(url) = &config.weather.url {
        travel_config = travel_config.with_weather_url(url.clone());
    }
    if let Some(tool) = &config.weather.upstream_tool {
        travel_config = travel_config.with_weather_upstream_tool(tool.clone());
    }
    let secret = std::env::var(toolgate_travel::ENV_SECRET_KEY).ok().filter(|v| !v.trim().is_empty());
    if let Some(key) = secret {
        travel_config = travel_config.with_secret_key(Secret::new(key.trim()));
    }
    travel_config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_kept_out_of_messages() {
        assert_eq!(redact_url("postgres://u:secret@h:5432/db"), "postgres://u:[redacted]@h:5432/db");
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("sqlite:toolgate.db"), "sqlite:toolgate.db");
    }

    #[test]
    fn shipped_skills_parse() {
        let (set, problems) = load_skills(None, &toolgate_authz::RoleHierarchy::default());
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(set.len(), SHIPPED_SKILLS.len());
    }
}
