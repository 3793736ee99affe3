//! A backend that refuses requests with its own reasons (a real axum server on 127.0.0.1:0):
//! RFC 9457 problem details with `errors[]`, RFC 7807 `invalid-params`, Prism's `validation`,
//! FastAPI's `detail` list, an ASP.NET `errors` map, plain text, and more reasons than fit.
//! The model gets them in `details.reasons` (clipped, without the credential the request
//! carried) and the first ones in the message.

use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use toolgate_core::{Caller, Envelope, ErrorCode, Secret, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

/// The static credential the backend repeats in one of its reasons.
const KEY: &str = "sk_test_8a7b6c5d4e3f2a1b0c9d8e7f";

const TABLE: &str = r#"
tool = "create_things"
description = "Test writes refused by a validating backend."
domain = "test"

[[routes]]
op = "create"
method = "POST"
path = "/things/{shape}"
summary = "Refuses the thing with a body of the given shape"
fields = [
  { name = "name", type = "string" },
  { name = "age", type = "integer" },
]
"#;

const PRISM_DETAIL: &str = "Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.";

async fn refuse(Path(shape): Path<String>, headers: HeaderMap) -> Response {
    let key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let problem = "application/problem+json";
    let (status, kind, body) = match shape.as_str() {
        "rfc9457" => (
            422,
            problem,
            json!({
                "type": "https://example.net/validation-error",
                "title": "Your request is not valid.",
                "status": 422,
                "errors": [
                    {"detail": "must be a positive integer", "pointer": "#/age"},
                    {"detail": format!("must not repeat your key {key}"), "pointer": "#/name"},
                ],
            }),
        ),
        "rfc7807" => (
            400,
            problem,
            json!({
                "type": "https://example.net/validation-error",
                "title": "Your request parameters didn't validate.",
                "invalid-params": [{"name": "age", "reason": "must be a positive integer"}],
            }),
        ),
        "prism" => (
            422,
            problem,
            json!({
                "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
                "title": "Invalid request",
                "status": 422,
                "detail": PRISM_DETAIL,
                "validation": [{"location": ["body"], "severity": "Error", "code": "required", "message": "must have required property 'name'"}],
            }),
        ),
        "fastapi" => (
            422,
            "application/json",
            json!({"detail": [{"loc": ["body", "age"], "msg": "Input should be a valid integer", "type": "int_parsing"}]}),
        ),
        "aspnet" => (
            400,
            problem,
            json!({
                "type": "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                "title": "One or more validation errors occurred.",
                "status": 400,
                "errors": {"Name": ["The Name field is required.", "The Name field must be short."]},
            }),
        ),
        "many" => (
            422,
            problem,
            json!({
                "title": "Invalid request",
                "errors": (0..25).map(|i| json!({"field": format!("f{i}"), "message": format!("{i} {}", "y".repeat(1000))})).collect::<Vec<_>>(),
            }),
        ),
        _ => {
            return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "text/plain")], "name is required\n")
                .into_response();
        }
    };
    (StatusCode::from_u16(status).unwrap(), [(header::CONTENT_TYPE, kind)], body.to_string()).into_response()
}

async fn gateway() -> Gateway {
    let app = Router::new().route("/things/{shape}", post(refuse));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let auth = Auth::Static { header: "X-Api-Key".into(), value: Secret::new(KEY) };
    let options = HttpOptions::default().backend_name("the validating API").backend_id("test").auth(auth);
    let executor = Arc::new(HttpExecutor::new(&base, options).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    Gateway::builder().tools(tools).build().unwrap()
}

/// The refusal of `shape`: its message and details.
async fn refusal(gw: &Gateway, shape: &str) -> (String, Value) {
    let ctx = ToolContext::new(Caller::new("alice", "guest"));
    let params = json!({"op": "create", "shape": shape, "name": "", "age": -1});
    let got: Envelope = gw.execute(&ctx, "create_things", params, &CallOptions::default().retries(0)).await;
    let text = serde_json::to_string(&got).unwrap();
    assert!(!text.contains(KEY), "{shape}: the credential is in the envelope: {text}");
    let error = got.error.unwrap_or_else(|| panic!("{shape}: {text}"));
    assert_eq!(error.code, ErrorCode::InvalidParams, "{shape}: {text}");
    (error.message, error.details.unwrap_or_default())
}

#[tokio::test]
async fn problem_details_keep_their_pointers_and_the_message_says_them() {
    let gw = gateway().await;
    let (message, details) = refusal(&gw, "rfc9457").await;
    assert_eq!(details["status"], 422);
    assert_eq!(
        details["reasons"],
        json!([
            {"at": "/age", "message": "must be a positive integer"},
            {"at": "/name", "message": "must not repeat your key [redacted]"},
        ])
    );
    assert!(message.contains("Your request is not valid"), "{message}");
    assert!(message.contains("/age: must be a positive integer"), "{message}");
    assert!(message.contains("/name: must not repeat your key [redacted]"), "{message}");
    // The field errors point into the parameters, with what was given.
    assert_eq!(details["errors"][0]["pointer"], "/age");
    assert_eq!(details["errors"][0]["actual"], -1);
    assert_eq!(details["errors"][1]["pointer"], "/name");

    let (message, details) = refusal(&gw, "rfc7807").await;
    assert_eq!(details["status"], 400);
    assert_eq!(details["reasons"], json!([{"at": "age", "message": "must be a positive integer"}]));
    assert!(message.contains("age: must be a positive integer"), "{message}");
}

#[tokio::test]
async fn prism_fastapi_and_aspnet_validation_output_reaches_the_model() {
    let gw = gateway().await;
    let (message, details) = refusal(&gw, "prism").await;
    assert_eq!(details["reasons"], json!([{"at": "body", "message": "must have required property 'name'"}]));
    assert!(message.contains("body: must have required property 'name'"), "{message}");
    assert_eq!(details["status"], 422);

    let (message, details) = refusal(&gw, "fastapi").await;
    assert_eq!(details["reasons"], json!([{"at": "body.age", "message": "Input should be a valid integer"}]));
    assert!(message.contains("body.age: Input should be a valid integer"), "{message}");
    assert_eq!(details["errors"][0]["pointer"], "/age", "the request part is not a parameter");

    let (message, details) = refusal(&gw, "aspnet").await;
    assert_eq!(
        details["reasons"],
        json!([
            {"at": "Name", "message": "The Name field is required."},
            {"at": "Name", "message": "The Name field must be short."},
        ])
    );
    assert!(message.contains("Name: The Name field is required."), "{message}");

    let (message, details) = refusal(&gw, "text").await;
    assert!(message.contains("name is required"), "{message}");
    assert_eq!(details["body"], "name is required");
}

#[tokio::test]
async fn many_long_reasons_are_clipped_in_count_and_length() {
    let gw = gateway().await;
    let (message, details) = refusal(&gw, "many").await;
    let reasons = details["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 10, "{details}");
    assert_eq!(details["reasons_omitted"], 15);
    assert_eq!(reasons[0]["at"], "f0");
    for reason in reasons {
        let text = reason["message"].as_str().unwrap();
        assert!(text.chars().count() < 250 && text.ends_with("(truncated)"), "{text}");
    }
    assert!(message.contains("f0: 0 yyy") && message.contains("f2: 2 yyy"), "{message}");
    assert!(!message.contains("f3:"), "only the first reasons are in the message: {message}");
    assert!(message.contains("22 more"), "{message}");
    assert!(message.chars().count() < 1000, "{} chars", message.chars().count());
}
