//! `toolgate check`: validate the configuration and every route table without serving or
//! touching a database (for the CI of teams that keep their tables in git). Exit 0 when all
//! is well, 1 with every problem listed. The checks are `serve`'s own
//! ([`toolgate::plan::Plan`]), so `check` passes exactly what `serve` starts with.

use std::process::ExitCode;

use anyhow::Result;
use toolgate::plan::Plan;
use toolgate::wiring::{fitness_domain, load_skills};

use super::Globals;

pub(crate) fn run(globals: &Globals) -> Result<ExitCode> {
    let mut problems: Vec<String> = Vec::new();
    let mut facts: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    match globals.load() {
        Err(e) => problems.push(format!("configuration: {e:#}")),
        Ok(config) => match Plan::build(&config, &|name| std::env::var(name).ok()) {
            Err(found) => problems.extend(found),
            Ok(plan) => {
                warnings.extend(plan.warnings.iter().cloned());
                let mut tools = Vec::new();
                for d in &plan.domains {
                    facts.push(format!("domain `{}`: {} table(s) at {}", d.name, d.tables.len(), d.base_url));
                    tools.extend(d.tools(|s| s).map_err(|p| problems.push(p)).unwrap_or_default());
                }
                // One tool per table: the declared domains' first, then the shipped fitness
                // ones, which go through the same checks (against a placeholder URL) and are
                // counted apart.
                let declared = tools.len();
                let base = config.fitness.base_url.clone().unwrap_or_else(|| "http://127.0.0.1:9".into());
                match fitness_domain(&config, &base, plan.ca_pem.as_deref()) {
                    Ok(d) => tools.extend(
                        d.tools(toolgate_fitness::with_examples)
                            .map_err(|p| problems.push(p))
                            .unwrap_or_default(),
                    ),
                    Err(e) => problems.push(format!("{e:#}")),
                }
                let shipped = tools.len() - declared;
                for upstream in &plan.upstreams {
                    facts.push(format!("upstream `{}` (role {})", upstream.name, upstream.required_role));
                }
                if let Some(v) = &plan.oauth {
                    facts.push(format!(
                        "sign-in: tokens of {} for {}",
                        v.config().issuer,
                        v.config().resource
                    ));
                }
                if let (Some(encoder), Some(dir)) = (&plan.encoder, &config.discovery.model) {
                    facts.push(format!(
                        "discovery ranks by meaning too ({}, {} dimensions)",
                        dir.display(),
                        encoder.dimension()
                    ));
                }
                let (skills, skill_problems) =
                    load_skills(config.skills.dir.as_deref(), plan.policy.hierarchy());
                problems.extend(skill_problems.iter().map(ToString::to_string));
                facts.push(format!("{} skill(s)", skills.len()));
                // The gateway's own registration checks: unique names, specs, result templates.
                let count = tools.len();
                let names = plan.upstreams.iter().map(|u| u.name.clone());
                match toolgate_gateway::Gateway::builder().policy(plan.policy).tools(tools).later_namespaces(names).build() {
                    Ok(_) => facts.push(format!(
                        "{count} HTTP tool(s) registered ({declared} from the domains' tables, {shipped} from the shipped fitness tables)"
                    )),
                    Err(e) => problems.push(format!("{e}")),
                }
            }
        },
    }
    if problems.is_empty() {
        outln!("ok: {}", facts.join("; "));
        for w in &warnings {
            outln!("warning: {w}");
        }
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("{} problem(s):", problems.len());
        for p in &problems {
            outln!("- {p}");
        }
        Ok(ExitCode::from(1))
    }
}
