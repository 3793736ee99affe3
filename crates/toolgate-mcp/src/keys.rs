//! API keys: [`KeyStore`] makes, lists, revokes and verifies bearer keys,
//! storing only a digest of each.
//!
//! # Why SHA-256 and not a password hash
//!
//! A key is `tg_` followed by 64 hex digits: 256 bits from the operating
//! system's CSPRNG (through `rand`'s thread RNG). Password hashes (argon2,
//! bcrypt, scrypt) exist to slow down guessing of *low-entropy* secrets;
//! nobody can enumerate 2^256 keys, slow hash or not, so a stolen table of
//! SHA-256 digests reveals no key. A fast digest also lets the digest itself
//! be the lookup index, so verifying a key costs one indexed query (and
//! nothing on a cache hit) instead of tens of milliseconds of deliberate work
//! on every HTTP request. A server-side pepper (HMAC) would add nothing
//! against a 256-bit secret and one more secret to keep and rotate, so there
//! is none. This is the scheme of GitHub's and Stripe's tokens.
//!
//! The digest is domain-separated (`toolgate-api-key:v1:` prefix), the
//! stored digest is compared with the computed one in constant time, and
//! anything that is not shaped like a key is refused before any hashing or
//! query. Keys are never logged: [`CreatedKey::key`] is a
//! [`toolgate_core::Secret`], whose `Debug` prints `[redacted]`.
//!
//! # The cache, and why a hit hashes nothing
//!
//! Every HTTP request is checked, so a cache hit must cost next to nothing:
//! the cache is a read-mostly map under an `RwLock` (readers never wait for
//! each other; only a miss, once per key per TTL, takes the write side),
//! indexed by the process-keyed SipHash of the bearer key that the map's
//! `RandomState` computes anyway, with no SHA-256, no hex string and no copy
//! of the verified caller (the entry is shared, an `Arc`). The entry keeps
//! the key itself and a hit compares it with the presented one in constant
//! time, so a colliding index is a miss, never someone else's identity. The
//! plaintext stays in this process's memory only while the key is in use:
//! expired entries are swept on every miss, a revocation drops its entries
//! at once, and keys never leave the process (they were in the request
//! anyway).
//!
//! # Revocation
//!
//! Verified keys are cached in memory for a short time (1 s by default,
//! [`KeyStore::with_cache_ttl`]). A revocation made through this store takes
//! effect at once in this process and is announced on
//! [`KeyStore::revocations`] (the HTTP server ends the key's `/trace`
//! streams and MCP sessions on it). On PostgreSQL, `revoke` also sends
//! `NOTIFY toolgate_key_revoked` with the key id, which
//! [`KeyStore::watch_revocations`] of every other instance hears. Because a
//! notification can be lost (a dropped listener connection) and SQLite has
//! none, the watcher also polls for keys revoked since its last look every
//! [`REVOCATION_POLL`]; with the 1 s cache that bounds the delay of a
//! revocation made by another process (`toolgate keys revoke`) to about 1 s.
//!
//! A change of role or scope (`toolgate keys update`, [`KeyStore::update`])
//! travels the same way, on `toolgate_key_changed` (see `keys/update.rs`).

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use rand::RngCore;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;
use toolgate_core::{Caller, Secret};
use toolgate_db::{Db, DbConfig, MigrationSet};

use crate::error::{Error, Result};

/// The table that records which of this crate's migrations ran.
pub const MIGRATIONS_TABLE: &str = "_toolgate_keys_migrations";

/// Every key starts with this.
pub const KEY_PREFIX: &str = "tg_";

const KEY_BYTES: usize = 32;
const DIGEST_DOMAIN: &[u8] = b"toolgate-api-key:v1:";
const MAX_CACHED: usize = 10_000;
const MAX_NAME_LEN: usize = 200;
/// The PostgreSQL channel on which `revoke` announces a revoked key id.
const REVOKED_CHANNEL: &str = "toolgate_key_revoked";

/// How often [`KeyStore::watch_revocations`] looks for keys revoked elsewhere
/// (the fallback for lost notifications, and the only way on SQLite).
pub const REVOCATION_POLL: Duration = Duration::from_millis(500);

/// Run `$body` with `$pool` bound to the concrete pool of the store's
/// backend (`toolgate_db::on_pool!`: a dead connection makes the body run again on a
/// fresh one).
macro_rules! dispatch {
    ($store:expr, |$pool:ident| $body:expr) => {
        ::toolgate_db::on_pool!($store.db, Error, |$pool| $body)
    };
}

// After the macro, which it uses.
mod update;
mod watch;

pub use update::KeyChange;

