//! An upstream's question (`elicitation/create`, form mode) during one of our calls reaches the
//! person behind that call through its context's asker, and the answer goes back: a Rust rmcp
//! server (in process, streamable HTTP on 127.0.0.1:0, where the question comes on the call's
//! response stream) and the Python server over stdio (where nothing ties it to a call), each with
//! an `ask_name` that asks for a name and returns what it got.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams, ElicitationSchema,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use toolgate_core::{Answer, Asker, Question};
use toolgate_mcp_upstream::{UpstreamConfig, Upstreams};

use crate::common::{call, front, markers, member, python};

/// Asks its caller for a name, with the tool's `who` in the message.
#[derive(Clone)]
struct Inquisitive;

impl ServerHandler for Inquisitive {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let schema = json!({"type": "object", "properties": {"who": {"type": "string"}}});
        let Value::Object(schema) = schema else { unreachable!() };
        let tool = Tool::new("ask_name", "Asks the user for a name.", Arc::<JsonObject>::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let who = request.arguments.as_ref().and_then(|a| a.get("who")).and_then(Value::as_str).unwrap_or("");
        let schema: ElicitationSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
            "required": ["name"]
        }))
        .unwrap();
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("What is your name, {who}?"),
            requested_schema: schema,
        };
        let answer = match context.peer.create_elicitation(params).await {
            Ok(result) => json!({"action": result.action, "content": result.content}),
            Err(error) => json!({"error": error.to_string()}),
        };
        Ok(CallToolResult::structured(answer).into())
    }
}

async fn serve() -> UpstreamConfig {
    let service = StreamableHttpService::new(
        || Ok(Inquisitive),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let mut config = UpstreamConfig::http("asking", url);
    config.connect_timeout = Duration::from_secs(10);
    config
}

/// A person who gives one answer and remembers the questions; with a gate, answers only once
/// everyone sharing it has been asked.
struct Person {
    answer: Answer,
    asked: Mutex<Vec<Question>>,
    gate: Option<Arc<tokio::sync::Barrier>>,
}

impl Person {
    fn new(answer: Answer) -> Arc<Self> {
        Arc::new(Self { answer, asked: Mutex::default(), gate: None })
    }

    fn gated(answer: Answer, gate: &Arc<tokio::sync::Barrier>) -> Arc<Self> {
        Arc::new(Self { answer, asked: Mutex::default(), gate: Some(gate.clone()) })
    }

    fn asked(&self) -> Vec<Question> {
        self.asked.lock().unwrap().clone()
    }
}

#[toolgate_core::async_trait]
impl Asker for Person {
    async fn ask(&self, question: &Question) -> Answer {
        self.asked.lock().unwrap().push(question.clone());
        if let Some(gate) = &self.gate {
            gate.wait().await;
        }
        self.answer.clone()
    }
}

#[tokio::test]
async fn an_upstream_question_goes_to_the_person_behind_the_call() {
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![serve().await]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());

    // Accepted: the content goes back to the upstream, which returns it.
    let ada = Person::new(Answer::Accept(json!({"name": "Ada"})));
    let answer =
        call(&gateway, &member().with_asker(ada.clone()), "asking__ask_name", json!({"who": "mia"})).await;
    assert!(answer.success, "{answer:?}");
    let result = answer.result.clone().unwrap_or_default();
    assert_eq!(result["action"], "accept", "{answer:?}");
    assert_eq!(result["content"]["name"], "Ada", "{answer:?}");
    let asked = ada.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].message, "What is your name, mia?");
    assert_eq!(asked[0].schema["properties"]["name"]["type"], "string", "{:?}", asked[0].schema);

    // Declined and cancelled: the upstream hears just that.
    for (said, action) in [(Answer::Decline, "decline"), (Answer::Cancel, "cancel")] {
        let person = Person::new(said);
        let answer =
            call(&gateway, &member().with_asker(person.clone()), "asking__ask_name", json!({})).await;
        let result = answer.result.clone().unwrap_or_default();
        assert_eq!(result["action"], action, "{answer:?}");
        assert!(result["content"].is_null(), "{answer:?}");
        assert_eq!(person.asked().len(), 1);
    }

    // No answer (the client went away): declined.
    let gone = Person::new(Answer::Unanswered("the client went away".into()));
    let answer = call(&gateway, &member().with_asker(gone), "asking__ask_name", json!({})).await;
    assert_eq!(answer.result.clone().unwrap_or_default()["action"], "decline", "{answer:?}");

    // A caller whose client cannot be asked: an error, not a decline (nobody said no), and
    // nobody else is asked in their place.
    let answer = call(&gateway, &member(), "asking__ask_name", json!({})).await;
    assert!(answer.success, "{answer:?}");
    let error = answer.result.clone().unwrap_or_default()["error"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("cannot put this question"), "{answer:?}");
    assert_eq!(ada.asked().len(), 1, "{:?}", ada.asked());

    // The caller's own client could not take it (an upstream toolgate whose caller cannot be
    // asked): the same error, so that toolgate gives its model the need_confirm signal.
    let unreachable = Person::new(Answer::Unreachable("the client could not take the question".into()));
    let answer = call(&gateway, &member().with_asker(unreachable), "asking__ask_name", json!({})).await;
    let error = answer.result.clone().unwrap_or_default()["error"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("cannot put this question"), "{answer:?}");
}

