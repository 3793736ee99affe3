//! A minimal MCP client over streamable HTTP, written by hand on reqwest so
//! tests see what a client sees: status codes, headers, JSON or SSE bodies.
//! (The interop tests use the official Python SDK instead; this one is for
//! the cases an SDK hides.)

use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use serde_json::{Value, json};

/// The protocol version the tests speak.
pub const PROTOCOL: &str = "2025-06-18";

/// An `initialize` request.
pub fn initialize(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}}
    })
}

/// The `notifications/initialized` notification.
pub fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// A JSON-RPC request.
pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `tools/call` of the meta tool `execute_tool` for `tool` with `parameters`.
pub fn execute_tool(id: u64, tool: &str, parameters: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": "execute_tool", "arguments": {"tool_name": tool, "parameters": parameters}}),
    )
}

/// A POST of JSON to an MCP endpoint with the usual headers (bearer `key`,
/// the session and protocol headers once there is a session).
pub async fn post(
    client: &reqwest::Client,
    endpoint: &str,
    key: Option<&str>,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Result<Reply> {
    post_raw(client, endpoint, key, session, "application/json", body.to_string()).await
}

/// [`post`] with any content type and body.
pub async fn post_raw(
    client: &reqwest::Client,
    endpoint: &str,
    key: Option<&str>,
    session: Option<&str>,
    content_type: &str,
    body: String,
) -> reqwest::Result<Reply> {
    let mut request = client
        .post(endpoint)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, content_type)
        .body(body);
    if let Some(key) = key {
        request = request.header(AUTHORIZATION, format!("Bearer {key}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
    }
    Reply::read(request.send().await?).await
}

/// `initialize` + `notifications/initialized` (which must be accepted with
/// 202); the session id and the `initialize` result.
pub async fn open_session(client: &reqwest::Client, endpoint: &str, key: Option<&str>) -> (String, Value) {
    let reply = post(client, endpoint, key, None, &initialize(1)).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text);
    let session = reply.session().expect("a session id");
    let result = reply.response(1).expect("an initialize result")["result"].clone();
    let ack = post(client, endpoint, key, Some(&session), &initialized()).await.unwrap();
    assert_eq!(ack.status, 202, "{}", ack.text);
    (session, result)
}

/// An HTTP reply read to its end.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
}

impl Reply {
    pub async fn read(response: reqwest::Response) -> reqwest::Result<Self> {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await?;
        Ok(Self { status, headers, text })
    }

    /// The `Mcp-Session-Id` header.
    pub fn session(&self) -> Option<String> {
        self.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// Every JSON-RPC message in the body: one JSON document, or SSE `data:` lines.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.text) {
            return match value {
                Value::Array(items) => items,
                other => vec![other],
            };
        }
        sse_events(&self.text).into_iter().filter_map(|(_, data)| serde_json::from_str(&data).ok()).collect()
    }

    /// The response to request `id`.
    pub fn response(&self, id: u64) -> Option<Value> {
        self.messages().into_iter().find(|m| m["id"] == json!(id) && m.get("method").is_none())
    }

    /// The answer, however it came: the first SSE message with an id, else
    /// the body as JSON (an HTTP-level refusal is a JSON body without one).
    pub fn answer(&self) -> Option<Value> {
        sse_events(&self.text)
            .into_iter()
            .filter_map(|(_, data)| serde_json::from_str::<Value>(&data).ok())
            .find(|v| v.get("id").is_some())
            .or_else(|| serde_json::from_str(&self.text).ok())
    }
}

/// The (event, data) pairs of an SSE body.
pub fn sse_events(text: &str) -> Vec<(String, String)> {
    let mut events = Vec::new();
    for block in text.replace("\r\n", "\n").split("\n\n") {
        let mut event = "message".to_owned();
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(rest) = line.strip_prefix("event:") {
                event = rest.trim().to_owned();
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push(rest.strip_prefix(' ').unwrap_or(rest).to_owned());
            }
        }
        if !data.is_empty() {
            events.push((event, data.join("\n")));
        }
    }
    events
}

/// Reads SSE events from a streaming response, one at a time.
#[derive(Debug)]
pub struct SseReader {
    response: reqwest::Response,
    buffer: String,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> Self {
        Self { response, buffer: String::new() }
    }

    /// The next event (waits up to `within`); `None` at the end of the stream.
    pub async fn next(&mut self, within: Duration) -> Option<(String, String)> {
        tokio::time::timeout(within, async {
            loop {
                let normalized = self.buffer.replace("\r\n", "\n");
                if let Some(cut) = normalized.find("\n\n") {
                    let block = normalized[..cut].to_owned();
                    self.buffer = normalized[cut + 2..].to_owned();
                    if let Some(event) = sse_events(&format!("{block}\n\n")).into_iter().next() {
                        return Some(event);
                    }
                    continue;
                }
                match self.response.chunk().await.ok()? {
                    Some(bytes) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                    None => return None,
                }
            }
        })
        .await
        .expect("an SSE event in time")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str) -> Reply {
        Reply { status: 200, headers: HeaderMap::new(), text: text.to_owned() }
    }

    #[test]
    fn sse_bodies_are_split_into_named_events_with_joined_data() {
        let body = "event: ready\r\ndata: {}\r\n\r\n: a comment\n\ndata: line one\ndata:line two\n\n";
        assert_eq!(
            sse_events(body),
            [("ready".to_owned(), "{}".to_owned()), ("message".to_owned(), "line one\nline two".to_owned())]
        );
    }

    #[test]
    fn the_answer_is_the_first_message_with_an_id_or_the_json_body() {
        let sse = reply(
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"id\":3,\"result\":{}}\n\n",
        );
        assert_eq!(sse.answer(), Some(json!({"id": 3, "result": {}})));
        assert_eq!(sse.response(3), Some(json!({"id": 3, "result": {}})));
        assert_eq!(sse.messages().len(), 2);
        let refusal = reply("{\"error\":{\"code\":\"UNAUTHORIZED\"}}");
        assert_eq!(refusal.answer(), Some(json!({"error": {"code": "UNAUTHORIZED"}})));
        assert_eq!(refusal.response(1), None);
        assert_eq!(reply("not json").answer(), None);
    }
}
