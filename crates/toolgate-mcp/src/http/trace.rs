//! `GET /trace`: the gateway's trace events as server-sent events. A
//! caller of [`HttpConfig::trace_role`](super::HttpConfig::trace_role) or
//! above sees everyone's calls; anyone else sees only their own. Each reader
//! has a bounded queue and is dropped (with a last `dropped` event) when it
//! falls that far behind, so a stalled reader cannot hold memory; its stream
//! also ends when its key is revoked or the server shuts down. Anonymous
//! callers (`--allow-anonymous`) get `403`: they are nobody in particular.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

use super::api::{caller_of, may_trace};
use super::{Shared, error_response};
use crate::handler::Authenticated;

pub(super) async fn trace(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    if auth.is_anonymous() {
        // Every anonymous request is the same "user": their calls are nobody's own.
        return error_response(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            "the trace needs an API key: it shows the calls of the key's user",
        );
    }
    let caller = caller_of(&shared, &auth);
    // `None`: every user's calls; `Some(user)`: that user's only.
    let only = (!may_trace(&shared, &caller)).then(|| caller.user_id.clone());
    // Subscribe before answering, so every call after the `ready` event is seen.
    let mut events = shared.state.gateway.subscribe();
    let mut revoked = shared.state.keys.revocations();
    let key_id = auth.principal.clone();
    let expires = auth.expires_at();
    let (tx, rx) = mpsc::channel::<Event>(shared.state.config.trace_buffer.max(1));
    let stop = shared.state.shutdown.clone();
    let drain = shared.state.drain.started.clone();
    let _ = tx.try_send(Event::default().event("ready").data("{}"));
    tokio::spawn(async move {
        let mut watching = true;
        let expired = until(expires);
        tokio::pin!(expired);
        loop {
            let event = tokio::select! {
                () = stop.cancelled() => return,
                () = drain.cancelled() => return,
                () = tx.closed() => return,
                // A token's stream ends with the token (a fresh one opens a new stream).
                () = &mut expired => {
                    let _ = tx.try_send(Event::default().event("expired").data("{}"));
                    return;
                }
                id = revoked.recv(), if watching => match id {
                    Ok(id) if id == key_id => {
                        let _ = tx.try_send(Event::default().event("revoked").data("{}"));
                        return;
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    // No store left to announce revocations: keep serving the events.
                    Err(broadcast::error::RecvError::Closed) => {
                        watching = false;
                        continue;
                    }
                },
                event = events.recv() => match event {
                    Ok(event) if only.as_ref().is_none_or(|user| *user == event.user_id) => {
                        Event::default().event("trace").json_data(&event).unwrap_or_else(|_| Event::default())
                    }
                    Ok(_) => continue,
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        Event::default().event("lagged").data(missed.to_string())
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            };
            if tx.try_send(event).is_err() {
                // Full: the reader is not reading. Its queue goes, and it may reconnect.
                tracing::debug!("dropped a /trace reader that fell behind");
                return;
            }
        }
    });
    let stream = ReceiverStream::new(rx).map(Ok::<_, Infallible>);
    let mut keep_alive = KeepAlive::new();
    if let Some(interval) = shared.state.config.sse_keep_alive {
        keep_alive = keep_alive.interval(interval);
    }
    Sse::new(stream).keep_alive(keep_alive).into_response()
}

/// Resolves at `at` (wall-clock), never without one.
pub(super) async fn until(at: Option<std::time::SystemTime>) {
    match at {
        Some(at) => {
            let left = at.duration_since(std::time::SystemTime::now()).unwrap_or_default();
            tokio::time::sleep(left).await;
        }
        None => std::future::pending().await,
    }
}
