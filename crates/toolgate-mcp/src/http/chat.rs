//! `POST /api/chat`: the agent runtime over SSE, as the bearer key's user
//! and role. Body `{"message": "...", "conversation_id": "..."?}`; events
//! `token`, `tool_call_started`, `tool_call_finished`, `error`, `final`
//! (the JSON of [`toolgate_agent::Event`]). A client that disconnects cancels the
//! run: the stream's end drops the receiver, which the loop watches.
//!
//! A run is tied to its key like `/trace` and MCP sessions: a revocation or
//! a change of the key's role or scope (heard on [`KeyStore::revocations`],
//! within about a second from another process) ends it with an
//! `UNAUTHORIZED` error event, and before each tool call the key is read
//! from the store again ([`KeyStore::active`]), so no call runs with a role
//! the key no longer has, even before the change is heard. A run of a
//! signed-in user (an OAuth access token) calls no tool after the token's
//! expiry.
//!
//! A tool call that needs the person (a write that answers `need_confirm`;
//! missing values with `[limits] ask_for_missing`) is asked on the stream
//! of a client that declared it can answer (`"elicitation": true` in the
//! body; without it the model gets the `need_confirm` signal, as before):
//! an `elicitation` event `{"id", "call_id", "message", "requested_schema"}`,
//! answered with `POST /api/chat/answer` `{"question_id": "...", "action":
//! "accept" | "decline" | "cancel", "content": {...}}` by the same caller
//! (the same API key, or the same signed-in principal); an unknown id, or
//! another caller's, is `404`. An `elicitation_answered` event says how the
//! question ended. One nobody answers within `[limits] confirm_timeout_ms`
//! ends as unanswered and nothing is written.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::sse::{self, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_stream::wrappers::ReceiverStream;
use toolgate_agent::{AgentError, Asking, CallerCheck, Event, RunOptions, RunRequest};
use toolgate_core::{Answer, Caller};

use super::api::caller_of;
use super::{Shared, error_response, invalid_params};
use crate::handler::Authenticated;
use crate::{KeyScope, KeyStore};

/// What the stream says when the run's key stops being what it was.
const KEY_GONE: &str = "the API key of this chat was revoked, or its role or scope was changed, while the \
                        run was going: the run stopped and no further tool was called. Send the message \
                        again with a valid key";

/// The request body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChatBody {
    message: String,
    #[serde(default)]
    conversation_id: Option<String>,
    /// The client shows `elicitation` events and answers them at `/api/chat/answer`.
    #[serde(default)]
    elicitation: bool,
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
                "send {\"message\": \"...\", \"conversation_id\": \"...\", \"elicitation\": true}",
            );
        }
    };
    let caller = caller_of(&shared, &auth);
    // Refusals that need no model are plain HTTP errors, before the stream opens.
    let message = body.message.trim();
    if message.is_empty() || message.chars().count() > toolgate_agent::MAX_MESSAGE_CHARS {
        let error = AgentError::InvalidInput(format!(
            "`message` must be 1 to {} characters of text",
            toolgate_agent::MAX_MESSAGE_CHARS
        ));
        return agent_error(&error);
    }
    if let (Some(id), Some(store)) = (&body.conversation_id, agent.store())
        && let Err(e) = store.messages_for(id, &caller).await
    {
        return agent_error(&AgentError::Store(e));
    }
    let (tx, rx) = toolgate_agent::event_channel();
    let cancel = shared.state.shutdown.child_token();
    // Subscribed before the run starts, so no change of the key is missed.
    let key = (auth.proof == crate::identity::Proof::Key).then(|| KeyCheck::new(&shared.state.keys, &auth));
    let expiry = auth.expires_at().map(|expires_at| ExpiryCheck { expires_at });
    let mut changed = shared.state.keys.revocations();
    // Only the caller who started the run may answer its questions.
    let asking =
        if body.elicitation { Asking::Events { owner: auth.principal.clone() } } else { Asking::Nobody };
    let request = RunRequest::new(caller, body.message).with_conversation_id(body.conversation_id);
    tokio::spawn(async move {
        let check = match (&key, &expiry) {
            (Some(key), _) => Some(key as &dyn CallerCheck),
            (None, Some(expiry)) => Some(expiry as &dyn CallerCheck),
            (None, None) => None,
        };
        let mut options = RunOptions::default().with_asking(asking);
        options.check = check;
        let run = agent.run_with(request, &tx, cancel.clone(), options);
        let mut run = std::pin::pin!(run);
        let ended = tokio::select! {
            ended = &mut run => ended,
            () = key_changed(&mut changed, key.as_ref()) => {
                tracing::info!("a chat run ended: its API key was revoked or changed");
                let gone = Event::Error { code: "UNAUTHORIZED".to_owned(), message: KEY_GONE.to_owned() };
                let _ = tx.send(gone).await;
                cancel.cancel();
                run.await
            }
        };
        if let Err(e) = ended {
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

/// The body of `POST /api/chat/answer`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AnswerBody {
    question_id: String,
    action: Action,
    #[serde(default)]
    content: Option<Value>,
}

/// What the person did with the question.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Action {
    Accept,
    Decline,
    Cancel,
}

/// `POST /api/chat/answer`: the answer to a chat run's `elicitation` event,
/// from the caller who started the run. `204` once the run has it.
pub(super) async fn answer(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    body: Result<axum::Json<AnswerBody>, JsonRejection>,
) -> Response {
    const HOW: &str = "send {\"question_id\": \"<the elicitation event's id>\", \"action\": \"accept\" | \"decline\" | \"cancel\", \"content\": {...}}";
    let Some(agent) = shared.state.agent.as_ref() else {
        return error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "UNAVAILABLE",
            "no model is configured for chat: set [agent] base_url and model in toolgate.toml",
        );
    };
    let body = match body {
        Ok(axum::Json(body)) => body,
        Err(rejection) => return invalid_params(rejection.body_text(), HOW),
    };
    let answer = match (body.action, body.content) {
        (Action::Accept, Some(content @ Value::Object(_))) => Answer::Accept(content),
        (Action::Accept, _) => {
            return invalid_params(
                "an accepted answer needs `content`, an object of the requested schema's fields \
                 (a confirmation is {\"confirm\": true})"
                    .to_owned(),
                HOW,
            );
        }
        (Action::Decline, _) => Answer::Decline,
        (Action::Cancel, _) => Answer::Cancel,
    };
    match agent.answer(&body.question_id, &auth.principal, answer) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(unknown) => error_response(StatusCode::NOT_FOUND, "NOT_FOUND", &unknown.to_string()),
    }
}