impl toolgate_db::Classify for Error {
    fn database_error(&self) -> Option<&sqlx::Error> {
        match self {
            Error::Database(e) => Some(e),
            Error::Store(e) => e.database_error(),
            _ => None,
        }
    }
}

/// A key that was just made. The plaintext is shown once: only its digest is stored.
#[derive(Debug, Clone)]
pub struct CreatedKey {
    /// The key's public id (for `list` and `revoke`), e.g. `key_4f1c2a9b03d7e611`.
    pub id: String,
    /// The bearer key itself, `tg_` + 64 hex digits. Show it to the user once, never log it.
    pub key: Secret,
}

/// What a key may see: a named toolset and a set of domains, each
/// narrowing every surface exactly as the server-wide scoped exposure does.
/// The default narrows nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct KeyScope {
    /// A toolset of the deployment's policy (e.g. `read_only`).
    pub toolset: Option<String>,
    /// Only tools of these domains; `None` for every domain.
    pub domains: Option<Vec<String>>,
}

impl KeyScope {
    fn apply(&self, mut caller: Caller) -> Caller {
        caller.toolset = self.toolset.clone();
        caller.domains = self.domains.clone();
        caller
    }

    fn domains_text(&self) -> Option<String> {
        self.domains.as_ref().map(|d| d.join(","))
    }

    fn from_columns(toolset: Option<String>, domains: Option<String>) -> Self {
        let domains = domains.map(|d| d.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect());
        Self { toolset, domains }
    }
}

/// A stored key as listed: no secret, no digest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeyInfo {
    /// The key's public id.
    pub id: String,
    /// The user the key acts for.
    pub user_id: String,
    /// The role it carries.
    pub role: String,
    /// What it may see.
    pub scope: KeyScope,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
}

impl KeyInfo {
    /// What a change made of `before`: `{"role": {"from": .., "to": ..}, ...}` for the
    /// role and scope fields that differ (what the audit trail records of a key change).
    pub fn changes_from(&self, before: &KeyInfo) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        let mut field = |name: &str, from: serde_json::Value, to: serde_json::Value| {
            if from != to {
                out.insert(name.into(), serde_json::json!({ "from": from, "to": to }));
            }
        };
        field("role", serde_json::json!(before.role), serde_json::json!(self.role));
        field("toolset", serde_json::json!(before.scope.toolset), serde_json::json!(self.scope.toolset));
        field("domains", serde_json::json!(before.scope.domains), serde_json::json!(self.scope.domains));
        serde_json::Value::Object(out)
    }
}

/// Who a valid key belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedKey {
    /// The key's public id (safe to log).
    pub id: String,
    /// The caller the key acts as (user, role and the key's scope; nothing else set).
    pub caller: Caller,
}

/// A verified key in the cache: the key itself (compared in constant time
/// on every hit), who it is, and since when it is trusted.
struct Cached {
    key: Secret,
    verified: Arc<VerifiedKey>,
    at: Instant,
}

/// The cache: entries by the keyed hash of the bearer key (see the module docs).
#[derive(Default)]
struct KeyCache {
    hasher: RandomState,
    entries: RwLock<Entries>,
}

#[derive(Default)]
struct Entries {
    by_slot: HashMap<u64, Cached>,
    /// When expired entries were last dropped (at most once per TTL, so a
    /// miss costs O(1) amortized however many keys are cached).
    swept: Option<Instant>,
}

/// The API key store over SQLite or PostgreSQL (table `toolgate_api_keys`).
/// Cheap to clone; clones share the pool and the cache.
#[derive(Clone)]
pub struct KeyStore {
    db: Db,
    cache: Arc<KeyCache>,
    cache_ttl: Duration,
    revoked: broadcast::Sender<String>,
}

impl fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyStore")
            .field("backend", &self.db.backend().as_str())
            .field("cache_ttl", &self.cache_ttl)
            .finish()
    }
}

impl KeyStore {
    /// Connect to `url` and apply the key store's migrations.
    ///
    /// `sqlite:path/to/file.db` (created when missing, WAL journal),
    /// `sqlite::memory:` (one connection, for tests), or
    /// `postgres://user@host:port/db`.
    pub async fn connect(url: &str) -> Result<Self> {
        let db = Db::connect(&DbConfig::new(url)).await.map_err(|e| match e {
            toolgate_db::Error::UnsupportedUrl { .. } => Error::UnsupportedUrl,
            other => Error::Store(other),
        })?;
        Self::open(db).await
    }

    /// How long a verified key is trusted by default: the longest a key
    /// revoked by another process still works when no notification arrives.
    pub const DEFAULT_CACHE_TTL: Duration = Duration::from_millis(500);

