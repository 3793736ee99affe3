//! A backend that repeats the credentials it was sent (a real axum server on 127.0.0.1:0): in
//! its error messages, field errors, problem details, object keys, echoed headers, plain text
//! and JSON escapes, at every status, with the credential placed across the cut of a body
//! preview and of a traced message. Neither the static credential nor the caller's own
//! credential for this backend may reach the envelope or the trace, not even in part.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use toolgate_core::{Caller, Envelope, Secret, ToolContext};
use toolgate_gateway::{CallOptions, Gateway, TraceEvent};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

/// The static credential (`X-Api-Key`); `/` so that a JSON writer may escape it as `\/`.
const STATIC_KEY: &str = "sk_live/4f9c2a7e1b3d5f60a8c9e2b4d6f8a0c1";
/// The caller's credential for this backend (`Authorization: Bearer`).
const CALLER_TOKEN: &str = "fit_9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a";

const TABLE: &str = r#"
tool = "query_echoes"
description = "Test reads of a backend that repeats its credentials."
domain = "test"

[[routes]]
op = "answer"
method = "GET"
path = "/answer/{status}"
summary = "Answers `status` with a body repeating the credentials it got"
fields = [
  { name = "pad", type = "integer" },
  { name = "form", type = "string" },
]
"#;

/// Every character as a JSON `\uXXXX` escape: the text shows none of the credential.
fn escaped(text: &str) -> String {
    text.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()
}

async fn answer(
    State(hits): State<Arc<AtomicU32>>,
    Path(status): Path<u16>,
    Query(shape): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    hits.fetch_add(1, Ordering::SeqCst);
    let got = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let key = got("x-api-key");
    let bearer = got("authorization").trim_start_matches("Bearer ").to_owned();
    let creds = [key.as_str(), bearer.as_str()].iter().filter(|c| !c.is_empty()).copied().collect::<Vec<_>>();
    let said = creds.join(" and ");
    let pad = "x".repeat(shape.get("pad").and_then(|p| p.parse().ok()).unwrap_or(0));
    let (kind, body) = match shape.get("form").map_or("text", String::as_str) {
        "json" => (
            "application/json",
            json!({
                "error": {
                    "message": format!("{pad}bad credential {said}"),
                    "fields": [{"field": "key", "message": format!("{said} is not accepted")}],
                    "echo": {"x-api-key": key, "authorization": got("authorization")},
                },
                "detail": format!("{pad}{said}"),
                "title": said,
                (creds.first().copied().unwrap_or("none")): true,
            })
            .to_string(),
        ),
        "escaped" => (
            "application/json",
            format!(
                r#"{{"error": {{"message": "{pad}bad credential {0}", "echo": "{0}"}}, "detail": "{pad}{0}"}}"#,
                escaped(&said)
            ),
        ),
        _ => ("text/plain", format!("{pad}{said} was refused")),
    };
    let status = StatusCode::from_u16(status).unwrap();
    (status, [(header::CONTENT_TYPE, kind)], body).into_response()
}

async fn backend() -> (String, Arc<AtomicU32>) {
    let hits = Arc::new(AtomicU32::new(0));
    let app = Router::new().route("/answer/{status}", get(answer)).with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, hits)
}

fn gateway(base: &str, auth: Auth) -> Gateway {
    let options = HttpOptions::default().backend_name("the echo API").backend_id("echo").auth(auth);
    let executor = Arc::new(HttpExecutor::new(base, options).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    Gateway::builder().tools(tools).build().unwrap()
}

/// The first 12-character piece of `secret` that occurs in `text`, as is or in the `\uXXXX`
/// escapes a reader of the JSON would decode (the text is JSON, so one is written `\\u`).
fn leaked_piece<'s>(text: &str, secret: &'s str) -> Option<&'s str> {
    (0..=secret.len() - 12)
        .map(|i| &secret[i..i + 12])
        .find(|piece| text.contains(piece) || text.contains(&escaped(piece).replace('\\', "\\\\")))
}

