//! MCP over a byte stream with a fixed caller: `serve_io` on an in-memory
//! duplex pipe, spoken to line by line as a stdio client would.

use std::time::Duration;

use crate::common::demo::demo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolgate_core::Caller;
use toolgate_mcp::{Exposure, serve_io};

struct Client {
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        self.writer.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap()
    }

    /// Messages up to and including the response to `id`.
    async fn until(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next().await;
            let done = message["id"] == json!(id) && message.get("method").is_none();
            seen.push(message);
            if done {
                return seen;
            }
        }
    }
}

fn start(caller: Caller, exposure: Exposure) -> (Client, tokio::task::JoinHandle<toolgate_mcp::Result<()>>) {
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_side);
    let task = tokio::spawn(serve_io(demo().gateway, caller, exposure, (server_read, server_write)));
    let (read, writer) = tokio::io::split(client_side);
    (Client { writer, lines: BufReader::new(read).lines() }, task)
}

#[tokio::test]
async fn a_stdio_session_as_the_configured_caller() {
    let (mut client, task) = start(Caller::new("local-user", "member"), Exposure::Meta);
    client.send(crate::common::initialize(1)).await;
    let init = client.until(1).await.pop().unwrap();
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("log_meal") && !instructions.contains("delete_account"), "{instructions}");
    client.send(toolgate_test_support::mcp::initialized()).await;

    client.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let list = client.until(2).await.pop().unwrap();
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 3);

    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "execute_tool", "arguments": {"tool_name": "log_meal", "parameters": {"food": "soup", "calories": 200}}}}))
        .await;
    let result = client.until(3).await.pop().unwrap();
    assert_eq!(result["result"]["isError"], false);
    assert_eq!(
        result["result"]["structuredContent"]["result"]["user"], "local-user",
        "the caller is the configured one"
    );

    client
        .send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "execute_tool", "arguments": {"tool_name": "count_steps", "parameters": {"steps": 2}},
                       "_meta": {"progressToken": 99}}}))
        .await;
    let messages = client.until(4).await;
    let progress: Vec<&Value> = messages.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 2, "{messages:?}");
    assert_eq!(progress[0]["params"]["progressToken"], 99);

    client.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "execute_tool", "arguments": {"tool_name": "delete_account", "parameters": {"account": "x"}}}})).await;
    let denied = client.until(5).await.pop().unwrap();
    assert_eq!(denied["result"]["isError"], true);
    assert_eq!(denied["result"]["structuredContent"]["error"]["code"], "PERMISSION_DENIED");

    // Garbage on the line gets a JSON-RPC error or is skipped; the session goes on.
    client.writer.write_all(b"{not json\n").await.unwrap();
    client.send(json!({"jsonrpc": "2.0", "id": 6, "method": "no/such/method"})).await;
    let unknown = client.until(6).await.pop().unwrap();
    assert_eq!(unknown["error"]["code"], -32601);
    client.send(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})).await;
    assert!(client.until(7).await.pop().unwrap().get("result").is_some());

    // Closing the stream ends the server cleanly.
    drop(client);
    tokio::time::timeout(Duration::from_secs(10), task).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn a_scoped_stdio_session_sees_only_its_domains() {
    let (mut client, task) =
        start(Caller::new("local-user", "admin"), Exposure::Scoped(vec!["weather".into()]));
    client.send(crate::common::initialize(1)).await;
    client.until(1).await;
    client.send(toolgate_test_support::mcp::initialized()).await;
    client.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let list = client.until(2).await.pop().unwrap();
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["query_weather"]);
    drop(client);
    tokio::time::timeout(Duration::from_secs(10), task).await.unwrap().unwrap().unwrap();
}
