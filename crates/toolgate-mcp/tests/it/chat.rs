//! `POST /api/chat` end to end: the real server with an agent whose model
//! is a scripted OpenAI-compatible server on 127.0.0.1; SSE events read
//! off the wire in order; refusals before the stream; a client that
//! disconnects cancels the run (the model's stream is dropped).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use serde_json::{Value, json};
use toolgate_agent::{Agent, AgentConfig, ConversationStore};
use toolgate_mcp::{Exposure, HttpConfig, KeyChange, KeyScope, KeyStore};

use crate::common::{SseReader, TestServer};

/// One scripted turn: SSE text, or an endless trickle of tokens.
#[derive(Clone)]
pub(crate) enum Turn {
    Sse(String),
    Endless,
}

pub(crate) struct Model {
    url: String,
    pub(crate) requests: Arc<AtomicUsize>,
    /// Endless streams whose body was dropped (the agent went away).
    dropped: Arc<AtomicUsize>,
}

struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn sse(chunks: &[Value]) -> Turn {
    let mut text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    Turn::Sse(text)
}

pub(crate) fn call_turn(tool: &str, params: Value) -> Turn {
    let args = json!({"tool_name": tool, "parameters": params}).to_string();
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "execute_tool", "arguments": args}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ])
}

pub(crate) fn text_turn(words: &[&str]) -> Turn {
    let mut chunks: Vec<Value> =
        words.iter().map(|w| json!({"choices": [{"index": 0, "delta": {"content": w}}]})).collect();
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    chunks.push(
        json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}),
    );
    sse(&chunks)
}

