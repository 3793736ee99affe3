//! Bodies that are one field's value (`body_field`): a JSON array is sent as the body itself,
//! a free-form object as it is given, a binary body (`body_encoding = "binary"`) as the
//! decoded bytes of its base64 text under the route's `content_type`, a text body
//! (`"text"`) as its text; a JSON body in a `+json`
//! type keeps that type. A binary body that is not base64, or over the upload limit, is
//! `INVALID_PARAMS` and nothing is sent. The backend is a real axum server on 127.0.0.1:0
//! that records the exact bytes and `Content-Type` it received.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolgate_core::{Caller, Envelope, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::HttpOptions;

const TABLE: &str = r#"
tool = "update_things"
description = "An API whose bodies are not objects of fields."
domain = "things"

[[routes]]
op = "create_users"
method = "POST"
path = "/user/createWithList"
summary = "Create users from a list"
body_field = "users"
fields = [
  { name = "users", type = "array", required = true, min_items = 1, items = { type = "object", fields = [
    { name = "id", type = "integer" },
    { name = "user_name", type = "string", wire_name = "username" },
  ] } },
]

[[routes]]
op = "set_metadata"
method = "POST"
path = "/files/{id}/metadata"
summary = "Free-form metadata"
body = "optional"
body_field = "body"
content_type = "application/merge-patch+json"
fields = [
  { name = "id", type = "string", required = true },
  { name = "body", type = "object", values = { type = "any" } },
]

[[routes]]
op = "upload_chunk"
method = "PUT"
path = "/sessions/{id}"
summary = "Upload a part of a file"
body_encoding = "binary"
body_field = "content"
content_type = "image/png"
fields = [
  { name = "id", type = "string", required = true },
  { name = "content", type = "string", content_encoding = "base64", required = true },
  { name = "digest", type = "string", in = "header", wire_name = "Digest", required = true },
]

[[routes]]
op = "upload_raw"
method = "POST"
path = "/raw"
summary = "An optional binary body"
body = "optional"
body_encoding = "binary"
body_field = "content"
fields = [{ name = "content", type = "string", content_encoding = "base64" }]

[[routes]]
op = "set_cover"
method = "PUT"
path = "/covers/{id}"
summary = "A cover image as base64 text (Spotify's playlist images)"
body_encoding = "text"
body_field = "image"
content_type = "image/jpeg"
fields = [{ name = "id", type = "string", required = true }, { name = "image", type = "string", required = true }]

[[routes]]
op = "create_doc"
method = "POST"
path = "/docs"
summary = "A JSON:API document"
content_type = "application/vnd.api+json"
fields = [{ name = "title", type = "string", required = true }]
"#;

/// One request as the backend received it: exact bytes.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    method: String,
    target: String,
    content_type: Option<String>,
    digest: Option<String>,
    body: Vec<u8>,
}

type Log = Arc<Mutex<Vec<Seen>>>;

