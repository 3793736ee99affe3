//! The OpenAI-compatible Chat Completions client: one streamed request per
//! model turn, retried when the failure is transient and nothing was
//! streamed yet. This module is the only place that knows the wire format.

mod error;
mod stream;

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::sync::mpsc::Sender;
use tokio::time::Instant;
use toolgate_core::Secret;

pub use error::{ModelError, ModelErrorKind};
use stream::{Assembler, SseDecoder};

use crate::{AgentConfig, Event, Usage};

/// Most bytes of an HTTP error body read (the message shown is cut far shorter).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The model's id for the call (tool messages answer it).
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments as the model wrote them (JSON text, not yet checked).
    pub arguments: String,
}

/// One chat message, in the Chat Completions wire shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text (empty for an assistant turn that only calls tools).
    pub content: String,
    /// The calls of an assistant turn.
    pub tool_calls: Vec<ToolCall>,
    /// The call a `tool` message answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message with text only.
    pub fn text(role: &str, content: impl Into<String>) -> Self {
        Self { role: role.to_owned(), content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }

    /// The answer to one tool call.
    pub fn tool(call_id: &str, content: impl Into<String>) -> Self {
        Self { tool_call_id: Some(call_id.to_owned()), ..Self::text("tool", content) }
    }

    /// The wire JSON.
    pub fn to_wire(&self) -> Value {
        let mut m = json!({ "role": self.role, "content": self.content });
        if !self.tool_calls.is_empty() {
            m["tool_calls"] = self
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
        }
        if let Some(id) = &self.tool_call_id {
            m["tool_call_id"] = json!(id);
        }
        m
    }

    /// Read the wire JSON back (as stored); `None` when it is not a message.
    pub fn from_wire(value: &Value) -> Option<Self> {
        let role = value["role"].as_str()?.to_owned();
        let tool_calls = value["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c["id"].as_str().unwrap_or_default().to_owned(),
                        name: c["function"]["name"].as_str().unwrap_or_default().to_owned(),
                        arguments: c["function"]["arguments"].as_str().unwrap_or("{}").to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Self {
            role,
            content: value["content"].as_str().unwrap_or_default().to_owned(),
            tool_calls,
            tool_call_id: value["tool_call_id"].as_str().map(str::to_owned),
        })
    }
}

/// What the model answered in one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantTurn {
    /// Its text.
    pub content: String,
    /// Its native tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// `stop`, `tool_calls`, `length`, ...
    pub finish_reason: Option<String>,
    /// Tokens, when the server reported them.
    pub usage: Option<Usage>,
}

