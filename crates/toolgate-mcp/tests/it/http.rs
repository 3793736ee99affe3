//! The HTTP server end to end: a real server on 127.0.0.1:0, the demo
//! gateway of real `FnTool`s, an SQLite key store in a tempdir, and raw
//! HTTP from reqwest.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::common::{PROTOCOL, SseReader, TestServer, initialize};
use std::sync::Arc;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};
use toolgate_core::Caller;
use toolgate_mcp::{CredentialHook, Exposure, HttpConfig, SessionMode};

fn names(tools: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap()
}

#[tokio::test]
async fn meta_session_lists_tools_reads_instructions_and_calls() {
    let server = TestServer::default().await;
    let (session, init) = server.open_session(&server.member).await;
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains("query_weather"), "{instructions}");
    assert!(instructions.contains("log_meal"));
    assert!(instructions.contains("`meal-logging`"));
    assert!(!instructions.contains("delete_account"), "an admin tool is not in a member's catalog");
    assert!(!instructions.contains("account-cleanup"));
    assert_eq!(init["serverInfo"]["name"], "toolgate");

    let list =
        server.request(&server.member, &session, 2, "tools/list", json!({})).await.response(2).unwrap();
    let list = &list["result"];
    assert_eq!(names(list), ["execute_tool", "get_skill_guide", "get_tool_schema"]);
    let execute = tool(list, "execute_tool");
    assert_eq!(execute["annotations"]["readOnlyHint"], false);
    assert_eq!(execute["annotations"]["destructiveHint"], true);
    assert_eq!(execute["outputSchema"], toolgate_core::Envelope::json_schema());
    let schema_tool = tool(list, "get_tool_schema");
    assert_eq!(schema_tool["annotations"]["readOnlyHint"], true);

    let schema =
        server.call(&server.member, &session, "get_tool_schema", json!({"tool_name": "query_weather"})).await;
    assert_eq!(schema["isError"], false);
    assert_eq!(schema["structuredContent"]["success"], true);
    assert_eq!(schema["structuredContent"]["result"]["name"], "query_weather");

    let ok =
        server.execute(&server.member, &session, "query_weather", json!({"city": "Oslo", "days": 2})).await;
    assert_eq!(ok["isError"], false);
    assert_eq!(ok["structuredContent"]["success"], true);
    assert_eq!(ok["structuredContent"]["result"]["city"], "Oslo");
    assert_eq!(ok["structuredContent"]["metadata"]["tool"], "query_weather");
    assert_eq!(ok["content"][0]["type"], "text");
    assert_eq!(
        ok["content"][0]["text"], "Weather in Oslo: 2 day(s).",
        "the tool's template renders the text"
    );

    let invalid =
        server.execute(&server.member, &session, "query_weather", json!({"city": "Oslo", "days": 99})).await;
    assert_eq!(invalid["isError"], true);
    assert_eq!(invalid["structuredContent"]["error"]["code"], "INVALID_PARAMS");
    assert!(invalid["content"][0]["text"].as_str().unwrap().starts_with("Error INVALID_PARAMS"));

    let denied = server.execute(&server.member, &session, "delete_account", json!({"account": "acme"})).await;
    assert_eq!(denied["isError"], true);
    assert_eq!(denied["structuredContent"]["error"]["code"], "PERMISSION_DENIED");

    let unknown = server.call(&server.member, &session, "query_weather", json!({"city": "Oslo"})).await;
    assert_eq!(unknown["isError"], true, "in meta mode only the meta-tools are callable");
    assert_eq!(unknown["structuredContent"]["error"]["code"], "TOOL_NOT_FOUND");

    let signal = server
        .execute(
            &server.admin,
            &server.open_session(&server.admin).await.0,
            "delete_account",
            json!({"account": "acme"}),
        )
        .await;
    assert_eq!(signal["isError"], false);
    assert_eq!(signal["structuredContent"]["signals"][0]["kind"], "need_confirm");
    assert!(signal["content"][0]["text"].as_str().unwrap().contains("Signal need_confirm"));
    server.stop().await;
}

