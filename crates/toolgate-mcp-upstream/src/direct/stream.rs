//! The event stream a direct call may be answered with: read until the call's answer, with
//! what comes before it handed to the [`Link`] as rmcp's handler would, and resumed with
//! `Last-Event-ID` when the upstream closes it before answering (SEP-1699, as rmcp's client
//! resumes it).

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolResult, ClientResult, EmptyResult, ErrorData, RequestId, ServerJsonRpcMessage,
    ServerNotification, ServerRequest, ServerResult,
};
use rmcp::service::InboundStreamOrigin;

use super::wire::Incoming;
use super::{Direct, Failure, MAX_ANSWER, Route, is_media, sent_error};
use crate::handler::{Refresh, cannot_ask};
use crate::link::Link;

/// How many times in a row a stream that ended unanswered is resumed without bringing an event.
const MAX_RESUMES: u32 = 5;
/// The wait before resuming when the upstream set none (rmcp's first backoff step).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The longest wait before resuming, whatever the upstream asks.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// Where a stream left the call.
enum Ended {
    /// With the call's answer, or a failure that ends it.
    Answered(Result<CallToolResult, Failure>),
    /// Without an answer; whether it brought any event.
    Unanswered { brought_events: bool },
}

/// What the streams of one call have shown so far: the last event id and retry.
#[derive(Default)]
struct Position {
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl Direct {
    /// Read an event stream until the answer to `id`, handing the rest to `link`; resumed
    /// from its last event id while the upstream closes it before answering.
    pub(super) async fn events(
        &self,
        link: &Link,
        route: &Route,
        id: &RequestId,
        token: Option<&str>,
        mut response: http::Response<Incoming>,
    ) -> Result<CallToolResult, Failure> {
        let mut position = Position::default();
        let mut idle = 0;
        loop {
            match self.read(link, route, id, token, response, &mut position).await {
                Ended::Answered(answer) => return answer,
                Ended::Unanswered { brought_events } => idle = if brought_events { 1 } else { idle + 1 },
            }
            let Some(last_event_id) = position.last_event_id.clone() else {
                return Err(Failure::Unanswered("closed the connection before answering"));
            };
            if idle > MAX_RESUMES {
                return Err(Failure::Unanswered(
                    "closed its answer's stream again and again before answering",
                ));
            }
            tokio::time::sleep(position.retry.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY)).await;
            response = self.resume(route, token, &last_event_id).await?;
        }
    }

    /// GET the call's stream again from after `last_event_id`.
    async fn resume(
        &self,
        route: &Route,
        token: Option<&str>,
        last_event_id: &str,
    ) -> Result<http::Response<Incoming>, Failure> {
        let mut get =
            self.request(http::Method::GET, route, token, "text/event-stream", Default::default())?;
        if let Ok(value) = HeaderValue::from_str(last_event_id) {
            get.headers_mut().insert(HeaderName::from_static("last-event-id"), value);
        }
        let response = self.wire.send(get).await.map_err(|unsent| match sent_error(unsent) {
            Failure::NotSent(_) => Failure::Unanswered("could not be reached to resume its answer"),
            other => other,
        })?;
        if response.status() != http::StatusCode::OK || !is_media(response.headers(), "text/event-stream") {
            return Err(Failure::Unanswered("refused to resume its answer's stream"));
        }
        Ok(response)
    }

