//! Changes without a restart: `toolgate serve` re-reads `toolgate.toml` on `SIGHUP`, builds
//! the new [`Plan`] and, only when it is good as a whole, swaps the `[[domains]]` tools (their
//! route tables, base URLs, credentials, TLS roots) in one step. Calls in flight finish on the
//! snapshot they started with; new calls see the new tools; direct-mode sessions are told
//! (`notifications/tools/list_changed`). A bad configuration changes nothing and says why.
//! Sections that are only read at start are named in the report as needing a restart.

use std::sync::Arc;

use gateway::Gateway;
use tool_core::Tool;

use crate::config::Config;
use crate::plan::Plan;

/// The gateway source of the `[[domains]]` tools.
pub const DOMAINS_SOURCE: &str = "config:domains";

/// What a reload changed.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reloaded {
    /// Tools that are new.
    pub added: Vec<String>,
    /// Tools that are gone.
    pub removed: Vec<String>,
    /// Tools kept (their tables may have changed).
    pub kept: Vec<String>,
    /// Sections that changed but are read only at start (`[authz]`, `[[upstreams]]`, ...).
    pub need_restart: Vec<&'static str>,
    /// Warnings of the new plan.
    pub warnings: Vec<String>,
}

impl Reloaded {
    /// One line for the log.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{} tool(s) added, {} removed, {} kept from [[domains]]",
            self.added.len(),
            self.removed.len(),
            self.kept.len()
        );
        if !self.added.is_empty() {
            out.push_str(&format!("; added: {}", self.added.join(", ")));
        }
        if !self.removed.is_empty() {
            out.push_str(&format!("; removed: {}", self.removed.join(", ")));
        }
        if !self.need_restart.is_empty() {
            out.push_str(&format!(
                "; changed but read only at start (restart to apply): {}",
                self.need_restart.join(", ")
            ));
        }
        out
    }
}

/// The reloads of one serving process, one at a time, whether asked by `SIGHUP` or
/// `POST /api/admin/reload` (`toolgate reload`): each re-reads the configuration and applies
/// it against the configuration the process started with.
pub struct ConfigReloader {
    gateway: Gateway,
    started_with: Config,
    reread: Box<dyn Fn() -> anyhow::Result<Config> + Send + Sync>,
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for ConfigReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigReloader").finish_non_exhaustive()
    }
}

impl ConfigReloader {
    /// Reload `gateway`, started with `started_with`, from what `reread` reads.
    pub fn new(
        gateway: Gateway,
        started_with: Config,
        reread: impl Fn() -> anyhow::Result<Config> + Send + Sync + 'static,
    ) -> Self {
        Self { gateway, started_with, reread: Box::new(reread), one_at_a_time: tokio::sync::Mutex::new(()) }
    }

    /// Read the configuration again and apply it; logged either way.
    pub async fn reload_now(&self) -> Result<Reloaded, Vec<String>> {
        let _one = self.one_at_a_time.lock().await;
        let started = std::time::Instant::now();
        let outcome = match (self.reread)() {
            Ok(next) => reload(&self.gateway, &self.started_with, &next, &|name| std::env::var(name).ok()),
            Err(error) => Err(vec![format!("{error:#}")]),
        };
        match &outcome {
            Ok(done) => {
                for warning in &done.warnings {
                    tracing::warn!("{warning}");
                }
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                tracing::info!(elapsed_ms = ms, "reloaded the configuration: {}", done.summary());
            }
            Err(problems) => tracing::error!(
                "reload refused, nothing changed: {} problem(s):\n  {}",
                problems.len(),
                problems.join("\n  ")
            ),
        }
        outcome
    }
}

#[tool_core::async_trait]
impl mcp_server::Reloader for ConfigReloader {
    async fn reload(&self) -> Result<serde_json::Value, Vec<String>> {
        let done = self.reload_now().await?;
        Ok(serde_json::to_value(&done).unwrap_or_default())
    }
}

/// Apply `next` to a gateway serving `running`: everything is checked first (the plan, and the
/// new tools against the tools of the other sources); `Err` lists every problem and nothing
/// changed.
pub fn reload(
    gateway: &Gateway,
    running: &Config,
    next: &Config,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Reloaded, Vec<String>> {
    let plan = Plan::build(next, var)?;
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut problems = Vec::new();
    for domain in &plan.domains {
        match domain.tools(|spec| spec) {
            Ok(more) => tools.extend(more),
            Err(problem) => problems.push(problem),
        }
    }
    problems.extend(gateway.check_source_tools(DOMAINS_SOURCE, &tools).iter().map(|e| format!("{e}")));
    if !problems.is_empty() {
        return Err(problems);
    }
    let before: Vec<String> = gateway
        .all_specs()
        .into_iter()
        .filter(|s| gateway.source_of(&s.name).as_deref() == Some(DOMAINS_SOURCE))
        .map(|s| s.name)
        .collect();
    let after: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
    let refused = gateway.replace_source_tools(DOMAINS_SOURCE, tools);
    if !refused.is_empty() {
        // Checked just above against the same snapshot; only a concurrent change of another
        // source could land here, and its tools win.
        tracing::warn!(problems = ?refused.iter().map(ToString::to_string).collect::<Vec<_>>(), "reload: tools left out");
    }
    let mut report = Reloaded {
        added: after.iter().filter(|n| !before.contains(n)).cloned().collect(),
        removed: before.iter().filter(|n| !after.contains(n)).cloned().collect(),
        kept: after.iter().filter(|n| before.contains(n)).cloned().collect(),
        need_restart: restart_sections(running, next),
        warnings: plan.warnings,
    };
    report.added.sort();
    report.removed.sort();
    report.kept.sort();
    Ok(report)
}

/// The sections of `next` that differ from `running` and are read only at start.
fn restart_sections(running: &Config, next: &Config) -> Vec<&'static str> {
    let differs = |a: &dyn erased::Section, b: &dyn erased::Section| a.text() != b.text();
    let pairs: [(&'static str, &dyn erased::Section, &dyn erased::Section); 14] = [
        ("[database]", &running.database, &next.database),
        ("[authz]", &running.authz, &next.authz),
        ("[limits]", &running.limits, &next.limits),
        ("[redis]", &running.redis, &next.redis),
        ("[fitness]", &running.fitness, &next.fitness),
        ("[weather]", &running.weather, &next.weather),
        ("[skills]", &running.skills, &next.skills),
        ("[server]", &running.server, &next.server),
        ("[auth]", &running.auth, &next.auth),
        ("[rate_limits]", &running.rate_limits, &next.rate_limits),
        ("[audit]", &running.audit, &next.audit),
        ("[telemetry]", &running.telemetry, &next.telemetry),
        ("[agent]", &running.agent, &next.agent),
        ("[[upstreams]]", &running.upstreams, &next.upstreams),
    ];
    pairs.into_iter().filter(|(_, a, b)| differs(*a, *b)).map(|(name, _, _)| name).collect()
}

/// Sections compared by their serialized form (every section is `Serialize`).
mod erased {
    pub(super) trait Section {
        fn text(&self) -> String;
    }

    impl<T: serde::Serialize> Section for T {
        fn text(&self) -> String {
            serde_json::to_string(self).unwrap_or_default()
        }
    }
}