#[tokio::test]
async fn direct_exposure_lists_each_permitted_tool_with_annotations() {
    let server = TestServer::start(Exposure::Direct, HttpConfig::default()).await;
    let (session, init) = server.open_session(&server.member).await;
    // Titles and icons for people (2025-11-25): the server's, and each tool's title.
    assert_eq!(init["serverInfo"]["title"], "toolgate", "{init}");
    let icon = &init["serverInfo"]["icons"][0];
    assert!(icon["src"].as_str().unwrap().starts_with("data:image/svg+xml,%3Csvg"), "{icon}");
    assert_eq!(icon["mimeType"], "image/svg+xml");
    let list =
        server.request(&server.member, &session, 2, "tools/list", json!({})).await.response(2).unwrap();
    let list = &list["result"];
    assert_eq!(names(list), ["count_steps", "log_meal", "query_weather", "wait_forever"]);
    let weather = tool(list, "query_weather");
    assert_eq!(weather["title"], "Query weather");
    assert_eq!(
        weather["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true})
    );
    assert_eq!(weather["inputSchema"]["required"], json!(["city"]));
    assert_eq!(weather["outputSchema"], toolgate_core::Envelope::json_schema());
    let meal = tool(list, "log_meal");
    assert_eq!(
        meal["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true})
    );

    let ok = server.call(&server.member, &session, "query_weather", json!({"city": "Bergen"})).await;
    assert_eq!(ok["structuredContent"]["result"]["city"], "Bergen");
    let denied = server.call(&server.member, &session, "delete_account", json!({"account": "acme"})).await;
    assert_eq!(denied["structuredContent"]["error"]["code"], "PERMISSION_DENIED");

    let (admin_session, _) = server.open_session(&server.admin).await;
    let list =
        server.request(&server.admin, &admin_session, 2, "tools/list", json!({})).await.response(2).unwrap();
    let delete = tool(&list["result"], "delete_account");
    assert_eq!(
        delete["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false})
    );
    server.stop().await;
}

#[tokio::test]
async fn scoped_exposure_limits_tools_and_calls_to_its_domains() {
    let server = TestServer::start(Exposure::Scoped(vec!["nutrition".into()]), HttpConfig::default()).await;
    let (session, init) = server.open_session(&server.admin).await;
    let instructions = init["instructions"].as_str().unwrap();
    assert!(!instructions.contains("query_weather"));
    assert!(
        instructions.starts_with("In this session each tool listed below is an MCP tool of its own"),
        "{instructions}"
    );
    assert!(instructions.contains("log_meal"));
    let list = server.request(&server.admin, &session, 2, "tools/list", json!({})).await.response(2).unwrap();
    assert_eq!(names(&list["result"]), ["log_meal"]);
    let outside = server.call(&server.admin, &session, "query_weather", json!({"city": "Oslo"})).await;
    assert_eq!(outside["isError"], true);
    assert_eq!(outside["structuredContent"]["error"]["code"], "PERMISSION_DENIED");
    let inside =
        server.call(&server.admin, &session, "log_meal", json!({"food": "apple", "calories": 95})).await;
    assert_eq!(inside["structuredContent"]["result"]["user"], "ada");

    let api = server.get(Some(&server.admin), "/api/tools").await.json();
    assert_eq!(names(&api), ["log_meal"]);
    server.stop().await;
}

#[tokio::test]
async fn prompts_serve_the_catalog_and_the_guides_a_role_may_read() {
    let server = TestServer::default().await;
    let (session, _) = server.open_session(&server.guest).await;
    let list =
        server.request(&server.guest, &session, 2, "prompts/list", json!({})).await.response(2).unwrap();
    let prompts: Vec<&str> =
        list["result"]["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(prompts, ["catalog", "guide:weather-check"]);

    let catalog = server.request(&server.guest, &session, 3, "prompts/get", json!({"name": "catalog"})).await;
    let text =
        catalog.response(3).unwrap()["result"]["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("query_weather") && !text.contains("log_meal"), "{text}");

    let guide = server
        .request(&server.guest, &session, 4, "prompts/get", json!({"name": "guide:weather-check"}))
        .await;
    let guide = guide.response(4).unwrap();
    assert!(
        guide["result"]["messages"][0]["content"]["text"].as_str().unwrap().contains("query_weather"),
        "{guide}"
    );

    let hidden = server
        .request(&server.guest, &session, 5, "prompts/get", json!({"name": "guide:meal-logging"}))
        .await;
    let hidden = hidden.response(5).unwrap();
    assert_eq!(hidden["error"]["code"], -32602);
    assert_eq!(hidden["error"]["data"]["code"], "PERMISSION_DENIED");

    let unknown = server.request(&server.guest, &session, 6, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(unknown.response(6).unwrap()["error"]["code"], -32602);

    let (session, _) = server.open_session(&server.member).await;
    let list =
        server.request(&server.member, &session, 2, "prompts/list", json!({})).await.response(2).unwrap();
    assert_eq!(list["result"]["prompts"].as_array().unwrap().len(), 3);
    server.stop().await;
}

#[tokio::test]
async fn missing_bad_and_revoked_keys_get_401_json() {
    let server = TestServer::default().await;
    let no_key = server
        .client
        .post(server.url("/mcp"))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .body(initialize(1).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(no_key.status(), 401);
    assert!(no_key.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    // A JSON-RPC error, as MCP clients read every /mcp body, with the layer's code.
    let body: Value = no_key.json().await.unwrap();
    assert_eq!((body["jsonrpc"].as_str(), body["id"].is_null()), (Some("2.0"), true), "{body}");
    assert_eq!(body["error"]["data"]["code"], "UNAUTHORIZED");

    let bad = server
        .post("tg_0000000000000000000000000000000000000000000000000000000000000000", None, &initialize(1))
        .await;
    assert_eq!(bad.status, 401);
    assert_eq!(bad.json()["error"]["data"]["code"], "UNAUTHORIZED");
    for garbage in ["", "x", "Bearer", "tg_", &"a".repeat(5000)] {
        assert_eq!(server.post(garbage, None, &initialize(1)).await.status, 401, "{garbage:.20}");
    }
    let basic = server
        .client
        .get(server.url("/api/whoami"))
        .header(AUTHORIZATION, "Basic YWRhOnNlY3JldA==")
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), 401);

    for path in ["/api/whoami", "/api/tools", "/api/skills", "/trace", "/nowhere"] {
        let reply = server.get(None, path).await;
        assert_eq!(reply.status, 401, "{path}");
        assert_eq!(reply.json()["error"]["code"], "UNAUTHORIZED");
    }

    // A revoked key stops working at once, even though it was just used (and cached).
    let created = server.keys.create("tmp", "member").await.unwrap();
    let key = created.key.expose().to_owned();
    assert_eq!(server.get(Some(&key), "/api/whoami").await.status, 200);
    assert!(server.keys.revoke(&created.id).await.unwrap());
    assert_eq!(server.get(Some(&key), "/api/whoami").await.status, 401);
    server.stop().await;
}

#[tokio::test]
async fn foreign_host_or_origin_gets_403() {
    let server = TestServer::default().await;
    let get = |host: Option<&'static str>, origin: Option<&'static str>| {
        let mut request = server
            .client
            .get(server.url("/api/whoami"))
            .header(AUTHORIZATION, format!("Bearer {}", server.member));
        if let Some(host) = host {
            request = request.header("host", host);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    assert_eq!(get(None, None).await.unwrap().status(), 200);
    assert_eq!(get(Some("localhost:9999"), None).await.unwrap().status(), 200);
    assert_eq!(get(Some("[::1]:80"), None).await.unwrap().status(), 200);
    assert_eq!(get(None, Some("http://localhost:3000")).await.unwrap().status(), 200);
    for (host, origin) in [
        (Some("evil.example"), None),
        (Some("localhost.evil.example:80"), None),
        (Some("127.0.0.1.nip.io"), None),
        (None, Some("http://evil.example")),
        (None, Some("null")),
        (None, Some("http://localhost.evil.example")),
    ] {
        let response = get(host, origin).await.unwrap();
        assert_eq!(response.status(), 403, "{host:?} {origin:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "FORBIDDEN");
    }
    // The page and /mcp are guarded too, before authentication.
    let page = server.client.get(server.url("/")).header("host", "evil.example").send().await.unwrap();
    assert_eq!(page.status(), 403);
    let mcp = server
        .client
        .post(server.url("/mcp"))
        .header("origin", "https://evil.example")
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .body(initialize(1).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 403);
    server.stop().await;

    let config = HttpConfig {
        allowed_hosts: vec!["api.example.com".into(), "127.0.0.1".into()],
        allowed_origins: vec!["https://console.example.com".into()],
        ..HttpConfig::default()
    };
    let server = TestServer::start(Exposure::Meta, config).await;
    let with = |host: &'static str, origin: Option<&'static str>| {
        let mut request = server
            .client
            .get(server.url("/api/whoami"))
            .header(AUTHORIZATION, format!("Bearer {}", server.member))
            .header("host", host);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    assert_eq!(with("api.example.com", None).await.unwrap().status(), 200);
    assert_eq!(with("api.example.com", Some("https://console.example.com")).await.unwrap().status(), 200);
    assert_eq!(with("api.example.com", Some("https://console.example.com:443")).await.unwrap().status(), 200);
    assert_eq!(with("api.example.com", Some("http://console.example.com")).await.unwrap().status(), 403);
    assert_eq!(with("localhost", None).await.unwrap().status(), 403);
    server.stop().await;
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413() {
    let config = HttpConfig { max_body_bytes: 4096, ..HttpConfig::default() };
    let server = TestServer::start(Exposure::Meta, config).await;
    let (session, _) = server.open_session(&server.member).await;
    let big = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "execute_tool", "arguments": {"tool_name": "query_weather", "parameters": {"city": "x".repeat(10_000)}}}});
    let reply = server.post(&server.member, Some(&session), &big).await;
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["data"]["code"], "PAYLOAD_TOO_LARGE");
    // Without a key the answer is 401: the size of a stranger's body is not discussed.
    let stranger = server.post("nope", None, &big).await;
    assert_eq!(stranger.status, 401);
    // The session still works.
    let ok = server.execute(&server.member, &session, "query_weather", json!({"city": "Oslo"})).await;
    assert_eq!(ok["isError"], false);
    server.stop().await;
}

#[tokio::test]
async fn a_thousand_garbage_requests_then_a_valid_call() {
    let server = TestServer::default().await;
    let (session, _) = server.open_session(&server.member).await;
    let (other_session, _) = server.open_session(&server.admin).await;
    let key = server.member.clone();
    let garbage: Vec<(&str, Option<String>, &str, String)> = vec![
        ("POST", None, "application/json", "{".into()),
        ("POST", None, "application/json", "".into()),
        ("POST", None, "application/json", "null".into()),
        ("POST", None, "application/json", "[]".into()),
        ("POST", None, "application/json", "[1, 2, 3]".into()),
        ("POST", None, "application/json", "\"just a string\"".into()),
        ("POST", None, "application/json", json!({"jsonrpc": "1.0", "id": 1, "method": "initialize"}).to_string()),
        ("POST", None, "application/json", json!({"id": 1, "method": "tools/list"}).to_string()),
        ("POST", None, "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string()),
        ("POST", None, "text/plain", initialize(1).to_string()),
        ("POST", None, "application/x-www-form-urlencoded", "a=b".into()),
        ("POST", Some(session.clone()), "application/json", "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".into()),
        ("POST", Some(session.clone()), "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}).to_string()),
        ("POST", Some(session.clone()), "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": 5}).to_string()),
        ("POST", Some(session.clone()), "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}).to_string()),
        ("POST", Some(session.clone()), "application/json", json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}).to_string()),
        ("POST", Some(session.clone()), "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "execute_tool", "arguments": {"tool_name": 7}}}).to_string()),
        ("POST", Some(session.clone()), "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "execute_tool", "arguments": {"tool_name": "query_weather", "parameters": "not an object"}}}).to_string()),
        ("POST", Some("not-a-session".into()), "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string()),
        ("POST", Some(other_session.clone()), "application/json", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string()),
        ("POST", Some(session.clone()), "application/json", "\u{0}\u{1}\u{2}".into()),
        ("POST", Some(session.clone()), "application/json", "9".repeat(3000)),
        ("GET", None, "application/json", String::new()),
        ("GET", Some("stale".into()), "application/json", String::new()),
        ("DELETE", Some("stale".into()), "application/json", String::new()),
        ("PUT", Some(session.clone()), "application/json", "{}".into()),
        ("PATCH", None, "application/json", "{}".into()),
    ];
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut sent = 0;
    while sent < 1000 {
        let batch: Vec<_> = (0..50)
            .map(|i| {
                let (method, session, content_type, body) = garbage[(sent + i) % garbage.len()].clone();
                let mut request = server
                    .client
                    .request(method.parse().unwrap(), server.url("/mcp"))
                    .header(AUTHORIZATION, format!("Bearer {key}"))
                    .header(
                        ACCEPT,
                        if i % 7 == 0 { "text/html" } else { "application/json, text/event-stream" },
                    )
                    .header(CONTENT_TYPE, content_type)
                    .body(body);
                if let Some(session) = session {
                    request =
                        request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
                }
                async move {
                    let response = request.send().await.unwrap();
                    let status = response.status().as_u16();
                    let _ = response.text().await;
                    status
                }
            })
            .collect();
        for status in futures::future::join_all(batch).await {
            assert!(status < 500, "garbage made the server fail with {status}");
            *statuses.entry(status).or_default() += 1;
        }
        sent += 50;
    }
    // Refusals by HTTP status, and JSON-RPC errors inside 200/202 answers.
    assert!(statuses.keys().any(|s| (400..500).contains(s)), "{statuses:?}");
    for code in [400, 404, 405, 415] {
        assert!(statuses.contains_key(&code), "no {code} among {statuses:?}");
    }

    let ok = server.execute(&key, &session, "query_weather", json!({"city": "Oslo"})).await;
    assert_eq!(ok["isError"], false);
    let (fresh, _) = server.open_session(&key).await;
    let ok = server.execute(&key, &fresh, "query_weather", json!({"city": "Oslo"})).await;
    assert_eq!(ok["structuredContent"]["success"], true);
    server.stop().await;
}

#[tokio::test]
async fn bad_json_rpc_gets_the_right_error() {
    let server = TestServer::default().await;
    let (session, _) = server.open_session(&server.member).await;

    let unknown = server.request(&server.member, &session, 3, "no/such/method", json!({})).await;
    let unknown = unknown.response(3).unwrap();
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(unknown["error"]["message"], "unknown method `no/such/method`");

    let bad_params =
        server.request(&server.member, &session, 4, "tools/call", json!({"arguments": {}})).await;
    let bad_params = bad_params.response(4).unwrap();
    assert_eq!(bad_params["error"]["code"], -32602, "{bad_params}");
    assert!(bad_params["error"]["message"].as_str().unwrap().contains("tools/call"));

    let not_json = server.post_raw(&server.member, Some(&session), "application/json", "{nope".into()).await;
    assert_eq!(not_json.status, 400, "{}", not_json.text);
    assert_eq!(not_json.json()["error"]["code"], -32700);
    assert_eq!(not_json.json()["id"], Value::Null);

    for (body, id) in [
        (json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), Value::Null),
        (json!({"jsonrpc": "1.0", "id": 8, "method": "ping"}), json!(8)),
        (json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}), Value::Null),
        (json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": [1]}), json!(9)),
        (json!({"jsonrpc": "2.0", "id": 10, "method": 7}), json!(10)),
        (json!({"jsonrpc": "2.0", "id": 11}), json!(11)),
    ] {
        let reply = server.post(&server.member, Some(&session), &body).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.text);
        assert_eq!(reply.json()["error"]["code"], -32600, "{body}");
        assert_eq!(reply.json()["id"], id, "{body}");
    }

    let wrong_type =
        server.post_raw(&server.member, Some(&session), "text/plain", initialize(1).to_string()).await;
    assert_eq!(wrong_type.status, 415, "{}", wrong_type.text);

    let no_session =
        server.post(&server.member, None, &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})).await;
    assert_eq!(no_session.status, 400, "{}", no_session.text);

    // Another caller's session id is answered like an unknown one.
    let foreign = server.request(&server.admin, &session, 6, "tools/list", json!({})).await;
    assert_eq!(foreign.status, 404, "{}", foreign.text);

    // A closed session is stale.
    let delete = server
        .client
        .delete(server.url("/mcp"))
        .header(AUTHORIZATION, format!("Bearer {}", server.member))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", PROTOCOL)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 204, "a session ended by DELETE is answered 204 No Content");
    let stale = server.request(&server.member, &session, 7, "tools/list", json!({})).await;
    assert_eq!(stale.status, 404, "{}", stale.text);
    server.stop().await;
}

#[tokio::test]
async fn progress_notifications_reach_the_client_before_the_result() {
    for exposure in [Exposure::Meta, Exposure::Direct] {
        let server = TestServer::start(exposure.clone(), HttpConfig::default()).await;
        let (session, _) = server.open_session(&server.member).await;
        let (name, arguments) = if exposure.is_direct() {
            ("count_steps", json!({"steps": 3}))
        } else {
            ("execute_tool", json!({"tool_name": "count_steps", "parameters": {"steps": 3}}))
        };
        let params = json!({"name": name, "arguments": arguments, "_meta": {"progressToken": "p-1"}});
        let reply = server.request(&server.member, &session, 11, "tools/call", params).await;
        let messages = reply.messages();
        let progress: Vec<&Value> =
            messages.iter().filter(|m| m["method"] == "notifications/progress").collect();
        assert_eq!(progress.len(), 3, "{}", reply.text);
        for (i, note) in progress.iter().enumerate() {
            let n = (i + 1) as f64;
            assert_eq!(note["params"]["progressToken"], "p-1");
            assert_eq!(note["params"]["progress"].as_f64(), Some(n));
            assert_eq!(note["params"]["total"].as_f64(), Some(3.0));
            assert_eq!(note["params"]["message"], format!("step {} of 3", i + 1));
        }
        let last_progress = messages.iter().rposition(|m| m["method"] == "notifications/progress").unwrap();
        let result = messages.iter().position(|m| m["id"] == 11).unwrap();
        assert!(last_progress < result, "progress comes before the result");
        assert_eq!(messages[result]["result"]["structuredContent"]["result"]["counted"], 3);

        // Without a token, no notifications.
        let quiet = server
            .request(
                &server.member,
                &session,
                12,
                "tools/call",
                json!({"name": name, "arguments": arguments}),
            )
            .await;
        assert!(quiet.messages().iter().all(|m| m["method"] != "notifications/progress"), "{}", quiet.text);
        server.stop().await;
    }
}

#[tokio::test]
async fn a_cancelled_notification_stops_the_running_tool() {
    let server = TestServer::default().await;
    let (session, _) = server.open_session(&server.member).await;
    let call = wait_forever_as_member(&server, Some(&session));
    wait_until(|| server.started.load(Ordering::SeqCst) == 1).await;
    assert_eq!(server.dropped.load(Ordering::SeqCst), 0);
    // While it runs, its id may not be reused in the session.
    let reused = server.request(&server.member, &session, 42, "tools/list", json!({})).await;
    assert_eq!(reused.status, 400, "{}", reused.text);
    assert_eq!(reused.json()["error"]["code"], -32600);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42, "reason": "user stopped it"}});
    let ack = server.post(&server.member, Some(&session), &cancel).await;
    assert_eq!(ack.status, 202, "{}", ack.text);
    wait_until(|| server.dropped.load(Ordering::SeqCst) == 1).await;
    call.abort();
    // The session still serves.
    let ok = server.execute(&server.member, &session, "query_weather", json!({"city": "Oslo"})).await;
    assert_eq!(ok["isError"], false);
    server.stop().await;
}

/// `wait_forever` as the member with JSON-RPC id 42, in `session` (or
/// without one); its answer is read to its end, so the request stays open
/// while the tool runs.
fn wait_forever_as_member(
    server: &TestServer,
    session: Option<&str>,
) -> tokio::task::JoinHandle<reqwest::Result<String>> {
    let request = server.mcp_post(&server.member, session).body(
        json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
            "params": {"name": "execute_tool", "arguments": {"tool_name": "wait_forever"}}})
        .to_string(),
    );
    tokio::spawn(async move { request.send().await?.text().await })
}

