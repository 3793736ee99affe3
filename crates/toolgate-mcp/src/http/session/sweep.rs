//! The tasks that close sessions from outside a request: when the key store announces a
//! revoked key, and when a session's access token expires.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::SessionOwners;
use crate::KeyStore;

/// How often sessions are checked for an expired access token.
const EXPIRY_SWEEP: Duration = Duration::from_secs(1);

/// Close the sessions whose access token expired (and was not followed by a
/// fresh one of the same subject), until `stop`.
pub(in crate::http) fn close_expired(owners: &Arc<SessionOwners>, stop: &CancellationToken) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("http_router built outside a Tokio runtime: sessions outlive their tokens");
        return;
    };
    let owners = Arc::downgrade(owners);
    let stop = stop.clone();
    runtime.spawn(async move {
        let mut tick = tokio::time::interval(EXPIRY_SWEEP);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let Some(owners) = owners.upgrade() else { return };
            owners.close_expired().await;
        }
    });
}

/// Close the sessions of every key the store reports revoked, until `stop`.
pub(in crate::http) fn close_revoked(owners: &Arc<SessionOwners>, keys: &KeyStore, stop: &CancellationToken) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("http_router built outside a Tokio runtime: sessions of revoked keys stay open");
        return;
    };
    let owners = Arc::downgrade(owners);
    let mut revoked = keys.revocations();
    let stop = stop.clone();
    runtime.spawn(async move {
        loop {
            let id = tokio::select! {
                () = stop.cancelled() => return,
                id = revoked.recv() => id,
            };
            let Some(owners) = owners.upgrade() else { return };
            match id {
                Ok(id) => owners.close_key(&id).await,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}
