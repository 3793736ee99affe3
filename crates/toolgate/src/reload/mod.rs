//! Changes without a restart: `toolgate serve` re-reads `toolgate.toml` on `SIGHUP`, builds
//! the new [`Plan`] and, only when it is good as a whole, swaps the `[[domains]]` tools (their
//! route tables, base URLs, credentials, TLS roots) in one step. Calls in flight finish on the
//! snapshot they started with; new calls see the new tools; direct-mode sessions are told
//! (`notifications/tools/list_changed`). `[[upstreams]]` entries that are new or changed are
//! connected and ones that are gone or changed are stopped, while unchanged ones keep their
//! connections. A bad configuration changes nothing and says why. Sections that are only read
//! at start are named in the report as needing a restart.

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
    /// Upstreams connected by this reload (new, or changed and restarted).
    pub upstreams_started: Vec<String>,
    /// Upstreams stopped by this reload (gone, or changed and restarted).
    pub upstreams_stopped: Vec<String>,
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
        if !self.upstreams_stopped.is_empty() {
            out.push_str(&format!("; upstreams stopped: {}", self.upstreams_stopped.join(", ")));
        }
        if !self.upstreams_started.is_empty() {
            out.push_str(&format!("; upstreams started: {}", self.upstreams_started.join(", ")));
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
    upstreams: Arc<tokio::sync::Mutex<mcp_upstream::Upstreams>>,
    /// The `[[upstreams]]` entries running now (the lock also makes reloads one at a time).
    running_upstreams: tokio::sync::Mutex<Vec<crate::upstreams::UpstreamEntry>>,
    /// How the last reload went, for `GET /api/admin/reload`.
    last: std::sync::Mutex<Option<serde_json::Value>>,
}

impl std::fmt::Debug for ConfigReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigReloader").finish_non_exhaustive()
    }
}

impl ConfigReloader {
    /// Reload `gateway` and `upstreams`, started with `started_with`, from what `reread` reads.
    pub fn new(
        gateway: Gateway,
        upstreams: Arc<tokio::sync::Mutex<mcp_upstream::Upstreams>>,
        started_with: Config,
        reread: impl Fn() -> anyhow::Result<Config> + Send + Sync + 'static,
    ) -> Self {
        let running_upstreams = tokio::sync::Mutex::new(started_with.upstreams.clone());
        Self {
            gateway,
            started_with,
            reread: Box::new(reread),
            upstreams,
            running_upstreams,
            last: Default::default(),
        }
    }

    /// Read the configuration again and apply it; logged either way.
    pub async fn reload_now(&self) -> Result<Reloaded, Vec<String>> {
        let mut running = self.running_upstreams.lock().await;
        let started = std::time::Instant::now();
        let outcome = match (self.reread)() {
            Ok(next) => {
                match reload(&self.gateway, &self.started_with, &next, &|name| std::env::var(name).ok()) {
                    Ok((mut done, resolved)) => {
                        self.reconcile(&mut running, &next, resolved, &mut done).await;
                        Ok(done)
                    }
                    Err(problems) => Err(problems),
                }
            }
            Err(error) => Err(vec![format!("{error:#}")]),
        };
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let record = match &outcome {
            Ok(done) => serde_json::json!({"at": at, "reloaded": true, "changes": done}),
            Err(problems) => serde_json::json!({"at": at, "reloaded": false, "problems": problems}),
        };
        *self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(record);
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

impl ConfigReloader {
    /// Stop the upstreams that are gone or changed, start the new and changed ones (already
    /// resolved and checked in the plan); unchanged ones keep their connections.
    async fn reconcile(
        &self,
        running: &mut Vec<crate::upstreams::UpstreamEntry>,
        next: &Config,
        resolved: Vec<mcp_upstream::UpstreamConfig>,
        done: &mut Reloaded,
    ) {
        let kept = |entry: &crate::upstreams::UpstreamEntry, among: &[crate::upstreams::UpstreamEntry]| {
            among.iter().any(|e| e == entry)
        };
        let stop: Vec<String> =
            running.iter().filter(|e| !kept(e, &next.upstreams)).map(|e| e.name.clone()).collect();
        let start: Vec<String> =
            next.upstreams.iter().filter(|e| !kept(e, running)).map(|e| e.name.clone()).collect();
        let mut upstreams = self.upstreams.lock().await;
        for name in &stop {
            upstreams.remove(&self.gateway, name);
        }
        let configs: Vec<_> = resolved.into_iter().filter(|c| start.contains(&c.name)).collect();
        if !configs.is_empty() {
            upstreams.add(&self.gateway, configs).await;
        }
        running.clone_from(&next.upstreams);
        done.upstreams_stopped = stop;
        done.upstreams_started = start;
    }
}

#[tool_core::async_trait]
impl mcp_server::Reloader for ConfigReloader {
    async fn reload(&self) -> Result<serde_json::Value, Vec<String>> {
        let done = self.reload_now().await?;
        Ok(serde_json::to_value(&done).unwrap_or_default())
    }

    fn last(&self) -> Option<serde_json::Value> {
        self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// Apply `next` to a gateway serving `running`: everything is checked first (the plan, and the
/// new tools against the tools of the other sources); `Err` lists every problem and nothing
/// changed.
/// The upstreams of the new plan come back resolved, for the caller to connect.
pub fn reload(
    gateway: &Gateway,
    running: &Config,
    next: &Config,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(Reloaded, Vec<mcp_upstream::UpstreamConfig>), Vec<String>> {
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
        ..Reloaded::default()
    };
    report.added.sort();
    report.removed.sort();
    report.kept.sort();
    Ok((report, plan.upstreams))
}

/// The sections of `next` that differ from `running` and are read only at start.
fn restart_sections(running: &Config, next: &Config) -> Vec<&'static str> {
    let differs = |a: &dyn erased::Section, b: &dyn erased::Section| a.text() != b.text();
    let pairs: [(&'static str, &dyn erased::Section, &dyn erased::Section); 13] = [
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
