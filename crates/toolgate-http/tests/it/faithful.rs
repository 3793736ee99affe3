//! Tables imported from real APIs, sent as those APIs expect: a `null` of a nullable body field
//! is sent as JSON `null` (DigitalOcean `tags: null`) and an optional query `null` is not sent;
//! a path variable renamed for the model (`user_id` → `target_user_id`) fills the same path.
//! A real axum server on 127.0.0.1:0 records the exact target and body of every request.

use serde_json::json;

use crate::recorder::{Recorder, ok};

const READS: &str = r#"
tool = "query_real"
description = "Reads of tables imported from real APIs."
domain = "real"

[[routes]]
op = "list_user_posts"
method = "GET"
path = "/users/{target_user_id}/posts"
summary = "The posts of one user (a path `user_id` renamed for the model)"
fields = [
  { name = "target_user_id", type = "string", required = true },
  { name = "page", type = "integer", nullable = true },
]
"#;

const WRITES: &str = r#"
tool = "update_real"
description = "Writes of tables imported from real APIs."
domain = "real"

[[routes]]
op = "create_droplet"
method = "POST"
path = "/v2/droplets"
summary = "A DigitalOcean-like create whose tags may be null"
fields = [
  { name = "name", type = "string", required = true },
  { name = "tags", type = "array", items = { type = "string" }, nullable = true },
  { name = "dry_run", type = "boolean", in = "query", nullable = true },
]
"#;

async fn env() -> Recorder {
    Recorder::start(&[READS, WRITES]).await
}

#[tokio::test]
async fn a_null_body_field_is_sent_as_null_and_a_null_query_field_is_not_sent() {
    let env = env().await;
    ok(&env
        .call("update_real", json!({"op": "create_droplet", "name": "web-1", "tags": null, "dry_run": null}))
        .await);
    let seen = env.take();
    assert_eq!(
        (seen.method.as_str(), seen.target.as_str()),
        ("POST", "/v2/droplets"),
        "a null query field is not given"
    );
    assert_eq!(seen.body, r#"{"name":"web-1","tags":null}"#, "null is sent, not dropped");
    ok(&env
        .call("update_real", json!({"op": "create_droplet", "name": "web-1", "tags": ["a"], "dry_run": true}))
        .await);
    let seen = env.take();
    assert_eq!(
        (seen.target.as_str(), seen.body.as_str()),
        ("/v2/droplets?dry_run=true", r#"{"name":"web-1","tags":["a"]}"#)
    );
}

#[tokio::test]
async fn a_renamed_path_variable_fills_the_same_path_and_the_caller_field_is_still_refused() {
    let env = env().await;
    ok(&env
        .call("query_real", json!({"op": "list_user_posts", "target_user_id": "u 1", "page": null}))
        .await);
    assert_eq!(env.take().target, "/users/u%201/posts");
    let refused = env.call("query_real", json!({"op": "list_user_posts", "user_id": "u1"})).await;
    assert!(!refused.success, "`user_id` is the caller's, never a parameter");
    assert!(env.nothing_sent(), "nothing was sent");
}
