//! toolgate as a fleet and as operators see it, with the real binary.
//!
//! * `fleet_behind_haproxy`: a real HAProxy in front of four `toolgate serve`
//!   processes on the machine's PostgreSQL and Redis (two stateless behind a
//!   round-robin frontend, two stateful behind a frontend sticky on
//!   `Mcp-Session-Id`): round robin seen in each instance's `/metrics`,
//!   sticky sessions, racing submits making one order, a per-tool limit
//!   shared through Redis, a revocation and a role downgrade seen by every
//!   instance within 1 s,
//!   a route table added and `toolgate reload` asked of one instance while calls run
//!   (announced to the others by NOTIFY: how long until all four serve it, no call failed),
//!   and one instance killed mid-load while the other keeps serving. Needs
//!   `haproxy`, `TOOLGATE_TEST_PG_URL` and `TOOLGATE_TEST_REDIS_URL`; says
//!   it skipped without them, unless `TOOLGATE_REQUIRE_HAPROXY=1`.
//! * `one_instance_for_operators`: `/healthz`, `/readyz`, `/metrics`, the
//!   transport's `429` with `Retry-After`, a `RATE_LIMITED` envelope, JSON
//!   logs, and the audit trail through `/api/audit` and `toolgate audit`, on
//!   a SQLite file (always runs).