    /// The key store on an open pool (shared with the process's other
    /// stores): applies the key store's migrations.
    pub async fn open(db: Db) -> Result<Self> {
        let (revoked, _) = broadcast::channel(256);
        let store = Self { db, cache: Arc::default(), cache_ttl: Self::DEFAULT_CACHE_TTL, revoked };
        store.migrate().await?;
        Ok(store)
    }

    /// How long a verified key is trusted without asking the database again
    /// ([`Self::DEFAULT_CACHE_TTL`] unless set; `Duration::ZERO` turns the cache off). It bounds how long a
    /// key revoked by another process still works when no notification arrives.
    pub fn with_cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// Apply the migrations (idempotent; [`KeyStore::connect`] already did).
    pub async fn migrate(&self) -> Result<()> {
        self.db
            .migrate(MigrationSet {
                owner: "toolgate-mcp keys",
                table: MIGRATIONS_TABLE,
                sqlite: sqlx::migrate!("./migrations"),
                postgres: sqlx::migrate!("./migrations"),
            })
            .await?;
        Ok(())
    }

    /// Make a key for `user_id` with `role`. The plaintext is in the answer
    /// and nowhere else. The role is not checked against a hierarchy here:
    /// the caller (the CLI) knows the policy.
    pub async fn create(&self, user_id: &str, role: &str) -> Result<CreatedKey> {
        self.create_scoped(user_id, role, &KeyScope::default()).await
    }

    /// [`create`](Self::create) with a scope: the key's caller sees only the
    /// toolset's tools of the scope's domains (the toolset and domain names
    /// are checked by the caller, which knows the policy).
    pub async fn create_scoped(&self, user_id: &str, role: &str, scope: &KeyScope) -> Result<CreatedKey> {
        check_name("user id", user_id)?;
        check_name("role", role)?;
        check_scope(scope)?;
        let mut secret = [0u8; KEY_BYTES];
        rand::rng().fill_bytes(&mut secret);
        let key = format!("{KEY_PREFIX}{}", hex::encode(secret));
        let mut id_bytes = [0u8; 8];
        rand::rng().fill_bytes(&mut id_bytes);
        let id = format!("key_{}", hex::encode(id_bytes));
        let now = now();
        const SQL: &str = "INSERT INTO toolgate_api_keys (id, user_id, role, key_hash, created_at, toolset, domains) \
                           VALUES ($1, $2, $3, $4, $5, $6, $7)";
        let hash = digest(&key);
        let domains = scope.domains_text();
        dispatch!(self, |pool| sqlx::query(SQL)
            .bind(&id)
            .bind(user_id)
            .bind(role)
            .bind(&hash)
            .bind(&now)
            .bind(&scope.toolset)
            .bind(&domains)
            .execute(pool)
            .await
            .map(|_| ())?);
        tracing::info!(key_id = %id, user_id, role, "API key created");
        Ok(CreatedKey { id, key: Secret::new(key) })
    }

    /// Every key, oldest first, revoked ones included; no secrets.
    pub async fn list(&self) -> Result<Vec<KeyInfo>> {
        const SQL: &str = "SELECT id, user_id, role, created_at, revoked_at, toolset, domains \
                           FROM toolgate_api_keys ORDER BY created_at, id";
        type Row = (String, String, String, String, Option<String>, Option<String>, Option<String>);
        let rows: Vec<Row> = dispatch!(self, |pool| sqlx::query_as(SQL).fetch_all(pool).await?);
        Ok(rows
            .into_iter()
            .map(|(id, user_id, role, created_at, revoked_at, toolset, domains)| KeyInfo {
                id,
                user_id,
                role,
                scope: KeyScope::from_columns(toolset, domains),
                created_at,
                revoked_at,
            })
            .collect())
    }

    /// Revoke a key by id; `false` when there is no such key or it was
    /// already revoked. Takes effect at once in this process (see the module
    /// docs for other processes).
    pub async fn revoke(&self, id: &str) -> Result<bool> {
        const SQL: &str = "UPDATE toolgate_api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL";
        let now = now();
        let done: u64 =
            dispatch!(self, |pool| sqlx::query(SQL).bind(&now).bind(id).execute(pool).await?.rows_affected());
        self.forget(id);
        if done > 0 {
            tracing::info!(key_id = %id, "API key revoked");
            self.announce(REVOKED_CHANNEL, id).await;
        }
        Ok(done > 0)
    }

    /// Who `key` belongs to; `None` for an unknown, revoked or malformed key.
    /// An `Err` means the database could not answer (not that the key is bad).
    pub async fn verify(&self, key: &str) -> Result<Option<VerifiedKey>> {
        Ok(self.verify_shared(key).await?.map(|verified| (*verified).clone()))
    }

