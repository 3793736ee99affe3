//! The example as a user runs it: the binary on an ephemeral port and a
//! fresh SQLite file, an MCP session with the key it printed, both tools
//! listed and called, a bad input refused by the schema, and the service's
//! own route beside MCP.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::json;
use toolgate_test_support::mcp;

#[tokio::test]
async fn the_embedded_service_serves_its_two_tools_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("embed.db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate-example-embed"))
        .args(["127.0.0.1:0", &db])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let key_line = lines.next().unwrap().unwrap();
    let url_line = lines.next().unwrap().unwrap();
    let key = key_line.rsplit(' ').next().unwrap().to_owned();
    let endpoint = url_line.rsplit(' ').next().unwrap().to_owned();

    let client = reqwest::Client::new();
    let (session, init) = mcp::open_session(&client, &endpoint, Some(&key)).await;
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    let call = |id, body| {
        let (client, endpoint, key, session) = (&client, &endpoint, &key, &session);
        async move {
            let reply = mcp::post(client, endpoint, Some(key), Some(session), &body).await.unwrap();
            assert_eq!(reply.status, 200, "{}", reply.text);
            reply.response(id).unwrap()["result"].clone()
        }
    };
    let listed = call(2, mcp::request(2, "tools/list", json!({}))).await;
    let mut names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["convert_temperature", "split_bill"], "{listed}");

    let converted = call(
        3,
        mcp::request(3, "tools/call", json!({"name": "convert_temperature", "arguments": {"celsius": 100}})),
    )
    .await;
    assert_eq!(converted["isError"], false, "{converted}");
    assert_eq!(converted["structuredContent"]["result"]["fahrenheit"], 212.0, "{converted}");
    let split = call(
        4,
        mcp::request(
            4,
            "tools/call",
            json!({"name": "split_bill", "arguments": {"total_cents": 1001, "people": 3}}),
        ),
    )
    .await;
    assert_eq!(split["structuredContent"]["result"]["each_cents"], 333, "{split}");
    assert_eq!(split["structuredContent"]["result"]["remainder_cents"], 2, "{split}");
    let refused = call(
        5,
        mcp::request(
            5,
            "tools/call",
            json!({"name": "split_bill", "arguments": {"total_cents": 10, "people": 0}}),
        ),
    )
    .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused["structuredContent"]["error"]["code"], "INVALID_PARAMS", "{refused}");

    let own = client.get(endpoint.replace("/mcp", "/hello")).send().await.unwrap();
    assert_eq!(own.status(), 200);
    assert_eq!(own.text().await.unwrap(), "the service's own route");
    child.kill().unwrap();
    child.wait().unwrap();
}