/// The client of one model endpoint.
#[derive(Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<Secret>,
    temperature: Option<f32>,
    retries: u32,
    stream_usage: bool,
    max_turn_bytes: usize,
    max_line_bytes: usize,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("url", &self.url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ChatClient {
    /// A client for the configured endpoint.
    pub fn new(config: &AgentConfig) -> Result<Self, ModelError> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.idle_timeout)
            .read_timeout(config.idle_timeout)
            .build()
            .map_err(|e| {
                ModelError::new(ModelErrorKind::Connect, format!("cannot build the HTTP client: {e}"))
            })?;
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        Ok(Self {
            http,
            url,
            model: config.model.clone(),
            api_key: config.api_key.clone(),
            temperature: config.temperature,
            retries: config.model_retries,
            stream_usage: config.stream_usage,
            max_turn_bytes: config.max_turn_bytes,
            max_line_bytes: config.max_line_bytes,
        })
    }

    /// One model turn. Its text goes to `tokens` as [`Event::Token`]s while
    /// it streams; a consumer that does not read stalls the stream (the
    /// channel is bounded), it does not make it buffer. Transient failures
    /// are retried while nothing was streamed, after what the provider's
    /// `Retry-After` asks or else a growing pause; a `Retry-After` that
    /// would pass `deadline` ends the turn at once (kind `Deadline`).
    pub async fn complete(
        &self,
        messages: &[Message],
        tools: &[Value],
        tokens: &Sender<Event>,
        deadline: Instant,
    ) -> Result<AssistantTurn, ModelError> {
        let body = self.request_body(messages, tools);
        let mut attempt = 0;
        loop {
            let mut streamed = false;
            let result = self.attempt(&body, tokens, &mut streamed).await;
            match result {
                Err(e) if e.is_transient() && !streamed && attempt < self.retries => {
                    attempt += 1;
                    let pause = e.retry_after.unwrap_or(Duration::from_millis(250 * u64::from(attempt)));
                    let left = deadline.saturating_duration_since(Instant::now());
                    if e.retry_after.is_some() && pause >= left {
                        return Err(past_deadline(&e, pause, left));
                    }
                    tracing::warn!(kind = e.kind.as_str(), status = ?e.status, attempt, pause_ms = pause.as_millis() as u64, "model request failed, retrying");
                    tokio::time::sleep(pause).await;
                }
                other => return other,
            }
        }
    }

    fn request_body(&self, messages: &[Message], tools: &[Value]) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": messages.iter().map(Message::to_wire).collect::<Vec<_>>(),
            "stream": true,
        });
        if self.stream_usage {
            body["stream_options"] = json!({"include_usage": true});
        }
        if !tools.is_empty() {
            body["tools"] = json!(tools);
            body["tool_choice"] = json!("auto");
        }
        if let Some(t) = self.temperature {
            body["temperature"] = json!(t);
        }
        body
    }

    async fn attempt(
        &self,
        body: &Value,
        tokens: &Sender<Event>,
        streamed: &mut bool,
    ) -> Result<AssistantTurn, ModelError> {
        let key = self.api_key.as_ref().map(Secret::expose);
        let mut request = self.http.post(&self.url).json(body);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let mut response = request.send().await.map_err(|e| transport(&e).scrub(key))?;
        let status = response.status().as_u16();
        if status >= 400 {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| error::parse_retry_after(v, SystemTime::now()));
            let text = read_capped(&mut response, MAX_ERROR_BODY).await.unwrap_or_default().0;
            let mut e = ModelError::from_status(status, &text).scrub(key);
            e.retry_after = retry_after;
            return Err(e);
        }
        let mut assembler = Assembler::new(self.max_turn_bytes);
        let json_body = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let mut emit = async |text: String| {
            *streamed = true;
            // A closed receiver is seen by the run, which stops.
            let _ = tokens.send(Event::Token { text }).await;
        };
        if json_body {
            // A server that ignored `stream` answers one JSON object.
            let cap = self.max_turn_bytes.saturating_add(self.max_line_bytes);
            let (text, whole) =
                read_capped(&mut response, cap).await.map_err(|e| transport(&e).scrub(key))?;
            if !whole {
                return Err(ModelError::new(
                    ModelErrorKind::TooLarge,
                    format!(
                        "the model's JSON answer is longer than {cap} bytes ([agent] max_turn_bytes + max_line_bytes); it was refused"
                    ),
                ));
            }
            if let Some(text) = assembler.apply(&text).map_err(|e| e.scrub(key))? {
                emit(text).await;
            }
            assembler.done = true;
            return assembler.finish();
        }
        let mut decoder = SseDecoder::new(self.max_line_bytes);
        loop {
            let chunk = response.chunk().await.map_err(|e| transport(&e).scrub(key))?;
            let Some(chunk) = chunk else { break };
            for payload in decoder.push(&chunk).map_err(|e| e.scrub(key))? {
                if let Some(text) = assembler.apply(&payload).map_err(|e| e.scrub(key))? {
                    emit(text).await;
                }
            }
            if assembler.done {
                break;
            }
        }
        if let Some(payload) = decoder.finish()
            && let Some(text) = assembler.apply(&payload).map_err(|e| e.scrub(key))?
        {
            emit(text).await;
        }
        assembler.finish()
    }
}

/// At most `cap` bytes of the body (as text), and whether that was all of it.
async fn read_capped(response: &mut reqwest::Response, cap: usize) -> Result<(String, bool), reqwest::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = cap - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok((String::from_utf8_lossy(&bytes).into_owned(), false));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), true))
}

/// The error that ends a turn whose `Retry-After` asks for more time than the run has.
fn past_deadline(e: &ModelError, pause: Duration, left: Duration) -> ModelError {
    let mut out = ModelError::new(
        ModelErrorKind::Deadline,
        format!(
            "the model answered {} and asks to retry after {:.1} s (Retry-After), but the run's deadline is {:.1} s away; stopped now instead of waiting past it",
            e.status.map_or_else(|| e.kind.as_str().to_owned(), |s| format!("HTTP {s}")),
            pause.as_secs_f64(),
            left.as_secs_f64()
        ),
    );
    out.status = e.status;
    out.retry_after = e.retry_after;
    out
}

/// A transport failure: timeouts and refused connections are transient.
fn transport(e: &reqwest::Error) -> ModelError {
    let kind = if e.is_timeout() {
        ModelErrorKind::Timeout
    } else if e.is_connect() {
        ModelErrorKind::Connect
    } else if e.is_body() || e.is_decode() {
        ModelErrorKind::Malformed
    } else if e.is_builder() {
        ModelErrorKind::BadRequest
    } else {
        ModelErrorKind::Connect
    };
    // reqwest's Display names the URL but never the headers, so the key is not in it.
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        message.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    ModelError::new(kind, message)
}
