//! TLS to the databases, against throwaway servers with certificates from a CA made in the
//! test (rcgen). PostgreSQL 15 with `ssl=on`: `toolgate migrate` with `sslmode=verify-full`
//! connects when `[tls] ca_file` names the CA and is refused without it; `sslmode=require`
//! encrypts without verifying. Redis 7 with a TLS port: the workspace's redis build speaks
//! `rediss://` through rustls, trusting a given CA and refusing an unknown one; toolgate's
//! plan store and rate store trust `[tls] ca_file` and say "certificate" without it.

use std::path::Path;
use std::process::Command;

use toolgate_test_support::pg::Throwaway;
use toolgate_test_support::process::{Running, free_port, output, wait_for_port};
use toolgate_test_support::tls::Pki;

/// A test CA and a server certificate for both names a client may use.
fn pki() -> Pki {
    Pki::new(&["localhost", "127.0.0.1"])
}

fn migrate(dir: &Path, url: &str, ca_file: Option<&Path>) -> (bool, String) {
    let mut text = format!("[database]\nurl = \"{url}\"\n");
    if let Some(ca) = ca_file {
        text.push_str(&format!("[tls]\nca_file = \"{}\"\n", ca.display()));
    }
    let config = dir.join(format!("toolgate-{}.toml", ca_file.is_some()));
    std::fs::write(&config, text).unwrap();
    output(
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["--config", config.to_str().unwrap(), "migrate"])
            .env_remove("TOOLGATE_DATABASE_URL"),
    )
}

#[test]
fn postgres_verify_full_trusts_the_ca_file_and_refuses_without_it() {
    let pki = pki();
    let Some(pg) = Throwaway::start_tls(&pki) else { return };
    let work = tempfile::tempdir().unwrap();
    let ca = work.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let url = format!("postgres://postgres@localhost:{}/postgres?sslmode=verify-full", pg.port());

    let (ok, out) = migrate(work.path(), &url, Some(&ca));
    assert!(ok && out.contains("migrations applied"), "{out}");

    let (ok, out) = migrate(work.path(), &url, None);
    assert!(!ok, "an unknown CA must be refused: {out}");
    let lower = out.to_lowercase();
    assert!(lower.contains("certificate") || lower.contains("tls"), "{out}");

    // `require` encrypts but does not verify: it connects without the CA.
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres?sslmode=require", pg.port());
    let (ok, out) = migrate(work.path(), &url, None);
    assert!(ok, "{out}");
}

/// A `redis-server` with only a TLS port on 127.0.0.1, its certificate from a fresh test
/// CA; `None` (skipped) without redis-server. The server, its port and the CA's PEM.
fn tls_redis(dir: &Path) -> Option<(Running, u16, String)> {
    let Some(server) = toolgate_test_support::gate::which("redis-server") else {
        toolgate_test_support::gate::skip(toolgate_test_support::redis::REQUIRE, "redis-server is missing");
        return None;
    };
    let Pki { ca_pem, cert_pem, key_pem, .. } = pki();
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (ca, crt, key) = (file("ca.pem", &ca_pem), file("redis.crt", &cert_pem), file("redis.key", &key_pem));
    let port = free_port();
    let server = Running::new(
        Command::new(server)
            .args(["--port", "0", "--tls-port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--tls-cert-file",
                &crt,
                "--tls-key-file",
                &key,
                "--tls-ca-cert-file",
                &ca,
                "--tls-auth-clients",
                "no",
            ])
            .args(["--save", "", "--appendonly", "no", "--dir", &dir.display().to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for_port(port, "redis-server");
    Some((server, port, ca_pem))
}

#[tokio::test]
async fn rediss_trusts_the_given_ca_and_refuses_an_unknown_one() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, port, ca_pem)) = tls_redis(dir.path()) else { return };
    let url = format!("rediss://localhost:{port}/");

    let certs = redis::TlsCertificates { client_tls: None, root_cert: Some(ca_pem.into_bytes()) };
    let client = redis::Client::build_with_tls(url.as_str(), certs).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let pong: String = redis::cmd("PING").query_async(&mut con).await.unwrap();
    assert_eq!(pong, "PONG");

    let untrusted = redis::Client::open(url.as_str()).unwrap();
    let err = untrusted.get_multiplexed_async_connection().await.expect_err("an unknown CA is refused");
    let text = format!("{err:?}").to_lowercase();
    assert!(text.contains("certificate") || text.contains("unknownissuer"), "{text}");
}

