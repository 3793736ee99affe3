//! A tool call's POST sent by toolgate itself, not through rmcp's client.
//!
//! rmcp's client carries a call across three tasks (the caller, its service loop, its
//! transport worker) and parses every answer as any of the 25 results a server may send,
//! formatting an error for each that does not fit. For a call, toolgate knows the one
//! answer it wants: a `tools/call` POST to an HTTP upstream goes out from the calling
//! task, on the connection pool rmcp's transport uses, and its answer is read as a tool
//! result. Everything else (the handshake, listings, notifications, the session's event
//! stream, its expiry) stays rmcp's; this path only reads what rmcp learnt: the protocol
//! version and the session id the handshake gave.
//!
//! It is used once the handshake is done at a protocol version before 2026-07-28 (whose
//! per-request headers rmcp derives from the tool's schema). An answer that comes as an
//! event stream is read event by event ([`stream`]): the upstream's progress, logs and
//! changed lists go where rmcp's handler sends them, its questions (elicitation, sampling,
//! roots) to the person behind the call ([`crate::handler`]) with the answer POSTed back,
//! and a stream closed before the answer is resumed from its last event id. A session the
//! upstream no longer knows (404) runs nothing: the call then goes the usual way, and rmcp
//! opens a new session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use http_body_util::BodyExt;
use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER,
};
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, ErrorData, NumberOrString, ProtocolVersion,
    RequestId, ServerJsonRpcMessage,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::handler::Refresh;
use crate::link::Link;

mod stream;
mod wire;

use wire::{Incoming, Unsent, Wire};

const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// What rmcp's client accepts, in its order.
const ACCEPTS: &str = "text/event-stream, application/json";
/// The largest JSON answer or event read, as rmcp's client bounds them.
const MAX_ANSWER: usize = 16 * 1024 * 1024;
/// The first id of a direct call: far above rmcp's own counter (which starts at 0 with each
/// connection), so that an upstream never sees one id for two requests of a session.
const FIRST_ID: i64 = 1 << 40;

/// The direct path of one connection to an HTTP upstream.
pub(crate) struct Direct {
    wire: Wire,
    uri: http::Uri,
    /// The upstream's configured `headers`.
    headers: HeaderMap,
    learned: RwLock<Learned>,
    next_id: AtomicI64,
    /// Tells the supervisor to read a list again.
    refresh: mpsc::UnboundedSender<Refresh>,
}

/// What rmcp's transport has shown of the connection so far.
#[derive(Default)]
struct Learned {
    /// The negotiated version, as rmcp sends it after the handshake (`None`: not yet, or a
    /// version this path does not speak).
    version: Option<HeaderValue>,
    session: Option<Arc<str>>,
}

/// What a direct call needs of the connection: the version and session to send.
pub(crate) struct Route {
    version: HeaderValue,
    session: Option<Arc<str>>,
}

/// One direct call: the tool's name on the upstream, its arguments and what the caller
/// sends besides them.
pub(crate) struct Request<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<&'a serde_json::Map<String, Value>>,
    /// The caller in `_meta` (identity `meta`).
    pub(crate) caller: Option<Value>,
    /// The call's `Authorization: Bearer` token.
    pub(crate) token: Option<&'a str>,
    /// The caller's identity headers.
    pub(crate) headers: &'a [(HeaderName, HeaderValue)],
}

