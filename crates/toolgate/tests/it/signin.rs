//! Sign-in end to end with parts nobody here wrote: panva's `oidc-provider`
//! as the company's identity provider (`tests/oidc/provider.mjs`), the
//! official MCP Python and TypeScript SDKs' OAuth clients
//! (`tests/python/oauth_check.py`, `tests/oidc/oauth_check.mjs`) against a
//! real `toolgate serve` with `[auth.oauth]`, and a `[[domains]]` backend
//! that accepts only tokens made for its own audience, which toolgate gets
//! by exchanging each user's token (RFC 8693).
//!
//! Needs `TOOLGATE_NODE_MODULES` with `oidc-provider` and the TypeScript SDK,
//! and `TOOLGATE_PYTHON` with `mcp` 2.x (`.ci/tools.sh`); skips without them
//! unless `TOOLGATE_REQUIRE_OIDC=1` / `TOOLGATE_REQUIRE_INTEROP=1`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};
use toolgate_test_support::oidc::Provider;

use crate::common::{key_of, rpc, serving, toolgate};

const PROVIDER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc/provider.mjs");
const PYTHON_CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/oauth_check.py");
const TS_CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc/oauth_check.mjs");

const TABLE: &str = r#"
tool = "query_crm"
description = "Reads the signed-in user's CRM profile. Example: {\"op\": \"get_me\"}."
domain = "crm"

[[routes]]
op = "get_me"
method = "GET"
path = "/me"
summary = "The caller's own profile"
"#;

/// What the CRM backend saw: the subject of each token it accepted, and
/// every token it refused (with why).
#[derive(Debug, Default)]
struct Seen {
    accepted: Vec<String>,
    refused: Vec<String>,
}

