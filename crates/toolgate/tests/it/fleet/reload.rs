//! The fleet under a reload: a route table added to the shared configuration and a reload
//! asked of one instance (`POST /api/admin/reload`, what `toolgate reload` sends); the others
//! hear it through PostgreSQL NOTIFY.
//! Measured: how long until all four serve the new tool, and that the calls running through
//! HAProxy meanwhile (stateless and in sticky sessions) all succeed.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_test_support::mcp;

use super::execute;

/// One route table of the `probe` domain.
pub(super) fn table(tool: &str, op: &str, path: &str) -> String {
    format!(
        "tool = \"{tool}\"\ndescription = \"Reads a probe record. Example: {{\\\"op\\\": \\\"{op}\\\"}}.\"\ndomain = \"probe\"\n\n[[routes]]\nop = \"{op}\"\nmethod = \"GET\"\npath = \"{path}\"\nsummary = \"One probe record\"\n"
    )
}

/// A real HTTP backend on 127.0.0.1 that answers every path; its URL.
pub(super) async fn backend() -> String {
    let app = axum::Router::new()
        .fallback(|uri: axum::http::Uri| async move { axum::Json(json!({"path": uri.path()})) });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// The `[[domains]]` entry serving the tables of `routes` against `backend`, with its first table.
pub(super) fn domain(routes: &Path, backend: &str) -> String {
    std::fs::create_dir_all(routes).unwrap();
    std::fs::write(routes.join("query_alpha.toml"), table("query_alpha", "get_alpha", "/alpha")).unwrap();
    format!(
        "[[domains]]\nname = \"probe\"\nbase_url = \"{backend}\"\nroutes = \"{}\"\nauth = {{ kind = \"none\" }}\n",
        routes.display()
    )
}

/// The parts of the fleet the reload runs against.
pub(super) struct Fleet<'a> {
    pub(super) routes: &'a Path,
    /// A member's key, for the traffic.
    pub(super) key: &'a str,
    /// The highest role's key, for `toolgate reload`.
    pub(super) admin: &'a str,
    /// The stateless and the sticky frontends.
    pub(super) rr: &'a str,
    pub(super) sticky: &'a str,
    /// The four instances, directly.
    pub(super) instances: [&'a str; 4],
}

async fn lists(client: &reqwest::Client, url: &str, key: &str, tool: &str) -> bool {
    let Ok(response) = client.get(format!("{url}/api/tools")).bearer_auth(key).send().await else {
        return false;
    };
    let listed: Value = response.json().await.unwrap_or_default();
    listed["tools"].as_array().is_some_and(|tools| tools.iter().any(|t| t["name"] == tool))
}

pub(super) async fn reload_under_traffic(fleet: Fleet<'_>) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    for url in fleet.instances {
        assert!(lists(&client, url, fleet.key, "query_alpha").await, "{url} serves the first table");
        assert!(!lists(&client, url, fleet.key, "query_beta").await);
    }
    // Traffic through the balancer: 6 stateless callers and 2 sticky sessions, each call a
    // domain tool the reload replaces or a compiled-in one.
    let stop = Arc::new(AtomicBool::new(false));
    let (sent, succeeded) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut workers = Vec::new();
    for n in 0..8 {
        let (client, stop, sent, succeeded) = (client.clone(), stop.clone(), sent.clone(), succeeded.clone());
        let (front, key) = (if n < 6 { fleet.rr } else { fleet.sticky }.to_owned(), fleet.key.to_owned());
        workers.push(tokio::spawn(async move {
            let session = if n < 6 {
                None
            } else {
                Some(mcp::open_session(&client, &format!("{front}/mcp"), Some(&key)).await.0)
            };
            let mut failures = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let (tool, params) = if i % 2 == 0 {
                    ("query_alpha", json!({"op": "get_alpha"}))
                } else {
                    ("query_travel_order", json!({}))
                };
                i += 1;
                sent.fetch_add(1, Ordering::SeqCst);
                let (status, env) = execute(&client, &front, &key, session.as_deref(), tool, params).await;
                if status == 200 && env["success"] == true {
                    succeeded.fetch_add(1, Ordering::SeqCst);
                } else {
                    failures.push((tool, status, env));
                }
            }
            failures
        }));
    }
    super::wait_until("traffic flows", Duration::from_secs(10), async || sent.load(Ordering::SeqCst) >= 80)
        .await;

    // The reload is asked of instance a as `toolgate reload` asks it (POST /api/admin/reload),
    // timed from the request; each instance is watched by a task of its own from before it.
    std::fs::write(fleet.routes.join("query_beta.toml"), table("query_beta", "get_beta", "/beta")).unwrap();
    let asked = Instant::now();
    let watchers: Vec<_> = fleet
        .instances
        .iter()
        .map(|url| {
            let (client, url, key) = (client.clone(), (*url).to_owned(), fleet.key.to_owned());
            tokio::spawn(async move {
                while !lists(&client, &url, &key, "query_beta").await {
                    assert!(asked.elapsed() < Duration::from_secs(5), "{url} does not serve the new tool");
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                asked.elapsed()
            })
        })
        .collect();
    let response = client
        .post(format!("{}/api/admin/reload", fleet.instances[0]))
        .bearer_auth(fleet.admin)
        .send()
        .await
        .unwrap();
    let answered = asked.elapsed();
    let (status, answer) = (response.status().as_u16(), response.json::<Value>().await.unwrap());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["changes"]["added"], json!(["query_beta"]), "{answer}");
    let mut serving = Vec::new();
    for watcher in watchers {
        serving.push(watcher.await.unwrap());
    }
    let all = serving.iter().max().copied().unwrap();
    // More traffic on the new snapshot, then stop.
    let at_reload = sent.load(Ordering::SeqCst);
    super::wait_until("traffic after the reload", Duration::from_secs(10), async || {
        sent.load(Ordering::SeqCst) >= at_reload + 80
    })
    .await;
    stop.store(true, Ordering::SeqCst);
    let mut failures = Vec::new();
    for worker in workers {
        failures.extend(worker.await.unwrap());
    }
    let (sent, succeeded) = (sent.load(Ordering::SeqCst), succeeded.load(Ordering::SeqCst));
    eprintln!(
        "reload under traffic: POST /api/admin/reload on a answered after {} ms; the new tool listed by instance a after {} ms, b {} ms, c {} ms, d {} ms (all four: {} ms); {sent} calls sent through HAProxy, {succeeded} succeeded",
        answered.as_millis(),
        serving[0].as_millis(),
        serving[1].as_millis(),
        serving[2].as_millis(),
        serving[3].as_millis(),
        all.as_millis()
    );
    assert!(failures.is_empty(), "calls failed during the reload: {failures:?}");
    assert_eq!(sent, succeeded);

    // The new tool through both frontends.
    let (status, env) =
        execute(&client, fleet.rr, fleet.key, None, "query_beta", json!({"op": "get_beta"})).await;
    assert_eq!((status, &env["success"]), (200, &json!(true)), "{env}");
}
