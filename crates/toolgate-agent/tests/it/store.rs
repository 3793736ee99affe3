//! Stored conversations on SQLite and PostgreSQL: continued by id, kept
//! per user (another user's id is NOT_FOUND), envelopes and usage recorded.

use serde_json::json;
use toolgate_agent::{Agent, ConversationStore, StopReason};
use toolgate_core::Caller;

use crate::model_server::{ModelServer, calls, text};
use crate::{direct, member, run, run_in, test_gateway};

#[tokio::test]
async fn conversations_continue_by_id_and_belong_to_their_user() {
    for backend in toolgate_test_support::pg::Backend::all("agent.db") {
        let url = backend.url.clone();
        let store = ConversationStore::connect(&url).await.unwrap();
        ConversationStore::connect(&url).await.expect("migrations run again without harm");
        let server = ModelServer::start(vec![
            calls(&[("c1", "query_weather", json!({"city": "Oslo"}))]),
            text("21 degrees."),
            text("Yes, still Oslo."),
        ])
        .await;
        let agent = Agent::new(test_gateway(1), direct(&server)).unwrap().with_store(store.clone());
        let (first, _) = run(&agent, member(), "Weather in Oslo?").await;
        let first = first.unwrap();
        let id = first.conversation_id.clone();
        assert!(id.starts_with("conv_"), "{id}");

        let (second, _) = run_in(&agent, member(), "Same city?", Some(id.clone())).await;
        let second = second.unwrap();
        assert_eq!((second.conversation_id.as_str(), second.stop_reason), (id.as_str(), StopReason::Answer));
        // The third request carries the whole first run, then the new message.
        let roles: Vec<String> =
            server.messages(2).iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "user"], "{url}");
        assert_eq!(server.messages(2)[3]["tool_call_id"], "c1");

        let stored = store.messages(&id, "mia").await.unwrap();
        assert_eq!(stored.len(), 6, "{url}");
        assert_eq!(stored[2].envelope.as_ref().unwrap()["success"], true);
        assert_eq!(stored[2].envelope.as_ref().unwrap()["result"]["temp_c"], 21);
        assert_eq!(stored[1].usage.as_ref().unwrap()["total_tokens"], 120);

        // Another user: the same id does not exist, and nothing is sent to the model.
        let before = server.received().len();
        let (other, events) = run_in(&agent, Caller::new("eve", "member"), "Show me", Some(id.clone())).await;
        let err = other.unwrap_err();
        assert_eq!(err.code(), "NOT_FOUND", "{url}: {err}");
        assert!(events.is_empty());
        assert_eq!(server.received().len(), before);
        assert_eq!(store.messages(&id, "mia").await.unwrap().len(), 6, "nothing was added");
        let (unknown, _) = run_in(&agent, member(), "x", Some("conv_nope".into())).await;
        assert_eq!(unknown.unwrap_err().code(), "NOT_FOUND");
    }
}

#[tokio::test]
async fn empty_and_oversized_messages_are_refused_before_the_model() {
    let server = ModelServer::start(vec![text("unused")]).await;
    let agent = Agent::new(test_gateway(1), direct(&server)).unwrap();
    let (empty, _) = run(&agent, member(), "   ").await;
    assert_eq!(empty.unwrap_err().code(), "INVALID_PARAMS");
    let huge = "x".repeat(toolgate_agent::MAX_MESSAGE_CHARS + 1);
    let (huge, _) = run(&agent, member(), &huge).await;
    assert_eq!(huge.unwrap_err().code(), "INVALID_PARAMS");
    assert!(server.received().is_empty());
}

/// A tool that takes a password, repeats it in its result and hands out a token.
fn sign_in_gateway() -> toolgate_gateway::Gateway {
    let schema = json!({"type": "object", "properties": {"user": {"type": "string"}, "password": {"type": "string"}},
                        "required": ["user", "password"], "additionalProperties": false});
    let tool = toolgate_core::FnTool::new(
        toolgate_core::ToolSpec::new("sign_in", "Sign in to the legacy system.", schema),
        |_ctx, params: serde_json::Value| {
            Box::pin(async move {
                Ok(toolgate_core::ToolOutput::json(json!({
                    "user": params["user"],
                    "note": format!("checked {}", params["password"].as_str().unwrap_or_default()),
                    "session_token": "tok-9f8e7d6c5b4a",
                })))
            })
        },
    );
    toolgate_gateway::Gateway::builder().tool(std::sync::Arc::new(tool)).build().unwrap()
}

#[tokio::test]
async fn secret_arguments_and_results_are_redacted_in_the_stored_conversation() {
    const PASSWORD: &str = "Tr0ub4dor&3-horse";
    const TOKEN: &str = "tok-9f8e7d6c5b4a";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.db");
    let url = format!("sqlite:{}", path.display());
    let store = ConversationStore::connect(&url).await.unwrap();
    let args = json!({"user": "mia", "password": PASSWORD});
    let text_call = format!("<tool_call>{}</tool_call>", json!({"name": "sign_in", "arguments": args}));
    for calling in [toolgate_agent::ToolCalling::Native, toolgate_agent::ToolCalling::Text] {
        let first = match calling {
            toolgate_agent::ToolCalling::Native => calls(&[("s1", "sign_in", args.clone())]),
            toolgate_agent::ToolCalling::Text => text(&text_call),
        };
        let server = ModelServer::start(vec![first, text("You are signed in.")]).await;
        let mut config = direct(&server);
        config.tool_calling = calling;
        let agent = Agent::new(sign_in_gateway(), config).unwrap().with_store(store.clone());
        let (outcome, _) = run(&agent, member(), "Sign me in").await;
        let outcome = outcome.unwrap();
        assert_eq!(outcome.stop_reason, StopReason::Answer, "{calling:?}");
        // The model read the result as it was, within the run.
        let fed = serde_json::to_string(&server.messages(1)).unwrap();
        assert!(fed.contains(TOKEN), "{calling:?}: {fed}");
        // The file, read directly: neither the password nor the token is in it.
        let db = sqlx::SqlitePool::connect(&url).await.unwrap();
        let rows: Vec<(String, Option<String>)> = sqlx::query_as(
            "SELECT message, envelope FROM agent_messages WHERE conversation_id = $1 ORDER BY seq",
        )
        .bind(&outcome.conversation_id)
        .fetch_all(&db)
        .await
        .unwrap();
        db.close().await;
        assert_eq!(rows.len(), 4, "{calling:?}: user, assistant, result, answer");
        let all = format!("{rows:?}");
        assert!(!all.contains(PASSWORD) && !all.contains("Tr0ub4dor"), "{calling:?}: {all}");
        assert!(!all.contains(TOKEN), "{calling:?}: {all}");
        assert!(all.contains("[redacted]") && all.contains("mia"), "{calling:?}: {all}");
    }
}
