//! A scripted OpenAI-compatible model server: a real axum server on
//! 127.0.0.1 that answers `POST /v1/chat/completions` with the next turn of
//! its script (an SSE stream, an HTTP error, a slow or endless stream) and
//! records every request it received, so tests can check what the agent sent.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Value, json};

/// What one turn answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// These SSE payloads (JSON chunks), then `[DONE]`.
    Sse(Vec<Value>),
    /// An HTTP error with this body.
    Status(u16, String),
    /// An HTTP error with this `Retry-After` header.
    RetryAfter(u16, String),
    /// One SSE line that never ends: `data: {"choices":...,"content":"xxx...`
    /// in 64 KiB pieces, without a newline, for ever.
    EndlessLine,
    /// Content chunks of 16 KiB each, as fast as they are taken, for ever.
    Flood,
    /// One chunk per `every`, without end.
    Endless { every: Duration },
    /// One `application/json` completion (a server that ignores `stream`).
    Json(Value),
}

/// A received request: its JSON body, its `Authorization` header and when it came.
#[derive(Debug, Clone)]
pub struct Received {
    pub body: Value,
    pub authorization: Option<String>,
    pub at: Instant,
}

#[derive(Default)]
struct Script {
    turns: VecDeque<Reply>,
    /// Answered when the script is used up (a model that never stops).
    repeat: Option<Reply>,
    received: Vec<Received>,
    /// Bytes of `EndlessLine` and `Flood` bodies the server handed to the connection.
    sent: Arc<AtomicUsize>,
}

/// The running server.
pub struct ModelServer {
    pub base_url: String,
    script: Arc<Mutex<Script>>,
    _task: tokio::task::JoinHandle<()>,
}

impl ModelServer {
    pub async fn start(turns: Vec<Reply>) -> Self {
        Self::start_with(turns, None).await
    }

    /// After `turns`, answer `repeat` forever.
    pub async fn start_with(turns: Vec<Reply>, repeat: Option<Reply>) -> Self {
        let script = Arc::new(Mutex::new(Script {
            turns: turns.into(),
            repeat,
            received: Vec::new(),
            sent: Arc::default(),
        }));
        let app = Router::new().route("/v1/chat/completions", post(answer)).with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { base_url, script, _task: task }
    }

    pub fn received(&self) -> Vec<Received> {
        self.script.lock().unwrap().received.clone()
    }

    /// Bytes of endless lines sent so far.
    pub fn sent(&self) -> usize {
        self.script.lock().unwrap().sent.load(Ordering::SeqCst)
    }

    /// The messages of request `i`.
    pub fn messages(&self, i: usize) -> Vec<Value> {
        self.received()[i].body["messages"].as_array().cloned().unwrap_or_default()
    }

    /// The function names offered in request `i`.
    pub fn tools_offered(&self, i: usize) -> Vec<String> {
        self.received()[i].body["tools"]
            .as_array()
            .map(|t| t.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    }
}

async fn answer(State(script): State<Arc<Mutex<Script>>>, headers: HeaderMap, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).expect("the agent sent JSON");
    let authorization = headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap().to_owned());
    let (reply, sent) = {
        let mut script = script.lock().unwrap();
        script.received.push(Received { body, authorization, at: Instant::now() });
        (script.turns.pop_front().or_else(|| script.repeat.clone()), script.sent.clone())
    };
    match reply {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "{\"error\": {\"message\": \"script exhausted\"}}")
            .into_response(),
        Some(Reply::Status(code, body)) => {
            (StatusCode::from_u16(code).unwrap(), [(header::CONTENT_TYPE, "application/json")], body)
                .into_response()
        }
        Some(Reply::RetryAfter(code, after)) => (
            StatusCode::from_u16(code).unwrap(),
            [(header::CONTENT_TYPE, "application/json".to_owned()), (header::RETRY_AFTER, after)],
            "{\"error\": {\"message\": \"slow down\"}}",
        )
            .into_response(),
        Some(Reply::EndlessLine) => {
            let start = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".as_bytes().to_vec();
            let stream = futures::stream::unfold(Some(start), move |first| {
                let sent = sent.clone();
                async move {
                    let piece = first.unwrap_or_else(|| vec![b'x'; 64 * 1024]);
                    sent.fetch_add(piece.len(), Ordering::SeqCst);
                    Some((Ok::<_, std::io::Error>(piece), None))
                }
            });
            sse(Body::from_stream(stream))
        }
        Some(Reply::Flood) => {
            let chunk = json!({"choices": [{"index": 0, "delta": {"content": "y".repeat(16 * 1024)}}]});
            let chunk = format!("data: {chunk}\n\n").into_bytes();
            let stream = futures::stream::repeat(chunk).map(move |piece| {
                sent.fetch_add(piece.len(), Ordering::SeqCst);
                Ok::<_, std::io::Error>(piece)
            });
            sse(Body::from_stream(stream))
        }
        Some(Reply::Sse(chunks)) => {
            let mut text = String::new();
            for chunk in chunks {
                text.push_str(&format!("data: {chunk}\n\n"));
            }
            text.push_str("data: [DONE]\n\n");
            // Sent in small pieces, so that chunk borders fall mid-line.
            let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
                text.into_bytes().chunks(17).map(|c| Ok(c.to_vec())).collect();
            sse(Body::from_stream(futures::stream::iter(pieces)))
        }
        Some(Reply::Json(body)) => {
            (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
        }
        Some(Reply::Endless { every }) => {
            let stream = futures::stream::unfold(0u64, move |n| async move {
                tokio::time::sleep(every).await;
                let chunk = json!({"choices": [{"index": 0, "delta": {"content": "."}}]});
                Some((Ok::<_, std::io::Error>(format!("data: {chunk}\n\n").into_bytes()), n + 1))
            });
            sse(Body::from_stream(stream))
        }
    }
}

fn sse(body: Body) -> Response {
    Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(body).unwrap()
}

/// A text answer streamed word by word, with usage.
pub fn text(content: &str) -> Reply {
    let mut chunks = vec![json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})];
    for word in content.split_inclusive(' ') {
        chunks.push(json!({"choices": [{"index": 0, "delta": {"content": word}}]}));
    }
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    chunks.push(
        json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}),
    );
    Reply::Sse(chunks)
}

/// Native tool calls `(id, name, arguments JSON text)`, each call's
/// arguments split over two deltas as OpenAI does.
pub fn calls(list: &[(&str, &str, Value)]) -> Reply {
    let mut chunks =
        vec![json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null}}]})];
    for (i, (id, name, args)) in list.iter().enumerate() {
        let args = if args.is_string() { args.as_str().unwrap().to_owned() } else { args.to_string() };
        let (a, b) = args.split_at(args.len() / 2);
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}}]}));
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": i, "function": {"arguments": b}}]}}]}));
    }
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    chunks.push(
        json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}),
    );
    Reply::Sse(chunks)
}
