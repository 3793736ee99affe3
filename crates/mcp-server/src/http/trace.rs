//! `GET /trace`: the gateway's trace events as server-sent events.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

use super::api::{caller_of, may_trace};
use super::{Shared, error_response};
use crate::handler::Authenticated;

pub(super) async fn trace(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    let caller = caller_of(&shared, &auth);
    if !may_trace(&shared, &caller) {
        return error_response(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            &format!("the trace is for role `{}` and above", shared.trace_role),
        );
    }
    // Subscribe before answering, so every call after the `ready` event is seen.
    let events = BroadcastStream::new(shared.state.gateway.subscribe()).map(|item| {
        Ok::<_, Infallible>(match item {
            Ok(event) => {
                Event::default().event("trace").json_data(&event).unwrap_or_else(|_| Event::default())
            }
            Err(BroadcastStreamRecvError::Lagged(missed)) => {
                Event::default().event("lagged").data(missed.to_string())
            }
        })
    });
    let ready =
        futures::stream::once(async { Ok::<_, Infallible>(Event::default().event("ready").data("{}")) });
    let stream = ready.chain(events).take_until(shared.state.shutdown.clone().cancelled_owned());
    let mut keep_alive = KeepAlive::new();
    if let Some(interval) = shared.state.config.sse_keep_alive {
        keep_alive = keep_alive.interval(interval);
    }
    Sse::new(stream).keep_alive(keep_alive).into_response()
}
