//! Asking the human: a write that answers `need_confirm` is put to the user
//! through elicitation when the client declared it (an rmcp client here, a
//! real streamable-HTTP session): yes runs the write in the same call with
//! the confirming parameter, no changes nothing and says so, and a client
//! without the capability gets the `need_confirm` signal as before.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use toolgate_mcp::{Exposure, HttpConfig};

use crate::common::TestServer;

/// A client whose user answers every question with `action`, and which
/// keeps the questions it was asked.
#[derive(Clone)]
struct User {
    action: Option<ElicitationAction>,
    /// Declares the capability but answers every question with an error (as
    /// a toolgate in front answers when its own caller cannot be asked).
    refuses: bool,
    asked: Arc<Mutex<Vec<(String, Value)>>>,
}

impl ClientHandler for User {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request {
            self.asked.lock().unwrap().push((message, serde_json::to_value(requested_schema).unwrap()));
        }
        if self.refuses {
            return Err(ErrorData::invalid_request("cannot put this question to anyone", None));
        }
        let action = self.action.clone().unwrap_or(ElicitationAction::Decline);
        let content = (action == ElicitationAction::Accept).then(|| json!({"confirm": true}));
        let mut result = ElicitResult::new(action);
        result.content = content;
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.client_info = Implementation::new("elicit-test", "0");
        info.capabilities = if self.action.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        info
    }
}

/// `delete_account` for `acme` as the admin, answered by a user who says
/// `action` (`None`: a client that cannot be asked); the envelope and the
/// questions asked.
async fn delete_acme(
    server: &TestServer,
    action: Option<ElicitationAction>,
) -> (Value, Vec<(String, Value)>) {
    ask_acme(server, User { action, refuses: false, asked: Arc::default() }).await
}

async fn ask_acme(server: &TestServer, user: User) -> (Value, Vec<(String, Value)>) {
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url("/mcp")).auth_header(server.admin.clone());
    let client =
        user.clone().serve(StreamableHttpClientTransport::from_config(config)).await.expect("connects");
    let arguments = json!({"tool_name": "delete_account", "parameters": {"account": "acme"}});
    let result = client
        .call_tool(
            CallToolRequestParams::new("execute_tool").with_arguments(arguments.as_object().unwrap().clone()),
        )
        .await
        .expect("the call answers");
    let _ = client.cancel().await;
    let asked = user.asked.lock().unwrap().clone();
    (result.structured_content.expect("an envelope"), asked)
}

#[tokio::test]
async fn a_confirmation_is_asked_of_the_user_and_yes_runs_the_write_in_the_same_call() {
    let server = TestServer::start(Exposure::Meta, HttpConfig::default()).await;
    let (envelope, asked) = delete_acme(&server, Some(ElicitationAction::Accept)).await;
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    let (message, schema) = &asked[0];
    assert!(message.contains("cannot be undone"), "{message}");
    assert_eq!(schema["properties"]["confirm"]["type"], "boolean", "{schema}");
    // The demo's delete_account refuses only once confirmed: this is its second run, with confirm=true.
    assert_eq!(envelope["error"]["code"], "CONFLICT", "{envelope}");
    assert_eq!(envelope["metadata"]["attempts"], 2, "{envelope}");
    server.stop().await;
}

#[tokio::test]
async fn no_or_a_dismissed_question_changes_nothing_and_says_so() {
    let server = TestServer::start(Exposure::Meta, HttpConfig::default()).await;
    for (action, outcome) in
        [(ElicitationAction::Decline, "declined"), (ElicitationAction::Cancel, "cancelled")]
    {
        let mut trace = server.gateway.subscribe();
        let (envelope, asked) = delete_acme(&server, Some(action)).await;
        // The trace shows the question and how it was answered, between start and end.
        let mut kinds = Vec::new();
        while let Ok(event) = trace.try_recv() {
            if event.tool == "delete_account" {
                if event.kind == toolgate_gateway::TraceKind::Asked {
                    assert_eq!(event.result["outcome"], outcome, "{:?}", event.result);
                    assert!(event.result["question"].as_str().unwrap().contains("cannot be undone"));
                }
                kinds.push(event.kind);
            }
        }
        assert_eq!(
            kinds,
            [
                toolgate_gateway::TraceKind::Start,
                toolgate_gateway::TraceKind::Asked,
                toolgate_gateway::TraceKind::End
            ],
            "{outcome}"
        );
        assert_eq!(asked.len(), 1);
        assert_eq!(envelope["success"], true, "{envelope}");
        assert_eq!(envelope["result"]["done"], false, "{envelope}");
        assert_eq!(envelope["result"]["confirmation"], outcome, "{envelope}");
        assert!(
            envelope["result"]["message"].as_str().unwrap().contains("nothing was changed"),
            "{envelope}"
        );
        assert_eq!(
            envelope["signals"],
            json!([]),
            "no need_confirm left for the model to act on: {envelope}"
        );
        assert_eq!(envelope["metadata"]["attempts"], 1, "the write did not run again: {envelope}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_cannot_be_asked_gets_the_signal_as_before() {
    let server = TestServer::start(Exposure::Meta, HttpConfig::default()).await;
    let (envelope, asked) = delete_acme(&server, None).await;
    assert!(asked.is_empty());
    assert_eq!(envelope["success"], true, "{envelope}");
    assert_eq!(envelope["signals"][0]["kind"], "need_confirm", "{envelope}");
    assert_eq!(envelope["signals"][0]["confirm_param"], "confirm", "{envelope}");
    server.stop().await;
}

/// A client that declared elicitation but cannot take the question (answers
/// with an error): the model gets the `need_confirm` signal, as without the
/// capability, not "the user declined".
#[tokio::test]
async fn a_client_that_cannot_take_the_question_leaves_the_signal_to_the_model() {
    let server = TestServer::start(Exposure::Meta, HttpConfig::default()).await;
    let user = User { action: Some(ElicitationAction::Accept), refuses: true, asked: Arc::default() };
    let (envelope, asked) = ask_acme(&server, user).await;
    assert_eq!(asked.len(), 1, "it was asked");
    assert_eq!(envelope["success"], true, "{envelope}");
    assert_eq!(envelope["signals"][0]["kind"], "need_confirm", "{envelope}");
    assert_eq!(envelope["metadata"]["attempts"], 1, "the write did not run again: {envelope}");
    server.stop().await;
}
