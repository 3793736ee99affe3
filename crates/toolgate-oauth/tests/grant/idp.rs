//! A real OAuth token endpoint on 127.0.0.1 (axum, ephemeral port) that
//! checks the client's Basic authentication and the form, counts and keeps
//! every request, and issues tokens per subject.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::Engine;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// toolgate's client at the identity provider: characters that Basic
/// authentication carries only form-urlencoded (RFC 6749 §2.3.1).
pub(crate) const CLIENT_ID: &str = "toolgate gw:1";
pub(crate) const CLIENT_SECRET: &str = "cl13nt-s3cr3t/+:%é";

/// One request as the endpoint received it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// The decoded Basic credentials, `None` when there were none (or not Basic).
    pub(crate) basic: Option<(String, String)>,
    pub(crate) content_type: Option<String>,
    pub(crate) form: Vec<(String, String)>,
}

impl Seen {
    /// The one value of a form field (`None` when absent; a field sent twice fails the test).
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        let mut values = self.form.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let first = values.next();
        assert!(values.next().is_none(), "`{name}` sent twice: {:?}", self.form);
        first
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.form.iter().map(|(n, _)| n.as_str()).collect()
    }
}

/// How the endpoint answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mode {
    /// Tokens, with this `expires_in` (`None`: left out).
    Issue(Option<Value>),
    /// HTTP 503.
    Down,
    /// A 200 without `access_token`.
    NoToken,
    /// Never answers.
    Hang,
}

pub(crate) struct Idp {
    pub(crate) url: String,
    seen: Mutex<Vec<Seen>>,
    mode: Mutex<Mode>,
    /// Told when the request of the subject `subject-slow` has arrived.
    pub(crate) slow_arrived: Notify,
    /// The request of `subject-slow` is answered once this is told.
    pub(crate) slow_release: Notify,
}

impl Idp {
    pub(crate) fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    pub(crate) fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }
}

/// `a=b&c=d` decoded by a real form decoder (serde_urlencoded, under axum's `Query`).
pub(crate) fn form(text: &str) -> Vec<(String, String)> {
    let uri: Uri = format!("/?{text}").parse().expect("a form body is URI-safe");
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri).expect("a valid form").0
}

fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(encoded).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let mut parts = form(&format!("id={id}&secret={secret}")).into_iter().map(|(_, v)| v);
    Some((parts.next()?, parts.next()?))
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (status, axum::Json(json!({"error": error, "error_description": description}))).into_response()
}

async fn token(State(idp): State<Arc<Idp>>, headers: HeaderMap, body: String) -> Response {
    let seen = Seen {
        basic: basic(&headers),
        content_type: headers.get("content-type").and_then(|v| v.to_str().ok()).map(str::to_owned),
        form: form(&body),
    };
    let n = {
        let mut all = idp.seen.lock().unwrap();
        all.push(seen.clone());
        all.len()
    };
    if seen.basic != Some((CLIENT_ID.to_owned(), CLIENT_SECRET.to_owned())) {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "client authentication failed");
    }
    let mode = idp.mode.lock().unwrap().clone();
    let expires_in = match mode {
        Mode::Issue(expires_in) => expires_in,
        Mode::Down => return (StatusCode::SERVICE_UNAVAILABLE, "maintenance").into_response(),
        Mode::NoToken => return axum::Json(json!({"token_type": "Bearer"})).into_response(),
        Mode::Hang => std::future::pending().await,
    };
    let grant = seen.field("grant_type").unwrap_or_default().to_owned();
    let access_token = match grant.as_str() {
        "urn:ietf:params:oauth:grant-type:token-exchange" => {
            let subject = seen.field("subject_token").unwrap_or_default().to_owned();
            if let Some(revoked) = subject.strip_prefix("revoked-") {
                // Echoes the subject token, as some providers do: it must never reach a message.
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    &format!("subject_token revoked-{revoked} has been revoked"),
                );
            }
            if subject == "subject-slow" {
                idp.slow_arrived.notify_one();
                idp.slow_release.notified().await;
            }
            let Some(user) = subject.strip_prefix("subject-") else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "unknown subject");
            };
            let audience = seen.field("audience").unwrap_or("none");
            format!("minted-{user}-for-{audience}-{n}")
        }
        "client_credentials" => format!("service-{n}"),
        _ => return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type", "no"),
    };
    let mut answer = json!({
        "access_token": access_token,
        "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "token_type": "Bearer",
    });
    if let Some(expires_in) = expires_in {
        answer["expires_in"] = expires_in;
    }
    axum::Json(answer).into_response()
}

/// The endpoint, issuing tokens that live an hour.
pub(crate) async fn start() -> Arc<Idp> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let idp = Arc::new(Idp {
        url: format!("http://{}/oauth2/token", listener.local_addr().unwrap()),
        seen: Mutex::new(Vec::new()),
        mode: Mutex::new(Mode::Issue(Some(json!(3600)))),
        slow_arrived: Notify::new(),
        slow_release: Notify::new(),
    });
    let app = Router::new().route("/oauth2/token", post(token)).with_state(idp.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    idp
}