/// The next `end` trace event (a call's `start` events are skipped); no
/// event on the way may carry the test's secret.
async fn next_end(trace: &mut SseReader) -> Value {
    loop {
        let (event, data) = trace.next(Duration::from_secs(10)).await.expect("a trace event");
        assert_eq!(event, "trace");
        assert!(!data.contains("sk-very-secret"), "{data}");
        let event: Value = serde_json::from_str(&data).unwrap();
        if event["kind"] == "end" {
            return event;
        }
    }
}

pub(crate) async fn wait_until(condition: impl Fn() -> bool) {
    for _ in 0..400 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the condition did not come true within 10 s");
}

#[tokio::test]
async fn the_trace_streams_redacted_events_everyone_to_admins_own_calls_to_others() {
    let server = TestServer::default().await;
    let response = server.stream(&server.manager, "/trace").await;
    assert_eq!(response.status(), 200, "a manager may follow their own calls");
    let mut own = SseReader::new(response);
    assert_eq!(own.next(Duration::from_secs(10)).await.unwrap().0, "ready");

    let response = server.stream(&server.admin, "/trace").await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let mut trace = SseReader::new(response);
    let (event, _) = trace.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(event, "ready");

    let (session, _) = server.open_session(&server.member).await;
    let failed = server
        .call(&server.member, &session, "execute_tool", json!({"tool_name": "query_weather", "parameters": {"city": "Oslo", "api_key": "sk-very-secret"}}))
        .await;
    assert_eq!(failed["structuredContent"]["error"]["code"], "INVALID_PARAMS");
    server.execute(&server.member, &session, "query_weather", json!({"city": "Oslo"})).await;

    let first = next_end(&mut trace).await;
    assert_eq!(first["tool"], "query_weather");
    assert_eq!(first["user_id"], "mia");
    assert_eq!(first["role"], "member");
    assert_eq!(first["success"], false);
    assert_eq!(first["code"], "INVALID_PARAMS");
    assert_eq!(first["params"]["api_key"], "[redacted]");
    assert_eq!(first["params"]["city"], "Oslo");
    let second = next_end(&mut trace).await;
    assert_eq!(second["success"], true);
    assert_eq!(second["attempts"], 1);
    assert!(second["duration_ms"].as_f64().unwrap() >= 0.0);

    // The manager's stream skipped mia's two calls and shows the manager's own.
    let (manager_session, _) = server.open_session(&server.manager).await;
    server.execute(&server.manager, &manager_session, "query_weather", json!({"city": "Bergen"})).await;
    let mine = next_end(&mut own).await;
    assert_eq!(mine["user_id"], "max", "{mine}");
    assert_eq!(mine["params"]["city"], "Bergen");
    let theirs = next_end(&mut trace).await;
    assert_eq!(theirs["user_id"], "max", "the admin sees the manager's call too: {theirs}");

    // Shutting down ends the open trace streams instead of waiting for them.
    server.stop().await;
    assert!(trace.next(Duration::from_secs(10)).await.is_none());
    assert!(own.next(Duration::from_secs(10)).await.is_none());
}

