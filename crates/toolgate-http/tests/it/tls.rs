//! HTTPS against a real TLS server on 127.0.0.1 whose certificate comes from a CA generated in
//! the test (rcgen): trusted through the CA bundle it succeeds; untrusted, expired or issued for
//! another name it is UNAVAILABLE with a message naming the certificate problem and its fix,
//! tried once. Also the static and no-credential auth kinds, over the same server.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate_core::{Caller, ErrorCode, Secret, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;
use toolgate_test_support::tls::Pki;

const TABLE: &str = r#"
tool = "query_echo"
description = "Test table: what the HTTPS server saw."
domain = "echo"

[[routes]]
op = "echo"
method = "GET"
path = "/echo"
summary = "What the server saw"
"#;

/// An HTTPS server answering every request with a JSON echo of the credentials it saw (as
/// booleans, so no secret travels back). Counts the TLS handshakes started.
async fn https_server(pki: &Pki, expected_key: &'static str) -> (String, Arc<AtomicU32>) {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.cert_der.clone().into()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handshakes = Arc::new(AtomicU32::new(0));
    let counter = handshakes.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            counter.fetch_add(1, Ordering::SeqCst);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
                let header = |name: &str| {
                    head.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")).map(str::to_owned))
                };
                let body = json!({
                    "secure": true,
                    "bearer": header("authorization").is_some_and(|v| v.starts_with("bearer ")),
                    "api_key_ok": header("x-api-key").is_some_and(|v| v == expected_key),
                })
                .to_string();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(answer.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (format!("https://localhost:{port}"), handshakes)
}

fn gateway(base: &str, options: HttpOptions) -> Gateway {
    let executor =
        Arc::new(HttpExecutor::new(base, options.backend_name("the echo API").backend_id("echo")).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    Gateway::builder().tools(tools).build().unwrap()
}

async fn echo(gw: &Gateway, token: Option<&str>) -> toolgate_core::Envelope {
    let mut caller = Caller::new("alice", "guest");
    if let Some(token) = token {
        caller = caller.with_credential("echo", token);
    }
    // Two retries offered: a certificate failure must not use them.
    let options = CallOptions::default().retries(2).retry_delay_ms(1);
    gw.execute(&ToolContext::new(caller), "query_echo", json!({"op": "echo"}), &options).await
}

#[tokio::test]
async fn a_backend_whose_ca_is_in_the_bundle_answers_over_https() {
    let pki = Pki::new(&["localhost"]);
    let (url, _) = https_server(&pki, "k").await;
    let gw = gateway(&url, HttpOptions::default().ca_bundle_pem(pki.ca_pem.clone()));
    let env = echo(&gw, Some("tok")).await;
    assert!(env.success, "{env:?}");
    assert_eq!(env.result.as_ref().unwrap()["payload"]["secure"], true);
    assert_eq!(env.result.as_ref().unwrap()["payload"]["bearer"], true, "the caller's token went along");
}

#[tokio::test]
async fn an_untrusted_certificate_is_unavailable_with_the_fix_and_tried_once() {
    let pki = Pki::new(&["localhost"]);
    let (url, handshakes) = https_server(&pki, "k").await;
    let gw = gateway(&url, HttpOptions::default());
    let env = echo(&gw, Some("tok")).await;
    let error = env.error.as_ref().expect("an error");
    assert_eq!(error.code, ErrorCode::Unavailable, "{error:?}");
    assert!(error.message.contains("certificate problem"), "{}", error.message);
    assert!(
        error.message.contains("not trusted") && error.message.contains("[tls] ca_file"),
        "{}",
        error.message
    );
    assert!(
        !error.message.to_lowercase().contains("invalidcertificate"),
        "no raw error chain: {}",
        error.message
    );
    assert_eq!(error.details.as_ref().unwrap()["reason"], "certificate");
    assert_eq!(env.metadata.attempts, 1, "a certificate problem is not retried");
    assert_eq!(handshakes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_expired_or_misnamed_certificate_says_so() {
    let expired = Pki::expired(&["localhost"]);
    let (url, _) = https_server(&expired, "k").await;
    let env =
        echo(&gateway(&url, HttpOptions::default().ca_bundle_pem(expired.ca_pem.clone())), Some("t")).await;
    let message = &env.error.as_ref().expect("an error").message;
    assert!(message.contains("expired") && message.contains("certificate problem"), "{message}");

    let misnamed = Pki::new(&["crm.example.test"]);
    let (url, _) = https_server(&misnamed, "k").await;
    let env =
        echo(&gateway(&url, HttpOptions::default().ca_bundle_pem(misnamed.ca_pem.clone())), Some("t")).await;
    let message = &env.error.as_ref().expect("an error").message;
    assert!(message.contains("another host name"), "{message}");
}

#[tokio::test]
async fn a_static_credential_is_sent_in_its_header_and_never_shown() {
    let pki = Pki::new(&["localhost"]);
    let (url, _) = https_server(&pki, "s3cret-key").await;
    let auth = Auth::Static { header: "X-Api-Key".into(), value: Secret::new("s3cret-key") };
    let gw = gateway(&url, HttpOptions::default().ca_bundle_pem(pki.ca_pem.clone()).auth(auth));
    // No caller token needed: the backend's own key is used.
    let env = echo(&gw, None).await;
    assert!(env.success, "{env:?}");
    assert_eq!(env.result.as_ref().unwrap()["payload"]["api_key_ok"], true);
    assert_eq!(
        env.result.as_ref().unwrap()["payload"]["bearer"],
        false,
        "the caller's token is not forwarded"
    );
    let options =
        HttpOptions::default().auth(Auth::Static { header: "X".into(), value: Secret::new("s3cret-key") });
    let shown = format!("{env:?} {options:?} {}", gw.render_result(&env));
    assert!(!shown.contains("s3cret-key"), "{shown}");

    let none = gateway(&url, HttpOptions::default().ca_bundle_pem(pki.ca_pem.clone()).auth(Auth::None));
    let env = echo(&none, Some("tok")).await;
    assert!(env.success, "{env:?}");
    assert_eq!(
        env.result.as_ref().unwrap()["payload"],
        json!({"secure": true, "bearer": false, "api_key_ok": false})
    );
}

#[test]
fn bad_bundles_and_headers_are_refused_when_the_executor_is_built() {
    let err = HttpExecutor::new("https://h", HttpOptions::default().ca_bundle_pem("not pem")).unwrap_err();
    assert!(err.to_string().contains("CA bundle"), "{err}");
    let auth = Auth::Static { header: "bad header".into(), value: Secret::new("v") };
    let err = HttpExecutor::new("https://h", HttpOptions::default().auth(auth)).unwrap_err();
    assert!(err.to_string().contains("header"), "{err}");
    let auth = Auth::Static { header: "X-Key".into(), value: Secret::new("line\nbreak-secret") };
    let err = HttpExecutor::new("https://h", HttpOptions::default().auth(auth)).unwrap_err().to_string();
    assert!(!err.contains("break-secret"), "{err}");
}
