//! Where each field of a call goes (path, query, header, body), whether a write sends a body at
//! all, and what it asks for with `Accept`: a real axum server on 127.0.0.1:0 records every
//! request it receives (method, target, headers, body bytes) and answers `{}`.

use serde_json::{Value, json};
use toolgate_core::ErrorCode;

use crate::recorder::{Recorder, ok};

const TABLE: &str = r#"
tool = "update_things"
description = "Test writes whose fields go to different places."
domain = "test"

[[routes]]
op = "cancel_batch"
method = "POST"
path = "/batches/{batch_id}/cancel"
summary = "An OpenAI-like write without a request body"
body = "none"

[[routes]]
op = "legacy_ping"
method = "POST"
path = "/ping"
summary = "A write of a table written before `body` existed: it still sends `{}`"

[[routes]]
op = "seek"
method = "PUT"
path = "/me/player/seek"
summary = "A Spotify-like write whose parameters are query ones"
body = "none"
fields = [
  { name = "position_ms", type = "integer", required = true, in = "query" },
  { name = "device_id", type = "string" },
]

[[routes]]
op = "post_tasks"
method = "POST"
path = "/tasks"
summary = "A Box-like write with an optional body that has a required field"
body = "optional"
fields = [
  { name = "item", type = "string", required = true },
  { name = "message", type = "string" },
  { name = "X_Trace", type = "string", in = "header" },
  { name = "dry_run", type = "boolean", in = "query" },
]

[[routes]]
op = "create_assistant"
method = "POST"
path = "/assistants"
summary = "An OpenAI-like write with an array header (`OpenAI-Beta: assistants=v2,realtime=v1`)"
body = "none"
fields = [
  { name = "openai_beta", type = "array", items = { type = "string" }, in = "header", wire_name = "OpenAI-Beta" },
]

[[routes]]
op = "login_user"
method = "POST"
path = "/user/login"
summary = "A Petstore-like operation documented with XML and JSON answers"
accept = ["application/xml", "application/json"]
"#;

async fn env() -> Recorder {
    Recorder::start(&[TABLE]).await
}

#[tokio::test]
async fn a_write_without_a_request_body_sends_no_body_and_no_content_type() {
    let env = env().await;
    ok(&env.call("update_things", json!({"op": "cancel_batch", "batch_id": "batch_1"})).await);
    let seen = env.take();
    assert_eq!((seen.method.as_str(), seen.target.as_str()), ("POST", "/batches/batch_1/cancel"));
    assert_eq!(seen.body, "", "no `{{}}` body");
    assert_eq!(seen.header("content-type"), None, "no Content-Type without a body");
    // A table that does not say `body` keeps what it did: the JSON object of its fields.
    ok(&env.call("update_things", json!({"op": "legacy_ping"})).await);
    let seen = env.take();
    assert_eq!(
        (seen.body.as_str(), seen.header("content-type").as_deref()),
        ("{}", Some("application/json"))
    );
}

#[tokio::test]
async fn query_fields_of_a_write_go_in_the_query_not_the_body() {
    let env = env().await;
    ok(&env.call("update_things", json!({"op": "seek", "position_ms": 25000, "device_id": "a b"})).await);
    let seen = env.take();
    assert_eq!(seen.method, "PUT");
    // `device_id` has no `in`: with `body = "none"` a write's plain fields go in the query too.
    assert_eq!(seen.target, "/me/player/seek?position_ms=25000&device_id=a%20b");
    assert_eq!((seen.body.as_str(), seen.header("content-type")), ("", None));
    // Query and header fields of a write with a body stay out of the body.
    ok(&env
        .call(
            "update_things",
            json!({"op": "post_tasks", "item": "file_1", "dry_run": true, "X_Trace": "t-1"}),
        )
        .await);
    let seen = env.take();
    assert_eq!(seen.target, "/tasks?dry_run=true");
    assert_eq!(seen.header("x_trace").as_deref(), Some("t-1"));
    assert_eq!(serde_json::from_str::<Value>(&seen.body).unwrap(), json!({"item": "file_1"}));
}

#[tokio::test]
async fn an_optional_body_is_sent_whole_or_not_at_all() {
    let env = env().await;
    // A body field without the body's required `item`: refused, naming it; nothing sent.
    let refused = env.call("update_things", json!({"op": "post_tasks", "message": "please review"})).await;
    assert!(!refused.success);
    let error = refused.error.as_ref().unwrap();
    assert_eq!(error.code, ErrorCode::InvalidParams);
    let text = serde_json::to_string(error).unwrap();
    assert!(text.contains("`item` is missing") && text.contains("`message`"), "{text}");
    assert!(text.contains("/item"), "the pointer names the missing field: {text}");
    assert!(env.nothing_sent(), "nothing was sent");
    // No body field at all: no body.
    ok(&env.call("update_things", json!({"op": "post_tasks", "dry_run": false})).await);
    let seen = env.take();
    assert_eq!(
        (seen.target.as_str(), seen.body.as_str(), seen.header("content-type")),
        ("/tasks?dry_run=false", "", None)
    );
    // The whole body: sent.
    ok(&env
        .call("update_things", json!({"op": "post_tasks", "item": "file_1", "message": "please review"}))
        .await);
    let seen = env.take();
    assert_eq!(
        serde_json::from_str::<Value>(&seen.body).unwrap(),
        json!({"item": "file_1", "message": "please review"})
    );
}

#[tokio::test]
async fn accept_names_the_documented_media_types_json_first() {
    let env = env().await;
    ok(&env.call("update_things", json!({"op": "login_user"})).await);
    assert_eq!(env.take().header("accept").as_deref(), Some("application/json, application/xml;q=0.5"));
    ok(&env.call("update_things", json!({"op": "cancel_batch", "batch_id": "b"})).await);
    assert_eq!(env.take().header("accept").as_deref(), Some("application/json"), "none documented: JSON");
}

#[tokio::test]
async fn an_array_header_is_sent_comma_separated_and_a_bad_item_is_refused() {
    let env = env().await;
    let call = json!({"op": "create_assistant", "openai_beta": ["assistants=v2", "realtime=v1"]});
    ok(&env.call("update_things", call).await);
    assert_eq!(env.take().header("openai-beta").as_deref(), Some("assistants=v2,realtime=v1"));
    // One item with a line break cannot be a header: refused before anything is sent.
    let refused = env.call("update_things", json!({"op": "create_assistant", "openai_beta": ["a\nb"]})).await;
    assert_eq!(refused.error.as_ref().map(|e| e.code), Some(ErrorCode::InvalidParams), "{refused:?}");
    assert!(env.nothing_sent(), "nothing was sent");
}
