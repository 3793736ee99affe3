//! Changes without a restart: a `toolgate serve` whose `[[domains]]` folder gains a table
//! serves the new tool after `SIGHUP`, a broken table changes nothing, and a change of a
//! section read only at start is reported as needing a restart. The backend is a real HTTP
//! server on 127.0.0.1 that records each request.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_test_support::mcp;

use crate::common::{key_of, rpc, serving, toolgate};

fn table(tool: &str, op: &str, path: &str) -> String {
    format!(
        "tool = \"{tool}\"\ndescription = \"Reads a probe record. Example: {{\\\"op\\\": \\\"{op}\\\"}}.\"\ndomain = \"probe\"\n\n[[routes]]\nop = \"{op}\"\nmethod = \"GET\"\npath = \"{path}\"\nsummary = \"One probe record\"\n"
    )
}

async fn backend() -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let record = record.clone();
        async move {
            record.lock().unwrap().push(uri.path().to_owned());
            axum::Json(json!({"path": uri.path()}))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

fn hang_up(pid: u32) {
    let status = std::process::Command::new("kill").args(["-HUP", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

/// Wait until the log has `n` lines containing `needle`; the log.
async fn logged(log: &std::path::Path, needle: &str, n: usize) -> String {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.matches(needle).count() >= n {
            return text;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "no {n}× `{needle}` in the log:\n{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_swaps_the_domains_tools_and_a_bad_configuration_changes_nothing() {
    let (backend, seen) = backend().await;
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("routes");
    std::fs::create_dir(&routes).unwrap();
    std::fs::write(routes.join("query_alpha.toml"), table("query_alpha", "get_alpha", "/alpha")).unwrap();
    let db = format!("sqlite:{}", dir.path().join("tg.db").display());
    let domain = format!(
        "[[domains]]\nname = \"probe\"\nbase_url = \"{backend}\"\nroutes = \"{}\"\nauth = {{ kind = \"none\" }}\n",
        routes.display()
    );
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, format!("[database]\nurl = \"{db}\"\n\n{domain}")).unwrap();
    let log = dir.path().join("serve.log");
    let (served, url, banner) = serving(
        toolgate()
            .args(["--config", config.to_str().unwrap(), "serve", "--demo", "--expose", "direct"])
            .args(["--listen", "127.0.0.1:0"])
            .env("TOOLGATE_LOG", "info")
            .stderr(std::fs::File::create(&log).unwrap()),
    );
    let pid = served.child.id();
    let key = key_of(&banner, "alice");
    let client = reqwest::Client::new();
    let endpoint = format!("{url}/mcp");
    let (session, _) = mcp::open_session(&client, &endpoint, Some(&key)).await;
    let mut id = 1;
    let mut request = |method: &str, params: Value| {
        id += 1;
        let (client, endpoint, key, session) = (&client, &endpoint, &key, &session);
        let body = mcp::request(id, method, params);
        async move {
            let (status, _, answer) = rpc(client, endpoint, Some(key), Some(session), &body).await;
            assert_eq!(status, 200, "{answer}");
            answer["result"].clone()
        }
    };
    let names = |listed: Value| -> Vec<String> {
        listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let before = names(request("tools/list", json!({})).await);
    assert!(before.contains(&"query_alpha".to_owned()) && !before.contains(&"query_beta".to_owned()));
    // The session's own stream, where a direct-mode session hears that the tool list changed.
    let stream = client
        .get(&endpoint)
        .bearer_auth(&key)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", mcp::PROTOCOL)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let mut events = mcp::SseReader::new(stream);

    // A new table: served after SIGHUP, and callable.
    std::fs::write(routes.join("query_beta.toml"), table("query_beta", "get_beta", "/beta")).unwrap();
    let sent = Instant::now();
    hang_up(pid);
    let text = logged(&log, "reloaded the configuration", 1).await;
    let reloaded_after = sent.elapsed();
    assert!(
        text.contains("1 tool(s) added, 0 removed, 1 kept") && text.contains("added: query_beta"),
        "{text}"
    );
    let after = names(request("tools/list", json!({})).await);
    assert!(after.contains(&"query_beta".to_owned()), "{after:?}");
    let called = request("tools/call", json!({"name": "query_beta", "arguments": {"op": "get_beta"}})).await;
    assert_eq!(called["isError"], false, "{called}");
    assert_eq!(seen.lock().unwrap().last().map(String::as_str), Some("/beta"));
    eprintln!("a new table was served {} ms after SIGHUP", reloaded_after.as_millis());
    // The open session was told, without asking: `notifications/tools/list_changed` on its stream.
    loop {
        let (_, data) = events.next(Duration::from_secs(10)).await.expect("the session's stream stays open");
        if serde_json::from_str::<Value>(&data)
            .is_ok_and(|m| m["method"] == "notifications/tools/list_changed")
        {
            break;
        }
    }
    eprintln!("the open session heard the change {} ms after SIGHUP", sent.elapsed().as_millis());

    // A broken table: refused as a whole, every tool stays as it was.
    std::fs::write(routes.join("query_gamma.toml"), "tool = \"query_gamma\"\n").unwrap();
    hang_up(pid);
    let text = logged(&log, "reload refused, nothing changed", 1).await;
    assert!(text.contains("query_gamma.toml"), "{text}");
    assert_eq!(names(request("tools/list", json!({})).await), after, "nothing changed");
    std::fs::remove_file(routes.join("query_gamma.toml")).unwrap();

    // A section read only at start: the reload applies the domains and the roles, and says
    // what needs a restart.
    std::fs::remove_file(routes.join("query_alpha.toml")).unwrap();
    std::fs::write(&config, format!("[database]\nurl = \"{db}\"\n\n[server]\ninstance = \"renamed\"\n\n[authz]\nroles = [\"guest\", \"member\", \"clerk\", \"manager\", \"admin\"]\n\n{domain}")).unwrap();
    hang_up(pid);
    let text = logged(&log, "reloaded the configuration", 2).await;
    assert!(text.contains("removed: query_alpha") && text.contains("applied: [authz]"), "{text}");
    assert!(text.contains("restart to apply): [server]"), "{text}");
    let last = names(request("tools/list", json!({})).await);
    assert!(!last.contains(&"query_alpha".to_owned()) && last.contains(&"query_beta".to_owned()), "{last:?}");

    // `toolgate reload` (the admin API) does the same from the command line, for the highest
    // role only, and says what changed or why nothing did.
    let reload = |key: &str| {
        toolgate_test_support::process::output(toolgate().args([
            "--config",
            config.to_str().unwrap(),
            "reload",
            "--url",
            &url,
            "--key",
            key,
        ]))
    };
    std::fs::write(routes.join("query_delta.toml"), table("query_delta", "get_delta", "/delta")).unwrap();
    let (ok, out) = reload(&key_of(&banner, "bob"));
    assert!(!ok && out.contains("HTTP 403"), "a manager may not reload: {out}");
    assert!(!names(request("tools/list", json!({})).await).contains(&"query_delta".to_owned()));
    let admin = key_of(&banner, "carol");
    let (ok, out) = reload(&admin);
    assert!(ok, "{out}");
    assert!(out.contains("1 tool(s) added") && out.contains("added: query_delta"), "{out}");
    assert!(out.contains("restart to apply): [server]"), "{out}");
    assert!(names(request("tools/list", json!({})).await).contains(&"query_delta".to_owned()));
    std::fs::write(routes.join("query_gamma.toml"), "tool = \"query_gamma\"\n").unwrap();
    let (ok, out) = reload(&admin);
    assert!(!ok && out.contains("HTTP 422") && out.contains("query_gamma.toml"), "{out}");

    // How the last reload went, for the operator (the highest role).
    let last = |key: String| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            let response =
                client.get(format!("{url}/api/admin/reload")).bearer_auth(key).send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = last(admin.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["last"]["reloaded"], false, "{body}");
    assert!(body["last"]["problems"].to_string().contains("query_gamma.toml"), "{body}");
    assert!(body["last"]["at"].as_str().is_some_and(|at| at.ends_with('Z')), "{body}");
    assert_eq!(last(key_of(&banner, "bob")).await.0, 403);
    drop(served);
}

const UPSTREAM: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../toolgate-mcp-upstream/tests/python/upstream_server.py");

/// `[[upstreams]]` on reload: a new entry is connected and its tools served, a removed one is
/// stopped and its tools are gone; the API key's session goes on throughout.
#[tokio::test(flavor = "multi_thread")]
async fn a_reload_starts_new_upstreams_and_stops_removed_ones() {
    let Some(python) = toolgate_test_support::python::with("from mcp.server.mcpserver import MCPServer")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("tg.db").display());
    let config = dir.path().join("toolgate.toml");
    let base = format!("[database]\nurl = \"{db}\"\n");
    std::fs::write(&config, &base).unwrap();
    let (_served, url, banner) = serving(
        toolgate()
            .args(["--config", config.to_str().unwrap(), "serve", "--demo", "--expose", "direct"])
            .args(["--listen", "127.0.0.1:0"])
            .stderr(std::process::Stdio::null()),
    );
    let admin = key_of(&banner, "carol");
    let client = reqwest::Client::new();
    let endpoint = format!("{url}/mcp");
    let (session, _) = mcp::open_session(&client, &endpoint, Some(&admin)).await;
    let tools = || {
        let (client, endpoint, admin, session) = (&client, &endpoint, &admin, &session);
        async move {
            let body = mcp::request(9, "tools/list", json!({}));
            let (status, _, answer) = rpc(client, endpoint, Some(admin), Some(session), &body).await;
            assert_eq!(status, 200, "{answer}");
            answer["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let reload = || {
        toolgate_test_support::process::output(toolgate().args([
            "--config",
            config.to_str().unwrap(),
            "reload",
            "--url",
            &url,
            "--key",
            &admin,
        ]))
    };
    assert!(!tools().await.iter().any(|t| t.starts_with("weather__")));

    // MARKER_DIR: where the test server writes its markers (not the crate's folder).
    let upstream = format!(
        "[[upstreams]]\nname = \"weather\"\ncommand = [\"{python}\", \"{UPSTREAM}\"]\nenv = {{ MARKER_DIR = \"{}\" }}\nread_only_tools = [\"get_forecast\"]\n",
        dir.path().display()
    );
    std::fs::write(&config, format!("{base}\n{upstream}")).unwrap();
    let started = Instant::now();
    let (ok, out) = reload();
    assert!(ok && out.contains("upstreams started: weather"), "{out}");
    toolgate_test_support::eventually(Duration::from_secs(10), "the new upstream's tools", async || {
        tools().await.contains(&"weather__get_forecast".to_owned())
    })
    .await;
    eprintln!("a new upstream was callable {} ms after the reload was asked", started.elapsed().as_millis());
    let body = mcp::request(
        10,
        "tools/call",
        json!({"name": "weather__get_forecast", "arguments": {"city": "Oslo", "days": 2}}),
    );
    let (status, _, answer) = rpc(&client, &endpoint, Some(&admin), Some(&session), &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");

    std::fs::write(&config, &base).unwrap();
    let (ok, out) = reload();
    assert!(ok && out.contains("upstreams stopped: weather"), "{out}");
    assert!(!out.contains("restart to apply"), "upstreams need no restart: {out}");
    assert!(
        !tools().await.iter().any(|t| t.starts_with("weather__")),
        "the removed upstream's tools are gone"
    );
}

const ORDER_LOOK: &str = "---\nname: order-look\ndescription: Look at travel orders. Use when the user asks about an order.\nrequired_role: manager\nsteps:\n  - title: Look it up\n    tool: query_travel_order\n---\nLook first.\n";

/// `[authz]`, `[limits]` and the skills folder change on reload with no restart; a policy that
/// leaves served tools without their role, or a skill file that does not load, changes
/// nothing and says why (the answer, `GET /api/admin/reload`, `/readyz`).
#[tokio::test(flavor = "multi_thread")]
async fn roles_limits_and_skills_change_live_and_a_bad_change_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("tg.db").display());
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(skills.join("order-look")).unwrap();
    let config = dir.path().join("toolgate.toml");
    let base = format!("[database]\nurl = \"{db}\"\n[skills]\ndir = \"{}\"\n", skills.display());
    std::fs::write(&config, &base).unwrap();
    let (_served, url, banner) = serving(
        toolgate()
            .args(["--config", config.to_str().unwrap(), "serve", "--demo", "--expose", "direct"])
            .args(["--listen", "127.0.0.1:0"])
            .stderr(std::process::Stdio::null()),
    );
    let (alice, carol) = (key_of(&banner, "alice"), key_of(&banner, "carol"));
    let client = reqwest::Client::new();
    let get = |path: &str, key: &str| {
        let request = client.get(format!("{url}{path}")).bearer_auth(key);
        async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        }
    };
    let reload = || {
        let request = client.post(format!("{url}/api/admin/reload")).bearer_auth(&carol);
        async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        }
    };
    let names = |listed: Value, field: &str, id: &str| -> Vec<String> {
        listed[field].as_array().unwrap().iter().map(|t| t[id].as_str().unwrap().to_owned()).collect()
    };
    let endpoint = format!("{url}/mcp");
    let call = |key: &str, params: Value| {
        let (client, endpoint, key) = (client.clone(), endpoint.clone(), key.to_owned());
        async move {
            let (session, _) = mcp::open_session(&client, &endpoint, Some(&key)).await;
            let body =
                mcp::request(3, "tools/call", json!({"name": "query_travel_order", "arguments": params}));
            let (status, _, answer) = rpc(&client, &endpoint, Some(&key), Some(&session), &body).await;
            assert_eq!(status, 200, "{answer}");
            answer["result"]["structuredContent"].clone()
        }
    };
    assert!(names(get("/api/tools", &alice).await.1, "tools", "name").contains(&"query_travel_order".into()));
    assert_eq!(call(&alice, json!({})).await["success"], true);
    assert!(names(get("/api/skills", &carol).await.1, "skills", "id").is_empty());

    // A role override, a smaller parameter limit and a new skill, in one reload.
    std::fs::write(skills.join("order-look/SKILL.md"), ORDER_LOOK).unwrap();
    std::fs::write(
        &config,
        format!(
            "{base}[authz.overrides]\nquery_travel_order = \"manager\"\n[limits]\nmax_param_bytes = 256\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let (status, answer) = reload().await;
    assert_eq!(status, 200, "{answer}");
    eprintln!("roles, limits and skills reloaded in {} ms", started.elapsed().as_millis());
    assert_eq!(answer["changes"]["applied"], json!(["[authz]", "[limits]", "skills"]), "{answer}");
    assert!(answer["changes"]["need_restart"].as_array().unwrap().is_empty(), "{answer}");
    assert!(
        !names(get("/api/tools", &alice).await.1, "tools", "name").contains(&"query_travel_order".into())
    );
    let denied = call(&alice, json!({})).await;
    assert_eq!(denied["error"]["code"], "PERMISSION_DENIED", "{denied}");
    assert_eq!(call(&carol, json!({})).await["success"], true);
    let big = call(&carol, json!({"order_id": "x".repeat(400)})).await;
    assert_eq!(big["error"]["code"], "INVALID_PARAMS", "{big}");
    assert_eq!(names(get("/api/skills", &carol).await.1, "skills", "id"), ["order-look"]);

    // Roles that leave the served tools' roles out: refused, every problem said, nothing changed.
    let good = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{base}[authz]\nroles = [\"viewer\", \"admin\"]\n[authz.overrides]\nquery_travel_order = \"admin\"\n"),
    )
    .unwrap();
    let (status, answer) = reload().await;
    assert_eq!(status, 422, "{answer}");
    let problems = answer["problems"].to_string();
    assert!(problems.contains("`member`") && problems.contains("not in the hierarchy"), "{answer}");
    assert_eq!(call(&alice, json!({})).await["error"]["code"], "PERMISSION_DENIED", "the override stays");
    assert_eq!(call(&carol, json!({"order_id": "x".repeat(400)})).await["error"]["code"], "INVALID_PARAMS");
    let (_, last) = get("/api/admin/reload", &carol).await;
    assert_eq!(last["last"]["reloaded"], false, "{last}");
    let ready: Value = client.get(format!("{url}/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready["status"], "ready", "the old configuration still serves: {ready}");
    let detail = &ready["checks"]["configuration"]["detail"];
    assert_eq!(detail["reloaded"], false, "{ready}");
    assert!(detail["problems"].as_u64().unwrap() >= 1, "{ready}");
    assert!(!ready.to_string().contains("not in the hierarchy"), "/readyz names no problem: {ready}");

    // A skill file that does not load: refused, the skills served stay.
    std::fs::write(&config, &good).unwrap();
    std::fs::create_dir_all(skills.join("broken")).unwrap();
    std::fs::write(skills.join("broken/SKILL.md"), "no front matter here\n").unwrap();
    let (status, answer) = reload().await;
    assert_eq!(status, 422, "{answer}");
    assert!(answer["problems"].to_string().contains("broken"), "{answer}");
    assert_eq!(names(get("/api/skills", &carol).await.1, "skills", "id"), ["order-look"]);
    std::fs::remove_dir_all(skills.join("broken")).unwrap();
    let (status, answer) = reload().await;
    assert_eq!(status, 200, "{answer}");
    let ready: Value = client.get(format!("{url}/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready["checks"]["configuration"]["detail"]["reloaded"], true, "{ready}");

    // `[discovery]` is read only at start: a reload does not load the model it names (this
    // folder is not there) and says the change needs a restart; the rest still applies.
    std::fs::write(&config, format!("{good}[discovery]\nmodel = \"/nonexistent/all-MiniLM-L6-v2\"\n"))
        .unwrap();
    let (status, answer) = reload().await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["changes"]["need_restart"], json!(["[discovery]"]), "{answer}");
}