fn agent_error(error: &AgentError) -> Response {
    let status = match error.code() {
        "NOT_FOUND" => StatusCode::NOT_FOUND,
        "PERMISSION_DENIED" => StatusCode::FORBIDDEN,
        "INVALID_PARAMS" => StatusCode::BAD_REQUEST,
        "CONFLICT" => StatusCode::CONFLICT,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    };
    error_response(status, error.code(), &error.public_message())
}

/// The run's key as it was when the run started; [`CallerCheck`] reads it
/// again from the store before each tool call.
struct KeyCheck {
    keys: KeyStore,
    key_id: String,
    user_id: String,
    role: String,
    scope: KeyScope,
}

impl KeyCheck {
    fn new(keys: &KeyStore, auth: &Authenticated) -> Self {
        let caller = &auth.caller;
        Self {
            keys: keys.clone(),
            key_id: auth.principal.clone(),
            user_id: caller.user_id.clone(),
            role: caller.role.clone(),
            scope: KeyScope { toolset: caller.toolset.clone(), domains: caller.domains.clone() },
        }
    }
}

#[toolgate_core::async_trait]
impl CallerCheck for KeyCheck {
    async fn still_allowed(&self, _caller: &Caller) -> Result<(), String> {
        match self.keys.active(&self.key_id).await {
            Ok(Some(now))
                if now.user_id == self.user_id && now.role == self.role && now.scope == self.scope =>
            {
                Ok(())
            }
            Ok(_) => Err(KEY_GONE.to_owned()),
            Err(error) => {
                // Fail closed, as a request whose key cannot be checked is 503.
                tracing::error!(%error, "the key store could not check a chat run's API key");
                Err("the API key could not be checked right now, so no tool was called; try again".to_owned())
            }
        }
    }
}

/// A run of a signed-in user: no tool call after its access token expires.
struct ExpiryCheck {
    expires_at: std::time::SystemTime,
}

#[toolgate_core::async_trait]
impl CallerCheck for ExpiryCheck {
    async fn still_allowed(&self, _caller: &Caller) -> Result<(), String> {
        if std::time::SystemTime::now() < self.expires_at {
            Ok(())
        } else {
            Err("the access token of this chat expired while the run was going: the run stopped and no \
                 further tool was called. Sign in again and send the message again"
                .to_owned())
        }
    }
}

/// Resolves when `key` is announced as revoked or changed; never without a key.
async fn key_changed(changed: &mut broadcast::Receiver<String>, key: Option<&KeyCheck>) {
    let Some(key) = key else { return std::future::pending().await };
    loop {
        match changed.recv().await {
            Ok(id) if id == key.key_id => return,
            // A lagged receiver may have missed the id: the check before each call still sees it.
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return std::future::pending().await,
        }
    }
}
