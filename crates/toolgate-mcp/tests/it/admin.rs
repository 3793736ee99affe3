//! The operator's routes against the real server (SQLite key store and audit
//! trail in a tempdir): `/api/admin/sources`, `/api/admin/keys`, `/api/audit`
//! with its filters, `/api/admin/reload`; every one refuses lower roles with
//! a structured `403` and changes nothing for them.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_mcp::{Exposure, HttpConfig, SourceState, Sources};

use crate::common::TestServer;

/// A reply as (status, JSON body).
async fn send(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_else(|_| json!({ "raw": text })))
}

fn authed(server: &TestServer, method: reqwest::Method, key: &str, path: &str) -> reqwest::RequestBuilder {
    server.client.request(method, server.url(path)).bearer_auth(key)
}

async fn get(server: &TestServer, key: &str, path: &str) -> (u16, Value) {
    send(authed(server, reqwest::Method::GET, key, path)).await
}

/// Sources that ask a TCP port whether it answers, as a deployment's would
/// ask its backends: `weather` is a live listener, `ghost` a port nobody holds.
#[derive(Debug)]
struct Ports {
    live: std::net::SocketAddr,
    dead: std::net::SocketAddr,
}

async fn reach(addr: std::net::SocketAddr) -> Result<(), String> {
    match tokio::time::timeout(Duration::from_secs(1), tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("{addr}: {e}")),
        Err(_) => Err(format!("{addr}: no answer within 1 s")),
    }
}

#[toolgate_core::async_trait]
impl Sources for Ports {
    async fn sources(&self) -> Vec<SourceState> {
        vec![
            SourceState::new("weather", "domain")
                .with_target(format!("http://{}", self.live))
                .with_reach(reach(self.live).await),
            SourceState::new("ghost", "upstream")
                .with_target(format!("http://{}/mcp", self.dead))
                .with_reach(reach(self.dead).await),
        ]
    }
}

async fn audited_server(dir: &tempfile::TempDir) -> (TestServer, toolgate_fleet::SqlAudit) {
    let url = format!("sqlite:{}", dir.path().join("audit.db").display());
    let trail = toolgate_fleet::SqlAudit::connect(&url, "test-1").await.unwrap();
    let kept = trail.clone();
    let server =
        TestServer::start_with(Exposure::Meta, HttpConfig::default(), move |state| state.with_audit(kept))
            .await;
    (server, trail)
}

#[tokio::test]
async fn every_admin_route_refuses_lower_roles_with_a_structured_403_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _trail) = audited_server(&dir).await;
    let before = server.keys.list().await.unwrap();
    let victim = before.iter().find(|k| k.user_id == "mia").unwrap().id.clone();
    use reqwest::Method as M;
    let routes: Vec<(M, String, Option<Value>)> = vec![
        (M::GET, "/api/admin/sources".into(), None),
        (M::GET, "/api/admin/keys".into(), None),
        (M::POST, "/api/admin/keys".into(), Some(json!({"user_id": "eve", "role": "admin"}))),
        (M::PATCH, format!("/api/admin/keys/{victim}"), Some(json!({"role": "admin"}))),
        (M::DELETE, format!("/api/admin/keys/{victim}"), None),
        (M::GET, "/api/audit".into(), None),
        (M::GET, "/api/admin/reload".into(), None),
        (M::POST, "/api/admin/reload".into(), None),
    ];
    for key in [&server.manager, &server.member, &server.guest] {
        let (status, me) = get(&server, key, "/api/whoami").await;
        assert_eq!((status, &me["admin"]), (200, &json!(false)), "{me}");
        assert_eq!(me["admin_sections"], Value::Null, "{me}");
        for (method, path, body) in &routes {
            let mut request = authed(&server, method.clone(), key, path);
            if let Some(body) = body {
                request = request.json(body);
            }
            let (status, answer) = send(request).await;
            assert_eq!(status, 403, "{method} {path}: {answer}");
            assert_eq!(answer["error"]["code"], "PERMISSION_DENIED", "{method} {path}: {answer}");
            assert!(answer["error"]["message"].as_str().unwrap().contains("`admin`"), "{answer}");
        }
    }
    // Without a key: 401 before any of it.
    let (status, _) = send(server.client.get(server.url("/api/admin/keys"))).await;
    assert_eq!(status, 401);
    assert_eq!(server.keys.list().await.unwrap(), before, "no key was made, changed or revoked");
    let (_, me) = get(&server, &server.admin, "/api/whoami").await;
    assert_eq!(me["admin"], true, "{me}");
    assert_eq!(me["admin_sections"], json!({"audit": true, "reload": false}), "{me}");
    server.stop().await;
}

