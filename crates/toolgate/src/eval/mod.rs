//! `toolgate eval`: a task suite run through the agent runtime against an
//! OpenAI-compatible model, in each exposure mode (meta, direct, scoped),
//! each run on a fresh copy of the demo data, scored by checks on state and
//! behaviour rather than on wording.
//!
//! ```text
//! suite.rs   the TOML suite: tasks (caller, turns, limits, checks), imported documents
//! runner.rs  one task × mode: fresh SQLite + fitness API, App::start, agent turns, transcript
//! checks.rs  each check's verdict and why it failed
//! report.rs  figures per task × mode, per mode, overall; markdown and JSON
//! chart.rs   success against tokens per success, one mark per mode (PNG)
//! ```
//!
//! It lives in the binary's library half rather than a crate of its own: it
//! needs `App` (the deployment's wiring), the demo seeding and `[[domains]]`,
//! all of which are here, and nothing below the binary needs it.

pub mod chart;
pub mod checks;
pub mod report;
pub mod runner;
pub mod suite;

use std::sync::Arc;

use anyhow::Result;

pub use report::{Figures, Report};
pub use runner::{Mode, RunResult, Target};
pub use suite::Suite;

use crate::Config;

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The exposures, in report order.
    pub modes: Vec<Mode>,
    /// Runs per task and exposure.
    pub repeat: u32,
    /// Only these task ids (all when empty).
    pub only: Vec<String>,
    /// Runs at once.
    pub parallel: usize,
}

/// One finished run, as the progress line shows it.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Runs finished.
    pub done: usize,
    /// Runs in all.
    pub total: usize,
    /// The run that finished.
    pub task: String,
    /// Its mode.
    pub mode: Mode,
    /// Whether it succeeded.
    pub success: bool,
}

/// Run the suite; `progress` hears of each run as it ends.
pub async fn run(
    suite: &Suite,
    config: &Config,
    target: &Target,
    options: &Options,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Report> {
    let tasks: Vec<suite::Task> = suite
        .tasks
        .iter()
        .filter(|t| options.only.is_empty() || options.only.contains(&t.id))
        .cloned()
        .collect();
    if tasks.is_empty() {
        anyhow::bail!(
            "no task matches {}; the suite has {}",
            options.only.join(", "),
            suite.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    let prepared = Arc::new(runner::Prepared::new(suite, config)?);
    let mut jobs = Vec::new();
    for task in &tasks {
        for mode in &options.modes {
            for repeat in 0..options.repeat.max(1) {
                jobs.push((task.clone(), *mode, repeat));
            }
        }
    }
    let total = jobs.len();
    let limit = Arc::new(tokio::sync::Semaphore::new(options.parallel.max(1)));
    let mut running = tokio::task::JoinSet::new();
    for (index, (task, mode, repeat)) in jobs.into_iter().enumerate() {
        let (prepared, target, limit) = (prepared.clone(), target.clone(), limit.clone());
        running.spawn(async move {
            let _permit = limit.acquire_owned().await;
            (index, runner::run_task(&prepared, &task, mode, repeat, &target).await)
        });
    }
    let mut results: Vec<(usize, RunResult)> = Vec::with_capacity(total);
    while let Some(done) = running.join_next().await {
        let (index, result) = done?;
        progress(Progress {
            done: results.len() + 1,
            total,
            task: result.task.clone(),
            mode: result.mode,
            success: result.success,
        });
        results.push((index, result));
    }
    results.sort_by_key(|(i, _)| *i);
    Ok(Report {
        model: target.model.clone(),
        tool_calling: match target.tool_calling {
            toolgate_agent::ToolCalling::Native => "native".into(),
            toolgate_agent::ToolCalling::Text => "text".into(),
        },
        repeat: options.repeat.max(1),
        modes: options.modes.clone(),
        tasks: tasks.iter().map(|t| (t.id.clone(), t.title.clone())).collect(),
        runs: results.into_iter().map(|(_, r)| r).collect(),
    })
}
