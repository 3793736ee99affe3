//! Hearing what other processes did to keys: PostgreSQL notifications
//! where there are any, and a poll every [`REVOCATION_POLL`] on both
//! backends for when a notification is lost (or on SQLite, which has none).

use super::{Error, KeyStore, REVOCATION_POLL, REVOKED_CHANNEL, Result, now, update};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

impl KeyStore {
    /// Tell every other instance's watcher (PostgreSQL only) that key `id`
    /// changed; a lost notification is made up for by polling and the cache TTL.
    pub(super) async fn announce(&self, channel: &str, id: &str) {
        if let toolgate_db::Pool::Postgres(pool) = self.db.pool()
            && let Err(error) =
                sqlx::query("SELECT pg_notify($1, $2)").bind(channel).bind(id).execute(pool).await
        {
            tracing::warn!(%error, channel, "could not announce a key change; other instances see it within the cache TTL");
        }
    }

    /// Key ids revoked from now on: by this store at once, by other processes
    /// once [`KeyStore::watch_revocations`] (running somewhere in this
    /// process) hears or finds them. A receiver that lags misses ids, never
    /// receives wrong ones.
    pub fn revocations(&self) -> broadcast::Receiver<String> {
        self.revoked.subscribe()
    }

    /// Drop a key from the cache and tell the subscribers.
    pub(super) fn forget(&self, id: &str) {
        if let Ok(mut cache) = self.cache.entries.write() {
            cache.by_slot.retain(|_, cached| cached.verified.id != id);
        }
        let _ = self.revoked.send(id.to_owned());
    }

    /// Hear about keys revoked or changed (role, scope) by other processes until `stop` is cancelled:
    /// PostgreSQL notifications, and a poll every [`REVOCATION_POLL`] on both
    /// backends. Each one found is dropped from the cache and announced on
    /// [`KeyStore::revocations`]. `serve_http` runs it.
    pub async fn watch_revocations(self, stop: CancellationToken) {
        let mut since = now();
        // (id, time) pairs already handled: a key changed twice is found twice.
        let mut seen: std::collections::HashSet<(String, String)> = std::collections::HashSet::new();
        let mut listener = None;
        let mut poll = tokio::time::interval(REVOCATION_POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if listener.is_none()
                && let toolgate_db::Pool::Postgres(pool) = self.db.pool()
            {
                listener = match sqlx::postgres::PgListener::connect_with(pool).await {
                    Ok(mut l) => {
                        l.listen_all([REVOKED_CHANNEL, update::CHANGED_CHANNEL]).await.ok().map(|()| l)
                    }
                    Err(error) => {
                        tracing::debug!(%error, "no revocation listener; polling only");
                        None
                    }
                };
            }
            let heard = async {
                match listener.as_mut() {
                    Some(l) => l.try_recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = stop.cancelled() => return,
                heard = heard => match heard {
                    // Revoked or changed: either way the cached caller is stale.
                    Ok(Some(notification)) => self.forget(notification.payload()),
                    // The connection was lost (and notifications with it): poll and reconnect.
                    Ok(None) | Err(_) => listener = None,
                },
                _ = poll.tick() => {
                    // Revoked or changed since the last look (the later of the two times).
                    const SQL: &str = "SELECT id, CASE WHEN revoked_at >= $1 THEN revoked_at ELSE updated_at END \
                                       FROM toolgate_api_keys WHERE revoked_at >= $1 OR updated_at >= $1";
                    let rows: Result<Vec<(String, String)>> = async {
                        Ok(dispatch!(self, |pool| sqlx::query_as(SQL).bind(&since).fetch_all(pool).await?))
                    }
                    .await;
                    match rows {
                        Ok(rows) => {
                            for (id, at) in &rows {
                                if seen.insert((id.clone(), at.clone())) {
                                    self.forget(id);
                                }
                            }
                            if let Some(newest) = rows.iter().map(|(_, at)| at).max().filter(|n| **n > since) {
                                // The next poll starts at the newest time seen; only the
                                // ids revoked at exactly that time would be found again.
                                since = newest.clone();
                                seen = rows.into_iter().filter(|(_, at)| *at == since).collect();
                            }
                        }
                        Err(error) => tracing::debug!(%error, "could not poll for revoked keys"),
                    }
                }
            }
        }
    }
}