async fn record(State(log): State<Log>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> String {
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    log.lock().unwrap().push(Seen {
        method: method.to_string(),
        target: uri.to_string(),
        content_type: header("content-type"),
        digest: header("digest"),
        body: body.to_vec(),
    });
    "{}".to_owned()
}

struct Env {
    gateway: Gateway,
    log: Log,
    _server: tokio::task::JoinHandle<()>,
}

impl Env {
    async fn start(max_upload_bytes: usize) -> Self {
        let log: Log = Arc::default();
        let app = Router::new().fallback(record).with_state(log.clone());
        let options = HttpOptions::default().max_upload_bytes(max_upload_bytes);
        let (gateway, server) = crate::recorder::serve_gateway(app, &[TABLE], options).await;
        Self { gateway, log, _server: server }
    }

    async fn call(&self, params: Value) -> Envelope {
        let ctx = ToolContext::new(Caller::new("alice", "member"));
        self.gateway.execute(&ctx, "update_things", params, &CallOptions::default().retries(0)).await
    }

    /// The one request a successful call made.
    async fn sent(&self, params: Value) -> Seen {
        let answer = self.call(params).await;
        assert!(answer.success, "{}", serde_json::to_string(&answer).unwrap());
        let mut seen = std::mem::take(&mut *self.log.lock().unwrap());
        assert_eq!(seen.len(), 1, "{seen:?}");
        seen.pop().unwrap()
    }

    fn refused(&self, answer: &Envelope) -> String {
        let error = answer.error.clone().expect("refused");
        assert_eq!(error.code, ErrorCode::InvalidParams, "{error:?}");
        assert!(self.log.lock().unwrap().is_empty(), "nothing reached the backend");
        serde_json::to_string(&error.details).unwrap()
    }
}

#[tokio::test]
async fn an_array_body_is_sent_as_the_array_itself_under_its_members_wire_names() {
    let env = Env::start(1024).await;
    let seen =
        env.sent(json!({"op": "create_users", "users": [{"id": 1, "user_name": "ada"}, {"id": 2}]})).await;
    assert_eq!((seen.method.as_str(), seen.target.as_str()), ("POST", "/user/createWithList"));
    assert_eq!(seen.content_type.as_deref(), Some("application/json"));
    assert_eq!(seen.body, br#"[{"id":1,"username":"ada"},{"id":2}]"#);
    // Its items are checked by their schema, as any array field's: nothing is sent.
    let answer = env.call(json!({"op": "create_users", "users": [{"id": "one"}]})).await;
    assert!(env.refused(&answer).contains("/users/0/id"));
    let answer = env.call(json!({"op": "create_users", "users": []})).await;
    env.refused(&answer);
}

#[tokio::test]
async fn a_free_form_body_is_sent_as_given_in_its_documented_json_type_and_only_when_given() {
    let env = Env::start(1024).await;
    let body = json!({"name": "Aaron", "nested": {"list": [1, null, "x"]}, "n": 1.5});
    let seen = env.sent(json!({"op": "set_metadata", "id": "f/1", "body": body})).await;
    assert_eq!(seen.target, "/files/f%2F1/metadata");
    assert_eq!(seen.content_type.as_deref(), Some("application/merge-patch+json"));
    assert_eq!(serde_json::from_slice::<Value>(&seen.body).unwrap(), body);
    // `body = "optional"` and no body given: no body and no Content-Type.
    let seen = env.sent(json!({"op": "set_metadata", "id": "f1"})).await;
    assert_eq!((seen.content_type, seen.body), (None, Vec::new()));
    // An object body in a `+json` type keeps the type.
    let seen = env.sent(json!({"op": "create_doc", "title": "t"})).await;
    assert_eq!(seen.content_type.as_deref(), Some("application/vnd.api+json"));
    assert_eq!(seen.body, br#"{"title":"t"}"#);
}

#[tokio::test]
async fn a_binary_body_is_its_decoded_bytes_with_the_documented_content_type() {
    let env = Env::start(64).await;
    // Bytes that are not UTF-8.
    let bytes: Vec<u8> =
        [&[0x89u8, b'P', b'N', b'G', 0, 0xff, 0xfe, b'\r', b'\n'][..], &[7u8; 30][..]].concat();
    let seen = env
        .sent(json!({"op": "upload_chunk", "id": "s1", "content": STANDARD.encode(&bytes),
            "digest": "sha=abc"}))
        .await;
    assert_eq!((seen.method.as_str(), seen.target.as_str()), ("PUT", "/sessions/s1"));
    assert_eq!(seen.content_type.as_deref(), Some("image/png"));
    assert_eq!(seen.digest.as_deref(), Some("sha=abc"));
    assert_eq!(seen.body, bytes);
    // No `content_type`: application/octet-stream; at the limit, sent.
    let seen = env.sent(json!({"op": "upload_raw", "content": STANDARD.encode([1u8; 64])})).await;
    assert_eq!(seen.content_type.as_deref(), Some("application/octet-stream"));
    assert_eq!(seen.body, [1u8; 64]);
    // Optional and not given: nothing sent as body.
    let seen = env.sent(json!({"op": "upload_raw"})).await;
    assert_eq!((seen.content_type, seen.body), (None, Vec::new()));
}

#[tokio::test]
async fn a_binary_body_that_is_not_base64_or_over_the_upload_limit_is_refused_before_any_request() {
    let env = Env::start(16).await;
    let answer =
        env.call(json!({"op": "upload_chunk", "id": "s", "content": "not base64!", "digest": "d"})).await;
    let details = env.refused(&answer);
    assert!(details.contains("\"/content\"") && details.contains("base64"), "{details}");
    let answer = env
        .call(json!({"op": "upload_chunk", "id": "s", "content": STANDARD.encode([0u8; 17]), "digest": "d"}))
        .await;
    let details = env.refused(&answer);
    assert!(details.contains("17 bytes") && details.contains("upload limit of 16 bytes"), "{details}");
    let answer = env.call(json!({"op": "upload_raw", "content": STANDARD.encode([0u8; 17])})).await;
    env.refused(&answer);
}

#[tokio::test]
async fn a_text_body_is_its_text_as_given_with_the_documented_content_type_and_the_upload_limit() {
    let env = Env::start(16).await;
    let seen = env.sent(json!({"op": "set_cover", "id": "p1", "image": "/9j/2wCEABoZ"})).await;
    assert_eq!((seen.method.as_str(), seen.target.as_str()), ("PUT", "/covers/p1"));
    assert_eq!(seen.content_type.as_deref(), Some("image/jpeg"));
    assert_eq!(seen.body, b"/9j/2wCEABoZ", "sent as given, not decoded");
    let answer = env.call(json!({"op": "set_cover", "id": "p1", "image": "x".repeat(17)})).await;
    let details = env.refused(&answer);
    assert!(details.contains("17 bytes") && details.contains("upload limit of 16 bytes"), "{details}");
}
