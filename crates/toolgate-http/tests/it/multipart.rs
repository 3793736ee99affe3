//! Multipart bodies (`body_encoding = "multipart"`, file uploads): a file field's base64 text
//! is decoded and sent as a file part, scalars as text parts, an object as a JSON part, an
//! array as one part per item; a file that is not base64, or files over the upload limit,
//! are `INVALID_PARAMS` and nothing is sent. The backend is a real axum server on
//! 127.0.0.1:0 that parses the body with axum's multipart extractor (multer), not ours.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Multipart, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use toolgate_core::{Caller, Envelope, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::HttpOptions;

const TABLE: &str = r#"
tool = "update_files"
description = "An upload API."
domain = "files"

[[routes]]
op = "upload"
method = "POST"
path = "/files"
summary = "Upload a file"
body_encoding = "multipart"
fields = [
  { name = "file", type = "string", content_encoding = "base64", required = true },
  { name = "purpose", type = "string", required = true },
  { name = "n", type = "integer" },
  { name = "attributes", type = "object", values = { type = "any" } },
  { name = "tags", type = "array", items = { type = "string" } },
  { name = "pages", type = "array", items = { type = "string", content_encoding = "base64" } },
  { name = "note_text", type = "string", wire_name = "note \"text\"" },
  { name = "skip", type = "string", nullable = true },
]

[[routes]]
op = "set_avatar"
method = "POST"
path = "/users/{id}/avatar"
summary = "An optional multipart body"
body = "optional"
body_encoding = "multipart"
fields = [{ name = "pic", type = "string", content_encoding = "base64" }]
"#;

/// One part as the server's parser read it.
#[derive(Debug, Clone, PartialEq)]
struct Part {
    name: String,
    file_name: Option<String>,
    content_type: Option<String>,
    data: Vec<u8>,
}

#[derive(Debug, Clone)]
struct Seen {
    content_type: Option<String>,
    parts: Result<Vec<Part>, String>,
}

type Log = Arc<Mutex<Vec<Seen>>>;

