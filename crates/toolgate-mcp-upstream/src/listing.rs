//! An HTTP upstream's `tools/list`, sent by toolgate rather than by rmcp's client, so
//! that an answer with a plain JSON body is read for `execution.taskSupport` before rmcp
//! parses it (rmcp's `Tool` has no such field; an event-stream answer is read event by
//! event as any other, [`crate::task_support::tap_events`]).
//!
//! The request is the one rmcp's client would send: the same `Accept`, token, headers,
//! session id and JSON body. Only a `200` with a JSON body or an event stream is
//! answered here; anything else (a refusal, an expired session, a challenge) is left to
//! rmcp's client, which sends the listing again and makes of the answer what it always
//! does: a listing is a read, so asking twice changes nothing.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{StreamableHttpError, StreamableHttpPostResponse};

use crate::task_support::{TaskTools, tap_events};

/// The session header of the streamable HTTP transport.
pub(crate) const SESSION_ID: &str = "mcp-session-id";

/// The largest JSON listing read here; a larger one is rmcp's to refuse.
const MAX_LISTING: usize = 16 * 1024 * 1024;

/// The request of one listing, as rmcp's client would send it.
pub(crate) struct Listing<'a> {
    pub(crate) uri: &'a str,
    pub(crate) message: &'a ClientJsonRpcMessage,
    pub(crate) session_id: Option<&'a str>,
    pub(crate) auth: Option<&'a str>,
    pub(crate) headers: &'a HashMap<HeaderName, HeaderValue>,
}

type Answer = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// Whether `message` asks for the upstream's tools.
fn is_listing(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::ListToolsRequest(_)))
}

/// Whether a `Content-Type` names `media` (parameters and case aside).
pub(crate) fn is_media(content_type: Option<&HeaderValue>, media: &str) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(media))
}

/// Send a `tools/list` and read its answer for task support; `None` when `message` is not a
/// listing or its answer is one for rmcp's client to read (it then sends it again).
pub(crate) async fn list(
    client: &reqwest::Client,
    listing: Listing<'_>,
    tasks: &Arc<TaskTools>,
) -> Option<Answer> {
    if !is_listing(listing.message) {
        return None;
    }
    let mut request = client.post(listing.uri).header(ACCEPT, "text/event-stream, application/json");
    if let Some(token) = listing.auth {
        request = request.bearer_auth(token);
    }
    for (name, value) in listing.headers {
        request = request.header(name, value);
    }
    if let Some(session) = listing.session_id {
        request = request.header(SESSION_ID, session);
    }
    let response = match request.json(listing.message).send().await {
        Ok(response) => response,
        Err(error) => return Some(Err(StreamableHttpError::Client(error))),
    };
    if response.status() != reqwest::StatusCode::OK {
        return None;
    }
    let session = response.headers().get(SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let content_type = response.headers().get(CONTENT_TYPE).cloned();
    if is_media(content_type.as_ref(), "text/event-stream") {
        let events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream()).boxed();
        return Some(Ok(StreamableHttpPostResponse::Sse(tap_events(events, tasks.clone()), session)));
    }
    if !is_media(content_type.as_ref(), "application/json") {
        return None;
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(chunk) if body.len() + chunk.len() <= MAX_LISTING => body.extend_from_slice(&chunk),
            Ok(_) => return None,
            Err(error) => return Some(Err(StreamableHttpError::Client(error))),
        }
    }
    tasks.note(&body);
    Some(match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
        Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
        Err(error) => Err(StreamableHttpError::UnexpectedServerResponse(
            format!("the tool listing is not a JSON-RPC message: {error}").into(),
        )),
    })
}