use std::io::{BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_test_support::process::{Running, free_port};
use toolgate_test_support::{eventually, gate, mcp, unique};

use crate::common::serving;

mod reload;

pub(crate) fn toolgate(config: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("--config").arg(config).env_remove("TOOLGATE_DATABASE_URL").env_remove("TOOLGATE_REDIS_URL");
    cmd
}

/// `toolgate serve` with `extra` arguments; its URL once it prints it.
pub(crate) fn serve(
    config: &Path,
    instance: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Running, String) {
    let (served, url, _) = serving(
        toolgate(config)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .env("TOOLGATE_INSTANCE", instance)
            .envs(env.iter().copied())
            .stderr(Stdio::null()),
    );
    (served, url)
}

/// `toolgate keys create`: (id, key).
pub(crate) fn make_key(config: &Path, user: &str, role: &str) -> (String, String) {
    let out = toolgate(config).args(["keys", "create", "--user", user, "--role", role]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let (id, key) = text.trim().split_once('\t').unwrap();
    (id.to_owned(), key.to_owned())
}

/// `execute_tool` over one POST; (status, envelope or error body).
pub(crate) async fn execute(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    session: Option<&str>,
    tool: &str,
    params: Value,
) -> (u16, Value) {
    let body = mcp::execute_tool(7, tool, params);
    let (status, value) = match mcp::post(client, &format!("{url}/mcp"), Some(key), session, &body).await {
        Ok(reply) => (reply.status, reply.answer().unwrap_or_else(|| Value::String(reply.text.clone()))),
        Err(e) => (0, json!({"transport_error": e.to_string()})),
    };
    let envelope = value["result"]["structuredContent"].clone();
    (status, if envelope.is_null() { value } else { envelope })
}

/// `toolgate_calls_total` of one tool on one instance, any role and outcome.
async fn calls_of(client: &reqwest::Client, url: &str, tool: &str) -> u64 {
    let text = client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("toolgate_calls_total{") && l.contains(&format!("tool=\"{tool}\"")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// An address of this machine that is not loopback (the one a route out
/// would use; no packet is sent), if it has one.
fn outside_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("10.255.255.255:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

pub(crate) fn day(days: i64) -> String {
    (chrono::Utc::now().date_naive() + chrono::Duration::days(days)).to_string()
}

/// The HAProxy configuration the README documents, with this test's ports.
fn haproxy_config(dir: &Path, front: (u16, u16), stateless: [&str; 2], sticky: [&str; 2]) -> PathBuf {
    let errors = |status: u16, reason: &str, what: &str| {
        let body =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": what}}).to_string();
        let file = dir.join(format!("{status}.http"));
        let text = format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncache-control: no-cache\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        std::fs::write(&file, text).unwrap();
        file
    };
    let e502 = errors(
        502,
        "Bad Gateway",
        "the toolgate instance serving this request stopped before answering; the call may or may not have run: check before repeating a write",
    );
    let e503 = errors(503, "Service Unavailable", "no toolgate instance is available; try again shortly");
    let e504 = errors(504, "Gateway Timeout", "the toolgate instance did not answer in time");
    let host = |url: &str| url.trim_start_matches("http://").to_owned();
    let text = format!(
        "global\n  maxconn 1024\n\
         defaults\n  mode http\n  timeout connect 1s\n  timeout client 30s\n  timeout server 30s\n  timeout check 2s\n  option redispatch\n  retries 2\n  retry-on conn-failure\n\
         \x20 errorfile 502 {e502}\n  errorfile 503 {e503}\n  errorfile 504 {e504}\n\
         frontend stateless_in\n  bind 127.0.0.1:{a}\n  default_backend toolgate_stateless\n\
         frontend sticky_in\n  bind 127.0.0.1:{b}\n  default_backend toolgate_sticky\n\
         backend toolgate_stateless\n  balance roundrobin\n  option httpchk\n  http-check send meth GET uri /readyz\n\
         \x20 default-server check inter 200ms fall 2 rise 2\n  server a {s0}\n  server b {s1}\n\
         backend toolgate_sticky\n  balance roundrobin\n  option httpchk\n  http-check send meth GET uri /readyz\n\
         \x20 stick-table type string len 64 size 100k expire 30m\n  stick on req.hdr(mcp-session-id)\n  stick store-response res.hdr(mcp-session-id)\n\
         \x20 default-server check inter 200ms fall 2 rise 2\n  server c {t0}\n  server d {t1}\n",
        e502 = e502.display(),
        e503 = e503.display(),
        e504 = e504.display(),
        a = front.0,
        b = front.1,
        s0 = host(stateless[0]),
        s1 = host(stateless[1]),
        t0 = host(sticky[0]),
        t1 = host(sticky[1]),
    );
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, text).unwrap();
    path
}

/// HAProxy, PostgreSQL and Redis, or why not (a failure under TOOLGATE_REQUIRE_HAPROXY=1).
fn fleet_parts() -> Option<(PathBuf, String, String)> {
    let haproxy = ["/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    let pg = gate::var("TOOLGATE_TEST_PG_URL");
    let redis = gate::var("TOOLGATE_TEST_REDIS_URL");
    match (haproxy, pg, redis) {
        (Some(h), Some(p), Some(r)) => Some((h, p, r)),
        (h, p, r) => {
            let why = format!(
                "the fleet test needs haproxy {}, TOOLGATE_TEST_PG_URL {}, TOOLGATE_TEST_REDIS_URL {}",
                if h.is_some() { "found" } else { "missing" },
                if p.is_some() { "set" } else { "unset" },
                if r.is_some() { "set" } else { "unset" }
            );
            gate::skip("TOOLGATE_REQUIRE_HAPROXY", &why);
            None
        }
    }
}

pub(crate) async fn wait_until(what: &str, limit: Duration, mut ok: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !ok().await {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fleet_behind_haproxy() {
    let Some((haproxy, pg, redis)) = fleet_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    let routes = dir.path().join("routes");
    let domain = reload::domain(&routes, &reload::backend().await);
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"{pg}\"\n[redis]\nurl = \"{redis}\"\n\
             [rate_limits.tools.query_weather]\nrequests = 10\ninterval_s = 300\n{domain}"
        ),
    )
    .unwrap();
    let (_, key) = make_key(&config, &unique("fleet-alice"), "member");
    let (_, admin) = make_key(&config, &unique("fleet-dave"), "admin");
    let (a, url_a) = serve(&config, "a", &["--stateless"], &[]);
    let (mut b, url_b) = serve(&config, "b", &["--stateless"], &[]);
    let (_c, url_c) = serve(&config, "c", &[], &[]);
    let (_d, url_d) = serve(&config, "d", &[], &[]);
    let (port_rr, port_sticky) = (free_port(), free_port());
    let cfg = haproxy_config(dir.path(), (port_rr, port_sticky), [&url_a, &url_b], [&url_c, &url_d]);
    let check = Command::new(&haproxy).arg("-c").arg("-f").arg(&cfg).output().unwrap();
    assert!(check.status.success(), "haproxy -c: {}", String::from_utf8_lossy(&check.stderr));
    let _lb = Running::new(
        Command::new(&haproxy)
            .arg("-db")
            .arg("-f")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let rr = format!("http://127.0.0.1:{port_rr}");
    let sticky = format!("http://127.0.0.1:{port_sticky}");
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    eventually(Duration::from_secs(10), "haproxy answers", async || {
        client.get(format!("{rr}/healthz")).send().await.is_ok_and(|r| r.status().is_success())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await; // both servers seen up (rise 2 x 200 ms)

    // 1. Round robin: 40 stateless calls through the balancer, each instance serves half.
    for _ in 0..40 {
        let (status, env) = execute(&client, &rr, &key, None, "query_travel_order", json!({})).await;
        assert_eq!((status, &env["success"]), (200, &json!(true)), "{env}");
    }
    let (on_a, on_b) = (
        calls_of(&client, &url_a, "query_travel_order").await,
        calls_of(&client, &url_b, "query_travel_order").await,
    );
    eprintln!("round robin: {on_a} calls on a, {on_b} on b");
    assert_eq!(on_a + on_b, 40);
    assert!((15..=25).contains(&on_a), "round robin split {on_a}/{on_b}");

    // 2. Sticky sessions: every call of a session reaches the instance that opened it.
    let (session, _) = mcp::open_session(&client, &format!("{sticky}/mcp"), Some(&key)).await;
    for _ in 0..10 {
        let (status, env) =
            execute(&client, &sticky, &key, Some(&session), "query_travel_order", json!({})).await;
        assert_eq!((status, &env["success"]), (200, &json!(true)), "{env}");
    }
    let (on_c, on_d) = (
        calls_of(&client, &url_c, "query_travel_order").await,
        calls_of(&client, &url_d, "query_travel_order").await,
    );
    assert!((on_c, on_d) == (10, 0) || (on_c, on_d) == (0, 10), "a session was split: {on_c}/{on_d}");
    // The same session id at the other instance directly: refused, not served.
    let other = if on_c == 10 { &url_d } else { &url_c };
    let (status, env) = execute(&client, other, &key, Some(&session), "query_travel_order", json!({})).await;
    assert_eq!(status, 404, "a foreign session id must be refused: {env}");

    // 3. 64 racing identical submits through the balancer make one order.
    let trip = json!({"destination": "Wuhan", "departure_city": "Beijing", "departure_date": day(40),
        "return_date": day(43), "purpose": unique("fleet race")});
    let racers = (0..64).map(|_| {
        let (client, rr, key, trip) = (client.clone(), rr.clone(), key.clone(), trip.clone());
        tokio::spawn(async move { execute(&client, &rr, &key, None, "submit_travel_approval", trip).await })
    });
    let mut orders = std::collections::BTreeSet::new();
    for racer in racers {
        let (status, env) = racer.await.unwrap();
        assert_eq!((status, &env["success"]), (200, &json!(true)), "{env}");
        orders.insert(env["result"]["order_id"].to_string());
    }
    assert_eq!(orders.len(), 1, "racing submits made {orders:?}");

    // 4. A per-tool limit counted in Redis holds across the instances.
    let mut limited = 0;
    for _ in 0..30 {
        let (_, env) =
            execute(&client, &rr, &key, None, "query_weather", json!({"city": "Wuhan", "date": day(1)}))
                .await;
        if env["error"]["code"] == "RATE_LIMITED" {
            assert!(env["error"]["details"]["retry_after_ms"].as_u64().unwrap() > 0, "{env}");
            limited += 1;
        }
    }
    eprintln!("rate limit through the balancer: {} of 30 calls allowed, limit 10", 30 - limited);
    assert_eq!(limited, 20);

    // 5. A revocation made by another process reaches every instance within 1 s.
    let (victim_id, victim) = make_key(&config, &unique("fleet-bob"), "member");
    for url in [&url_a, &url_b, &url_c, &url_d] {
        let ok = client.get(format!("{url}/api/whoami")).bearer_auth(&victim).send().await.unwrap();
        assert_eq!(ok.status(), 200);
    }
    let out = toolgate(&config).args(["keys", "revoke", &victim_id]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let revoked_at = Instant::now();
    let mut delays = Vec::new();
    for url in [&url_a, &url_b, &url_c, &url_d] {
        loop {
            let status =
                client.get(format!("{url}/api/whoami")).bearer_auth(&victim).send().await.unwrap().status();
            if status == 401 {
                delays.push(revoked_at.elapsed());
                break;
            }
            assert!(
                revoked_at.elapsed() < Duration::from_secs(1),
                "{url} still accepts a revoked key after 1 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    eprintln!("revocation seen by all four instances after {:?}", delays.iter().max().unwrap());

    // 5b. So does a role downgrade (`toolgate keys update`), without a restart.
    let (boss_id, boss) = make_key(&config, &unique("fleet-carol"), "admin");
    let role_on = async |url: &str| -> Value {
        let me = client.get(format!("{url}/api/whoami")).bearer_auth(&boss).send().await.unwrap();
        me.json::<Value>().await.unwrap()["role"].clone()
    };
    for url in [&url_a, &url_b, &url_c, &url_d] {
        assert_eq!(role_on(url).await, "admin");
    }
    let out = toolgate(&config).args(["keys", "update", &boss_id, "--role", "guest"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let changed_at = Instant::now();
    let mut delays = Vec::new();
    for url in [&url_a, &url_b, &url_c, &url_d] {
        while role_on(url).await != "guest" {
            assert!(
                changed_at.elapsed() < Duration::from_secs(1),
                "{url} still serves the old role after 1 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        delays.push(changed_at.elapsed());
    }
    eprintln!("role downgrade seen by all four instances after {:?}", delays.iter().max().unwrap());

    // 5c. A route table added and a reload asked of instance a while calls run through
    // both frontends: all four serve the new tool (the others heard a's NOTIFY), no call fails.
    reload::reload_under_traffic(reload::Fleet {
        routes: &routes,
        key: &key,
        admin: &admin,
        rr: &rr,
        sticky: &sticky,
        instances: [&url_a, &url_b, &url_c, &url_d],
    })
    .await;

    // 6. One instance killed mid-load: only its calls in flight fail, with a clear error.
    // A fresh connection per call: a kept-alive one that the balancer closes
    // while idle fails on reuse before anything is sent, which says nothing
    // about the instances (HTTP clients resend in that case).
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let workers = (0..8).map(|_| {
        let (client, rr, key, done) = (fresh.clone(), rr.clone(), key.clone(), done.clone());
        tokio::spawn(async move {
            let mut failures = Vec::new();
            for _ in 0..50 {
                let (status, env) = execute(&client, &rr, &key, None, "query_travel_order", json!({})).await;
                let n = done.fetch_add(1, Ordering::SeqCst);
                if status != 200 || env["success"] != true {
                    failures.push((n, status, env));
                }
            }
            failures
        })
    });
    let workers: Vec<_> = workers.collect();
    eventually(Duration::from_secs(30), "100 calls done", async || done.load(Ordering::SeqCst) >= 100).await;
    b.child.kill().unwrap();
    let killed_at = done.load(Ordering::SeqCst);
    let mut failures = Vec::new();
    for worker in workers {
        failures.extend(worker.await.unwrap());
    }
    eprintln!(
        "kill mid-load: {} calls through the balancer, {} failed ({} with 502, the others cut), instance b killed after {killed_at}",
        done.load(Ordering::SeqCst),
        failures.len(),
        failures.iter().filter(|f| f.1 == 502).count()
    );
    // Failing: what b held when it died (calls it was running, and on a
    // busy machine connections already queued in its listen backlog), at
    // most two per client; nothing before the kill, nothing once the
    // balancer saw it down.
    assert!(failures.len() <= 16, "more failures than calls b held: {failures:?}");
    for (n, status, env) in &failures {
        assert!(
            *n + 8 >= killed_at && *n <= killed_at + 40,
            "call {n} failed away from the kill: {status} {env}"
        );
        // Before the answer began: HAProxy's 502 with a JSON-RPC error; after
        // it began: the connection is cut, which the client sees as such.
        match status {
            502 => assert!(
                env["error"]["message"].as_str().unwrap().contains("stopped before answering"),
                "{env}"
            ),
            0 => assert!(env["transport_error"].is_string(), "{env}"),
            _ => panic!("an unclear failure: {status} {env}"),
        }
    }
    // Afterwards everything goes to the survivor.
    for _ in 0..10 {
        let (status, env) = execute(&client, &rr, &key, None, "query_travel_order", json!({})).await;
        assert_eq!((status, &env["success"]), (200, &json!(true)), "{env}");
    }
    drop(a);
}

#[tokio::test]
async fn one_instance_for_operators() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    let db = format!("sqlite:{}", dir.path().join("ops.db").display());
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"{db}\"\n[server]\nmetrics_token = \"scrape-me\"\n\
             [rate_limits]\nhttp = {{ requests = 12, interval_s = 600 }}\n\
             [rate_limits.tools.query_travel_order]\nrequests = 2\ninterval_s = 600\n"
        ),
    )
    .unwrap();
    let (alice_id, alice) = make_key(&config, "alice", "member");
    let (_, carol) = make_key(&config, "carol", "admin");
    let (mut proc, url, _) = serving(
        toolgate(&config)
            // Every address, so that a peer off loopback can be tried on /metrics.
            .args(["serve", "--stateless", "--listen", "0.0.0.0:0"])
            .env("TOOLGATE_INSTANCE", "ops-1")
            .env("TOOLGATE_LOG", "info")
            .env("TOOLGATE_LOG_FORMAT", "json")
            .stderr(Stdio::piped()),
    );
    let url = url.replace("0.0.0.0", "127.0.0.1");
    let stderr = proc.child.stderr.take().unwrap();
    let client = reqwest::Client::new();

    let health =
        client.get(format!("{url}/healthz")).header("host", "balancer.internal").send().await.unwrap();
    assert_eq!(health.status(), 200, "health checks name the instance by any host");
    let ready: Value = client.get(format!("{url}/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready["status"], "ready", "{ready}");
    assert_eq!(ready["checks"]["database"]["ok"], true, "{ready}");

    // Tool calls: two allowed, the third RATE_LIMITED; a refused write is audited.
    for _ in 0..2 {
        let (status, env) = execute(&client, &url, &alice, None, "query_travel_order", json!({})).await;
        assert_eq!((status, &env["success"]), (200, &json!(true)), "{env}");
    }
    let (_, env) = execute(&client, &url, &alice, None, "query_travel_order", json!({})).await;
    assert_eq!(env["error"]["code"], "RATE_LIMITED", "{env}");
    assert!(env["error"]["message"].as_str().unwrap().contains("2 times per 600 s"), "{env}");
    let trip = json!({"destination": "Wuhan", "departure_city": "Beijing", "departure_date": day(30),
        "return_date": day(33), "purpose": "ops test", "api_token": "sk-do-not-keep"});
    let (_, env) = execute(&client, &url, &alice, None, "submit_travel_approval", trip).await;
    assert_eq!(env["error"]["code"], "INVALID_PARAMS", "an unknown field is refused: {env}");
    let trip = json!({"destination": "Wuhan", "departure_city": "Beijing", "departure_date": day(30),
        "return_date": day(33), "purpose": "ops test"});
    let (_, env) = execute(&client, &url, &alice, None, "submit_travel_approval", trip).await;
    assert_eq!(env["success"], true, "{env}");
    let order_id = env["result"]["order_id"].clone();

    // Metrics off loopback: refused without the token, served with it.
    match outside_address() {
        Some(ip) => {
            let port = url.rsplit(':').next().unwrap();
            let outside = format!("http://{ip}:{port}/metrics");
            assert_eq!(client.get(&outside).send().await.unwrap().status(), 403);
            let wrong = client.get(&outside).bearer_auth("scrape-you").send().await.unwrap();
            assert_eq!(wrong.status(), 403);
            let right = client.get(&outside).bearer_auth("scrape-me").send().await.unwrap();
            assert_eq!(right.status(), 200);
        }
        None => eprintln!("skipped the off-loopback /metrics check: this machine has no other address"),
    }
    // Metrics: loopback reads; the counters carry the calls above.
    let metrics = client.get(format!("{url}/metrics")).send().await.unwrap();
    assert_eq!(metrics.status(), 200);
    assert!(metrics.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let text = metrics.text().await.unwrap();
    assert!(
        text.contains("toolgate_calls_total{tool=\"query_travel_order\",role=\"member\",outcome=\"OK\"} 2\n"),
        "{text}"
    );
    assert!(text.contains("outcome=\"RATE_LIMITED\"} 1\n"), "{text}");
    assert!(
        text.contains("toolgate_call_duration_seconds_count{tool=\"submit_travel_approval\"} 2\n"),
        "{text}"
    );
    assert!(text.contains("toolgate_calls_in_flight 0\n"));
    assert!(text.contains("toolgate_db_pool_max_connections{pool=\"main\"}"), "{text}");

    // The audit trail: admins only, over HTTP and from the CLI.
    let refused = client.get(format!("{url}/api/audit")).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    let audit: Value = client
        .get(format!("{url}/api/audit?user=alice&tool=submit_travel_approval"))
        .bearer_auth(&carol)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let records = audit["records"].as_array().unwrap();
    assert_eq!(records.len(), 2, "{audit}");
    assert_eq!(records[0]["outcome"], "OK");
    assert_eq!(records[0]["ids"]["order_id"], order_id);
    assert_eq!(records[0]["key_id"], alice_id.as_str());
    assert_eq!(records[0]["instance"], "ops-1");
    assert_eq!(records[1]["outcome"], "INVALID_PARAMS");
    assert_eq!(records[1]["params"]["api_token"], "[redacted]");
    assert!(!audit.to_string().contains("sk-do-not-keep"));
    let bad = client.get(format!("{url}/api/audit?since=later")).bearer_auth(&carol).send().await.unwrap();
    assert_eq!(bad.status(), 400);
    let out =
        toolgate(&config).args(["audit", "--user", "alice", "--since", "1h", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(cli.len(), 2);
    assert_eq!(cli[0]["ids"]["order_id"], order_id);

    // The transport: 12 requests per key, then 429 with Retry-After.
    let mut last = None;
    for _ in 0..12 {
        let resp = client.get(format!("{url}/api/whoami")).bearer_auth(&alice).send().await.unwrap();
        if resp.status() == 429 {
            last = Some(resp);
            break;
        }
    }
    let resp = last.expect("a 429 within 12 requests");
    let retry: u64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=600).contains(&retry), "{retry}");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    assert!(body["error"]["retry_after_ms"].as_u64().unwrap() > 0);
    let text = client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("toolgate_http_rate_limited_total 1\n"), "{text}");

    // JSON logs: every line the server wrote is one JSON object, keys never in them.
    drop(proc);
    let mut logs = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut logs).unwrap();
    let lines: Vec<Value> =
        logs.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}"))).collect();
    assert!(!lines.is_empty(), "TOOLGATE_LOG=info wrote nothing");
    assert!(lines.iter().all(|l| l["level"].is_string() && l["target"].is_string()), "{logs}");
    assert!(!logs.contains(&alice) && !logs.contains(&carol), "a key was logged");
    let _ = std::io::stderr().flush();
}