#[tokio::test]
async fn the_json_api_shows_the_callers_view() {
    let server = TestServer::default().await;
    let me = server.get(Some(&server.member), "/api/whoami").await.json();
    assert_eq!(me["user_id"], "mia");
    assert_eq!(me["role"], "member");
    assert_eq!(me["can_trace"], true, "everyone may follow their own calls");
    assert_eq!(me["trace_scope"], "own");
    assert_eq!(me["exposure"], "meta");
    assert!(me["key_id"].as_str().unwrap().starts_with("key_"));
    assert!(!me.to_string().contains(&server.member), "the key is never echoed");
    assert_eq!(server.get(Some(&server.admin), "/api/whoami").await.json()["trace_scope"], "all");

    let guest = server.get(Some(&server.guest), "/api/tools").await.json();
    assert_eq!(names(&guest), ["query_weather"]);
    let admin = server.get(Some(&server.admin), "/api/tools").await.json();
    assert_eq!(names(&admin).len(), 5);
    let writes = server.get(Some(&server.admin), "/api/tools?effect=write").await.json();
    assert_eq!(names(&writes), ["delete_account", "log_meal"]);
    let by_domain = server.get(Some(&server.admin), "/api/tools?domain=fitness").await.json();
    assert_eq!(names(&by_domain), ["count_steps", "wait_forever"]);
    let bad = server.get(Some(&server.admin), "/api/tools?colour=blue").await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["code"], "INVALID_PARAMS");

    let skills = server.get(Some(&server.member), "/api/skills").await.json();
    let ids: Vec<&str> =
        skills["skills"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&"weather-check") && ids.contains(&"meal-logging"));

    let missing = server.get(Some(&server.member), "/api/nothing").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "NOT_FOUND");
    server.stop().await;
}