#[tokio::test]
async fn sources_say_which_answer_with_tool_counts_error_rates_and_latency() {
    let live = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = {
        let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        taken.local_addr().unwrap()
    }; // dropped: nobody listens there now
    let ports = Arc::new(Ports { live: live.local_addr().unwrap(), dead });
    let server =
        TestServer::start_with(Exposure::Meta, HttpConfig::default(), move |state| state.with_sources(ports))
            .await;
    // Two calls of the weather domain's one tool: one answers, one is refused for its parameters.
    for (params, ok) in [(json!({"city": "Oslo"}), true), (json!({"city": ""}), false)] {
        let request = authed(&server, reqwest::Method::POST, &server.member, "/api/call")
            .json(&json!({"tool": "query_weather", "parameters": params}));
        let (status, answer) = send(request).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["envelope"]["success"], ok, "{answer}");
    }
    let (status, answer) = get(&server, &server.admin, "/api/admin/sources").await;
    assert_eq!(status, 200, "{answer}");
    let sources = answer["sources"].as_array().unwrap();
    let row =
        |name: &str| sources.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{name}: {answer}"));
    let weather = row("weather");
    assert_eq!(weather["kind"], "domain");
    assert_eq!(weather["reachable"], true, "{weather}");
    assert_eq!(weather["error"], Value::Null);
    assert_eq!(weather["tools"], 1, "{weather}");
    assert_eq!(weather["calls"], 2, "{weather}");
    assert_eq!(weather["errors"], 1, "{weather}");
    assert_eq!(weather["error_rate"], 0.5, "{weather}");
    assert_eq!(weather["error_codes"], json!({"INVALID_PARAMS": 1}), "{weather}");
    assert!(weather["latency_ms"]["mean"].as_f64().is_some_and(|m| m >= 0.0), "{weather}");
    assert!(weather["latency_ms"]["p95_at_most"].as_f64().is_some_and(|m| m > 0.0), "{weather}");
    let ghost = row("ghost");
    assert_eq!(ghost["reachable"], false, "{ghost}");
    assert!(ghost["error"].as_str().unwrap().contains(&dead.to_string()), "{ghost}");
    assert_eq!((ghost["tools"].clone(), ghost["calls"].clone()), (json!(0), json!(0)), "{ghost}");
    assert_eq!(ghost["error_rate"], Value::Null);
    // The demo's other domains are claimed by no source: listed by domain, reachability unknown.
    let others: Vec<&Value> = sources.iter().filter(|s| s["kind"] == "tools").collect();
    assert!(!others.is_empty(), "{answer}");
    assert!(others.iter().all(|s| s["reachable"].is_null()), "{answer}");
    let counted: u64 = sources.iter().map(|s| s["tools"].as_u64().unwrap()).sum();
    assert_eq!(counted as usize, server.gateway.all_specs().len(), "every tool counted once");
    drop(live);
    server.stop().await;
}

