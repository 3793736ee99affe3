//! JSON-RPC batches: accepted in sessions of MCP 2025-03-26 (which says a
//! server must accept them), refused in later revisions (which removed them).

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};
use toolgate_test_support::mcp::{self, Reply};

use crate::common::TestServer;

const OLD: &str = "2025-03-26";

/// A POST to /mcp in `session`, naming protocol `version`.
async fn post(server: &TestServer, session: Option<&str>, version: &str, body: &Value) -> Reply {
    let mut request = server
        .client
        .post(server.url("/mcp"))
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header(AUTHORIZATION, format!("Bearer {}", server.member))
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", version);
    }
    Reply::read(request.send().await.unwrap()).await.unwrap()
}

/// A session opened with `initialize` naming 2025-03-26.
async fn old_session(server: &TestServer) -> String {
    let mut init = mcp::initialize(1);
    init["params"]["protocolVersion"] = json!(OLD);
    let reply = post(server, None, OLD, &init).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.response(1).unwrap()["result"]["protocolVersion"], OLD, "{}", reply.text);
    let session = reply.session().expect("a session id");
    let ack = post(server, Some(&session), OLD, &mcp::initialized()).await;
    assert_eq!(ack.status, 202, "{}", ack.text);
    session
}

#[tokio::test]
async fn a_2025_03_26_batch_gets_one_array_of_the_answers_to_its_requests() {
    let server = TestServer::default().await;
    let session = old_session(&server).await;

    let batch = json!([
        mcp::request(11, "tools/list", json!({})),
        mcp::execute_tool(12, "query_weather", json!({"city": "Oslo", "days": 2})),
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}},
    ]);
    let reply = post(&server, Some(&session), OLD, &batch).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.session().as_deref(), Some(session.as_str()), "the session header comes back");
    let answers = reply.json();
    let answers = answers.as_array().unwrap_or_else(|| panic!("not an array: {}", reply.text));
    assert_eq!(answers.len(), 2, "one answer per request, none for the notification: {}", reply.text);
    assert_eq!(answers[0]["id"], 11);
    let tools = answers[0]["result"]["tools"].as_array().unwrap_or_else(|| panic!("{}", answers[0]));
    assert!(tools.iter().any(|t| t["name"] == "execute_tool"), "{}", answers[0]);
    assert_eq!(answers[1]["id"], 12);
    assert!(answers[1].get("error").is_none(), "{}", answers[1]);
    assert_eq!(answers[1]["result"]["isError"], false, "{}", answers[1]);
    assert!(answers[1]["result"].to_string().contains("Oslo"), "{}", answers[1]);

    // A call answered with an event stream (progress) gives its final response.
    let steps = json!({"name": "execute_tool", "_meta": {"progressToken": "p-1"},
        "arguments": {"tool_name": "count_steps", "parameters": {"steps": 3}}});
    let streamed = json!([mcp::request(13, "tools/call", steps), mcp::request(14, "ping", json!({}))]);
    let reply = post(&server, Some(&session), OLD, &streamed).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let answers = reply.json();
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{}", reply.text);
    assert_eq!(answers[0]["id"], 13, "{}", reply.text);
    assert_eq!(answers[0]["result"]["structuredContent"]["result"]["counted"], 3, "{}", reply.text);
    assert_eq!(answers[1]["id"], 14, "{}", reply.text);

    // Only notifications: 202, no body.
    let notes = json!([mcp::initialized(), mcp::initialized()]);
    let reply = post(&server, Some(&session), OLD, &notes).await;
    assert_eq!((reply.status, reply.text.as_str()), (202, ""));

    // `initialize` is never batched; a bad message gets its own error entry.
    let mixed = json!([mcp::initialize(21), {"jsonrpc": "1.0", "id": 22, "method": "ping"}, mcp::request(23, "ping", json!({}))]);
    let reply = post(&server, Some(&session), OLD, &mixed).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let answers = reply.json();
    let codes: Vec<_> =
        answers.as_array().unwrap().iter().map(|a| (a["id"].clone(), a["error"]["code"].clone())).collect();
    assert_eq!(
        codes,
        [(json!(21), json!(-32600)), (json!(22), json!(-32600)), (json!(23), Value::Null)],
        "{}",
        reply.text
    );
    server.stop().await;
}

#[tokio::test]
async fn an_empty_or_too_long_batch_is_an_invalid_request() {
    let server = TestServer::default().await;
    let session = old_session(&server).await;

    let empty = post(&server, Some(&session), OLD, &json!([])).await;
    assert_eq!(empty.status, 400, "{}", empty.text);
    assert_eq!(empty.json()["error"]["code"], -32600, "{}", empty.text);
    assert!(empty.json()["error"]["message"].as_str().unwrap().contains("empty"), "{}", empty.text);

    let long: Vec<Value> = (0..33).map(|i| mcp::request(100 + i, "ping", json!({}))).collect();
    let long = post(&server, Some(&session), OLD, &Value::Array(long)).await;
    assert_eq!(long.status, 400, "{}", long.text);
    assert_eq!(long.json()["error"]["code"], -32600, "{}", long.text);
    let why = long.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(why.contains("32") && why.contains("33"), "names the cap and the length: {why}");

    // At the cap it is served.
    let full: Vec<Value> = (0..32).map(|i| mcp::request(200 + i, "ping", json!({}))).collect();
    let full = post(&server, Some(&session), OLD, &Value::Array(full)).await;
    assert_eq!(full.status, 200, "{}", full.text);
    assert_eq!(full.json().as_array().map(Vec::len), Some(32), "{}", full.text);
    server.stop().await;
}

#[tokio::test]
async fn a_later_revision_s_batch_is_still_refused() {
    let server = TestServer::default().await;
    let (session, _) = server.open_session(&server.member).await;
    let batch = json!([mcp::request(1, "ping", json!({}))]);
    let reply = post(&server, Some(&session), mcp::PROTOCOL, &batch).await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert_eq!(reply.json()["error"]["code"], -32600, "{}", reply.text);
    assert_eq!(
        reply.json()["error"]["message"],
        "invalid request: batches are not supported; send one message per request"
    );
    server.stop().await;
}
