//! TLS to the databases, against throwaway servers with certificates from a CA made in the
//! test (rcgen). PostgreSQL 15 with `ssl=on`: `toolgate migrate` with `sslmode=verify-full`
//! connects when `[tls] ca_file` names the CA and is refused without it; `sslmode=require`
//! encrypts without verifying. Redis 7 with a TLS port: the workspace's redis build speaks
//! `rediss://` through rustls, trusting a given CA and refusing an unknown one.

use std::path::Path;
use std::process::Command;

use test_support::pg::Throwaway;
use test_support::process::{Running, free_port, output, wait_for_port};
use test_support::tls::Pki;

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

#[tokio::test]
async fn rediss_trusts_the_given_ca_and_refuses_an_unknown_one() {
    let Some(server) = test_support::gate::which("redis-server") else {
        test_support::gate::skip(test_support::redis::REQUIRE, "redis-server is missing");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Pki { ca_pem, cert_pem, key_pem, .. } = pki();
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (ca, crt, key) = (file("ca.pem", &ca_pem), file("redis.crt", &cert_pem), file("redis.key", &key_pem));
    let port = free_port();
    let _server = Running::new(
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
            .args(["--save", "", "--appendonly", "no", "--dir", &dir.path().display().to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for_port(port, "redis-server");
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