/// Two calls in flight together (neither person answers before both are asked): each question
/// goes to the person behind its own call.
#[tokio::test]
async fn concurrent_calls_each_ask_their_own_person() {
    let gateway = front();
    let _upstreams = Upstreams::start(&gateway, vec![serve().await]).await;
    let gate = Arc::new(tokio::sync::Barrier::new(2));
    let ada = Person::gated(Answer::Accept(json!({"name": "Ada"})), &gate);
    let bob = Person::gated(Answer::Accept(json!({"name": "Bob"})), &gate);
    let (ctx_a, ctx_b) = (member().with_asker(ada.clone()), member().with_asker(bob.clone()));
    let both = async {
        tokio::join!(
            call(&gateway, &ctx_a, "asking__ask_name", json!({"who": "a"})),
            call(&gateway, &ctx_b, "asking__ask_name", json!({"who": "b"})),
        )
    };
    let (a, b) =
        tokio::time::timeout(Duration::from_secs(20), both).await.expect("both questions were asked");
    assert_eq!(a.result.clone().unwrap_or_default()["content"]["name"], "Ada", "{a:?}");
    assert_eq!(b.result.clone().unwrap_or_default()["content"]["name"], "Bob", "{b:?}");
    let (asked_a, asked_b) = (ada.asked(), bob.asked());
    assert_eq!(asked_a.len(), 1, "{asked_a:?}");
    assert_eq!(asked_a[0].message, "What is your name, a?");
    assert_eq!(asked_b.len(), 1, "{asked_b:?}");
    assert_eq!(asked_b[0].message, "What is your name, b?");
}

/// Over stdio nothing ties a question to a call: with one call in flight it is that call's; with
/// several, nobody is asked (never the wrong person) and the upstream hears that nobody can be.
#[tokio::test]
async fn over_stdio_a_question_goes_to_the_only_call_in_flight() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![crate::stdio::config(&python, dir.path())]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());

    let ada = Person::new(Answer::Accept(json!({"name": "Ada"})));
    let answer = call(&gateway, &member().with_asker(ada.clone()), "weather__ask_name", json!({})).await;
    assert!(answer.success, "{answer:?}");
    assert_eq!(answer.result.clone().unwrap_or_default()["name"], "Ada", "{answer:?}");
    assert_eq!(ada.asked().len(), 1);
    assert_eq!(ada.asked()[0].message, "What is your name?");

    // Another call in flight: whose question it is cannot be told.
    let other = Person::new(Answer::Accept(json!({"name": "Eve"})));
    let holding = {
        let (gateway, ctx) = (gateway.clone(), member().with_asker(other.clone()));
        tokio::spawn(
            async move { call(&gateway, &ctx, "weather__hold_read", json!({"label": "elicit"})).await },
        )
    };
    toolgate_test_support::eventually(Duration::from_secs(20), "the long read began", async || {
        !markers(dir.path(), "began-elicit").is_empty()
    })
    .await;
    let bob = Person::new(Answer::Accept(json!({"name": "Bob"})));
    let answer = call(&gateway, &member().with_asker(bob.clone()), "weather__ask_name", json!({})).await;
    // The Python SDK's ctx.elicit raises on the error: the upstream tool fails, saying why.
    assert!(!answer.success, "{answer:?}");
    assert!(format!("{answer:?}").contains("cannot put this question"), "{answer:?}");
    assert!(bob.asked().is_empty() && other.asked().is_empty(), "{:?} {:?}", bob.asked(), other.asked());
    holding.abort();
    // The upstream took the cancellation and goes on answering.
    let ok = call(&gateway, &member(), "weather__get_forecast", json!({"city": "Oslo"})).await;
    assert!(ok.success, "{ok:?}");
}
