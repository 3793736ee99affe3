//! One checked plan from the configuration: everything `toolgate.toml` says that can be
//! judged without a database or a network, resolved and checked in one pure step that
//! `toolgate check` and `toolgate serve` both take, so that `check` passes exactly the
//! configurations `serve` starts with. Every problem is collected, not just the first.

use toolgate_authz::Policy;
use toolgate_mcp_upstream::UpstreamConfig;

use crate::config::Config;
use crate::domains::Declared;
use crate::wiring::{declared_domains, oauth_verifier, read_ca_file};

/// A configuration, checked: what serving it is built from.
#[derive(Debug)]
pub struct Plan {
    /// The `[tls] ca_file` PEM text.
    pub ca_pem: Option<String>,
    /// The `[[domains]]`, their tables checked and their credentials resolved.
    pub domains: Vec<Declared>,
    /// Roles, overrides and toolsets.
    pub policy: Policy,
    /// The `[[upstreams]]`, resolved (secrets from the environment, token sources), each
    /// role in the hierarchy.
    pub upstreams: Vec<UpstreamConfig>,
    /// The `[auth.oauth]` verifier.
    pub oauth: Option<toolgate_oauth::resource::Verifier>,
    /// The `[tasks]` limits, each within its bounds.
    pub tasks: toolgate_mcp::TaskLimits,
    /// The `[discovery] model`, loaded.
    pub encoder: Option<std::sync::Arc<toolgate_embed::Encoder>>,
    /// What will work but not as the operator may think (a domain whose every call will be
    /// refused, a resource host the Host check refuses).
    pub warnings: Vec<String>,
}

impl Plan {
    /// Check `config`, reading the environment through `var`; every problem at once.
    pub fn build(config: &Config, var: &dyn Fn(&str) -> Option<String>) -> Result<Self, Vec<String>> {
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        let ca_pem = read_ca_file(config).map_err(|e| problems.push(format!("{e:#}"))).ok().flatten();
        let domains = declared_domains(config, ca_pem.as_deref(), var)
            .map_err(|e| problems.push(format!("{e:#}")))
            .unwrap_or_default();
        for d in &domains {
            warnings.extend(d.credential_gap());
            if d.options.auth.kind() == "token_exchange" && config.auth.oauth.is_none() {
                warnings.push(format!(
                    "domain `{}`: auth is token_exchange, but no [auth.oauth] is configured, so no caller has a sign-in to exchange and every call is refused with PERMISSION_DENIED",
                    d.name
                ));
            }
        }
        let policy = Policy::from_config(config.authz.clone())
            .map_err(|e| problems.push(format!("[authz]: {e}")))
            .ok();
        let tasks = config.tasks.limits().map_err(|found| problems.extend(found)).unwrap_or_default();
        let mut upstreams = Vec::with_capacity(config.upstreams.len());
        for entry in &config.upstreams {
            match entry.resolve_with(ca_pem.as_deref(), var) {
                Ok(upstream) => upstreams.push(upstream),
                Err(e) => problems.push(format!("in [[upstreams]]: {e:#}")),
            }
        }
        for upstream in &mut upstreams {
            upstream.ca_bundle_pem.clone_from(&ca_pem);
        }
        for upstream in upstreams.iter().filter(|u| !u.prefix) {
            warnings.push(format!(
                "upstream `{}` has prefix = false: its tools and prompts keep their own names, which are known only once it answers; `serve` refuses to start when one is already another source's (a tool of toolgate or of another upstream, or a prompt)",
                upstream.name
            ));
        }
        if let Some(tool) = &config.weather.upstream_tool
            && upstreams.len() == config.upstreams.len()
            && let Err(e) = crate::upstreams::check_weather_tool(tool, &upstreams)
        {
            problems.push(format!("{e:#}"));
        }
        let mut oauth = None;
        if let Some(policy) = &policy {
            for upstream in &upstreams {
                if policy.hierarchy().rank(&upstream.required_role).is_none() {
                    problems.push(format!(
                        "in [[upstreams]]: `{}` requires role `{}`, which is not in [authz] roles",
                        upstream.name, upstream.required_role
                    ));
                }
            }
            match oauth_verifier(config, policy, ca_pem.as_deref(), var) {
                Ok(verifier) => oauth = verifier,
                Err(e) => problems.push(format!("{e:#}")),
            }
        }
        warnings
            .extend(config.auth.oauth.as_ref().and_then(|s| s.host_warning(&config.server.allowed_hosts)));
        let encoder = config.discovery.model.as_ref().and_then(|dir| {
            toolgate_embed::Encoder::load(dir)
                .map(std::sync::Arc::new)
                .map_err(|e| problems.push(format!("in [discovery] model ({}): {e}", dir.display())))
                .ok()
        });
        match policy {
            Some(policy) if problems.is_empty() => {
                Ok(Self { ca_pem, domains, policy, upstreams, oauth, tasks, encoder, warnings })
            }
            _ => Err(problems),
        }
    }
}

/// The one message `serve` stops with when the plan has problems.
pub fn refusal(problems: &[String]) -> anyhow::Error {
    anyhow::anyhow!(
        "the configuration has {} problem(s); nothing was started:\n  {}",
        problems.len(),
        problems.join("\n  ")
    )
}