#[tokio::test]
async fn the_page_is_served_without_a_key() {
    let server = TestServer::default().await;
    let page = server.client.get(server.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    let html = page.text().await.unwrap();
    assert!(html.contains("<title>toolgate</title>"));
    assert!(
        html.contains("/api/tools") && html.contains("/trace"),
        "the page calls the JSON API and the trace"
    );
    server.stop().await;
}

#[tokio::test]
async fn stateless_mode_answers_plain_json_without_sessions() {
    let config = HttpConfig { sessions: SessionMode::Stateless, ..HttpConfig::default() };
    let server = TestServer::start(Exposure::Direct, config).await;
    let init = server.post(&server.member, None, &initialize(1)).await;
    assert_eq!(init.status, 200, "{}", init.text);
    assert!(init.headers.get("mcp-session-id").is_none());
    assert!(init.response(1).unwrap()["result"]["instructions"].as_str().unwrap().contains("count_steps"));

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "query_weather", "arguments": {"city": "Oslo"}}});
    let request = server.mcp_post(&server.member, None).body(call.to_string());
    let reply = crate::common::Reply::read(request.send().await.unwrap()).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(
        reply.headers["content-type"].to_str().unwrap().starts_with("application/json"),
        "{:?}",
        reply.headers
    );
    assert_eq!(reply.json()["result"]["structuredContent"]["result"]["city"], "Oslo");

    let delete = server
        .client
        .delete(server.url("/mcp"))
        .header(AUTHORIZATION, format!("Bearer {}", server.member))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 405);
    server.stop().await;
}