    /// Read one stream of the call.
    async fn read(
        &self,
        link: &Link,
        route: &Route,
        id: &RequestId,
        token: Option<&str>,
        response: http::Response<Incoming>,
        position: &mut Position,
    ) -> Ended {
        let mut since_event = 0usize;
        let bytes = http_body_util::BodyDataStream::new(response.into_body()).map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            since_event = match last_event_end(&chunk) {
                Some(end) => chunk.len() - end,
                None => since_event + chunk.len(),
            };
            if since_event > MAX_ANSWER {
                return Err(std::io::Error::other("an event of the answer is over 16 MiB"));
            }
            Ok::<_, std::io::Error>(chunk)
        });
        let mut events = std::pin::pin!(sse_stream::SseStream::from_bytes_stream(bytes));
        let mut brought_events = false;
        // A stream that breaks off ends like one that closes: resumed when it can be.
        while let Some(Ok(event)) = events.next().await {
            brought_events = true;
            if let Some(event_id) = event.id.filter(|i| !i.is_empty()) {
                position.last_event_id = Some(event_id);
            }
            if let Some(retry) = event.retry {
                position.retry = Some(Duration::from_millis(retry));
            }
            let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else { continue };
            let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(&data) else {
                tracing::debug!(upstream = %link.name, "an event of a call's answer is not a JSON-RPC message");
                continue;
            };
            match message {
                ServerJsonRpcMessage::Response(response) if response.id == *id => {
                    return Ended::Answered(match response.result {
                        ServerResult::CallToolResult(result) => Ok(result),
                        _ => Err(Failure::NotToolResult("its answer was not a tool result")),
                    });
                }
                ServerJsonRpcMessage::Error(error) if error.id.as_ref() == Some(id) => {
                    return Ended::Answered(Err(Failure::Mcp(error.error)));
                }
                ServerJsonRpcMessage::Notification(notification) => {
                    self.notified(link, id, notification.notification).await;
                }
                ServerJsonRpcMessage::Request(request) => {
                    let answer = answer_request(link, id, request.request).await;
                    self.answer(link, route, token, request.id, answer).await;
                }
                _ => {}
            }
        }
        Ended::Unanswered { brought_events }
    }

    /// A notification on the stream of call `id`, where rmcp's handler would send it.
    async fn notified(&self, link: &Link, id: &RequestId, notification: ServerNotification) {
        match notification {
            ServerNotification::ProgressNotification(n) => link.progress(n.params),
            ServerNotification::LoggingMessageNotification(n) => {
                link.log(link.call_for(Some(&origin(id))), n.params).await;
            }
            ServerNotification::ToolListChangedNotification(_) => {
                let _ = self.refresh.send(Refresh::Tools);
            }
            ServerNotification::PromptListChangedNotification(_)
            | ServerNotification::ResourceListChangedNotification(_) => {
                let _ = self.refresh.send(Refresh::Surface);
            }
            ServerNotification::ResourceUpdatedNotification(n) => {
                let _ = link.signals.updated.send(n.params.uri);
            }
            _ => {}
        }
    }

    /// POST the answer to the upstream's request `request_id`; a failure is logged (the
    /// upstream then answers the call as it does without an answer).
    async fn answer(
        &self,
        link: &Link,
        route: &Route,
        token: Option<&str>,
        request_id: RequestId,
        answer: Result<ClientResult, ErrorData>,
    ) {
        let message = match answer {
            Ok(result) => serde_json::json!({"jsonrpc": "2.0", "id": request_id, "result": result}),
            Err(error) => serde_json::json!({"jsonrpc": "2.0", "id": request_id, "error": error}),
        };
        let body = serde_json::to_vec(&message).unwrap_or_default();
        let sent = match self.request(http::Method::POST, route, token, super::ACCEPTS, body.into()) {
            Ok(post) => self.wire.send(post).await.map_err(|unsent| unsent.connect),
            Err(_) => Err(true),
        };
        match sent {
            Ok(response) if response.status().is_success() => {}
            Ok(response) => {
                let status = response.status().as_u16();
                tracing::warn!(upstream = %link.name, status, "the upstream refused an answer to its request");
            }
            Err(connect) => {
                tracing::warn!(upstream = %link.name, connect, "an answer to the upstream's request was not delivered");
            }
        }
    }
}

/// The answer to an upstream's request during call `id`, as rmcp's handler gives it.
async fn answer_request(
    link: &Link,
    id: &RequestId,
    request: ServerRequest,
) -> Result<ClientResult, ErrorData> {
    let call = || link.call_for(Some(&origin(id)));
    let never = std::future::pending::<()>;
    match request {
        ServerRequest::PingRequest(_) => Ok(ClientResult::EmptyResult(EmptyResult {})),
        ServerRequest::ElicitRequest(request) => {
            link.elicit(call(), request.params, never()).await.map(ClientResult::ElicitResult)
        }
        ServerRequest::CreateMessageRequest(request) => {
            let params = serde_json::to_value(&request.params).unwrap_or_default();
            let answer = link.relay(call(), "sampling/createMessage", params, never()).await?;
            serde_json::from_value(answer)
                .map(|result| ClientResult::CreateMessageResult(Box::new(result)))
                .map_err(|_| cannot_ask("the client's answer is not a sampling result"))
        }
        ServerRequest::ListRootsRequest(_) => {
            let answer = link.relay(call(), "roots/list", serde_json::json!({}), never()).await?;
            serde_json::from_value(answer)
                .map(ClientResult::ListRootsResult)
                .map_err(|_| cannot_ask("the client's answer is not a list of roots"))
        }
        _ => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            "toolgate does not answer this request",
            None,
        )),
    }
}

fn origin(id: &RequestId) -> InboundStreamOrigin {
    InboundStreamOrigin::OutboundRequest(id.clone())
}

/// Where the last event of `chunk` ends (after its blank line), if one ends in it.
pub(super) fn last_event_end(chunk: &[u8]) -> Option<usize> {
    let lf = chunk.windows(2).rposition(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = chunk.windows(3).rposition(|w| w == b"\n\r\n").map(|i| i + 3);
    lf.max(crlf)
}