/// How a direct call failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Nothing ran (the upstream forgot the session): send it the usual way.
    Again,
    /// The credential was refused (401, 403): nothing ran.
    Refused(u16),
    /// The upstream answered with a JSON-RPC error.
    Mcp(ErrorData),
    /// The upstream limits calls (429) and ran none; its `Retry-After`, when short.
    Busy(Option<String>),
    /// It refused the request as malformed or unwanted (another 4xx): nothing ran.
    Rejected(u16),
    /// The answer is not a tool result, or not readable.
    NotToolResult(&'static str),
    /// Nothing was sent: the connection could not be opened.
    NotSent(&'static str),
    /// The request may have reached the upstream and no answer came: the connection broke.
    Unanswered(&'static str),
    /// The upstream failed (HTTP 5xx); it may have run the call.
    Failed(u16),
}

impl Direct {
    pub(crate) fn new(
        client: reqwest::Client,
        url: &str,
        headers: &HashMap<HeaderName, HeaderValue>,
        refresh: mpsc::UnboundedSender<Refresh>,
    ) -> Result<Self, String> {
        let uri: http::Uri = url.parse().map_err(|_| "the upstream's `url` is not a URL".to_owned())?;
        let wire = Wire::new(uri.scheme_str().unwrap_or_default(), client);
        let headers = headers.iter().map(|(name, value)| (name.clone(), value.clone())).collect();
        Ok(Self {
            wire,
            uri,
            headers,
            learned: RwLock::default(),
            next_id: AtomicI64::new(FIRST_ID),
            refresh,
        })
    }

    /// A POST rmcp's transport is about to send, with its session and headers.
    pub(crate) fn before_post(
        &self,
        message: &ClientJsonRpcMessage,
        session: Option<&Arc<str>>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) {
        let mut learned = self.learned.write().unwrap_or_else(|e| e.into_inner());
        if is_initialize(message) {
            *learned = Learned::default();
            return;
        }
        // By name: a `HashMap` of header names cannot be searched by `&str`.
        let version = headers.get(&HeaderName::from_static(PROTOCOL_VERSION)).filter(|v| speaks(v)).cloned();
        if version.is_some() {
            learned.version = version;
            learned.session = session.cloned();
        }
    }

    /// The version and session to send a call with; `None`: the usual way.
    pub(crate) fn route(&self) -> Option<Route> {
        let learned = self.learned.read().unwrap_or_else(|e| e.into_inner());
        Some(Route { version: learned.version.clone()?, session: learned.session.clone() })
    }

    /// A request id of this path.
    pub(crate) fn next_id(&self) -> RequestId {
        NumberOrString::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Send the call `id` and read its answer. `link` gets what the upstream sends
    /// besides it.
    pub(crate) async fn call(
        &self,
        link: &Link,
        route: &Route,
        id: &RequestId,
        request: Request<'_>,
    ) -> Result<CallToolResult, Failure> {
        let body = Body {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: Params {
                name: request.name,
                arguments: request.arguments,
                meta: Meta { progress_token: id, caller: request.caller.as_ref() },
            },
        };
        let body =
            serde_json::to_vec(&body).map_err(|_| Failure::NotSent("the call could not be written"))?;
        let mut post = self.request(http::Method::POST, route, request.token, ACCEPTS, body.into())?;
        for (name, value) in request.headers {
            post.headers_mut().insert(name.clone(), value.clone());
        }
        let response = self.wire.send(post).await.map_err(sent_error)?;
        let status = response.status();
        match status.as_u16() {
            202 | 204 => return Err(Failure::NotToolResult("it accepted the call without answering it")),
            200..=299 => {}
            401 | 403 => return Err(Failure::Refused(status.as_u16())),
            404 if route.session.is_some() => return Err(Failure::Again),
            429 => {
                let retry = response.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok());
                return Err(Failure::Busy(retry.filter(|v| v.len() <= 64).map(str::to_owned)));
            }
            500.. => return Err(Failure::Failed(status.as_u16())),
            other if is_media(response.headers(), "application/json") => {
                let body = read(response).await?;
                return Err(match serde_json::from_slice::<Reply>(&body) {
                    Ok(Reply { error: Some(error), .. }) => Failure::Mcp(error),
                    _ => Failure::Rejected(other),
                });
            }
            // A redirect is not followed (the call's token never goes to another address).
            other => return Err(Failure::Rejected(other)),
        }
        if is_media(response.headers(), "application/json") {
            let body = read(response).await?;
            return answer_of(&body, id);
        }
        if is_media(response.headers(), "text/event-stream") {
            return self.events(link, route, id, request.token, response).await;
        }
        Err(Failure::NotToolResult("its answer was neither JSON nor an event stream"))
    }

    /// A request to the upstream with the transport's headers, the configured ones and
    /// `token`; a POST carries `body` as JSON.
    fn request(
        &self,
        method: http::Method,
        route: &Route,
        token: Option<&str>,
        accept: &'static str,
        body: Bytes,
    ) -> Result<http::Request<Bytes>, Failure> {
        let mut request = http::Request::new(body);
        *request.uri_mut() = self.uri.clone();
        let headers = request.headers_mut();
        *headers = self.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        if method == http::Method::POST {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        *request.method_mut() = method;
        let headers = request.headers_mut();
        headers.insert(HeaderName::from_static(PROTOCOL_VERSION), route.version.clone());
        if let Some(session) = &route.session {
            let session = HeaderValue::from_str(session)
                .map_err(|_| Failure::NotSent("the session id cannot be sent in a header"))?;
            headers.insert(HeaderName::from_static(crate::listing::SESSION_ID), session);
        }
        if let Some(token) = token {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| Failure::NotSent("the call's token cannot be sent in a header"))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(request)
    }
}

/// A JSON answer as the tool result of call `id`.
fn answer_of(body: &[u8], id: &RequestId) -> Result<CallToolResult, Failure> {
    match serde_json::from_slice::<Reply>(body) {
        Ok(Reply { id: Some(answered), .. }) if answered != *id => {
            Err(Failure::NotToolResult("it answered another request"))
        }
        Ok(Reply { result: Some(result), error: None, .. }) => Ok(result),
        Ok(Reply { error: Some(error), .. }) => Err(Failure::Mcp(error)),
        // No tool result in it, or one that is not: read it as whatever it is.
        _ => match serde_json::from_slice::<ServerJsonRpcMessage>(body) {
            Ok(ServerJsonRpcMessage::Error(error)) => Err(Failure::Mcp(error.error)),
            Ok(ServerJsonRpcMessage::Response(_)) => {
                Err(Failure::NotToolResult("its answer was not a tool result"))
            }
            _ => Err(Failure::NotToolResult("its answer was not a JSON-RPC answer")),
        },
    }
}

/// A send that failed: before anything left (the connection could not be opened), or
/// after the request may have reached the upstream.
fn sent_error(error: Unsent) -> Failure {
    if error.connect {
        Failure::NotSent("the connection could not be opened")
    } else {
        Failure::Unanswered("broke the connection while the request was being sent")
    }
}

/// The body of an answer, at most [`MAX_ANSWER`] bytes.
async fn read(response: http::Response<Incoming>) -> Result<Vec<u8>, Failure> {
    let length = response.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|n| n > MAX_ANSWER as u64) {
        return Err(Failure::NotToolResult("its answer is over 16 MiB"));
    }
    let mut body = Vec::with_capacity(length.unwrap_or(0) as usize);
    let mut incoming = response.into_body();
    while let Some(frame) = incoming.frame().await {
        let frame = frame.map_err(|_| Failure::Unanswered("broke off its answer"))?;
        let Ok(chunk) = frame.into_data() else { continue };
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(Failure::NotToolResult("its answer is over 16 MiB"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

/// Whether this path speaks `version`: one before the per-request headers of 2026-07-28.
fn speaks(version: &HeaderValue) -> bool {
    version.to_str().is_ok_and(|v| v.len() == 10 && v < ProtocolVersion::STANDARD_HEADERS.as_str())
}

/// Whether the `Content-Type` of `headers` names `media` (parameters and case aside).
fn is_media(headers: &HeaderMap, media: &str) -> bool {
    crate::listing::is_media(headers.get(CONTENT_TYPE), media)
}

#[derive(Serialize)]
struct Body<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'static str,
    params: Params<'a>,
}

#[derive(Serialize)]
struct Params<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a serde_json::Map<String, Value>>,
    #[serde(rename = "_meta")]
    meta: Meta<'a>,
}

#[derive(Serialize)]
struct Meta<'a> {
    #[serde(rename = "progressToken")]
    progress_token: &'a RequestId,
    /// [`crate::CALLER_META_KEY`].
    #[serde(rename = "io.toolgate/caller", skip_serializing_if = "Option::is_none")]
    caller: Option<&'a Value>,
}

/// A JSON-RPC answer read for a tool result only.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    result: Option<CallToolResult>,
    #[serde(default)]
    error: Option<ErrorData>,
}

#[cfg(test)]
mod tests {
    use super::stream::last_event_end;
    use super::*;

    #[test]
    fn a_call_is_written_as_rmcp_writes_it_with_the_caller_under_the_meta_key() {
        let id = NumberOrString::Number(FIRST_ID);
        let arguments = serde_json::json!({"city": "Oslo"});
        let caller = serde_json::json!({"user_id": "u1"});
        let body = Body {
            jsonrpc: "2.0",
            id: &id,
            method: "tools/call",
            params: Params {
                name: "query_weather",
                arguments: arguments.as_object(),
                meta: Meta { progress_token: &id, caller: Some(&caller) },
            },
        };
        let written = serde_json::to_value(&body).unwrap();
        let mut meta = serde_json::Map::new();
        meta.insert("progressToken".into(), serde_json::json!(FIRST_ID));
        meta.insert(crate::CALLER_META_KEY.into(), caller.clone());
        let expected = serde_json::json!({
            "jsonrpc": "2.0", "id": FIRST_ID, "method": "tools/call",
            "params": {"name": "query_weather", "arguments": {"city": "Oslo"}, "_meta": meta},
        });
        assert_eq!(written, expected);
        // rmcp reads it as the call it is.
        let read: ClientJsonRpcMessage = serde_json::from_value(written).unwrap();
        assert!(
            matches!(read, ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_)))
        );
    }

    #[test]
    fn answers_are_read_as_tool_results_errors_or_neither() {
        let id = NumberOrString::Number(7);
        let ok =
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#;
        let result = answer_of(ok, &id).unwrap();
        assert_eq!(result.is_error, Some(false));
        let error = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no such tool"}}"#;
        assert!(matches!(answer_of(error, &id), Err(Failure::Mcp(e)) if e.message == "no such tool"));
        let other = br#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#;
        assert!(matches!(answer_of(other, &id), Err(Failure::NotToolResult("it answered another request"))));
        let not_a_tool_result = br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#;
        assert!(matches!(answer_of(not_a_tool_result, &id), Err(Failure::NotToolResult(_))));
        assert!(matches!(answer_of(b"<html>", &id), Err(Failure::NotToolResult(_))));
    }

    #[test]
    fn only_versions_before_the_per_request_headers_are_spoken() {
        for (version, spoken) in [
            ("2025-11-25", true),
            ("2025-03-26", true),
            ("2026-07-28", false),
            ("2027-01-01", false),
            ("x", false),
        ] {
            assert_eq!(speaks(&HeaderValue::from_static(version)), spoken, "{version}");
        }
    }

    #[test]
    fn an_event_ends_at_a_blank_line_of_either_kind() {
        assert_eq!(last_event_end(b"data: a\n\ndata: b"), Some(9));
        assert_eq!(last_event_end(b"data: a\r\n\r\nda"), Some(11));
        assert_eq!(last_event_end(b"data: a\n"), None);
    }
}