async fn parse(
    State(log): State<Log>,
    headers: HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> String {
    let content_type = headers.get("content-type").map(|v| v.to_str().unwrap().to_owned());
    let parts = async {
        let mut multipart = multipart.map_err(|e| e.to_string())?;
        let mut parts = Vec::new();
        while let Some(field) = multipart.next_field().await.map_err(|e| e.to_string())? {
            let name = field.name().unwrap_or_default().to_owned();
            let file_name = field.file_name().map(str::to_owned);
            let content_type = field.content_type().map(str::to_owned);
            let data = field.bytes().await.map_err(|e| e.to_string())?.to_vec();
            parts.push(Part { name, file_name, content_type, data });
        }
        Ok(parts)
    }
    .await;
    log.lock().unwrap().push(Seen { content_type, parts });
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
        let app = Router::new().fallback(parse).with_state(log.clone());
        let options = HttpOptions::default().max_upload_bytes(max_upload_bytes);
        let (gateway, server) = crate::recorder::serve_gateway(app, &[TABLE], options).await;
        Self { gateway, log, _server: server }
    }

    async fn call(&self, params: Value) -> Envelope {
        let ctx = ToolContext::new(Caller::new("alice", "member"));
        self.gateway.execute(&ctx, "update_files", params, &CallOptions::default().retries(0)).await
    }

    fn taken(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

fn part(name: &str, file_name: Option<&str>, content_type: Option<&str>, data: &[u8]) -> Part {
    Part {
        name: name.to_owned(),
        file_name: file_name.map(str::to_owned),
        content_type: content_type.map(str::to_owned),
        data: data.to_vec(),
    }
}

#[tokio::test]
async fn files_are_decoded_into_file_parts_and_the_other_fields_are_text_parts() {
    let env = Env::start(1024).await;
    // Bytes that are not UTF-8, and that hold a line which looks like a delimiter.
    let file: Vec<u8> = [&[0u8, 0xff, 0xfe, b'\r', b'\n'][..], b"--toolgate-\r\n", &[7u8; 40][..]].concat();
    let b64 = base64_encode(&file);
    let answer = env
        .call(json!({"op": "upload", "file": b64, "purpose": "batch", "n": 3,
            "attributes": {"name": "a.txt", "parent": {"id": "0"}}, "tags": ["x", "y z"],
            "pages": ["aGk=", "aG8="], "note_text": "ü \"q\"", "skip": null}))
        .await;
    assert!(answer.success, "{}", serde_json::to_string(&answer).unwrap());
    let seen = env.taken();
    assert_eq!(seen.len(), 1);
    let content_type = seen[0].content_type.clone().unwrap();
    assert!(content_type.starts_with("multipart/form-data; boundary=toolgate-"), "{content_type}");
    let mut parts = seen[0].parts.clone().unwrap();
    parts.sort_by(|a, b| a.name.cmp(&b.name).then(a.data.cmp(&b.data)));
    assert_eq!(
        parts,
        vec![
            part("attributes", None, Some("application/json"), br#"{"name":"a.txt","parent":{"id":"0"}}"#),
            part("file", Some("file"), Some("application/octet-stream"), &file),
            part("n", None, None, b"3"),
            // A `"` in a part's name is written `%22`, as browsers write it (WHATWG).
            part("note %22text%22", None, None, "ü \"q\"".as_bytes()),
            part("pages", Some("pages"), Some("application/octet-stream"), b"hi"),
            part("pages", Some("pages"), Some("application/octet-stream"), b"ho"),
            part("purpose", None, None, b"batch"),
            part("tags", None, None, b"x"),
            part("tags", None, None, b"y z"),
        ]
    );
}

#[tokio::test]
async fn a_file_that_is_not_base64_or_files_over_the_limit_are_refused_and_nothing_is_sent() {
    let env = Env::start(16).await;
    let answer = env.call(json!({"op": "upload", "file": "not base64!", "purpose": "batch"})).await;
    let error = answer.error.clone().expect("refused");
    assert_eq!(error.code, ErrorCode::InvalidParams, "{error:?}");
    let details = serde_json::to_string(&error.details).unwrap();
    assert!(details.contains("\"/file\"") && details.contains("base64"), "{details}");
    // 17 bytes: one over the limit, the two files together.
    let answer = env
        .call(json!({"op": "upload", "file": base64_encode(&[1u8; 9]), "pages": [base64_encode(&[2u8; 8])],
            "purpose": "batch"}))
        .await;
    let error = answer.error.clone().expect("refused");
    assert_eq!(error.code, ErrorCode::InvalidParams, "{error:?}");
    let details = serde_json::to_string(&error.details).unwrap();
    assert!(details.contains("17 bytes") && details.contains("limit of 16 bytes"), "{details}");
    // A bad item of an array of files is named by its index.
    let answer =
        env.call(json!({"op": "upload", "file": "aGk=", "pages": ["aGk=", "%%"], "purpose": "b"})).await;
    let details = serde_json::to_string(&answer.error.expect("refused").details).unwrap();
    assert!(details.contains("\"/pages/1\""), "{details}");
    assert!(env.taken().is_empty(), "nothing reached the backend");
    // At the limit, it is sent.
    let answer =
        env.call(json!({"op": "upload", "file": base64_encode(&[1u8; 16]), "purpose": "batch"})).await;
    assert!(answer.success, "{}", serde_json::to_string(&answer).unwrap());
    assert_eq!(env.taken().len(), 1);
}

#[tokio::test]
async fn an_optional_multipart_body_is_sent_only_when_a_field_is_given() {
    let env = Env::start(1024).await;
    let answer = env.call(json!({"op": "set_avatar", "id": "7"})).await;
    assert!(answer.success, "{}", serde_json::to_string(&answer).unwrap());
    let seen = env.taken();
    assert_eq!(seen[0].content_type, None, "no body, no Content-Type");
    let answer = env.call(json!({"op": "set_avatar", "id": "7", "pic": "iVBORw0KGgo="})).await;
    assert!(answer.success, "{}", serde_json::to_string(&answer).unwrap());
    let seen = env.taken();
    let png_magic = [0x89u8, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
    assert_eq!(
        seen[0].parts.clone().unwrap(),
        vec![part("pic", Some("pic"), Some("application/octet-stream"), &png_magic)]
    );
}

/// Standard base64, written here so the test does not use the executor's decoder's crate.
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
