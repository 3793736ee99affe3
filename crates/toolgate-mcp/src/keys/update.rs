//! Changing an active key's role and scope without a restart anywhere.
//!
//! The change is one `UPDATE` (so two operators changing different fields
//! of one key both win) that stamps `updated_at`, then exactly what a
//! revocation does: this process forgets the key at once, on PostgreSQL
//! `NOTIFY toolgate_key_changed` tells every other instance's
//! [`KeyStore::watch_revocations`] to forget it too, and that watcher's poll
//! finds the stamp when the notification is lost (or on SQLite, which has
//! none). The next request with the key reads its new role from the
//! database; the key cache's TTL (1 s by default) bounds the delay even
//! with no watcher running.
//!
//! Like a revocation, a change ends the key's `/trace` streams and MCP
//! sessions: what they show was decided for the old role (a downgraded
//! admin must stop seeing every user's calls), and a client reconnects with
//! the same key to get the new one.

use super::{KeyInfo, KeyScope, KeyStore, check_scope};
use crate::error::{Error, Result};

/// The PostgreSQL channel on which `update` announces a changed key id.
pub(super) const CHANGED_CHANNEL: &str = "toolgate_key_changed";

/// What [`KeyStore::update`] changes; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyChange {
    /// The new role (checked against the policy by the caller).
    pub role: Option<String>,
    /// The new toolset; `Some(None)` removes it.
    pub toolset: Option<Option<String>>,
    /// The new domains; `Some(None)` allows every domain again.
    pub domains: Option<Option<Vec<String>>>,
}

impl KeyChange {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.role.is_none() && self.toolset.is_none() && self.domains.is_none()
    }
}

type Row = (String, String, String, String, Option<String>, Option<String>, Option<String>);

fn info((id, user_id, role, created_at, revoked_at, toolset, domains): Row) -> KeyInfo {
    KeyInfo { id, user_id, role, scope: KeyScope::from_columns(toolset, domains), created_at, revoked_at }
}

/// An active key by id, read from the database (never the cache).
const ACTIVE: &str = "SELECT id, user_id, role, created_at, revoked_at, toolset, domains \
                      FROM toolgate_api_keys WHERE id = $1 AND revoked_at IS NULL";

impl KeyStore {
    /// The key `id` as it is now in the database, if it is active: `None`
    /// once it is revoked (or never was). Never answered from the cache, so
    /// a long-running use of a key (a chat run) can check before each step
    /// that the key still holds the role and scope it started with.
    pub async fn active(&self, id: &str) -> Result<Option<KeyInfo>> {
        let row: Option<Row> =
            dispatch!(self, |pool| sqlx::query_as(ACTIVE).bind(id).fetch_optional(pool).await?);
        Ok(row.map(info))
    }

    /// Change an active key's role and/or scope. Answers the key as it was
    /// and as it is now, or `None` when there is no active key `id`. Takes
    /// effect at once here; see the module docs for other instances.
    pub async fn update(&self, id: &str, change: &KeyChange) -> Result<Option<(KeyInfo, KeyInfo)>> {
        if change.is_empty() {
            return Err(Error::Invalid("nothing to change: give a role, a toolset or domains".into()));
        }
        if let Some(role) = &change.role {
            super::check_name("role", role)?;
        }
        let toolset = change.toolset.clone().flatten();
        let domains = change.domains.clone().flatten();
        check_scope(&KeyScope { toolset: toolset.clone(), domains: domains.clone() })?;
        let before: Option<Row> =
            dispatch!(self, |pool| sqlx::query_as(ACTIVE).bind(id).fetch_optional(pool).await?);
        let Some(before) = before else { return Ok(None) };
        // Each field is set only when asked for, in the one statement.
        const SQL: &str = "UPDATE toolgate_api_keys SET role = COALESCE($1, role), \
                           toolset = CASE WHEN $2 THEN $3 ELSE toolset END, \
                           domains = CASE WHEN $4 THEN $5 ELSE domains END, \
                           updated_at = $6 \
                           WHERE id = $7 AND revoked_at IS NULL \
                           RETURNING id, user_id, role, created_at, revoked_at, toolset, domains";
        let domains_text = KeyScope { toolset: None, domains }.domains_text();
        let after: Option<Row> = dispatch!(self, |pool| sqlx::query_as(SQL)
            .bind(&change.role)
            .bind(change.toolset.is_some())
            .bind(&toolset)
            .bind(change.domains.is_some())
            .bind(&domains_text)
            .bind(super::now())
            .bind(id)
            .fetch_optional(pool)
            .await?);
        let Some(after) = after else { return Ok(None) };
        self.forget(id);
        let (before, after) = (info(before), info(after));
        tracing::info!(key_id = %id, role = %after.role, "API key changed");
        self.announce(CHANGED_CHANNEL, id).await;
        Ok(Some((before, after)))
    }
}