/// A backend that accepts only access tokens of the provider made for its own
/// audience (verified like any resource server: JWKS signature, `iss`, `aud`).
async fn crm_backend(issuer: &str) -> (String, Arc<Mutex<Seen>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut config = toolgate_oauth::resource::ResourceConfig::new(issuer, url.clone());
    config.default_role = Some("member".into());
    let verifier =
        toolgate_oauth::resource::Verifier::new(config, reqwest::Client::new(), vec!["member".into()])
            .unwrap();
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |headers: HeaderMap| {
        let (verifier, record) = (verifier.clone(), record.clone());
        async move {
            let token = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or("");
            match verifier.verify(token).await {
                Ok(verified) => {
                    record.lock().unwrap().accepted.push(verified.subject.clone());
                    axum::Json(json!({"user": verified.subject})).into_response()
                }
                Err(why) => {
                    record.lock().unwrap().refused.push(format!("{why}"));
                    (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_token"}))).into_response()
                }
            }
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

/// Run one of the SDK clients; its JSON line.
async fn client(program: &str, script: &str, url: &str, args: &[&str]) -> Value {
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(program)
            .arg(script)
            .arg(url)
            .args(args)
            .env(
                "TOOLGATE_NODE_MODULES",
                toolgate_test_support::gate::path("TOOLGATE_NODE_MODULES", "target/e2e-node/node_modules"),
            )
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the client finishes within 2 minutes")
    .expect("the client starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().rev().find(|l| l.starts_with('{')).unwrap_or_else(|| {
        panic!("{script} printed no JSON line\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr))
    });
    let answer: Value = serde_json::from_str(line).unwrap();
    assert!(
        output.status.success() && answer["ok"] == true,
        "{script} {args:?} failed: {answer}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    answer
}

/// A client-credentials token of the provider's `client` for `resource`.
async fn service_token(provider: &Provider, client: &str, resource: &str) -> String {
    let form = |s: &str| s.replace('%', "%25").replace(':', "%3A").replace('/', "%2F");
    let response = reqwest::Client::new()
        .post(provider.token_endpoint())
        .basic_auth(client, Some("toolgate-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("grant_type=client_credentials&resource={}", form(resource)))
        .send()
        .await
        .unwrap();
    let body: Value = response.json().await.unwrap();
    body["access_token"].as_str().unwrap_or_else(|| panic!("no access token: {body}")).to_owned()
}

/// The status and `WWW-Authenticate` of an `initialize` sent with `token`.
async fn initialize_with(mcp: &str, token: &str) -> (u16, String) {
    let reply = toolgate_test_support::mcp::post(
        &reqwest::Client::new(),
        mcp,
        Some(token),
        None,
        &toolgate_test_support::mcp::initialize(1),
    )
    .await
    .unwrap();
    let challenge =
        reply.headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (reply.status, challenge)
}

/// The envelope of a call the client made through `execute_tool`.
fn envelope(answer: &Value) -> Value {
    answer["structured"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sdks_sign_in_and_each_user_reaches_the_backend_with_their_own_exchanged_token() {
    let Some(python) = toolgate_test_support::python::with("from mcp.client.auth import OAuthClientProvider")
    else {
        return;
    };
    let Some(provider) = Provider::start(PROVIDER.as_ref(), &[]) else { return };
    let issuer = provider.issuer().to_owned();
    let (crm, seen) = crm_backend(&issuer).await;

    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("routes");
    std::fs::create_dir(&routes).unwrap();
    std::fs::write(routes.join("query_crm.toml"), TABLE).unwrap();
    let port = toolgate_test_support::process::free_port();
    let mcp = format!("http://127.0.0.1:{port}/mcp");
    let db = format!("sqlite:{}", dir.path().join("tg.db").display());
    let config = dir.path().join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            r#"[database]
url = "{db}"

[auth.oauth]
issuer = "{issuer}"
resource = "{mcp}"
roles = {{ "tg-admins" = "admin", "tg-members" = "member" }}
scopes = {{ "tools:read" = "*" }}

[[domains]]
name = "crm"
base_url = "{crm}"
routes = "{routes}"
auth = {{ kind = "token_exchange", token_url = "{token_url}", audience = "{crm}", client_id = "toolgate", client_secret = {{ env = "TG_CLIENT_SECRET" }} }}
"#,
            routes = routes.display(),
            token_url = provider.token_endpoint(),
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let (ok, out) = toolgate_test_support::process::output(
        toolgate().args(["--config", config, "check"]).env("TG_CLIENT_SECRET", "toolgate-secret"),
    );
    assert!(ok, "{out}");
    assert!(out.contains(&format!("sign-in: tokens of {issuer} for {mcp}")), "{out}");

    // Everything the server logs, at the most verbose level, to look for tokens in at the end.
    let log = dir.path().join("serve.log");
    let (_served, _url, banner) = serving(
        toolgate()
            .args(["--config", config, "serve", "--demo", "--listen", &format!("127.0.0.1:{port}")])
            .env("TG_CLIENT_SECRET", "toolgate-secret")
            .env("TOOLGATE_LOG", "trace")
            .stderr(std::fs::File::create(&log).unwrap()),
    );
    let call = json!({"tool_name": "query_crm", "parameters": {"op": "get_me"}}).to_string();
    let args = |login: &'static str| {
        ["--login", login, "--tool", "execute_tool", "--args", call.as_str(), "--again-after", "0"]
    };

    // Alice and Bob at the same time, through the Python SDK; Bob once more through TypeScript.
    let (as_alice, as_bob) = (args("alice"), args("bob"));
    let (alice, bob) = tokio::join!(
        client(&python, PYTHON_CLIENT, &mcp, &as_alice),
        client(&python, PYTHON_CLIENT, &mcp, &as_bob),
    );
    let bob_ts = client("node", TS_CLIENT, &mcp, &as_bob).await;
    for (answer, user) in [(&alice, "alice"), (&bob, "bob"), (&bob_ts, "bob")] {
        assert_eq!(answer["token"]["aud"], json!(mcp), "the client's token is toolgate's: {answer}");
        let envelope = envelope(answer);
        assert_eq!(envelope["success"], true, "{user}: {answer}");
        assert_eq!(envelope["result"]["payload"]["user"], user, "{user} saw someone else: {envelope}");
        assert_eq!(answer["again"]["is_error"], false, "{user}'s second call: {answer}");
    }
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.refused, Vec::<String>::new(), "the backend was sent a token not made for it");
        let mut accepted = seen.accepted.clone();
        accepted.sort();
        assert_eq!(accepted, ["alice", "alice", "bob", "bob", "bob", "bob"]);
    }
    // One exchange per sign-in, not one per call: alice's two calls made one; bob signed in
    // twice (Python, then TypeScript), and a new sign-in is never served a token minted
    // from the old one.
    let stats = provider.stats().await;
    assert_eq!(stats["token_exchange"], json!({"alice": 1, "bob": 2}), "{stats}");

    // The groups decide the role: mallory's map to none, so she is refused (403) after signing in.
    let mallory = client(&python, PYTHON_CLIENT, &mcp, &["--login", "mallory", "--expect-forbidden"]).await;
    assert_eq!(mallory["status"], 403, "{mallory}");

    // Tokens of the real provider that toolgate must refuse with 401: one made for another
    // audience (the CRM's), one expired, and forgeries of a good one: its claims signed with
    // another key under the provider's key id, and with `alg: none`.
    let crm_token = service_token(&provider, "toolgate", &crm).await;
    let short = service_token(&provider, "toolgate-short", &mcp).await;
    // Valid (signature, issuer, audience) but a service has no groups: 403, not 401.
    assert_eq!(initialize_with(&mcp, &short).await.0, 403);
    let good = service_token(&provider, "toolgate", &mcp).await;
    let forged = toolgate_test_support::idp::resigned(
        &good,
        &toolgate_test_support::idp::SigningKey::generate("other"),
    );
    let unsigned = toolgate_test_support::idp::unsigned(&good);
    // Past `short`'s 2 s and the 2 s leeway, counted in the whole seconds of `iat` and `exp`.
    tokio::time::sleep(Duration::from_millis(5500)).await;
    for (what, token) in [
        ("another audience", &crm_token),
        ("expired", &short),
        ("another key", &forged),
        ("alg none", &unsigned),
    ] {
        let (status, challenge) = initialize_with(&mcp, token).await;
        assert_eq!(status, 401, "{what}");
        assert!(challenge.contains("resource_metadata="), "{what}: {challenge}");
    }

    // An API key still works beside sign-in, but has no sign-in to exchange for the CRM.
    let key = key_of(&banner, "alice");
    let http = reqwest::Client::new();
    let (session, _) = toolgate_test_support::mcp::open_session(&http, &mcp, Some(&key)).await;
    let body = toolgate_test_support::mcp::execute_tool(2, "query_crm", json!({"op": "get_me"}));
    let (status, _, answer) = rpc(&http, &mcp, Some(&key), Some(&session), &body).await;
    assert_eq!(status, 200, "{answer}");
    let refused = &answer["result"]["structuredContent"];
    assert_eq!(refused["error"]["code"], "PERMISSION_DENIED", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("API key"), "{refused}");
    assert_eq!(seen.lock().unwrap().accepted.len(), 6, "the API-key call never reached the backend");

    // No token (a JWT's header always starts `eyJ`: the clients', the exchanged ones, the
    // refused ones) and no client secret was logged, even at trace level.
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("TRACE") || logged.contains("DEBUG"), "the log is at trace level");
    for secret in ["eyJ", "toolgate-secret", key.as_str()] {
        assert!(!logged.contains(secret), "`{secret}` is in the server's log");
    }
}
