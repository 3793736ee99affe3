//! `toolgate keys`: create, list and revoke API keys (stored hashed). Needs
//! only the key store, not the whole app.

use std::process::ExitCode;

use anyhow::Result;
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
}

pub(crate) async fn run(action: Action, config: &Config) -> Result<ExitCode> {
    let db = toolgate::wiring::connect_db(&config.database).await?;
    let store = mcp_server::KeyStore::open(db).await?;
    match action {
        Action::Create { user, role, toolset, domains } => {
            let policy = authz::Policy::from_config(config.authz.clone())?;
            check_role(policy.hierarchy(), &role, "")?;
            if let Some(name) = &toolset
                && policy.toolset(name).is_none()
            {
                anyhow::bail!("no toolset `{name}`; define it under [authz.toolsets] or use `read_only`");
            }
            let domains = domains
                .map(|d| d.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect());
            let scope = mcp_server::KeyScope { toolset, domains };
            let created = store.create_scoped(&user, &role, &scope).await?;
            println!("{}\t{}", created.id, created.key.expose());
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
                println!(
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
            println!("revoked {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
