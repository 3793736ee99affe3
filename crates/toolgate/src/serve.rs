//! `toolgate serve`: MCP over streamable HTTP (or stdio) for the wired
//! gateway, and the demo set-up (`--demo`): demo users of each role with
//! fresh API keys, demo data, and a client configuration to paste.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use toolgate_core::{Caller, Secret};
use toolgate_mcp::{CredentialHook, Exposure, HttpConfig, HttpState, KeyStore};

use crate::App;

/// The demo users: one per default role.
pub const DEMO_USERS: [(&str, &str); 4] =
    [("visitor", "guest"), ("alice", "member"), ("bob", "manager"), ("carol", "admin")];

/// Pass-through tokens for the in-process fitness API, filed under
/// [`toolgate_fitness::BACKEND_ID`] so only the fitness tools send them: one per user, made
/// on first use, kept in memory and replaced before it expires. A call whose
/// user has a fresh token takes two read locks and copies the token; only
/// when it must be made do concurrent calls of that user wait for the one
/// being made (a per-user lock), so a burst mints one token, not one per
/// call. Deployments with an external fitness API bring their own
/// credentials instead.
#[derive(Debug)]
pub struct FitnessCredentials {
    db: toolgate_fitness_api::Db,
    ttl: Duration,
    users: RwLock<HashMap<String, Arc<UserToken>>>,
}

#[derive(Debug, Default)]
struct UserToken {
    cached: RwLock<Option<CachedToken>>,
    /// Held while a token is being made.
    minting: tokio::sync::Mutex<()>,
}

impl UserToken {
    fn fresh(&self) -> Option<Secret> {
        let cached = self.cached.read().ok()?;
        cached.as_ref().filter(|c| c.refresh_at > Instant::now()).map(|c| c.token.clone())
    }
}

#[derive(Debug)]
struct CachedToken {
    token: Secret,
    /// A tenth of the lifetime before expiry, so a token handed out is
    /// never about to expire under the call that uses it.
    refresh_at: Instant,
}

impl FitnessCredentials {
    /// Tokens of the fitness API whose database is `db`, each valid for `ttl`.
    pub fn new(db: toolgate_fitness_api::Db, ttl: Duration) -> Self {
        Self { db, ttl, users: RwLock::new(HashMap::new()) }
    }

    async fn token_for(&self, user_id: &str) -> Option<Secret> {
        let known = self.users.read().ok()?.get(user_id).cloned();
        let slot = match known {
            Some(slot) => slot,
            None => self.users.write().ok()?.entry(user_id.to_owned()).or_default().clone(),
        };
        if let Some(token) = slot.fresh() {
            return Some(token);
        }
        let _minting = slot.minting.lock().await;
        // Made by the call this one waited for?
        if let Some(token) = slot.fresh() {
            return Some(token);
        }
        // Boxed: the database call's future is large and this path is rare;
        // every call's future stays small.
        match Box::pin(toolgate_fitness_api::issue_expiring_token(&self.db, user_id, self.ttl)).await {
            Ok(issued) => {
                let token = Secret::new(issued.token);
                let refresh_at = Instant::now() + self.ttl.mul_f64(0.9);
                if let Ok(mut cached) = slot.cached.write() {
                    *cached = Some(CachedToken { token: token.clone(), refresh_at });
                }
                Some(token)
            }
            Err(error) => {
                tracing::warn!(%error, "no fitness token for a caller");
                None
            }
        }
    }
}

#[async_trait::async_trait]
impl CredentialHook for FitnessCredentials {
    async fn credentials(&self, mut caller: Caller) -> Caller {
        // Filed for the fitness API only: no other backend's tools are ever given it.
        if !caller.credentials.contains(toolgate_fitness::BACKEND_ID)
            && let Some(token) = self.token_for(&caller.user_id).await
        {
            caller.credentials.insert(toolgate_fitness::BACKEND_ID, token);
        }
        caller
    }
}

