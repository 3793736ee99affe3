//! The step from a configuration read again to a changed gateway: the plan, the `[[domains]]`
//! tools, the roles and toolsets, the limits and the skills folder, checked as one
//! [`toolgate_gateway::Change`] and swapped in one step, or refused whole.

use toolgate_gateway::Gateway;

use super::{DOMAINS_SOURCE, Reloaded};
use crate::config::Config;
use crate::plan::Plan;
use crate::tool_source::{Phase, Sources};

/// Apply `next` to a gateway serving `running`: everything is checked first (the plan, the
/// new tools against the tools of the other sources, every served tool's role under the next
/// `[authz]`, the skills folder against the next tools); `Err` lists every problem and nothing
/// changed. The plan comes back for the sources to bring what runs in line with it
/// ([`Sources::reload`]: upstreams connected and stopped).
pub fn reload(
    gateway: &Gateway,
    sources: &Sources,
    running: &Config,
    next: &Config,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(Reloaded, Plan), Vec<String>> {
    // `[discovery]` is read only at start (a change is reported as needing a restart), so the
    // plan of a reload does not load its model again: 90 MB read for a gateway that keeps the
    // encoder it started with.
    let mut planned = next.clone();
    planned.discovery = Default::default();
    let plan = Plan::build(&planned, var)?;
    let (prepared, mut problems) = match sources.prepare(next, &plan, Phase::Reload) {
        Ok(prepared) => (Some(prepared), Vec::new()),
        Err(problems) => (None, problems),
    };
    // The skills folder, read again under the next roles: a file that does not load is a
    // problem here (at start it is left out with a warning, since there is nothing to keep).
    let (skills, skill_problems) =
        crate::wiring::load_skills(next.skills.dir.as_deref(), plan.policy.hierarchy());
    let (errors, mut skill_warnings): (Vec<_>, Vec<_>) =
        skill_problems.into_iter().partition(|p| p.is_error());
    problems.extend(errors.iter().map(ToString::to_string));
    let Some(prepared) = prepared.filter(|_| problems.is_empty()) else { return Err(problems) };
    let before = domain_tools(gateway);
    let after = prepared.tools_of(DOMAINS_SOURCE);
    let (replaced, later) = prepared.into_change();
    let change = toolgate_gateway::Change::new()
        .with_sources(replaced)
        .with_policy(plan.policy.clone())
        .with_limits(next.limits.clone())
        .with_skills(skills)
        .with_later(later);
    let applied = gateway
        .apply(change)
        .map_err(|refused| refused.iter().map(ToString::to_string).collect::<Vec<_>>())?;
    skill_warnings.extend(applied.warnings);
    let mut live = Vec::new();
    if applied.policy_changed {
        live.push("[authz]");
    }
    if applied.limits_changed {
        live.push("[limits]");
    }
    if applied.skills_changed {
        live.push("skills");
    }
    let mut report = Reloaded {
        added: after.iter().filter(|n| !before.contains(n)).cloned().collect(),
        removed: before.iter().filter(|n| !after.contains(n)).cloned().collect(),
        kept: after.iter().filter(|n| before.contains(n)).cloned().collect(),
        applied: live,
        need_restart: restart_sections(running, next),
        warnings: plan.warnings.clone(),
        ..Reloaded::default()
    };
    report.warnings.extend(skill_warnings.iter().map(ToString::to_string));
    report.added.sort();
    report.removed.sort();
    report.kept.sort();
    Ok((report, plan))
}

/// The names of the `[[domains]]` tools served now.
fn domain_tools(gateway: &Gateway) -> Vec<String> {
    gateway
        .all_specs()
        .into_iter()
        .filter(|s| gateway.source_of(&s.name).as_deref() == Some(DOMAINS_SOURCE))
        .map(|s| s.name)
        .collect()
}

/// The sections of `next` that differ from `running` and are read only at start.
fn restart_sections(running: &Config, next: &Config) -> Vec<&'static str> {
    let differs = |a: &dyn erased::Section, b: &dyn erased::Section| a.text() != b.text();
    let pairs: [(&'static str, &dyn erased::Section, &dyn erased::Section); 12] = [
        ("[database]", &running.database, &next.database),
        ("[redis]", &running.redis, &next.redis),
        ("[fitness]", &running.fitness, &next.fitness),
        ("[weather]", &running.weather, &next.weather),
        ("[server]", &running.server, &next.server),
        ("[auth]", &running.auth, &next.auth),
        ("[rate_limits]", &running.rate_limits, &next.rate_limits),
        ("[audit]", &running.audit, &next.audit),
        ("[tasks]", &running.tasks, &next.tasks),
        ("[telemetry]", &running.telemetry, &next.telemetry),
        ("[agent]", &running.agent, &next.agent),
        ("[discovery]", &running.discovery, &next.discovery),
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