/// Gives every caller a backend token, as a deployment would for pass-through.
#[derive(Debug)]
struct BackendTokens;

#[toolgate_core::async_trait]
impl CredentialHook for BackendTokens {
    async fn credentials(&self, caller: Caller) -> Caller {
        let token = format!("backend-token-of-{}", caller.user_id);
        caller.with_credential("backend", token)
    }
}

#[tokio::test]
async fn the_credential_hook_gives_tools_a_pass_through_token() {
    let server = TestServer::start_with(Exposure::Direct, HttpConfig::default(), |state| {
        state.with_credentials(Arc::new(BackendTokens))
    })
    .await;
    let (session, _) = server.open_session(&server.member).await;
    let logged =
        server.call(&server.member, &session, "log_meal", json!({"food": "pear", "calories": 60})).await;
    assert_eq!(logged["structuredContent"]["result"]["has_token"], true);
    assert!(!logged.to_string().contains("backend-token-of-"), "the token is not echoed");
    server.stop().await;

    let plain = TestServer::start(Exposure::Direct, HttpConfig::default()).await;
    let (session, _) = plain.open_session(&plain.member).await;
    let logged =
        plain.call(&plain.member, &session, "log_meal", json!({"food": "pear", "calories": 60})).await;
    assert_eq!(
        logged["structuredContent"]["result"]["has_token"], false,
        "the API key is never passed on as a token"
    );
    plain.stop().await;
}