#[tokio::test]
async fn keys_are_listed_made_changed_and_revoked_through_the_admin_api_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let (server, trail) = audited_server(&dir).await;
    let (status, listed) = get(&server, &server.admin, "/api/admin/keys").await;
    assert_eq!(status, 200, "{listed}");
    let text = listed.to_string();
    assert!(!text.contains("tg_") && !text.contains("hash"), "no secret nor digest is listed: {text}");
    assert_eq!(listed["keys"].as_array().unwrap().len(), 4);
    assert_eq!(listed["roles"], json!(["guest", "member", "manager", "admin"]));
    let own = listed["own_key_id"].as_str().unwrap().to_owned();

    // Make one: the secret is in this answer, and it works at once with its role and scope.
    let request = authed(&server, reqwest::Method::POST, &server.admin, "/api/admin/keys")
        .json(&json!({"user_id": "nia", "role": "member", "domains": ["weather", " "]}));
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let made: Value = response.json().await.unwrap();
    let (id, secret) =
        (made["key"]["id"].as_str().unwrap().to_owned(), made["secret"].as_str().unwrap().to_owned());
    assert!(secret.starts_with("tg_"), "{made}");
    assert_eq!(made["key"]["scope"], json!({"toolset": null, "domains": ["weather"]}), "{made}");
    assert_eq!(made["audited"], true);
    let (status, me) = get(&server, &secret, "/api/whoami").await;
    assert_eq!(
        (status, me["user_id"].as_str(), me["role"].as_str()),
        (200, Some("nia"), Some("member")),
        "{me}"
    );
    let (_, tools) = get(&server, &secret, "/api/tools").await;
    assert!(tools["tools"].as_array().unwrap().iter().all(|t| t["domain"] == "weather"), "{tools}");
    let (_, listed) = get(&server, &server.admin, "/api/admin/keys").await;
    assert!(!listed.to_string().contains(&secret), "the secret is shown once");

    // Change its role and scope: the next request sees them.
    let patch = |body: Value| {
        authed(&server, reqwest::Method::PATCH, &server.admin, &format!("/api/admin/keys/{id}")).json(&body)
    };
    let (status, changed) =
        send(patch(json!({"role": "manager", "toolset": "read_only", "domains": null}))).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["changes"]["role"], json!({"from": "member", "to": "manager"}), "{changed}");
    assert_eq!(changed["key"]["scope"], json!({"toolset": "read_only", "domains": null}), "{changed}");
    let (_, me) = get(&server, &secret, "/api/whoami").await;
    assert_eq!(me["role"], "manager", "{me}");
    // Bad changes are refused and change nothing.
    for (body, code) in [
        (json!({"role": "emperor"}), "unknown role"),
        (json!({"toolset": "no_such_set"}), "no toolset"),
        (json!({"colour": "red"}), "unknown field"),
        (json!({}), "nothing to change"),
    ] {
        let (status, answer) = send(patch(body.clone())).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_PARAMS")),
            "{body}: {answer}"
        );
        assert!(answer["error"]["message"].as_str().unwrap().contains(code), "{body}: {answer}");
    }
    let (_, me) = get(&server, &secret, "/api/whoami").await;
    assert_eq!(me["role"], "manager");
    let bad = authed(&server, reqwest::Method::POST, &server.admin, "/api/admin/keys")
        .json(&json!({"user_id": "eve", "role": "emperor"}));
    assert_eq!(send(bad).await.0, 400);
    let bad = authed(&server, reqwest::Method::POST, &server.admin, "/api/admin/keys")
        .json(&json!({"user_id": "a b", "role": "guest"}));
    assert_eq!(send(bad).await.0, 400, "a user id with whitespace");
    assert_eq!(server.keys.list().await.unwrap().len(), 5, "no key made by a refused request");

    // The page's own key is neither revoked nor changed here.
    let (status, answer) =
        send(authed(&server, reqwest::Method::DELETE, &server.admin, &format!("/api/admin/keys/{own}")))
            .await;
    assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("CONFLICT")), "{answer}");
    let (status, _) = get(&server, &server.admin, "/api/whoami").await;
    assert_eq!(status, 200);

    // Revoke: the key stops working at once; twice is 404.
    let revoke = || authed(&server, reqwest::Method::DELETE, &server.admin, &format!("/api/admin/keys/{id}"));
    let (status, answer) = send(revoke()).await;
    assert_eq!((status, answer["revoked"].as_str()), (200, Some(id.as_str())), "{answer}");
    assert_eq!(get(&server, &secret, "/api/whoami").await.0, 401);
    let (status, answer) = send(revoke()).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{answer}");
    let (_, listed) = get(&server, &server.admin, "/api/admin/keys").await;
    let row = listed["keys"].as_array().unwrap().iter().find(|k| k["id"] == id.as_str()).unwrap().clone();
    assert_eq!(row["active"], false, "{row}");

    // Each operation is on the trail, under the operator who did it, without the secret.
    let records = trail.query(&toolgate_fleet::AuditQuery::default().with_user("ada")).await.unwrap();
    let tools: Vec<&str> = records.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(tools, ["keys.revoke", "keys.update", "keys.create"], "{records:?}");
    assert!(records.iter().all(|r| r.ids["key_id"] == id.as_str() && r.role == "admin"), "{records:?}");
    assert!(!format!("{records:?}").contains(&secret));
    server.stop().await;
}