    /// [`verify`](Self::verify) without copying the answer: a cache hit (the
    /// common case, every request of a busy key) costs one read lock, one
    /// SipHash and one comparison.
    pub async fn verify_shared(&self, key: &str) -> Result<Option<Arc<VerifiedKey>>> {
        if !is_key_shaped(key) {
            return Ok(None);
        }
        let slot = self.cache.hasher.hash_one(key);
        if let Some(hit) = self.cached(slot, key) {
            return Ok(Some(hit));
        }
        const SQL: &str = "SELECT id, user_id, role, key_hash, toolset, domains FROM toolgate_api_keys \
                           WHERE key_hash = $1 AND revoked_at IS NULL";
        type Row = (String, String, String, String, Option<String>, Option<String>);
        let hash = digest(key);
        let row: Option<Row> =
            dispatch!(self, |pool| sqlx::query_as(SQL).bind(&hash).fetch_optional(pool).await?);
        let Some((id, user_id, role, stored, toolset, domains)) = row else {
            return Ok(None);
        };
        if !constant_time_eq(stored.as_bytes(), hash.as_bytes()) {
            return Ok(None);
        }
        let caller = KeyScope::from_columns(toolset, domains).apply(Caller::new(user_id, role));
        let verified = Arc::new(VerifiedKey { id, caller });
        if !self.cache_ttl.is_zero()
            && let Ok(mut cache) = self.cache.entries.write()
        {
            let now = Instant::now();
            // A miss is the time to sweep: keys no longer in use leave memory.
            if cache.swept.is_none_or(|at| now.duration_since(at) >= self.cache_ttl) {
                cache.by_slot.retain(|_, cached| now.duration_since(cached.at) < self.cache_ttl);
                cache.swept = Some(now);
            }
            if cache.by_slot.len() >= MAX_CACHED {
                cache.by_slot.clear();
            }
            let entry = Cached { key: Secret::new(key), verified: verified.clone(), at: now };
            cache.by_slot.insert(slot, entry);
        }
        Ok(Some(verified))
    }

    /// The cached answer for `key` (whose keyed hash is `slot`), if fresh.
    /// A stale entry is left for the next miss to replace or sweep, so a hit
    /// never takes the write lock.
    fn cached(&self, slot: u64, key: &str) -> Option<Arc<VerifiedKey>> {
        let cache = self.cache.entries.read().ok()?;
        let entry = cache.by_slot.get(&slot)?;
        let fresh = entry.at.elapsed() < self.cache_ttl;
        (fresh && constant_time_eq(entry.key.expose().as_bytes(), key.as_bytes()))
            .then(|| entry.verified.clone())
    }

    /// Close the pool.
    pub async fn close(&self) {
        self.db.close().await
    }
}

/// A scope's toolset and domain names: sane names without commas (the column separator).
fn check_scope(scope: &KeyScope) -> Result<()> {
    for name in scope.toolset.iter().chain(scope.domains.iter().flatten()) {
        check_name("scope", name)?;
        if name.contains(',') {
            return Err(Error::Invalid("a toolset or domain name has no commas".into()));
        }
    }
    Ok(())
}

fn check_name(what: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::Invalid(format!("the {what} is empty")));
    }
    if value.len() > MAX_NAME_LEN {
        return Err(Error::Invalid(format!("the {what} is longer than {MAX_NAME_LEN} bytes")));
    }
    if value.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Error::Invalid(format!("the {what} contains whitespace or control characters")));
    }
    Ok(())
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Whether `key` looks like one of ours: the prefix and 64 lowercase hex digits.
fn is_key_shaped(key: &str) -> bool {
    key.strip_prefix(KEY_PREFIX).is_some_and(|rest| {
        rest.len() == KEY_BYTES * 2 && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The stored form of a key: hex SHA-256 over a domain prefix and the key.
fn digest(key: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(DIGEST_DOMAIN);
    hasher.update(key.as_bytes());
    hex::encode(hasher.finalize())
}

/// Compare without an early exit, so the time taken does not depend on
/// where the first difference is.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_digest_and_compare() {
        let key = format!("{KEY_PREFIX}{}", "ab".repeat(32));
        assert!(is_key_shaped(&key));
        for bad in ["", "tg_", "tg_zz", &key[..key.len() - 1], &key.to_uppercase(), &format!("{key}0")] {
            assert!(!is_key_shaped(bad), "{bad} accepted");
        }
        assert_eq!(digest(&key).len(), 64);
        assert_ne!(digest(&key), digest(&key.replace('a', "c")));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("user id", "alice@example.com").is_ok());
        for bad in ["", " ", "a b", "a\nb", &"x".repeat(201)] {
            assert!(check_name("user id", bad).is_err(), "{bad:?} accepted");
        }
    }
}
