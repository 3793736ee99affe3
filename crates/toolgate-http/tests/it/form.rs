//! Form bodies (`body_encoding = "form"`, Twilio's kind of API): a write's body fields are sent
//! as `application/x-www-form-urlencoded` under their wire names, arrays as repeated keys,
//! numbers and booleans as JSON writes them, nulls left out; a JSON route beside it still sends
//! JSON. A real axum server on 127.0.0.1:0 records the method, `Content-Type` and raw body.

use serde_json::json;

use crate::recorder::{Recorder, ok};

const TABLE: &str = r#"
tool = "send_messages"
description = "A Twilio-like API that takes form bodies."
domain = "messaging"

[[routes]]
op = "create_message"
method = "POST"
path = "/2010-04-01/Accounts/{AccountSid}/Messages.json"
summary = "Send a message"
body_encoding = "form"
fields = [
  { name = "To", type = "string", required = true },
  { name = "From", type = "string", required = true },
  { name = "Body", type = "string" },
  { name = "MediaUrl", type = "array", items = { type = "string" } },
  { name = "Attempt", type = "integer" },
  { name = "smart_encoded", type = "boolean", wire_name = "SmartEncoded" },
  { name = "Price", type = "number", nullable = true },
  { name = "trace", type = "string", in = "query" },
]

[[routes]]
op = "update_message"
method = "POST"
path = "/messages/{sid}"
summary = "A form body sent only when a body field is given"
body = "optional"
body_encoding = "form"
fields = [{ name = "Status", type = "string" }]

[[routes]]
op = "create_note"
method = "POST"
path = "/notes"
summary = "A JSON write beside the form ones"
fields = [{ name = "text", type = "string" }]
"#;

#[tokio::test]
async fn a_form_route_sends_its_body_urlencoded_under_the_wire_names() {
    let env = Recorder::start(&[TABLE]).await;
    ok(&env
        .call(
            "send_messages",
            json!({"op": "create_message", "AccountSid": "AC1", "To": "+15551234567", "From": "+15557654321",
                "Body": "hello world & more: ü/~*", "MediaUrl": ["a", "b"], "Attempt": 2,
                "smart_encoded": true, "Price": null, "trace": "t 1"}),
        )
        .await);
    let seen = env.take();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.target, "/2010-04-01/Accounts/AC1/Messages.json?trace=t%201");
    assert_eq!(seen.header("content-type").as_deref(), Some("application/x-www-form-urlencoded"));
    assert_eq!(
        seen.body,
        "To=%2B15551234567&From=%2B15557654321&Body=hello+world+%26+more%3A+%C3%BC%2F%7E*\
         &MediaUrl=a&MediaUrl=b&Attempt=2&SmartEncoded=true"
    );
    assert_eq!(seen.header("content-length").as_deref(), Some(seen.body.len().to_string().as_str()));
}

#[tokio::test]
async fn an_optional_form_body_is_left_out_and_json_routes_still_send_json() {
    let env = Recorder::start(&[TABLE]).await;
    ok(&env.call("send_messages", json!({"op": "update_message", "sid": "SM1"})).await);
    let seen = env.take();
    assert_eq!((seen.body.as_str(), seen.header("content-type")), ("", None));
    ok(&env.call("send_messages", json!({"op": "update_message", "sid": "SM1", "Status": "canceled"})).await);
    let seen = env.take();
    assert_eq!(seen.header("content-type").as_deref(), Some("application/x-www-form-urlencoded"));
    assert_eq!(seen.body, "Status=canceled");
    ok(&env.call("send_messages", json!({"op": "create_note", "text": "a b"})).await);
    let seen = env.take();
    assert_eq!(seen.header("content-type").as_deref(), Some("application/json"));
    assert_eq!(serde_json::from_str::<serde_json::Value>(&seen.body).unwrap(), json!({"text": "a b"}));
}
