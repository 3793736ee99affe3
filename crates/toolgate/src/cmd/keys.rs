//! `toolgate keys`: create, list, change and revoke API keys (stored
//! hashed). Needs only the key store, not the whole app. Changes and
//! revocations reach every running instance within about a second (see
//! `toolgate_mcp::KeyStore`) and go on the audit trail.

use std::process::ExitCode;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use toolgate::Config;

use super::check_role;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Action {
    /// Make a key for a user and role; the key is printed once.
    Create {
        /// The user the key acts for.
        #[arg(long)]
        user: String,
        /// The role it carries.
        #[arg(long)]
        role: String,
        /// A toolset of `[authz.toolsets]` that narrows what the key sees
        /// (`read_only` always exists: no write tool anywhere).
        #[arg(long)]
        toolset: Option<String>,
        /// Only tools of these domains (comma-separated), on every surface.
        #[arg(long, value_delimiter = ',')]
        domains: Option<Vec<String>>,
    },
    /// List keys (ids, users, roles; never the keys).
    List,
    /// Revoke a key by its id.
    Revoke {
        /// The key's id, from `keys list`.
        id: String,
    },
    /// Change a key's role or scope; every running instance applies it
    /// within about a second, no restart.
    Update {
        /// The key's id, from `keys list`.
        id: String,
        /// The new role.
        #[arg(long)]
        role: Option<String>,
        /// The new toolset (of `[authz.toolsets]`, or `read_only`).
        #[arg(long, conflicts_with = "no_toolset")]
        toolset: Option<String>,
        /// Remove the key's toolset.
        #[arg(long)]
        no_toolset: bool,
        /// Only tools of these domains (comma-separated).
        #[arg(long, value_delimiter = ',', conflicts_with = "all_domains")]
        domains: Option<Vec<String>>,
        /// Every domain again.
        #[arg(long)]
        all_domains: bool,
    },
}

/// A toolset the policy knows, or an error that says where to define it.
fn check_toolset(policy: &toolgate_authz::Policy, toolset: Option<&String>) -> Result<()> {
    if let Some(name) = toolset
        && policy.toolset(name).is_none()
    {
        anyhow::bail!("no toolset `{name}`; define it under [authz.toolsets] or use `read_only`");
    }
    Ok(())
}

fn clean_domains(domains: Vec<String>) -> Vec<String> {
    domains.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// Put a key command on the audit trail (unless `[audit] enabled = false`):
/// who ran it is the operating-system user, the key is named by its id.
async fn audit(config: &Config, db: toolgate_db::Db, tool: &str, key_id: &str, params: Value) -> Result<()> {
    if !config.audit.enabled {
        return Ok(());
    }
    let trail = toolgate_fleet::SqlAudit::open(db, toolgate::wiring::instance_name(config))
        .await
        .context("opening the audit trail")?;
    let operator = std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "operator".into());
    let record = toolgate_gateway::AuditRecord {
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        user_id: format!("cli:{operator}"),
        role: "(operator)".into(),
        key_id: Some(key_id.to_owned()),
        tool: tool.to_owned(),
        params,
        outcome: "OK".into(),
        ids: json!({ "key_id": key_id }),
        trace_id: "cli".into(),
    };
    trail.append(&record).await.context("writing the audit trail")?;
    Ok(())
}

pub(crate) async fn run(action: Action, config: &Config) -> Result<ExitCode> {
    let db = toolgate::wiring::connect_db(&config.database).await?;
    let store = toolgate_mcp::KeyStore::open(db.clone()).await?;
    match action {
        Action::Create { user, role, toolset, domains } => {
            let policy = toolgate_authz::Policy::from_config(config.authz.clone())?;
            check_role(policy.hierarchy(), &role, "")?;
            check_toolset(&policy, toolset.as_ref())?;
            let domains = domains.map(clean_domains);
            let scope = toolgate_mcp::KeyScope { toolset, domains };
            let created = store.create_scoped(&user, &role, &scope).await?;
            outln!("{}\t{}", created.id, created.key.expose());
            eprintln!("this key is shown once; it is stored only as a hash");
        }
        Action::List => {
            for key in store.list().await? {
                let state = if key.revoked_at.is_some() { "revoked" } else { "active" };
                let scope = match (&key.scope.toolset, &key.scope.domains) {
                    (None, None) => "-".to_owned(),
                    (toolset, domains) => format!(
                        "{}{}",
                        toolset.as_deref().map(|t| format!("toolset={t} ")).unwrap_or_default(),
                        domains.as_ref().map(|d| format!("domains={}", d.join(","))).unwrap_or_default()
                    ),
                };
                outln!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    key.id,
                    key.user_id,
                    key.role,
                    key.created_at,
                    state,
                    scope.trim_end()
                );
            }
        }
        Action::Revoke { id } => {
            if !store.revoke(&id).await? {
                eprintln!("no active key `{id}`");
                return Ok(ExitCode::from(1));
            }
            outln!("revoked {id}");
            audit(config, db, "keys.revoke", &id, json!({})).await?;
        }
        Action::Update { id, role, toolset, no_toolset, domains, all_domains } => {
            let policy = toolgate_authz::Policy::from_config(config.authz.clone())?;
            if let Some(role) = &role {
                check_role(policy.hierarchy(), role, "")?;
            }
            check_toolset(&policy, toolset.as_ref())?;
            let change = toolgate_mcp::KeyChange {
                role,
                toolset: if no_toolset { Some(None) } else { toolset.map(Some) },
                domains: if all_domains { Some(None) } else { domains.map(|d| Some(clean_domains(d))) },
            };
            if change.is_empty() {
                anyhow::bail!(
                    "nothing to change: give --role, --toolset/--no-toolset or --domains/--all-domains"
                );
            }
            let Some((before, after)) = store.update(&id, &change).await? else {
                eprintln!("no active key `{id}`");
                return Ok(ExitCode::from(1));
            };
            let changed = after.changes_from(&before);
            outln!("updated {id}: {changed}");
            audit(config, db, "keys.update", &id, changed).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
