//! Form bodies: a Twilio-like operation whose requestBody is only
//! `application/x-www-form-urlencoded` is imported as a form route (`body_encoding = "form"`,
//! its schema's properties as body fields) instead of being skipped; JSON is preferred when both
//! are offered, and a multipart-only one is a multipart route. The round trip sends the request a real backend on
//! 127.0.0.1 receives: the table written, read back, run by http-tools.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use serde_json::json;
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_openapi::Options;
use toolgate_schema::{Body, BodyEncoding, Location, RouteTable};

/// A Twilio-like 3.0 document: Messages.json takes a form, `/json-or-form` offers both, and
/// `/media` is multipart.
fn twilio() -> String {
    json!({
        "openapi": "3.0.1",
        "info": {"title": "Twilio - Api", "version": "1.0"},
        "servers": [{"url": "https://api.twilio.com"}],
        "paths": {
            "/2010-04-01/Accounts/{AccountSid}/Messages.json": {
                "parameters": [{"name": "AccountSid", "in": "path", "required": true,
                    "schema": {"type": "string", "minLength": 34, "maxLength": 34}}],
                "post": {
                    "operationId": "CreateMessage",
                    "tags": ["Api20100401Message"],
                    "summary": "Send a message",
                    "requestBody": {"required": true, "content": {"application/x-www-form-urlencoded": {
                        "schema": {"type": "object", "title": "CreateMessageRequest", "required": ["To"],
                            "properties": {
                                "To": {"type": "string", "description": "The recipient's phone number."},
                                "From": {"type": "string"},
                                "Body": {"type": "string"},
                                "MediaUrl": {"type": "array", "items": {"type": "string", "format": "uri"}}
                            }}}}},
                    "responses": {"201": {"description": "Created", "content": {"application/json": {"schema": {"type": "object"}}}}}
                }
            },
            "/json-or-form": {"post": {"operationId": "CreateBoth", "tags": ["Api20100401Message"],
                "requestBody": {"required": true, "content": {
                    "application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    "application/json": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}},
            "/media": {"post": {"operationId": "UploadMedia", "tags": ["Api20100401Message"],
                "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object",
                    "properties": {"file": {"type": "string", "format": "binary"}}}}}}}},
            "/nested": {"post": {"operationId": "CreateNested", "tags": ["Api20100401Message"],
                "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object",
                    "properties": {"meta": {"type": "object", "properties": {"k": {"type": "string"}}}}}}}}}}
        }
    })
    .to_string()
}

type Log = Arc<Mutex<Vec<(String, String, Option<String>, String)>>>;

async fn record(State(log): State<Log>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> String {
    let content_type = headers.get("content-type").map(|v| v.to_str().unwrap().to_owned());
    log.lock().unwrap().push((
        method.to_string(),
        uri.to_string(),
        content_type,
        String::from_utf8(body.to_vec()).unwrap(),
    ));
    r#"{"sid": "SM1"}"#.to_owned()
}

#[tokio::test]
async fn a_urlencoded_body_is_imported_as_a_form_route_and_sent_as_one() {
    let import = toolgate_openapi::import(&twilio(), &Options::default()).unwrap();
    let skipped: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(skipped.len(), 1, "{skipped:#?}");
    assert!(
        skipped.iter().any(|s| s.contains("POST /nested") && s.contains("form body field `meta` is nested")),
        "{skipped:#?}"
    );
    let table =
        import.tables.iter().find(|t| t.route("create_message").is_some()).expect("imported, not skipped");
    let route = table.route("create_message").unwrap();
    assert_eq!((route.body, route.body_encoding), (Body::Required, BodyEncoding::Form));
    let names: Vec<&str> = route.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["AccountSid", "To", "From", "Body", "MediaUrl"]);
    assert_eq!(route.location("Body"), Location::Body);
    assert!(route.fields.iter().any(|f| f.name == "To" && f.required));
    let both = table.route("create_both").unwrap();
    assert_eq!(both.body_encoding, BodyEncoding::Json, "JSON is preferred when both are offered");
    assert_eq!(table.route("upload_media").unwrap().body_encoding, BodyEncoding::Multipart);

    // The table as written, and read back the same.
    let text = toml::to_string(table).unwrap();
    assert_eq!(text.matches("body_encoding = \"form\"").count(), 1, "{text}");
    let back = RouteTable::from_toml_str(&text).unwrap();
    assert_eq!(&back, table);

    // Round trip: the written table, run against a real backend.
    let log: Log = Arc::default();
    let app = Router::new().fallback(record).with_state(log.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let executor = HttpExecutor::new(&url, HttpOptions::default().auth(Auth::None)).unwrap();
    let params = json!({"op": "create_message", "AccountSid": "AC0123456789abcdef0123456789abcdef",
        "To": "+15551234567", "From": "+15557654321", "Body": "hello world", "MediaUrl": ["a", "b"]});
    let route = back.route("create_message").unwrap();
    let prepared = executor.prepare(route, &params).unwrap();
    let result = executor.send(prepared, None, std::time::Duration::from_secs(5), &params).await;
    let Ok(toolgate_core::ToolOutput { payload: toolgate_core::Payload::Json(result), .. }) = result else {
        panic!("{result:?}")
    };
    assert_eq!(result["payload"]["sid"], "SM1", "{result}");
    let (method, target, content_type, body) = log.lock().unwrap().pop().unwrap();
    assert_eq!(method, "POST");
    assert_eq!(target, "/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages.json");
    assert_eq!(content_type.as_deref(), Some("application/x-www-form-urlencoded"));
    assert_eq!(body, "To=%2B15551234567&From=%2B15557654321&Body=hello+world&MediaUrl=a&MediaUrl=b");
    server.abort();
}