pub(crate) async fn model(turns: Vec<Turn>) -> Model {
    let turns = Arc::new(Mutex::new(VecDeque::from(turns)));
    let requests = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let (r, d) = (requests.clone(), dropped.clone());
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            r.fetch_add(1, Ordering::SeqCst);
            let next = turns.lock().unwrap().pop_front();
            let dropped = d.clone();
            async move {
                let body = match next {
                    Some(Turn::Sse(text)) => Body::from(text),
                    Some(Turn::Endless) => {
                        let guard = Arc::new(DropCount(dropped));
                        Body::from_stream(futures::stream::unfold(guard, |guard| async move {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            let chunk = json!({"choices": [{"index": 0, "delta": {"content": "."}}]});
                            Some((Ok::<_, std::io::Error>(format!("data: {chunk}\n\n")), guard))
                        }))
                    }
                    None => return Response::builder().status(500).body(Body::empty()).unwrap(),
                };
                Response::builder().header("content-type", "text/event-stream").body(body).unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Model { url, requests, dropped }
}

/// A model that answers every request, after `delay`, with the same turn.
async fn looping_model(turn: Turn, delay: Duration) -> Model {
    let Turn::Sse(text) = turn else { panic!("a looping model repeats an SSE turn") };
    let requests = Arc::new(AtomicUsize::new(0));
    let r = requests.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            r.fetch_add(1, Ordering::SeqCst);
            let text = text.clone();
            async move {
                tokio::time::sleep(delay).await;
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from(text))
                    .unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Model { url, requests, dropped: Arc::default() }
}

pub(crate) async fn server_with_agent(model: &Model, dir: &tempfile::TempDir) -> TestServer {
    server_with_agent_config(model, dir, |config| config).await
}

async fn server_with_agent_config(
    model: &Model,
    dir: &tempfile::TempDir,
    adjust: impl FnOnce(AgentConfig) -> AgentConfig,
) -> TestServer {
    let store = ConversationStore::connect(&format!("sqlite:{}", dir.path().join("chat.db").display()))
        .await
        .unwrap();
    let mut config = AgentConfig::new(&model.url, "scripted");
    config.model_retries = 0;
    let config = adjust(config);
    TestServer::start_with(Exposure::Meta, HttpConfig::default(), move |state| {
        let agent = Agent::new(state.gateway.clone(), config).unwrap().with_store(store);
        state.with_agent(agent)
    })
    .await
}

async fn post_chat(server: &TestServer, key: &str, body: Value) -> reqwest::Response {
    server.client.post(server.url("/api/chat")).bearer_auth(key).json(&body).send().await.unwrap()
}

/// `(event, data)` of every SSE event in a body, the data as JSON.
fn sse_events(text: &str) -> Vec<(String, Value)> {
    toolgate_test_support::mcp::sse_events(text)
        .into_iter()
        .filter_map(|(event, data)| Some((event, serde_json::from_str(&data).ok()?)))
        .collect()
}

#[tokio::test]
async fn chat_streams_tool_calls_tokens_and_the_final_event_in_order() {
    let model = model(vec![
        call_turn("query_weather", json!({"city": "Oslo"})),
        text_turn(&["Sunny ", "in ", "Oslo."]),
        text_turn(&["Still ", "sunny."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let response = post_chat(&server, &server.member, json!({"message": "Weather in Oslo?"})).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let events = sse_events(&response.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["tool_call_started", "tool_call_finished", "token", "token", "token", "final"]);
    assert_eq!(events[0].1["tool"], "execute_tool");
    assert_eq!(events[0].1["parameters"]["parameters"]["city"], "Oslo");
    assert_eq!(events[1].1["success"], true, "{}", events[1].1);
    let final_ = &events[5].1;
    assert_eq!(final_["answer"], "Sunny in Oslo.");
    assert_eq!(final_["stop_reason"], "answer");
    assert_eq!(final_["usage"]["total_tokens"], 55);
    let id = final_["conversation_id"].as_str().unwrap().to_owned();

    // The same user continues it; another user's request for it is 404 before any model call.
    let again =
        post_chat(&server, &server.member, json!({"message": "And now?", "conversation_id": id})).await;
    let again = sse_events(&again.text().await.unwrap());
    assert_eq!(again.last().unwrap().1["answer"], "Still sunny.");
    let before = model.requests.load(Ordering::SeqCst);
    let other = post_chat(&server, &server.admin, json!({"message": "Show me", "conversation_id": id})).await;
    assert_eq!(other.status(), 404);
    let body: Value = other.json().await.unwrap();
    assert_eq!(body["error"]["code"], "NOT_FOUND");
    assert_eq!(model.requests.load(Ordering::SeqCst), before);
}

#[tokio::test]
async fn chat_refusals_are_plain_http_errors() {
    let model = model(Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let anonymous =
        server.client.post(server.url("/api/chat")).json(&json!({"message": "hi"})).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    for body in [json!({"message": ""}), json!({"msg": "hi"}), json!({"message": 7})] {
        let response = post_chat(&server, &server.member, body.clone()).await;
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "INVALID_PARAMS", "{body}");
    }
    assert_eq!(model.requests.load(Ordering::SeqCst), 0);
    // A server without an agent says so.
    let plain = TestServer::default().await;
    let response = post_chat(&plain, &plain.member, json!({"message": "hi"})).await;
    assert_eq!(response.status(), 503);
    let error: Value = response.json().await.unwrap();
    assert!(error["error"]["message"].as_str().unwrap().contains("[agent]"), "{error}");
}

#[tokio::test]
async fn a_client_that_disconnects_cancels_the_run() {
    let model = model(vec![Turn::Endless]).await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let mut response = post_chat(&server, &server.member, json!({"message": "Talk forever"})).await;
    assert_eq!(response.status(), 200);
    let first = response.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("event: token"));
    assert_eq!(model.dropped.load(Ordering::SeqCst), 0, "the model is still streaming");
    drop(response);
    // The run stops, and with it the model request: its stream is dropped.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while model.dropped.load(Ordering::SeqCst) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "the model stream was never dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A member's chat whose model logs a meal (a member-only tool) on every
/// turn; once a few calls went through, `change` is made to the key by
/// another process (a second key store on the same file, as `toolgate keys`
/// opens it). The stream must end within about a second with an
/// `UNAUTHORIZED` error, and no call may succeed after the change but the
/// one in flight.
async fn a_chat_run_stops_when_its_key(change: impl AsyncFnOnce(&KeyStore, &str)) {
    let model = looping_model(
        call_turn("log_meal", json!({"food": "pear", "calories": 60})),
        Duration::from_millis(10),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent_config(&model, &dir, |config| config.max_steps(400)).await;
    let response =
        post_chat(&server, &server.member, json!({"message": "Log pears until told otherwise"})).await;
    assert_eq!(response.status(), 200);
    let mut stream = SseReader::new(response);
    let mut logged = 0;
    while logged < 3 {
        let (event, data) = stream.next(Duration::from_secs(10)).await.expect("the run goes on");
        if event == "tool_call_finished" {
            let data: Value = serde_json::from_str(&data).unwrap();
            assert_eq!(data["success"], true, "{data}");
            logged += 1;
        }
    }
    let cli = KeyStore::connect(&server.keys_url).await.unwrap();
    let id = cli.list().await.unwrap().into_iter().find(|k| k.user_id == "mia").unwrap().id;
    change(&cli, &id).await;
    let start = Instant::now();
    let (mut succeeded, mut refused, mut error, mut stop) = (0, 0, None, None);
    while let Some((event, data)) = stream.next(Duration::from_secs(10)).await {
        // Generous bounds: they catch a run that goes on (before the fix it
        // streamed until max_steps), not a slow machine; the figures are printed.
        assert!(
            start.elapsed() < Duration::from_secs(6),
            "the run still streams {:?} after the change",
            start.elapsed()
        );
        let data: Value = serde_json::from_str(&data).unwrap();
        match event.as_str() {
            "tool_call_finished" if data["success"] == true => succeeded += 1,
            "tool_call_finished" => refused += 1,
            "error" => error = Some(data),
            "final" => stop = Some(data["stop_reason"].clone()),
            _ => {}
        }
    }
    let ended = start.elapsed();
    eprintln!(
        "chat run after its key changed: ended after {ended:?}; {succeeded} call(s) succeeded after the change, \
         {refused} refused; {} model requests in all",
        model.requests.load(Ordering::SeqCst)
    );
    assert!(ended < Duration::from_secs(4), "{ended:?}");
    assert!(
        succeeded <= 1,
        "{succeeded} member-only calls succeeded after the change (at most the one in flight may)"
    );
    let error = error.expect("an error event says why the run stopped");
    assert_eq!(error["code"], "UNAUTHORIZED", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("revoked, or its role or scope was changed"),
        "{error}"
    );
    assert_eq!(stop, Some(json!("cancelled")));
    server.stop().await;
}

#[tokio::test]
async fn a_chat_run_ends_within_a_second_when_its_key_is_revoked_by_another_process() {
    a_chat_run_stops_when_its_key(async |cli: &KeyStore, id: &str| assert!(cli.revoke(id).await.unwrap()))
        .await;
}

#[tokio::test]
async fn a_chat_run_makes_no_member_call_once_its_key_is_downgraded_to_guest() {
    a_chat_run_stops_when_its_key(async |cli: &KeyStore, id: &str| {
        let change = KeyChange { role: Some("guest".into()), ..KeyChange::default() };
        assert!(cli.update(id, &change).await.unwrap().is_some());
    })
    .await;
}

#[tokio::test]
async fn a_chat_run_that_calls_no_tool_still_ends_when_its_key_is_revoked() {
    // The model only talks: there is no tool call to check, so the revocation itself must end the run.
    let model = model(vec![Turn::Endless]).await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let response = post_chat(&server, &server.member, json!({"message": "Talk forever"})).await;
    let mut stream = SseReader::new(response);
    assert_eq!(stream.next(Duration::from_secs(10)).await.unwrap().0, "token");
    let cli = KeyStore::connect(&server.keys_url).await.unwrap();
    let id = cli.list().await.unwrap().into_iter().find(|k| k.user_id == "mia").unwrap().id;
    let start = Instant::now();
    assert!(cli.revoke(&id).await.unwrap());
    let mut error = None;
    while let Some((event, data)) = stream.next(Duration::from_secs(10)).await {
        assert!(start.elapsed() < Duration::from_secs(6), "still streaming after {:?}", start.elapsed());
        if event == "error" {
            error = Some(serde_json::from_str::<Value>(&data).unwrap());
        }
    }
    let ended = start.elapsed();
    eprintln!("a talking chat run ended {ended:?} after its key was revoked by another process");
    assert!(ended < Duration::from_secs(4), "{ended:?}");
    assert_eq!(error.expect("an error event")["code"], "UNAUTHORIZED");
    server.stop().await;
}

#[tokio::test]
async fn a_conversation_is_continued_only_with_the_scope_it_was_started_with() {
    let model = model(vec![
        call_turn("query_weather", json!({"city": "Oslo"})),
        text_turn(&["Sunny."]),
        text_turn(&["Still sunny."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let first = post_chat(&server, &server.member, json!({"message": "Weather in Oslo?"})).await;
    let first = sse_events(&first.text().await.unwrap());
    let id = first.last().unwrap().1["conversation_id"].as_str().unwrap().to_owned();
    // The same user with a key narrowed to one domain, and with a guest key.
    let scope = KeyScope { domains: Some(vec!["nutrition".into()]), ..KeyScope::default() };
    let nutrition = server.keys.create_scoped("mia", "member", &scope).await.unwrap();
    let guest = server.keys.create("mia", "guest").await.unwrap();
    let before = model.requests.load(Ordering::SeqCst);
    for key in [&nutrition.key, &guest.key] {
        let refused =
            post_chat(&server, key.expose(), json!({"message": "What did you find?", "conversation_id": id}))
                .await;
        assert_eq!(refused.status(), 403);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "PERMISSION_DENIED", "{body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("another role or scope"), "{body}");
    }
    assert_eq!(
        model.requests.load(Ordering::SeqCst),
        before,
        "the model heard nothing of the refused requests"
    );
    // The key it was started with continues it.
    let again =
        post_chat(&server, &server.member, json!({"message": "And now?", "conversation_id": id})).await;
    assert_eq!(again.status(), 200);
    let again = sse_events(&again.text().await.unwrap());
    assert_eq!(again.last().unwrap().1["answer"], "Still sunny.", "{again:?}");
    server.stop().await;
}

async fn post_answer(server: &TestServer, key: &str, body: Value) -> reqwest::Response {
    server.client.post(server.url("/api/chat/answer")).bearer_auth(key).json(&body).send().await.unwrap()
}

/// The admin's chat deletes `acme` (a write that needs confirmation); the
/// test reads the `elicitation` event off the wire, checks that no other
/// caller can answer it, answers it with `action`, and returns the events
/// from the question on and the time from the answer to the call's end.
async fn a_chat_asks_to_confirm(action: Value) -> (Vec<(String, Value)>, Duration) {
    let model = model(vec![
        call_turn("delete_account", json!({"account": "acme"})),
        text_turn(&["As ", "you ", "said."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let response =
        post_chat(&server, &server.admin, json!({"message": "Delete the acme account", "elicitation": true}))
            .await;
    assert_eq!(response.status(), 200);
    let mut stream = SseReader::new(response);
    let question = loop {
        let (event, data) = stream.next(Duration::from_secs(10)).await.expect("the run asks");
        if event == "elicitation" {
            break serde_json::from_str::<Value>(&data).unwrap();
        }
        assert_eq!(event, "tool_call_started", "{data}");
    };
    assert_eq!(question["call_id"], "c1", "{question}");
    assert!(question["message"].as_str().unwrap().contains("cannot be undone"), "{question}");
    assert_eq!(question["requested_schema"]["properties"]["confirm"]["type"], "boolean", "{question}");
    let id = question["id"].as_str().unwrap().to_owned();
    // Other callers (another user, the same server's other keys) do not see it: 404, and it stays open.
    for key in [&server.manager, &server.member] {
        let refused = post_answer(
            &server,
            key,
            json!({"question_id": id, "action": "accept",
            "content": {"confirm": true}}),
        )
        .await;
        assert_eq!(refused.status(), 404);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "NOT_FOUND", "{body}");
    }
    let unknown =
        post_answer(&server, &server.admin, json!({"question_id": "q_nope", "action": "decline"})).await;
    assert_eq!(unknown.status(), 404);
    for bad in [
        json!({"question_id": id, "action": "maybe"}),
        json!({"question_id": id, "action": "accept"}),
        json!({"question_id": id, "action": "accept", "content": {"confirm": true}, "extra": 1}),
    ] {
        let refused = post_answer(&server, &server.admin, bad.clone()).await;
        assert_eq!(refused.status(), 400, "{bad}");
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "INVALID_PARAMS", "{body}");
    }
    let mut answer = json!({"question_id": id});
    answer.as_object_mut().unwrap().extend(action.as_object().unwrap().clone());
    let posted = Instant::now();
    let answered = post_answer(&server, &server.admin, answer.clone()).await;
    assert_eq!(answered.status(), 204);
    let mut events = Vec::new();
    let mut took = None;
    while let Some((event, data)) = stream.next(Duration::from_secs(10)).await {
        if event == "tool_call_finished" {
            took = Some(posted.elapsed());
        }
        events.push((event, serde_json::from_str::<Value>(&data).unwrap()));
    }
    // Answered once: the same answer again is 404.
    assert_eq!(post_answer(&server, &server.admin, answer).await.status(), 404);
    server.stop().await;
    (events, took.expect("the call finished"))
}

#[tokio::test]
async fn a_chat_question_is_answered_by_its_caller_and_yes_runs_the_write() {
    let (events, took) =
        a_chat_asks_to_confirm(json!({"action": "accept", "content": {"confirm": true}})).await;
    eprintln!("chat: from the answer's POST to the confirmed write's tool_call_finished: {took:?}");
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["elicitation_answered", "tool_call_finished", "token", "token", "token", "final"]);
    assert_eq!(events[0].1["outcome"], "accepted", "{}", events[0].1);
    // The demo's delete_account refuses only once confirmed: this is its second run, with confirm=true.
    let finished = &events[1].1;
    assert_eq!(finished["success"], false, "{finished}");
    assert_eq!(finished["code"], "CONFLICT", "{finished}");
    assert_eq!(events[5].1["stop_reason"], "answer");
}

#[tokio::test]
async fn a_chat_question_declined_changes_nothing() {
    let (events, _) = a_chat_asks_to_confirm(json!({"action": "decline"})).await;
    assert_eq!(events[0].0, "elicitation_answered");
    assert_eq!(events[0].1["outcome"], "declined", "{}", events[0].1);
    let finished = &events[1].1;
    assert_eq!(finished["success"], true, "{finished}");
    assert_eq!(finished["signals"], json!([]), "no need_confirm left for the model: {finished}");
    assert!(finished["result"].as_str().unwrap().contains("nothing was changed"), "{finished}");
}

#[tokio::test]
async fn a_question_whose_chat_went_away_takes_no_answer() {
    let model = model(vec![call_turn("delete_account", json!({"account": "acme"}))]).await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let mut trace = server.gateway.subscribe();
    let response =
        post_chat(&server, &server.admin, json!({"message": "Delete the acme account", "elicitation": true}))
            .await;
    let mut stream = SseReader::new(response);
    let id = loop {
        let (event, data) = stream.next(Duration::from_secs(10)).await.expect("the run asks");
        if event == "elicitation" {
            break serde_json::from_str::<Value>(&data).unwrap()["id"].as_str().unwrap().to_owned();
        }
    };
    drop(stream);
    // The run stops with its stream: the waiting call is cancelled, and its question with it.
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let event = trace.recv().await.unwrap();
            if event.tool == "delete_account" && event.kind == toolgate_gateway::TraceKind::Cancelled {
                break;
            }
        }
    })
    .await
    .expect("the call waiting for its answer is cancelled");
    let late = post_answer(
        &server,
        &server.admin,
        json!({"question_id": id, "action": "accept",
        "content": {"confirm": true}}),
    )
    .await;
    assert_eq!(late.status(), 404);
    assert_eq!(model.requests.load(Ordering::SeqCst), 1, "the run went no further");
    server.stop().await;
}

#[tokio::test]
async fn a_chat_client_that_did_not_declare_elicitation_gets_the_signal_as_before() {
    let model = model(vec![
        call_turn("delete_account", json!({"account": "acme"})),
        text_turn(&["Please ", "confirm."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_agent(&model, &dir).await;
    let response = post_chat(&server, &server.admin, json!({"message": "Delete the acme account"})).await;
    let events = sse_events(&response.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["tool_call_started", "tool_call_finished", "token", "token", "final"]);
    assert_eq!(events[1].1["signals"], json!(["need_confirm"]), "{}", events[1].1);
    server.stop().await;
}