fn record(at: &str, user: &str, tool: &str, outcome: &str) -> toolgate_gateway::AuditRecord {
    toolgate_gateway::AuditRecord {
        at: at.into(),
        user_id: user.into(),
        role: "member".into(),
        key_id: None,
        tool: tool.into(),
        params: json!({"city": "Oslo"}),
        outcome: outcome.into(),
        ids: json!({}),
        trace_id: format!("t-{at}"),
    }
}

#[tokio::test]
async fn the_audit_trail_filters_by_tool_caller_outcome_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let (server, trail) = audited_server(&dir).await;
    for r in [
        record("2026-11-30T10:00:00.000Z", "mia", "query_weather", "OK"),
        record("2026-11-30T11:00:00.000Z", "mia", "log_meal", "INVALID_PARAMS"),
        record("2026-11-30T12:00:00.000Z", "gus", "query_weather", "PERMISSION_DENIED"),
        record("2026-11-30T13:00:00.000Z", "max", "query_weather", "OK"),
    ] {
        trail.append(&r).await.unwrap();
    }
    let times = |answer: &Value| -> Vec<String> {
        answer["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["at"].as_str().unwrap()[11..13].to_owned())
            .collect()
    };
    for (query, hours) in [
        ("", vec!["13", "12", "11", "10"]),
        ("?tool=query_weather", vec!["13", "12", "10"]),
        ("?user=mia", vec!["11", "10"]),
        ("?outcome=OK", vec!["13", "10"]),
        ("?since=2026-11-30T11:30:00Z", vec!["13", "12"]),
        ("?since=2026-11-30T12:30:00%2B01:00", vec!["13", "12"]),
        ("?tool=query_weather&outcome=OK&since=2026-11-30T11:00:00Z", vec!["13"]),
        ("?limit=1", vec!["13"]),
    ] {
        let (status, answer) = get(&server, &server.admin, &format!("/api/audit{query}")).await;
        assert_eq!(status, 200, "{query}: {answer}");
        assert_eq!(times(&answer), hours, "{query}: {answer}");
    }
    let (status, answer) = get(&server, &server.admin, "/api/audit?since=yesterday").await;
    assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_PARAMS")), "{answer}");
    server.stop().await;
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_without_a_key() {
    let server = TestServer::default().await;
    let page = server.get(None, "/").await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("<script src=\"/admin.js\"></script>") && page.text.contains("/page.css"));
    let csp = page.headers["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("script-src 'self'") && csp.contains("style-src 'self'"), "{csp}");
    for (path, kind, marker) in
        [("/admin.js", "text/javascript", "toolgateAdmin"), ("/page.css", "text/css", "#admin")]
    {
        let asset = server.get(None, path).await;
        assert_eq!(asset.status, 200, "{path}");
        assert!(asset.headers["content-type"].to_str().unwrap().starts_with(kind), "{path}");
        assert_eq!(asset.headers["x-content-type-options"], "nosniff");
        assert!(asset.text.contains(marker), "{path}");
    }
    server.stop().await;
}

#[tokio::test]
async fn without_a_reloader_the_reload_route_says_so_to_the_highest_role() {
    let server = TestServer::default().await;
    let (status, answer) = get(&server, &server.admin, "/api/admin/reload").await;
    assert_eq!((status, answer["error"]["code"].as_str()), (503, Some("UNAVAILABLE")), "{answer}");
    server.stop().await;
}
