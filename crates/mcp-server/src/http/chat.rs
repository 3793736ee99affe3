//! `POST /api/chat`: the agent runtime over SSE, as the bearer key's user
//! and role. Body `{"message": "...", "conversation_id": "..."?}`; events
//! `token`, `tool_call_started`, `tool_call_finished`, `error`, `final`
//! (the JSON of [`agent::Event`]). A client that disconnects cancels the
//! run: the stream's end drops the receiver, which the loop watches.

use std::convert::Infallible;
use std::sync::Arc;

use agent::{AgentError, Event, RunRequest};
use axum::Extension;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::sse::{self, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use tokio_stream::wrappers::ReceiverStream;

use super::api::caller_of;
use super::{Shared, error_response, invalid_params};
use crate::handler::Authenticated;

/// The request body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChatBody {
    message: String,
    #[serde(default)]
    conversation_id: Option<String>,
}

pub(super) async fn chat(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    body: Result<axum::Json<ChatBody>, JsonRejection>,
) -> Response {
    let Some(agent) = shared.state.agent.clone() else {
        return error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "UNAVAILABLE",
            "no model is configured for chat: set [agent] base_url and model in toolgate.toml",
        );
    };
    let body = match body {
        Ok(axum::Json(body)) => body,
        Err(rejection) => {
            return invalid_params(
                rejection.body_text(),
                "send {\"message\": \"...\", \"conversation_id\": \"...\"}",
            );
        }
    };
    let caller = caller_of(&shared, &auth);
    // Refusals that need no model are plain HTTP errors, before the stream opens.
    let message = body.message.trim();
    if message.is_empty() || message.chars().count() > agent::MAX_MESSAGE_CHARS {
        let error = AgentError::InvalidInput(format!(
            "`message` must be 1 to {} characters of text",
            agent::MAX_MESSAGE_CHARS
        ));
        return agent_error(&error);
    }
    if let (Some(id), Some(store)) = (&body.conversation_id, agent.store())
        && let Err(e) = store.messages(id, &caller.user_id).await
    {
        return agent_error(&AgentError::Store(e));
    }
    let (tx, rx) = agent::event_channel();
    let cancel = shared.state.shutdown.child_token();
    let request = RunRequest { caller, message: body.message, conversation_id: body.conversation_id };
    tokio::spawn(async move {
        if let Err(e) = agent.run(request, &tx, cancel).await {
            let _ = tx.send(Event::Error { code: e.code().to_owned(), message: e.public_message() }).await;
        }
    });
    let stream = ReceiverStream::new(rx).map(|event| {
        Ok::<_, Infallible>(
            sse::Event::default()
                .event(event.name())
                .json_data(&event)
                .unwrap_or_else(|_| sse::Event::default()),
        )
    });
    let mut keep_alive = KeepAlive::new();
    if let Some(interval) = shared.state.config.sse_keep_alive {
        keep_alive = keep_alive.interval(interval);
    }
    Sse::new(stream).keep_alive(keep_alive).into_response()
}

fn agent_error(error: &AgentError) -> Response {
    let status = match error.code() {
        "NOT_FOUND" => StatusCode::NOT_FOUND,
        "INVALID_PARAMS" => StatusCode::BAD_REQUEST,
        "CONFLICT" => StatusCode::CONFLICT,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    };
    error_response(status, error.code(), &error.public_message())
}
