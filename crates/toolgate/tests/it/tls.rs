//! TLS to the databases, against throwaway servers with certificates from a CA made in the
//! test (rcgen). PostgreSQL 15 with `ssl=on`: `toolgate migrate` with `sslmode=verify-full`
//! connects when `[tls] ca_file` names the CA and is refused without it; `sslmode=require`
//! encrypts without verifying. Redis 7 with a TLS port: the workspace's redis build speaks
//! `rediss://` through rustls, trusting a given CA and refusing an unknown one; toolgate's
//! plan store and rate store trust `[tls] ca_file` and say "certificate" without it.

use std::path::{Path, PathBuf};
use std::process::Command;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

const BIN: &str = "/usr/lib/postgresql/15/bin";

/// A test CA (PEM) and a server certificate and key (PEM) it signed, for both names a
/// client may use.
fn pki() -> (String, String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "toolgate test CA");
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    (ca_pem, cert.pem(), key.serialize_pem())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Pg {
    dir: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
    ca_pem: String,
}

impl Pg {
    fn run(&self, tool: &str, args: &[&str]) {
        let program = PathBuf::from(BIN).join(tool);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let out = cmd.args(args).output().unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn start() -> Option<Pg> {
        if !Path::new(BIN).join("initdb").exists() {
            assert!(
                std::env::var("TOOLGATE_REQUIRE_PG").as_deref() != Ok("1"),
                "TOOLGATE_REQUIRE_PG=1 but {BIN}/initdb is missing"
            );
            eprintln!("skipped: no PostgreSQL binaries in {BIN}");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let as_postgres = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        let port = free_port();
        let (ca_pem, cert_pem, key_pem) = pki();
        let pg = Pg { dir, port, as_postgres, ca_pem };
        if as_postgres {
            assert!(Command::new("chown").arg("postgres:").arg(pg.dir.path()).status().unwrap().success());
        }
        pg.run("initdb", &["-D", &pg.data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
        let (crt, pem_key) =
            (Path::new(&pg.data()).join("server.crt"), Path::new(&pg.data()).join("server.key"));
        std::fs::write(&crt, cert_pem).unwrap();
        std::fs::write(&pem_key, key_pem).unwrap();
        for file in [&crt, &pem_key] {
            if as_postgres {
                assert!(Command::new("chown").arg("postgres:").arg(file).status().unwrap().success());
            }
            assert!(Command::new("chmod").arg("600").arg(file).status().unwrap().success());
        }
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c ssl=on",
            pg.dir.path().display()
        );
        let log = pg.dir.path().join("log").display().to_string();
        pg.run("pg_ctl", &["-D", &pg.data(), "-o", &options, "-l", &log, "-w", "start"]);
        Some(pg)
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let data = self.data();
        let args = ["-D", data.as_str(), "-m", "immediate", "-w", "stop"];
        let program = PathBuf::from(BIN).join("pg_ctl");
        let _ = if self.as_postgres {
            Command::new("runuser").args(["-u", "postgres", "--"]).arg(&program).args(args).output()
        } else {
            Command::new(&program).args(args).output()
        };
    }
}

fn migrate(dir: &Path, url: &str, ca_file: Option<&Path>) -> (bool, String) {
    let mut text = format!("[database]\nurl = \"{url}\"\n");
    if let Some(ca) = ca_file {
        text.push_str(&format!("[tls]\nca_file = \"{}\"\n", ca.display()));
    }
    let config = dir.join(format!("toolgate-{}.toml", ca_file.is_some()));
    std::fs::write(&config, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["--config", config.to_str().unwrap(), "migrate"])
        .env_remove("TOOLGATE_DATABASE_URL")
        .output()
        .unwrap();
    (
        out.status.success(),
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn postgres_verify_full_trusts_the_ca_file_and_refuses_without_it() {
    let Some(pg) = Pg::start() else { return };
    let work = tempfile::tempdir().unwrap();
    let ca = work.path().join("ca.pem");
    std::fs::write(&ca, &pg.ca_pem).unwrap();
    let url = format!("postgres://postgres@localhost:{}/postgres?sslmode=verify-full", pg.port);

    let (ok, out) = migrate(work.path(), &url, Some(&ca));
    assert!(ok && out.contains("migrations applied"), "{out}");

    let (ok, out) = migrate(work.path(), &url, None);
    assert!(!ok, "an unknown CA must be refused: {out}");
    let lower = out.to_lowercase();
    assert!(lower.contains("certificate") || lower.contains("tls"), "{out}");

    // `require` encrypts but does not verify: it connects without the CA.
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres?sslmode=require", pg.port);
    let (ok, out) = migrate(work.path(), &url, None);
    assert!(ok, "{out}");
}

/// A child process (a throwaway server) killed on drop.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `redis-server` with only a TLS port on 127.0.0.1, its certificate from a fresh test
/// CA; `None` (skipped) without redis-server. The server, its port and the CA's PEM.
fn tls_redis(dir: &Path) -> Option<(KillOnDrop, u16, String)> {
    let Ok(server) = which("redis-server") else {
        assert!(
            std::env::var("TOOLGATE_REQUIRE_REDIS").as_deref() != Ok("1"),
            "TOOLGATE_REQUIRE_REDIS=1 but redis-server is missing"
        );
        eprintln!("skipped: no redis-server");
        return None;
    };
    let (ca_pem, cert_pem, key_pem) = pki();
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (ca, crt, key) = (file("ca.pem", &ca_pem), file("redis.crt", &cert_pem), file("redis.key", &key_pem));
    let port = free_port();
    let child = Command::new(server)
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
        .unwrap();
    let server = KillOnDrop(child);
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "redis-server did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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

fn which(program: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(program)).find(|p| p.is_file()))
        .ok_or(())
}

/// `toolgate` with `[redis] url = "rediss://..."`, rate limits on, and `[tls] ca_file` or not.
fn rediss_config(dir: &Path, port: u16, ca_file: Option<&Path>) -> PathBuf {
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
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["--config", config.to_str().unwrap(), "call", "review_planner_result"])
        .args(["--user", "alice", "--role", "member"])
        .args(["--params", r#"{"plan_id": "plan_0f8e6c4ab1d2469c9a6c2b1f3e5d7a90"}"#])
        .env_remove("TOOLGATE_REDIS_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}{}", String::from_utf8_lossy(&out.stderr)))
}

/// `toolgate serve` on the configuration; `/readyz`'s status and body (the rate store's
/// probe), asked until `settled` holds or 20 s pass (a loaded machine may time out a first
/// TLS handshake: the probe's limit is 500 ms), then the last answer.
async fn readyz(
    config: &Path,
    settled: impl Fn(u16, &serde_json::Value) -> bool,
) -> (u16, serde_json::Value) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["--config", config.to_str().unwrap(), "serve", "--listen", "127.0.0.1:0"])
        .env_remove("TOOLGATE_REDIS_URL")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _served = KillOnDrop(child);
    let url = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("toolgate serving MCP at ").map(|r| r.split("/mcp").next().unwrap().to_owned())
        })
        .expect("the server printed its address");
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