/// A demo key made at start.
#[derive(Debug)]
pub struct DemoKey {
    /// The user.
    pub user_id: String,
    /// The role.
    pub role: String,
    /// The key (shown once).
    pub key: Secret,
}

/// Seed the demo data and make fresh keys for the demo users, revoking their old ones.
pub async fn demo_setup(app: &App, keys: &KeyStore) -> Result<Vec<DemoKey>> {
    toolgate_travel::seed_demo(&app.travel).await.context("seeding the travel demo data")?;
    if let Some(db) = &app.fitness_db {
        let today = chrono::Utc::now().date_naive();
        for (user, _) in DEMO_USERS {
            let _ = toolgate_fitness_api::create_user(db, user).await;
            toolgate_fitness_api::seed_demo(db, user, today)
                .await
                .context("seeding the fitness demo data")?;
        }
    }
    for old in keys.list().await? {
        if old.revoked_at.is_none() && DEMO_USERS.iter().any(|(user, _)| *user == old.user_id) {
            keys.revoke(&old.id).await?;
        }
    }
    let mut made = Vec::new();
    for (user, role) in DEMO_USERS {
        let created = keys.create(user, role).await?;
        made.push(DemoKey { user_id: user.into(), role: role.into(), key: created.key });
    }
    Ok(made)
}

/// The HTTP state for a wired app: credentials, the audit trail at
/// `/api/audit`, the transport's rate counters, and the `/readyz` probes
/// (the database with its audit table, Redis when rate limits use it).
pub fn http_state(app: &App, keys: KeyStore, exposure: Exposure, config: HttpConfig) -> HttpState {
    let mut state = HttpState::new(app.gateway.clone(), keys)
        .with_exposure(exposure)
        .with_config(config)
        .with_federation(app.federation.clone())
        .with_resources(app.resources.clone());
    if let Some(db) = &app.fitness_db {
        state = state.with_credentials(Arc::new(FitnessCredentials::new(db.clone(), app.fitness_token_ttl)));
    }
    if let Some(verifier) = &app.oauth {
        state = state
            .with_authenticator(Arc::new(toolgate_mcp::identity::OAuthAuthenticator::new(verifier.clone())));
    }
    if let Some(audit) = &app.audit {
        state = state
            .with_audit(audit.clone())
            .with_probe(Arc::new(DatabaseProbe(audit.clone())))
            .with_metrics_source(Arc::new(AuditPoolMetrics(audit.clone())));
    }
    if let Some(store) = &app.rate_store {
        state = state.with_rate_store(store.clone());
    }
    if let Some(redis) = &app.redis_rates {
        state = state.with_probe(Arc::new(RedisProbe(redis.clone())));
    }
    state
}

/// `/readyz`: the database answers and the audit migrations ran.
#[derive(Debug)]
struct DatabaseProbe(toolgate_fleet::SqlAudit);

#[async_trait::async_trait]
impl toolgate_mcp::Probe for DatabaseProbe {
    fn name(&self) -> &str {
        "database"
    }

    async fn check(&self) -> Result<(), String> {
        self.0.ready().await.map_err(|error| {
            tracing::warn!(%error, "readiness: the database does not answer");
            "the database does not answer or its tables are missing".to_owned()
        })
    }
}

/// `/metrics`: the process's one connection pool (every store shares it).
#[derive(Debug)]
struct AuditPoolMetrics(toolgate_fleet::SqlAudit);

impl toolgate_mcp::MetricsSource for AuditPoolMetrics {
    fn render(&self, out: &mut String) {
        let (open, idle, max) = self.0.pool_use();
        out.push_str("# HELP toolgate_db_pool_connections Database connections of a pool, by state.\n");
        out.push_str("# TYPE toolgate_db_pool_connections gauge\n");
        out.push_str(&format!(
            "toolgate_db_pool_connections{{pool=\"main\",state=\"in_use\"}} {}\n",
            open.saturating_sub(idle)
        ));
        out.push_str(&format!("toolgate_db_pool_connections{{pool=\"main\",state=\"idle\"}} {idle}\n"));
        out.push_str("# HELP toolgate_db_pool_max_connections Most connections a pool may open.\n");
        out.push_str("# TYPE toolgate_db_pool_max_connections gauge\n");
        out.push_str(&format!("toolgate_db_pool_max_connections{{pool=\"main\"}} {max}\n"));
    }
}

