//! Names the backend knows but the model does not see: a route's fixed query (OpenAI's
//! `/assistants?beta=true`) is sent with every call, and fields with a `wire_name` (AWS's
//! `StartTime<`, `filter.name`, a body `userId` the model sees as `target_user_id`) are sent
//! under it. A real axum server on 127.0.0.1:0 records the exact target, header and body.

use serde_json::{Value, json};
use toolgate_core::Envelope;

use crate::recorder::{Recorder, ok};

const READS: &str = r#"
tool = "query_wire"
description = "Reads whose names on the wire are not the model's."
domain = "wire"

[[routes]]
op = "list_assistants"
method = "GET"
path = "/assistants?beta=true"
summary = "An OpenAI-like list with a fixed query"
fields = [{ name = "limit", type = "integer" }]

[[routes]]
op = "list_events"
method = "GET"
path = "/events"
summary = "An AWS-like list with operator names"
fields = [
  { name = "StartTime_lt", type = "string", wire_name = "StartTime<" },
  { name = "filter_name", type = "string", wire_name = "filter.name" },
  { name = "trace", type = "string", in = "header", wire_name = "X-Trace-Id" },
]
"#;

const WRITES: &str = r#"
tool = "update_wire"
description = "Writes whose names on the wire are not the model's."
domain = "wire"

[[routes]]
op = "add_member"
method = "POST"
path = "/groups/{group_id}/members?v=2"
summary = "A body field `userId` the model sees as `target_user_id`"
body = "optional"
fields = [{ name = "target_user_id", type = "string", required = true, wire_name = "userId" }]
"#;

async fn call(env: &Recorder, tool: &str, params: Value) -> Envelope {
    let envelope = env.call(tool, params).await;
    ok(&envelope);
    envelope
}

#[tokio::test]
async fn the_fixed_query_is_always_sent_before_the_query_fields() {
    let env = Recorder::start(&[READS, WRITES]).await;
    let envelope = call(&env, "query_wire", json!({"op": "list_assistants"})).await;
    assert_eq!(env.take().target, "/assistants?beta=true");
    assert_eq!(envelope.result.unwrap()["path"], "/assistants", "the result names the path");
    call(&env, "query_wire", json!({"op": "list_assistants", "limit": 5})).await;
    assert_eq!(env.take().target, "/assistants?beta=true&limit=5");
}

#[tokio::test]
async fn fields_are_sent_under_their_wire_names_in_the_query_header_and_body() {
    let env = Recorder::start(&[READS, WRITES]).await;
    let params =
        json!({"op": "list_events", "StartTime_lt": "2026-01-01", "filter_name": "a b", "trace": "t-1"});
    call(&env, "query_wire", params).await;
    let seen = env.take();
    assert_eq!(seen.target, "/events?StartTime%3C=2026-01-01&filter.name=a%20b");
    assert_eq!(seen.header("x-trace-id").as_deref(), Some("t-1"));
    call(&env, "update_wire", json!({"op": "add_member", "group_id": "g1", "target_user_id": "u2"})).await;
    let seen = env.take();
    assert_eq!((seen.target.as_str(), seen.body.as_str()), ("/groups/g1/members?v=2", r#"{"userId":"u2"}"#));
}