#[tokio::test]
async fn credentials_a_backend_repeats_never_reach_the_envelope_or_the_trace() {
    let (base, hits) = backend().await;
    let statuses = [200, 400, 401, 403, 404, 409, 415, 422, 500];
    let forms = ["json", "escaped", "text"];
    // 0: nothing cut; 440-460: the credential across the trace's 500-character cut of a
    // message; 480, 490: across the 500-character cut of a body preview.
    let pads = [0, 440, 450, 460, 480, 490];
    let setups = [
        (Auth::Static { header: "X-Api-Key".into(), value: Secret::new(STATIC_KEY) }, STATIC_KEY),
        (Auth::BearerFromCaller, CALLER_TOKEN),
    ];
    let ctx = ToolContext::new(Caller::new("alice", "guest").with_credential("echo", CALLER_TOKEN));
    let options = CallOptions::default().retries(0);
    let mut calls = 0;
    let mut redacted = 0;
    let mut leaks: Vec<String> = Vec::new();
    for (auth, secret) in setups {
        let gw = gateway(&base, auth);
        let mut trace = gw.subscribe();
        for status in statuses {
            for form in forms {
                for pad in pads {
                    let params =
                        json!({"op": "answer", "status": status.to_string(), "pad": pad, "form": form});
                    let envelope: Envelope = gw.execute(&ctx, "query_echoes", params, &options).await;
                    calls += 1;
                    let case = format!("{secret} at HTTP {status}, {form}, pad {pad}");
                    let shown = [serde_json::to_string(&envelope).unwrap(), format!("{envelope:?}")];
                    if let Some(piece) = shown.iter().find_map(|text| leaked_piece(text, secret)) {
                        leaks.push(format!("{case}: {piece:?} is in the envelope: {}", shown[0]));
                    }
                    redacted += usize::from(shown[0].contains("[redacted]"));
                    let mut events: Vec<TraceEvent> = Vec::new();
                    while let Ok(event) = trace.try_recv() {
                        events.push(event);
                    }
                    assert_eq!(events.len(), 2, "{case}: a start and an end event");
                    for event in &events {
                        let text = serde_json::to_string(event).unwrap();
                        if let Some(piece) = leaked_piece(&text, secret) {
                            leaks.push(format!(
                                "{case}: {piece:?} is in the {:?} trace event: {text}",
                                event.kind
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(leaks.is_empty(), "{} of {calls} calls leaked:\n{}", leaks.len(), leaks.join("\n"));
    assert_eq!(hits.load(Ordering::SeqCst), calls, "every call reached the backend, once");
    // The backend's words do come back (its messages, fields, bodies), without the credential.
    assert!(redacted * 2 > calls as usize, "{redacted} of {calls} answers show a [redacted] credential");
}

#[tokio::test]
async fn a_success_answer_is_scrubbed_too_and_a_clean_one_is_untouched() {
    let (base, _) = backend().await;
    let gw = gateway(&base, Auth::Static { header: "X-Api-Key".into(), value: Secret::new(STATIC_KEY) });
    let ctx = ToolContext::new(Caller::new("alice", "guest"));
    let opts = CallOptions::default().retries(0);
    let params = json!({"op": "answer", "status": "200", "pad": 3, "form": "json"});
    let got = gw.execute(&ctx, "query_echoes", params, &opts).await;
    assert!(got.success, "{got:?}");
    let payload = &got.result.as_ref().unwrap()["payload"];
    assert_eq!(payload["title"], "[redacted]", "{payload}");
    assert_eq!(payload["error"]["message"], "xxxbad credential [redacted]");
    assert_eq!(payload["[redacted]"], true, "an object key is scrubbed too: {payload}");
    let params = json!({"op": "answer", "status": "200", "pad": 2, "form": "escaped"});
    let got = gw.execute(&ctx, "query_echoes", params, &opts).await;
    assert_eq!(got.result.as_ref().unwrap()["payload"]["detail"], "xx[redacted]", "{got:?}");

    // A backend that repeats nothing: the payload as sent.
    let open = gateway(&base, Auth::None);
    let params = json!({"op": "answer", "status": "200", "pad": 1, "form": "json"});
    let got = open.execute(&ctx, "query_echoes", params, &opts).await;
    assert_eq!(got.result.as_ref().unwrap()["payload"]["error"]["message"], "xbad credential ");
}
