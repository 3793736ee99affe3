//! Operations that answer files (a real axum server on 127.0.0.1:0): a PNG comes back as image
//! content beside the result, a small PDF base64 in the payload with its type and size, and a
//! file over the limit, announced or streamed, is an `EXECUTION_ERROR` that names its size and
//! the limit, never a `PARSE_ERROR`. The request asks for the type the operation documents.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use toolgate_core::{Caller, Envelope, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

const TABLE: &str = r#"
tool = "query_files"
description = "Test reads of a backend that answers files."
domain = "test"

[[routes]]
op = "chart"
method = "GET"
path = "/chart.png"
summary = "A chart"
accept = ["image/png"]

[[routes]]
op = "report"
method = "GET"
path = "/report.pdf"
summary = "A small report"
accept = ["application/pdf"]

[[routes]]
op = "archive"
method = "GET"
path = "/archive.pdf"
summary = "A report too large to return"
accept = ["application/pdf"]

[[routes]]
op = "stream"
method = "GET"
path = "/stream.bin"
summary = "A large file of unannounced size"
accept = ["application/octet-stream"]
"#;

/// A PNG's signature and header chunk, and bytes no UTF-8 reader would take.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\xff\xfe";
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << >> endobj\n%%EOF\n";
/// The limit of the executor under test.
const LIMIT: usize = 64 * 1024;

/// The `Accept` headers the backend got.
type Seen = Arc<Mutex<Vec<String>>>;

fn file(seen: &Seen, headers: &HeaderMap, kind: &'static str, body: Body) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    seen.lock().unwrap().push(accept.to_owned());
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

async fn gateway() -> (Gateway, Seen) {
    let seen = Seen::default();
    let app = Router::new()
        .route(
            "/chart.png",
            get(|State(s): State<Seen>, h: HeaderMap| async move { file(&s, &h, "image/png", PNG.into()) }),
        )
        .route(
            "/report.pdf",
            get(|State(s): State<Seen>, h: HeaderMap| async move {
                file(&s, &h, "application/pdf; name=report.pdf", PDF.into())
            }),
        )
        .route(
            "/archive.pdf",
            get(|State(s): State<Seen>, h: HeaderMap| async move {
                file(&s, &h, "application/pdf", vec![b'%'; LIMIT + 1].into())
            }),
        )
        .route(
            "/stream.bin",
            get(|State(s): State<Seen>, h: HeaderMap| async move {
                // Chunked: no Content-Length, so the limit is found while reading.
                let chunks = (0..10).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![0u8; LIMIT / 4])));
                file(&s, &h, "application/octet-stream", Body::from_stream(futures::stream::iter(chunks)))
            }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let options = HttpOptions::default()
        .backend_name("the files API")
        .backend_id("test")
        .auth(Auth::None)
        .max_binary_bytes(LIMIT);
    let executor = Arc::new(HttpExecutor::new(&base, options).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    (Gateway::builder().tools(tools).build().unwrap(), seen)
}

async fn call(gw: &Gateway, op: &str) -> Envelope {
    let ctx = ToolContext::new(Caller::new("alice", "guest"));
    gw.execute(&ctx, "query_files", json!({"op": op}), &CallOptions::default().retries(0)).await
}

/// Standard base64 (with padding) decoded, written here so the test does not trust the encoder.
fn unbase64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET.iter().position(|&a| a == c).unwrap_or_else(|| panic!("not base64: {c}"));
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[tokio::test]
async fn a_png_comes_back_as_image_content() {
    let (gw, seen) = gateway().await;
    let got = call(&gw, "chart").await;
    assert!(got.success, "{got:?}");
    assert_eq!(got.images.len(), 1, "{got:?}");
    assert_eq!(got.images[0].mime_type, "image/png");
    assert_eq!(unbase64(&got.images[0].data), PNG);
    let result = got.result.unwrap();
    assert_eq!(result["status"], 200);
    assert_eq!(result["payload"]["content"], "image");
    assert_eq!(result["payload"]["media_type"], "image/png");
    assert_eq!(result["payload"]["bytes"], PNG.len());
    assert!(!result.to_string().contains(&got.images[0].data), "the bytes are not in the result twice");
    let accept = seen.lock().unwrap().pop().unwrap();
    assert!(accept.starts_with("image/png"), "the documented type is asked for: {accept}");
}

#[tokio::test]
async fn a_small_pdf_comes_back_base64_with_its_type_and_size() {
    let (gw, seen) = gateway().await;
    let got = call(&gw, "report").await;
    assert!(got.success, "{got:?}");
    assert!(got.images.is_empty());
    let payload = &got.result.as_ref().unwrap()["payload"];
    assert_eq!(payload["content"], "binary");
    assert_eq!(payload["media_type"], "application/pdf", "without its parameters");
    assert_eq!(payload["bytes"], PDF.len());
    assert_eq!(unbase64(payload["base64"].as_str().unwrap()), PDF);
    let accept = seen.lock().unwrap().pop().unwrap();
    assert!(accept.starts_with("application/pdf"), "{accept}");
}

#[tokio::test]
async fn a_file_over_the_limit_is_an_execution_error_naming_size_and_limit() {
    let (gw, _) = gateway().await;
    // Announced (Content-Length): refused before it is read.
    let got = call(&gw, "archive").await;
    let error = got.error.unwrap_or_else(|| panic!("{:?}", got.result));
    assert_eq!(error.code, ErrorCode::ExecutionError, "{}", error.message);
    assert!(error.message.contains(&format!("{} bytes", LIMIT + 1)), "{}", error.message);
    assert!(error.message.contains(&LIMIT.to_string()), "{}", error.message);
    assert!(error.message.contains("application/pdf"), "{}", error.message);
    let details: Value = error.details.unwrap();
    assert_eq!(details["bytes"], LIMIT + 1);
    assert_eq!(details["limit_bytes"], LIMIT);
    assert_eq!(details["media_type"], "application/pdf");
    // Streamed without a size: cut at the limit.
    let got = call(&gw, "stream").await;
    let error = got.error.unwrap_or_else(|| panic!("{:?}", got.result));
    assert_eq!(error.code, ErrorCode::ExecutionError, "{}", error.message);
    assert!(error.message.contains(&format!("more than {LIMIT} bytes")), "{}", error.message);
    assert_eq!(error.details.unwrap()["limit_bytes"], LIMIT);
}
