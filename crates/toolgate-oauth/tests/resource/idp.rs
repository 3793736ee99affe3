//! The identity provider the tests talk to: a real HTTP server on 127.0.0.1
//! serving discovery metadata (OpenID Connect, or RFC 8414 only), a JWKS of
//! keys the test generates, and an introspection endpoint that checks
//! toolgate's client credentials; it counts what it is asked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

pub const CLIENT_ID: &str = "toolgate:gw";
pub const CLIENT_SECRET: &str = "s3cr:t/+ =&";
pub const RESOURCE: &str = "https://mcp.example.com/mcp";

/// Seconds since the epoch, now.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A P-256 signing key and its public JWK.
pub use toolgate_test_support::idp::SigningKey as Key;

/// Which discovery documents the provider serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// OpenID Connect Discovery (appended to the issuer) and RFC 8414.
    Oidc,
    /// RFC 8414 only (path-insert form).
    Rfc8414Only,
}

struct Inner {
    flavor: Flavor,
    /// What the metadata says the issuer is (normally the issuer).
    metadata_issuer: String,
    jwks: Vec<Value>,
    /// Every endpoint answers 503.
    failing: bool,
    /// Token -> introspection answer (absent: `{"active": false}`).
    introspection: HashMap<String, Value>,
    /// Requests seen, as "METHOD path".
    requests: Vec<String>,
}

struct Shared {
    /// The issuer's path ("" or e.g. "/realms/acme" or "/realms/acme/").
    issuer_path: String,
    inner: Mutex<Inner>,
}

/// A running test identity provider.
pub struct Idp {
    /// `http://127.0.0.1:PORT`
    pub origin: String,
    /// The issuer identifier: the origin and the path, as given.
    pub issuer: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Idp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Idp {
    /// An OpenID provider whose issuer is the origin plus `/realms/acme`.
    pub async fn start() -> Self {
        Self::start_with(Flavor::Oidc, "/realms/acme").await
    }

    /// A provider of `flavor` whose issuer is the origin plus `issuer_path`.
    pub async fn start_with(flavor: Flavor, issuer_path: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let issuer = format!("{origin}{issuer_path}");
        let shared = Arc::new(Shared {
            issuer_path: issuer_path.to_owned(),
            inner: Mutex::new(Inner {
                flavor,
                metadata_issuer: issuer.clone(),
                jwks: Vec::new(),
                failing: false,
                introspection: HashMap::new(),
                requests: Vec::new(),
            }),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { origin, issuer, shared, task }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.shared.inner.lock().unwrap()
    }

    /// Publish exactly `jwks` (replacing what was published).
    pub fn publish(&self, jwks: Vec<Value>) {
        self.inner().jwks = jwks;
    }

    /// Make the metadata claim another issuer.
    pub fn set_metadata_issuer(&self, issuer: &str) {
        self.inner().metadata_issuer = issuer.to_owned();
    }

    /// Make every endpoint answer 503 (or stop doing so).
    pub fn set_failing(&self, failing: bool) {
        self.inner().failing = failing;
    }

    /// Answer introspection of `token` with `answer`.
    pub fn introspects(&self, token: &str, answer: Value) {
        self.inner().introspection.insert(token.to_owned(), answer);
    }

    /// The requests seen so far, as "METHOD path".
    pub fn requests(&self) -> Vec<String> {
        self.inner().requests.clone()
    }

    /// How many requests for a path ending with `suffix` were seen.
    pub fn count(&self, suffix: &str) -> usize {
        self.inner().requests.iter().filter(|r| r.ends_with(suffix)).count()
    }

    /// JWKS fetches so far.
    pub fn jwks_fetches(&self) -> usize {
        self.count(" /jwks")
    }

    /// Metadata requests so far (any discovery URL, answered or not).
    pub fn metadata_requests(&self) -> usize {
        self.inner().requests.iter().filter(|r| r.contains("/.well-known/")).count()
    }

    /// Introspection requests so far.
    pub fn introspections(&self) -> usize {
        self.count(" /introspect")
    }

    /// Claims of a good access token for [`RESOURCE`] from this issuer.
    pub fn claims(&self) -> Value {
        let now = now();
        json!({
            "iss": self.issuer,
            "aud": RESOURCE,
            "sub": "alice",
            "client_id": "claude",
            "iat": now,
            "exp": now + 3600,
            "jti": format!("jti-{}", rand_id()),
            "groups": ["staff"],
            "scope": "openid tools.read",
        })
    }
}

/// A distinct id each call.
pub fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let path = uri.path().to_owned();
    let mut inner = shared.inner.lock().unwrap();
    inner.requests.push(format!("{method} {path}"));
    if inner.failing {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let base = shared.issuer_path.strip_suffix('/').unwrap_or(&shared.issuer_path);
    let oidc_appended = format!("{base}/.well-known/openid-configuration");
    let rfc8414 = format!("/.well-known/oauth-authorization-server{base}");
    let serves_metadata = (path == oidc_appended && inner.flavor == Flavor::Oidc) || path == rfc8414;
    if method == Method::GET && serves_metadata {
        let origin = format!("http://{}", headers.get("host").unwrap().to_str().unwrap());
        return Json(json!({
            "issuer": inner.metadata_issuer,
            "authorization_endpoint": format!("{origin}/authorize"),
            "token_endpoint": format!("{origin}/token"),
            "jwks_uri": format!("{origin}/jwks"),
            "introspection_endpoint": format!("{origin}/introspect"),
            "response_types_supported": ["code"],
        }))
        .into_response();
    }
    if method == Method::GET && path == "/jwks" {
        return Json(json!({ "keys": inner.jwks })).into_response();
    }
    if method == Method::POST && path == "/introspect" {
        if !client_authenticated(&headers) {
            return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_client"}))).into_response();
        }
        let form_ok = headers.get("content-type").and_then(|v| v.to_str().ok())
            == Some("application/x-www-form-urlencoded");
        let Ok(Query(form)) = Query::<HashMap<String, String>>::try_from_uri(
            &format!("/?{body}").parse::<Uri>().expect("a form body"),
        ) else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        if !form_ok || form.get("token_type_hint").map(String::as_str) != Some("access_token") {
            return StatusCode::BAD_REQUEST.into_response();
        }
        let Some(token) = form.get("token") else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        let answer = inner.introspection.get(token).cloned().unwrap_or_else(|| json!({"active": false}));
        return Json(answer).into_response();
    }
    StatusCode::NOT_FOUND.into_response()
}

/// HTTP Basic with the form-urlencoded client id and secret (RFC 6749 §2.3.1).
fn client_authenticated(headers: &HeaderMap) -> bool {
    let Some(basic) =
        headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Basic "))
    else {
        return false;
    };
    let Ok(decoded) = STANDARD.decode(basic) else { return false };
    let Ok(decoded) = String::from_utf8(decoded) else { return false };
    let Some((id, secret)) = decoded.split_once(':') else { return false };
    let Ok(Query(form)) = Query::<HashMap<String, String>>::try_from_uri(
        &format!("/?id={id}&secret={secret}").parse::<Uri>().unwrap(),
    ) else {
        return false;
    };
    form.get("id").map(String::as_str) == Some(CLIENT_ID)
        && form.get("secret").map(String::as_str) == Some(CLIENT_SECRET)
}
