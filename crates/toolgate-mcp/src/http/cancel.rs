//! `notifications/cancelled` without sessions: the notification comes in a
//! POST of its own, so the calls in progress are kept by (key, request id)
//! for it to find.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Requests in progress without sessions, by (key id, JSON-RPC id): there a
/// `notifications/cancelled` comes in a POST of its own, and finds the call
/// it names here. Keyed by the key, so a client can cancel only its own.
#[derive(Debug, Default)]
pub(super) struct StatelessCalls {
    calls: Mutex<HashMap<(String, String), (u64, CancellationToken)>>,
    serial: std::sync::atomic::AtomicU64,
}

impl StatelessCalls {
    pub(super) fn register(self: &Arc<Self>, key_id: &str, id: &Value) -> Registered {
        let serial = self.serial.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = CancellationToken::new();
        let key = (key_id.to_owned(), id.to_string());
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(key.clone(), (serial, token.clone()));
        }
        Registered { calls: self.clone(), key, serial, token }
    }

    /// Cancel the caller's request `id`, if it is still running.
    pub(super) fn cancel(&self, key_id: &str, id: &Value) {
        let key = (key_id.to_owned(), id.to_string());
        if let Some((_, token)) = self.calls.lock().ok().and_then(|calls| calls.get(&key).cloned()) {
            token.cancel();
        }
    }
}

/// A stateless request's entry, removed when its answer is done (or
/// dropped); a later request that reused the id keeps its own entry.
pub(super) struct Registered {
    calls: Arc<StatelessCalls>,
    key: (String, String),
    serial: u64,
    pub(super) token: CancellationToken,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.calls.calls.lock()
            && calls.get(&self.key).is_some_and(|(serial, _)| *serial == self.serial)
        {
            calls.remove(&self.key);
        }
    }
}

/// The `requestId` a `notifications/cancelled` names.
pub(super) fn cancelled_request(body: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(body).ok()?;
    message.get("params")?.get("requestId").filter(|id| id.is_string() || id.is_number()).cloned()
}

/// The answer to a request the client cancelled, as a session answers it.
pub(super) const CANCELLED: &str = "the request was cancelled by the client";
