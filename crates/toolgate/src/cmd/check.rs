//! `toolgate check`: validate the configuration and every route table without serving or
//! touching a database (for the CI of teams that keep their tables in git). Exit 0 when all
//! is well, 1 with every problem listed.

use std::process::ExitCode;

use anyhow::Result;
use toolgate::wiring::{declared_domains, fitness_domain, load_skills, oauth_verifier, read_ca_file};

use super::Globals;

pub(crate) fn run(globals: &Globals) -> Result<ExitCode> {
    let mut problems: Vec<String> = Vec::new();
    let mut facts: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    match globals.load() {
        Err(e) => problems.push(format!("configuration: {e:#}")),
        Ok(config) => {
            let policy = authz::Policy::from_config(config.authz.clone())
                .map_err(|e| problems.push(format!("[authz]: {e}")))
                .ok();
            let ca = read_ca_file(&config).map_err(|e| problems.push(format!("{e:#}"))).ok().flatten();
            let mut tools = Vec::new();
            match declared_domains(&config, ca.as_deref(), &|name| std::env::var(name).ok()) {
                Err(e) => problems.push(format!("{e:#}")),
                Ok(domains) => {
                    for d in &domains {
                        warnings.extend(d.credential_gap());
                        if d.options.auth.kind() == "token_exchange" && config.auth.oauth.is_none() {
                            warnings.push(format!(
                                "domain `{}`: auth is token_exchange, but no [auth.oauth] is configured, so no caller has a sign-in to exchange and every call is refused with PERMISSION_DENIED",
                                d.name
                            ));
                        }
                        facts.push(format!(
                            "domain `{}`: {} table(s) at {}",
                            d.name,
                            d.tables.len(),
                            d.base_url
                        ));
                        tools.extend(d.tools(|s| s).map_err(|p| problems.push(p)).unwrap_or_default());
                    }
                }
            }
            // One tool per table: the declared domains' first, then the shipped fitness ones,
            // which go through the same checks (against a placeholder URL) and are counted apart.
            let declared = tools.len();
            let base = config.fitness.base_url.clone().unwrap_or_else(|| "http://127.0.0.1:9".into());
            match fitness_domain(&config, &base, ca.as_deref()) {
                Ok(d) => tools.extend(
                    d.tools(fitness::with_examples).map_err(|p| problems.push(p)).unwrap_or_default(),
                ),
                Err(e) => problems.push(format!("{e:#}")),
            }
            let shipped = tools.len() - declared;
            if let Some(policy) = &policy {
                match oauth_verifier(&config, policy, ca.as_deref(), &|name| std::env::var(name).ok()) {
                    Ok(Some(v)) => {
                        facts.push(format!(
                            "sign-in: tokens of {} for {}",
                            v.config().issuer,
                            v.config().resource
                        ));
                        let section = config.auth.oauth.as_ref();
                        warnings.extend(section.and_then(|s| s.host_warning(&config.server.allowed_hosts)));
                    }
                    Ok(None) => {}
                    Err(e) => problems.push(format!("{e:#}")),
                }
            }
            if let Some(policy) = policy {
                let (skills, skill_problems) = load_skills(config.skills.dir.as_deref(), policy.hierarchy());
                problems.extend(skill_problems.iter().map(ToString::to_string));
                facts.push(format!("{} skill(s)", skills.len()));
                // The gateway's own registration checks: unique names, specs, result templates.
                let count = tools.len();
                match gateway::Gateway::builder().policy(policy).tools(tools).build() {
                    Ok(_) => facts.push(format!(
                        "{count} HTTP tool(s) registered ({declared} from the domains' tables, {shipped} from the shipped fitness tables)"
                    )),
                    Err(e) => problems.push(format!("{e}")),
                }
            }
        }
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