#[tokio::test]
async fn anonymous_access_is_opt_in_and_bad_keys_stay_refused() {
    let config = HttpConfig { anonymous: Some(Caller::new("anon", "guest")), ..HttpConfig::default() };
    let server = TestServer::start(Exposure::Meta, config).await;
    let me = server.get(None, "/api/whoami").await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.json()["user_id"], "anon");
    assert_eq!(me.json()["role"], "guest");
    assert_eq!(server.get(None, "/trace").await.status, 403, "an anonymous guest may not read the trace");
    assert_eq!(server.get(Some("tg_wrong"), "/api/whoami").await.status, 401, "a bad key is still refused");
    let tools = server.get(None, "/api/tools").await.json();
    assert_eq!(names(&tools), ["query_weather"]);
    server.stop().await;
}

/// Lists come in one page and no cursor is ever issued, so a cursor is a
/// parameter this server cannot honour: -32602, not a silent first page.
#[tokio::test]
async fn a_cursor_this_server_never_issued_is_an_invalid_parameter() {
    let server = TestServer::default().await;
    let (session, _) = server.open_session(&server.member).await;
    for (id, method) in [(3, "tools/list"), (4, "prompts/list")] {
        let reply = server.request(&server.member, &session, id, method, json!({"cursor": "bogus"})).await;
        let response = reply.response(id).unwrap_or_else(|| panic!("no response in {}", reply.text));
        assert_eq!(response["error"]["code"], -32602, "{method}: {response}");
        assert!(response["error"]["message"].as_str().unwrap().contains("cursor"), "{response}");
        let plain = server.request(&server.member, &session, id + 10, method, json!({})).await;
        assert!(
            plain.response(id + 10).unwrap().get("result").is_some(),
            "{method} without a cursor: {}",
            plain.text
        );
    }
    server.stop().await;
}

