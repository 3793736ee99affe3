//! Missing required values asked of the person (`[limits] ask_for_missing`):
//! a real gateway and a person who answers (a `toolgate_core::Asker` that
//! records the form it was shown). What they give is checked like any
//! parameter; a refusal, a secret, a `writeOnly` field or any other problem
//! with the call is answered INVALID_PARAMS as before, nothing asked.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolgate_core::{Answer, Asker, ErrorCode, FnTool, Question, ToolOutput, ToolSpec};
use toolgate_gateway::{CallOptions, Gateway, Limits};

use crate::common::ctx;

struct Person {
    answer: Answer,
    asked: Mutex<Vec<Question>>,
}

#[toolgate_core::async_trait]
impl Asker for Person {
    async fn ask(&self, question: &Question) -> Answer {
        self.asked.lock().unwrap().push(question.clone());
        self.answer.clone()
    }
}

fn gateway(ask_for_missing: bool) -> Gateway {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "description": "Who to greet.", "pattern": "^[A-Za-z]+$"},
            "times": {"type": "integer", "minimum": 1, "maximum": 3},
            "date": {"type": "string", "format": "date"}
        },
        "required": ["name", "times"],
        "additionalProperties": false
    });
    let greet = FnTool::new(
        ToolSpec::new("greet_person", "Greets. Example: {\"name\": \"Ada\", \"times\": 1}.", schema),
        |_ctx, p: Value| {
            Box::pin(async move {
                Ok(ToolOutput::json(
                    json!({"text": format!("Hello, {} x{}", p["name"].as_str().unwrap(), p["times"])}),
                ))
            })
        },
    );
    let secret_schema = json!({
        "type": "object",
        "properties": {"account": {"type": "string"}, "pin_code": {"type": "string", "writeOnly": true}, "api_key": {"type": "string"}},
        "required": ["account", "pin_code", "api_key"],
        "additionalProperties": false
    });
    let unlock = FnTool::new(
        ToolSpec::new("unlock_account", "Unlocks. Example: {\"account\": \"a\"}.", secret_schema),
        |_ctx, _p| Box::pin(async { Ok(ToolOutput::json(json!({"ok": true}))) }),
    );
    let limits = Limits { ask_for_missing, ..Limits::default() };
    Gateway::builder().limits(limits).tool(Arc::new(greet)).tool(Arc::new(unlock)).build().unwrap()
}

fn person(answer: Answer) -> Arc<Person> {
    Arc::new(Person { answer, asked: Mutex::default() })
}

async fn greet(gateway: &Gateway, person: &Arc<Person>, params: Value) -> toolgate_core::Envelope {
    let ctx = ctx("guest").with_asker(person.clone());
    gateway.execute(&ctx, "greet_person", params, &CallOptions::default()).await
}

#[tokio::test]
async fn the_person_is_asked_for_exactly_the_missing_fields_and_the_call_runs_with_them() {
    let gateway = gateway(true);
    let ada = person(Answer::Accept(json!({"name": "Ada", "times": 2})));
    let envelope = greet(&gateway, &ada, json!({})).await;
    assert!(envelope.success, "{envelope:?}");
    assert_eq!(envelope.result.unwrap()["text"], "Hello, Ada x2");
    let asked = ada.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    let form = &asked[0].schema;
    assert_eq!(form["required"], json!(["name", "times"]), "{form}");
    assert_eq!(
        form["properties"]["times"],
        json!({"type": "integer", "minimum": 1, "maximum": 3, "title": "times"})
    );
    assert!(form["properties"]["name"].get("pattern").is_none(), "a form carries no pattern: {form}");
    assert!(form["properties"].get("date").is_none(), "only the missing fields: {form}");
    assert!(
        asked[0].message.contains("`name`") && asked[0].message.contains("`times`"),
        "{}",
        asked[0].message
    );

    // One field given, one missing: only the missing one is asked for.
    let three = person(Answer::Accept(json!({"times": 3})));
    let envelope = greet(&gateway, &three, json!({"name": "Bo"})).await;
    assert_eq!(envelope.result.unwrap()["text"], "Hello, Bo x3");
    assert_eq!(three.asked.lock().unwrap()[0].schema["required"], json!(["times"]));
}

#[tokio::test]
async fn what_the_person_gives_is_checked_and_a_refusal_changes_nothing() {
    let gateway = gateway(true);
    let bad = person(Answer::Accept(json!({"name": "Ada", "times": 9})));
    let envelope = greet(&gateway, &bad, json!({})).await;
    assert_eq!(envelope.code(), Some(ErrorCode::InvalidParams), "{envelope:?}");
    assert!(envelope.error.unwrap().details.unwrap().to_string().contains("/times"));

    for answer in [Answer::Decline, Answer::Cancel, Answer::Unanswered("gone".into())] {
        let no = person(answer);
        let envelope = greet(&gateway, &no, json!({})).await;
        assert_eq!(envelope.code(), Some(ErrorCode::InvalidParams), "{envelope:?}");
        assert!(envelope.error.unwrap().message.contains("do not invent them"));
    }
}

#[tokio::test]
async fn nothing_is_asked_when_off_when_the_call_has_other_problems_or_for_secrets() {
    let off = gateway(false);
    let ada = person(Answer::Accept(json!({"name": "Ada", "times": 2})));
    assert_eq!(greet(&off, &ada, json!({})).await.code(), Some(ErrorCode::InvalidParams));
    assert!(ada.asked.lock().unwrap().is_empty(), "off by default");

    let on = gateway(true);
    // A wrong value beside the missing one: the model must fix the call, the person is not asked.
    assert_eq!(greet(&on, &ada, json!({"times": 0})).await.code(), Some(ErrorCode::InvalidParams));
    assert!(ada.asked.lock().unwrap().is_empty());

    // A writeOnly field or a secret-named one is never asked for.
    let ctx = ctx("guest").with_asker(ada.clone());
    for given in [json!({"account": "a", "api_key": "k"}), json!({"account": "a", "pin_code": "1"})] {
        let envelope = on.execute(&ctx, "unlock_account", given.clone(), &CallOptions::default()).await;
        assert_eq!(envelope.code(), Some(ErrorCode::InvalidParams), "{given}: {envelope:?}");
    }
    assert!(ada.asked.lock().unwrap().is_empty(), "no form for a writeOnly or secret field");
}