/// `toolgate` with `[redis] url = "rediss://..."`, rate limits on, and `[tls] ca_file` or not.
fn rediss_config(dir: &Path, port: u16, ca_file: Option<&Path>) -> std::path::PathBuf {
    let db = format!("sqlite:{}", dir.join("tg.db").display());
    let mut text = format!(
        "[database]\nurl = \"{db}\"\n[redis]\nurl = \"rediss://localhost:{port}/\"\n[rate_limits]\nper_key = {{ requests = 600, interval_s = 60 }}\n"
    );
    if let Some(ca) = ca_file {
        text.push_str(&format!("[tls]\nca_file = \"{}\"\n", ca.display()));
    }
    let config = dir.join(format!("rediss-{}.toml", ca_file.is_some()));
    std::fs::write(&config, text).unwrap();
    config
}

/// The plan store: reading a plan that does not exist reaches Redis (NOT_FOUND) or says why not.
fn review_missing_plan(config: &Path) -> serde_json::Value {
    let (_, out) = output(
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["--config", config.to_str().unwrap(), "call", "review_planner_result"])
            .args(["--user", "alice", "--role", "member"])
            .args(["--params", r#"{"plan_id": "plan_0f8e6c4ab1d2469c9a6c2b1f3e5d7a90"}"#])
            .env_remove("TOOLGATE_REDIS_URL"),
    );
    let json = out.find('{').map(|start| &out[start..]).unwrap_or(&out);
    serde_json::Deserializer::from_str(json)
        .into_iter::<serde_json::Value>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("no envelope in: {out}"))
}

/// `toolgate serve` on the configuration; `/readyz`'s status and body (the rate store's
/// probe), asked until `settled` holds or 20 s pass (a loaded machine may time out a first
/// TLS handshake: the probe's limit is 500 ms), then the last answer.
async fn readyz(
    config: &Path,
    settled: impl Fn(u16, &serde_json::Value) -> bool,
) -> (u16, serde_json::Value) {
    let mut served = Running::spawn(
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["--config", config.to_str().unwrap(), "serve", "--listen", "127.0.0.1:0"])
            .env_remove("TOOLGATE_REDIS_URL")
            .stderr(std::process::Stdio::null()),
    );
    let (rest, _) = served.read_until("toolgate serving MCP at ");
    let url = rest.split("/mcp").next().unwrap().to_owned();
    let started = std::time::Instant::now();
    loop {
        let resp = reqwest::get(format!("{url}/readyz")).await.unwrap();
        let answer = (resp.status().as_u16(), resp.json().await.unwrap());
        if settled(answer.0, &answer.1) || started.elapsed() > std::time::Duration::from_secs(20) {
            return answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plan_store_and_the_rate_store_trust_the_ca_file_over_rediss() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, port, ca_pem)) = tls_redis(dir.path()) else { return };
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &ca_pem).unwrap();

    // Trusted through `[tls] ca_file`: the plan store reaches Redis, /readyz is ready.
    let trusted = rediss_config(dir.path(), port, Some(&ca));
    let answer = review_missing_plan(&trusted);
    assert_eq!(answer["error"]["code"], "NOT_FOUND", "Redis answered: {answer}");
    let (status, body) = readyz(&trusted, |status, _| status == 200).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["redis"]["ok"], true, "{body}");

    // Without it: a certificate problem with the fix, not a generic outage, and not retried.
    let untrusted = rediss_config(dir.path(), port, None);
    let answer = review_missing_plan(&untrusted);
    assert_eq!(answer["error"]["code"], "UNAVAILABLE", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("certificate") && message.contains("ca_file"), "{message}");
    let (status, body) =
        readyz(&untrusted, |_, body| body["checks"]["redis"]["error"].to_string().contains("certificate"))
            .await;
    assert_eq!(status, 503, "{body}");
    let why = body["checks"]["redis"]["error"].as_str().unwrap();
    assert!(why.contains("certificate") && why.contains("ca_file"), "{why}");
}
