//! Changes without a restart: `toolgate serve` re-reads `toolgate.toml` on `SIGHUP` (or
//! `POST /api/admin/reload`, or a reload announced by another instance), builds the new
//! [`crate::plan::Plan`] and, only when it is good as a whole, swaps in one step the
//! `[[domains]]` tools (their route tables, base URLs, credentials, TLS roots), the roles,
//! overrides and toolsets (`[authz]`), the `[limits]` and the skills folder (`apply`). Calls
//! in flight finish on the snapshot they started with; new calls see the new one; direct-mode
//! sessions are told (`notifications/tools/list_changed`). `[[upstreams]]` entries that are new
//! or changed are connected and ones that are gone or changed are stopped, while unchanged ones
//! keep their connections. A bad configuration changes nothing and says why (the log, `/readyz`
//! [`ReloadProbe`], `GET /api/admin/reload`). Sections that are only read at start are named in
//! the report as needing a restart. On PostgreSQL a reload asked of one instance is announced to
//! the others ([`fleet`]), each of which reads its own file again.

mod apply;
pub mod fleet;

pub use apply::reload;

use std::sync::Arc;

use toolgate_gateway::Gateway;

use crate::config::Config;

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
    /// Sections that changed and were applied (`[authz]`, `[limits]`, `skills`).
    pub applied: Vec<&'static str>,
    /// Sections that changed but are read only at start (`[server]`, `[auth]`, ...).
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
        if !self.applied.is_empty() {
            out.push_str(&format!("; applied: {}", self.applied.join(", ")));
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

/// Who asked for a reload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// This process: `SIGHUP` or `POST /api/admin/reload`. Announced to the fleet when it works.
    Here,
    /// Another instance announced its reload (its name).
    Fleet(String),
}

/// The reloads of one serving process, one at a time, whether asked by `SIGHUP`,
/// `POST /api/admin/reload` (`toolgate reload`) or another instance: each re-reads the
/// configuration and applies it against the configuration the process started with.
pub struct ConfigReloader {
    gateway: Gateway,
    started_with: Config,
    reread: Box<dyn Fn() -> anyhow::Result<Config> + Send + Sync>,
    /// Every source of tools, reloaded together.
    sources: crate::tool_source::Sources,
    /// Held by the reload under way: one at a time.
    one_at_a_time: tokio::sync::Mutex<()>,
    /// How the last reload went, for `GET /api/admin/reload` and `/readyz`.
    last: std::sync::Mutex<Option<serde_json::Value>>,
    /// Where a reload asked here is announced to the other instances (PostgreSQL).
    fleet: Option<fleet::Fleet>,
}

impl std::fmt::Debug for ConfigReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigReloader").finish_non_exhaustive()
    }
}

impl ConfigReloader {
    /// Reload `gateway` and its `sources`, started with `started_with`, from what `reread` reads.
    pub fn new(
        gateway: Gateway,
        sources: crate::tool_source::Sources,
        started_with: Config,
        reread: impl Fn() -> anyhow::Result<Config> + Send + Sync + 'static,
    ) -> Self {
        Self {
            gateway,
            started_with,
            reread: Box::new(reread),
            sources,
            one_at_a_time: tokio::sync::Mutex::new(()),
            last: Default::default(),
            fleet: None,
        }
    }

    /// Announce the reloads asked here to the instances on the same PostgreSQL database (and
    /// hear theirs: [`ConfigReloader::watch_fleet`]); nothing on SQLite.
    pub fn with_fleet(mut self, db: toolgate_db::Db, instance: String) -> Self {
        self.fleet = fleet::Fleet::new(db, instance);
        self
    }

    /// Read the configuration again and apply it, as asked here; logged either way.
    pub async fn reload_now(&self) -> Result<Reloaded, Vec<String>> {
        self.reload_as(Origin::Here).await
    }

    /// Read the configuration again and apply it; logged either way. A reload asked here that
    /// worked is announced to the fleet.
    pub async fn reload_as(&self, origin: Origin) -> Result<Reloaded, Vec<String>> {
        let one = self.one_at_a_time.lock().await;
        let started = std::time::Instant::now();
        let env = |name: &str| std::env::var(name).ok();
        let outcome = match (self.reread)() {
            Ok(next) => match reload(&self.gateway, &self.sources, &self.started_with, &next, &env) {
                Ok((mut done, plan)) => {
                    self.sources.reload(&self.gateway, &next, &plan, &mut done).await;
                    Ok(done)
                }
                Err(problems) => Err(problems),
            },
            Err(error) => Err(vec![format!("{error:#}")]),
        };
        drop(one);
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let asked_by = match &origin {
            Origin::Here => "here".to_owned(),
            Origin::Fleet(instance) => format!("instance {instance}"),
        };
        let record = match &outcome {
            Ok(done) => {
                serde_json::json!({"at": at, "asked_by": asked_by, "reloaded": true, "changes": done})
            }
            Err(problems) => {
                serde_json::json!({"at": at, "asked_by": asked_by, "reloaded": false, "problems": problems})
            }
        };
        *self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(record);
        match &outcome {
            Ok(done) => {
                for warning in &done.warnings {
                    tracing::warn!("{warning}");
                }
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                tracing::info!(elapsed_ms = ms, asked_by, "reloaded the configuration: {}", done.summary());
                if origin == Origin::Here
                    && let Some(fleet) = self.fleet.clone()
                {
                    // Not waited for: the answer here does not depend on the database's pool.
                    tokio::spawn(async move { fleet.announce().await });
                }
            }
            Err(problems) => tracing::error!(
                asked_by,
                "reload refused, nothing changed: {} problem(s):\n  {}",
                problems.len(),
                problems.join("\n  ")
            ),
        }
        outcome
    }

    /// How the last reload went (none yet: `None`).
    pub fn last_record(&self) -> Option<serde_json::Value> {
        self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

#[toolgate_core::async_trait]
impl toolgate_mcp::Reloader for ConfigReloader {
    async fn reload(&self) -> Result<serde_json::Value, Vec<String>> {
        let done = self.reload_now().await?;
        Ok(serde_json::to_value(&done).unwrap_or_default())
    }

    fn last(&self) -> Option<serde_json::Value> {
        self.last_record()
    }
}

/// `/readyz`: always ready (a refused reload leaves the configuration before it serving), with
/// how the last reload went beside it: when, and whether it was taken or how many problems
/// refused it. The problems themselves are only for the highest role (`GET /api/admin/reload`),
/// since `/readyz` needs no key.
#[derive(Debug)]
pub struct ReloadProbe(pub Arc<ConfigReloader>);

#[toolgate_core::async_trait]
impl toolgate_mcp::Probe for ReloadProbe {
    fn name(&self) -> &str {
        "configuration"
    }

    async fn check(&self) -> Result<(), String> {
        Ok(())
    }

    fn detail(&self) -> Option<serde_json::Value> {
        let last = self.0.last_record()?;
        let mut detail = serde_json::json!({"last_reload": last["at"], "reloaded": last["reloaded"]});
        if let Some(problems) = last["problems"].as_array() {
            detail["problems"] = problems.len().into();
            detail["see"] = "GET /api/admin/reload (the highest role) for every problem".into();
        }
        Some(detail)
    }
}