/// Without sessions a `notifications/cancelled` comes in a POST of its own:
/// it stops the caller's call it names (it ran to its end before), and only
/// the caller's own: another key's cancellation of the same id does nothing.
#[tokio::test]
async fn a_cancelled_notification_stops_a_stateless_call_of_the_same_key() {
    let config = HttpConfig { sessions: SessionMode::Stateless, ..HttpConfig::default() };
    let server = TestServer::start(Exposure::Meta, config).await;
    let call = wait_forever_as_member(&server, None);
    wait_until(|| server.started.load(Ordering::SeqCst) == 1).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42, "reason": "user stopped it"}});
    // Another caller naming the same id cancels nothing.
    let foreign = server.post(&server.admin, None, &cancel).await;
    assert_eq!(foreign.status, 202, "{}", foreign.text);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.dropped.load(Ordering::SeqCst), 0, "another key's cancellation stopped the call");
    let ack = server.post(&server.member, None, &cancel).await;
    assert_eq!(ack.status, 202, "{}", ack.text);
    wait_until(|| server.dropped.load(Ordering::SeqCst) == 1).await;
    let answer =
        tokio::time::timeout(Duration::from_secs(5), call).await.expect("the call answers").unwrap().unwrap();
    assert!(answer.contains("cancelled"), "{answer}");
    // The server still serves calls without sessions.
    let reply = server
        .post(
            &server.member,
            None,
            &toolgate_test_support::mcp::execute_tool(9, "query_weather", json!({"city": "Oslo"})),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    server.stop().await;
}

/// `/api/tools?text=` ranks as discovery does: a tool sharing one word of the request is found,
/// although no tool has every word (which is what the text filter needed before).
#[tokio::test]
async fn the_json_api_ranks_free_text_by_relevance() {
    let server = TestServer::default().await;
    let ranked = server
        .get(Some(&server.admin), "/api/tools?text=is%20the%20weather%20nice%20in%20Paris")
        .await
        .json();
    assert_eq!(names(&ranked), ["query_weather"], "{ranked}");
    let meal = server
        .get(Some(&server.admin), "/api/tools?text=record%20what%20I%20ate%20as%20a%20meal")
        .await
        .json();
    assert_eq!(names(&meal).first().map(String::as_str), Some("log_meal"), "{meal}");
    // The other filters still apply; a text nothing shares a word with finds nothing.
    let reads = server.get(Some(&server.admin), "/api/tools?text=meal&effect=read").await.json();
    assert!(!names(&reads).contains(&"log_meal".to_owned()), "{reads}");
    let none = server.get(Some(&server.admin), "/api/tools?text=zebra%20xylophone").await.json();
    assert!(names(&none).is_empty(), "{none}");
}