/// `/readyz`: Redis (the rate-limit counters) answers.
#[derive(Debug)]
struct RedisProbe(Arc<toolgate_fleet::RedisRateStore>);

#[async_trait::async_trait]
impl toolgate_mcp::Probe for RedisProbe {
    fn name(&self) -> &str {
        "redis"
    }

    async fn check(&self) -> Result<(), String> {
        self.0.ping().await.map_err(|error| error.to_string())
    }
}

/// Retention: every hour, delete audit records older than `days`.
pub fn spawn_audit_retention(audit: toolgate_fleet::SqlAudit, days: u64) -> tokio::task::JoinHandle<()> {
    let age = std::time::Duration::from_secs(days.saturating_mul(86_400));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            tick.tick().await;
            match audit.prune_older_than(age).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, days, "audit retention pruned old records"),
                Err(error) => tracing::warn!(%error, "audit retention could not prune"),
            }
        }
    })
}

/// The text printed at a demo start: keys, and a client configuration.
pub fn demo_banner(url: &str, keys: &[DemoKey]) -> String {
    let mut out = format!("toolgate demo: MCP at {url}/mcp, web page at {url}/\n\nAPI keys (shown once):\n");
    for k in keys {
        out.push_str(&format!("  {:<8} {:<8} {}\n", k.user_id, k.role, k.key.expose()));
    }
    let member = keys.iter().find(|k| k.role == "member").or(keys.first());
    if let Some(member) = member {
        let config = serde_json::json!({
            "mcpServers": {
                "toolgate": {
                    "type": "http",
                    "url": format!("{url}/mcp"),
                    "headers": {"Authorization": format!("Bearer {}", member.key.expose())}
                }
            }
        });
        out.push_str(&format!(
            "\nMCP client configuration (as {}):\n{}\n",
            member.user_id,
            serde_json::to_string_pretty(&config).unwrap_or_default()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitness_token(caller: Caller) -> Option<Secret> {
        assert_eq!(caller.credentials.backends().collect::<Vec<_>>(), [toolgate_fitness::BACKEND_ID]);
        caller.credentials.get(toolgate_fitness::BACKEND_ID).cloned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_first_calls_share_one_expiring_token() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("fit.db").display());
        let db = toolgate_fitness_api::connect(&url).await.unwrap();
        let ttl = Duration::from_secs(600);
        let credentials = Arc::new(FitnessCredentials::new(db.clone(), ttl));
        let calls: Vec<_> = (0..32)
            .map(|_| {
                let credentials = credentials.clone();
                tokio::spawn(async move {
                    fitness_token(credentials.credentials(Caller::new("racer", "member")).await)
                })
            })
            .collect();
        let mut tokens = Vec::new();
        for call in calls {
            tokens.push(call.await.unwrap().expect("a token").expose().to_owned());
        }
        assert!(tokens.iter().all(|t| *t == tokens[0]), "one token for one user");
        let raw = sqlx::SqlitePool::connect(&url).await.unwrap();
        let (rows, expires_at): (i64, Option<i64>) =
            sqlx::query_as("SELECT count(*), max(expires_at) FROM fit_tokens WHERE user_id = 'racer'")
                .fetch_one(&raw)
                .await
                .unwrap();
        assert_eq!(rows, 1, "one token row for 32 concurrent first calls");
        let expected = chrono::Utc::now().timestamp() + 600;
        assert!(expires_at.is_some_and(|e| (expected - 5..=expected).contains(&e)), "{expires_at:?}");
        // Another user gets their own token.
        let other = fitness_token(credentials.credentials(Caller::new("other", "member")).await).unwrap();
        assert_ne!(other.expose(), tokens[0]);
    }
}
