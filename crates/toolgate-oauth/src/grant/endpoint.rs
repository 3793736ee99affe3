//! One request to an OAuth token endpoint (RFC 6749 §3.2) and its answer,
//! mapped to the [`ToolError`] a call fails with. Shared by both grants.
//!
//! The client authenticates with `client_secret_basic` (§2.3.1: the id and
//! secret each form-urlencoded, then HTTP Basic). Nothing secret (the
//! client secret, the subject token, the minted token) is ever put into a
//! message, a log line or a `Debug` text: what the identity provider writes
//! back is scrubbed of the secrets the request carried, and clipped.

use std::time::{Duration, Instant};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Url;
use serde::Deserialize;
use toolgate_core::{ErrorCode, FailureKind, Secret, ToolError};

/// The `backend` label of a failure of the identity provider in
/// `toolgate_backend_errors_total`.
pub(crate) const IDP_BACKEND: &str = "identity_provider";

/// Largest answer of a token endpoint that is read (a token answer is a few KiB).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Characters of the identity provider's `error_description` kept in a message.
const DESCRIPTION_CHARS: usize = 200;

/// The longest time a minted token is kept, whatever `expires_in` says.
const LONGEST_KEPT: Duration = Duration::from_secs(24 * 3600);

/// How long a token without `expires_in` is kept.
const KEPT_WITHOUT_EXPIRY: Duration = Duration::from_secs(60);

/// `application/x-www-form-urlencoded` (the WHATWG byte serializer keeps
/// alphanumerics and `*-._`; a space becomes `%20`, which every form decoder
/// reads as a space, like `+`).
const FORM: &AsciiSet = &NON_ALPHANUMERIC.remove(b'*').remove(b'-').remove(b'.').remove(b'_');

/// `name=value&...`, each part form-urlencoded.
pub(crate) fn form_body(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(name, value)| {
            format!("{}={}", utf8_percent_encode(name, FORM), utf8_percent_encode(value, FORM))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Checks a token endpoint URL: `http(s)://host...`, no credentials, no fragment.
pub(crate) fn check_url(field: &str, url: &str) -> Result<Url, String> {
    let shown: String = url.chars().take(200).collect();
    let parsed = Url::parse(url).map_err(|e| format!("`{field}` {shown:?} is not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "`{field}` {shown:?} must be an http(s):// URL (the identity provider's token endpoint)"
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{field}` {shown:?} has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!(
            "`{field}` may not carry credentials in the URL; give `client_id` and `client_secret` instead"
        ));
    }
    if parsed.fragment().is_some() {
        return Err(format!("`{field}` {shown:?} may not have a fragment (`#...`)"));
    }
    Ok(parsed)
}

/// The client of one token endpoint: where, as whom, how long to wait.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub(crate) url: Url,
    pub(crate) client_id: String,
    pub(crate) client_secret: Secret,
    pub(crate) client: reqwest::Client,
    pub(crate) timeout: Duration,
    /// How messages name the backend the token is for, e.g. "the fitness API".
    pub(crate) backend: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url.as_str())
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .field("timeout", &self.timeout)
            .field("backend", &self.backend)
            .finish()
    }
}

/// A token the identity provider issued, and how long it may be kept.
pub(crate) struct Issued {
    pub(crate) token: Secret,
    pub(crate) keep_for: Duration,
}

/// The fields of a successful token answer that toolgate reads.
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    issued_token_type: Option<String>,
    token_type: Option<String>,
    expires_in: Option<serde_json::Value>,
}

/// The fields of an OAuth error answer (RFC 6749 §5.2).
#[derive(Deserialize)]
struct ErrorAnswer {
    error: Option<String>,
    error_description: Option<String>,
}

/// What is being asked for, for messages: "exchange the caller's sign-in for
/// a token" or "get toolgate's service token".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grant {
    Exchange,
    ClientCredentials,
}

impl Grant {
    fn doing(self) -> &'static str {
        match self {
            Grant::Exchange => "exchange the caller's sign-in for a token",
            Grant::ClientCredentials => "issue toolgate's service token",
        }
    }
}

/// How long a token that lives `expires_in` seconds is kept: until shortly
/// before it expires (10 % of its life or 30 s, whichever is less, early);
/// 60 s when the answer does not say; never longer than a day. Zero: use it
/// once, keep nothing.
pub(crate) fn keep_for(expires_in: Option<u64>) -> Duration {
    let Some(seconds) = expires_in else { return KEPT_WITHOUT_EXPIRY };
    let life = Duration::from_secs(seconds).min(LONGEST_KEPT);
    let margin = (life / 10).min(Duration::from_secs(30));
    life - margin
}

/// `expires_in` as a whole number of seconds: a JSON number, or a string of
/// digits (some identity providers send one). Anything else is "not said".
fn seconds(value: &serde_json::Value) -> Option<u64> {
    match value {
        serde_json::Value::Number(n) => {
            n.as_u64().or_else(|| n.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64))
        }
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `text` with every secret replaced by `[redacted]`, control characters
/// dropped, clipped to `max` characters.
fn clean(text: &str, secrets: &[&str], max: usize) -> String {
    let mut text = text.to_owned();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        text = text.replace(secret, "[redacted]");
    }
    let mut out: String = text.chars().filter(|c| !c.is_control()).take(max).collect();
    if out.chars().count() < text.chars().filter(|c| !c.is_control()).count() {
        out.push('…');
    }
    out
}

/// An OAuth `error` code as it may be shown: the characters RFC 6749 allows
/// (%x20-21 / %x23-5B / %x5D-7E), at most 64; otherwise `None`.
fn error_code(code: &str) -> Option<&str> {
    let ok = !code.is_empty()
        && code.len() <= 64
        && code.bytes().all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5B | 0x5D..=0x7E));
    ok.then_some(code)
}

impl Endpoint {
    /// POSTs `fields` (plus nothing else) and reads the token; `secrets` are
    /// the other secrets the request carries (the subject token), scrubbed
    /// from whatever comes back.
    pub(crate) async fn request(
        &self,
        grant: Grant,
        fields: &[(&str, &str)],
        secrets: &[&str],
    ) -> Result<Issued, ToolError> {
        let body = form_body(fields);
        // RFC 6749 §2.3.1: the id and the secret are form-urlencoded before Basic.
        let id = utf8_percent_encode(&self.client_id, FORM).to_string();
        let secret = utf8_percent_encode(self.client_secret.expose(), FORM).to_string();
        let request = self
            .client
            .post(self.url.clone())
            .basic_auth(id, Some(secret))
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.timeout)
            .body(body);
        let started = Instant::now();
        let answer = async {
            let mut response = request.send().await?;
            let status = response.status();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Ok((status, None));
                }
                body.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>((status, Some(body)))
        }
        .await;
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut all_secrets = vec![self.client_secret.expose()];
        all_secrets.extend_from_slice(secrets);
        match answer {
            Ok((status, body)) => {
                tracing::debug!(grant = ?grant, status = status.as_u16(), elapsed_ms, "token endpoint answered");
                self.read_answer(grant, status, body.as_deref(), &all_secrets)
            }
            Err(error) => {
                tracing::debug!(
                    grant = ?grant,
                    elapsed_ms,
                    timeout = error.is_timeout(),
                    connect = error.is_connect(),
                    "token endpoint did not answer"
                );
                Err(self.unreached(grant, &error.without_url(), &all_secrets))
            }
        }
    }

    /// Where the identity provider is, for messages (scheme, host and port only).
    fn place(&self) -> String {
        let host = self.url.host_str().unwrap_or("?");
        match self.url.port() {
            Some(port) => format!("{}://{host}:{port}", self.url.scheme()),
            None => format!("{}://{host}", self.url.scheme()),
        }
    }

    fn unreached(&self, grant: Grant, error: &reqwest::Error, secrets: &[&str]) -> ToolError {
        let (kind, what) = if error.is_timeout() {
            (FailureKind::Timeout, format!("did not answer within {} ms", self.timeout.as_millis()))
        } else {
            let mut cause: &(dyn std::error::Error + 'static) = error;
            while let Some(source) = cause.source() {
                cause = source;
            }
            (
                FailureKind::Unavailable,
                format!("could not be reached ({})", clean(&cause.to_string(), secrets, 200)),
            )
        };
        ToolError::new(
            ErrorCode::Unavailable,
            format!(
                "the call to {} was not made: the identity provider at {} {what} when toolgate asked it to {}. Try again in a moment; if it keeps failing, an operator must check the identity provider and this backend's `token_url`.",
                self.backend,
                self.place(),
                grant.doing()
            ),
        )
        .transient(true)
        .backend_failure_of(IDP_BACKEND, kind)
    }

    fn read_answer(
        &self,
        grant: Grant,
        status: reqwest::StatusCode,
        body: Option<&[u8]>,
        secrets: &[&str],
    ) -> Result<Issued, ToolError> {
        let code = status.as_u16();
        let Some(body) = body else {
            return Err(
                self.protocol(grant, &format!("answered more than {MAX_ANSWER_BYTES} bytes (HTTP {code})"))
            );
        };
        if status.is_success() {
            return self.read_token(grant, body);
        }
        if code == 429 || status.is_server_error() {
            return Err(ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "the call to {} was not made: the identity provider at {} answered HTTP {code} when toolgate asked it to {}. Try again in a moment.",
                    self.backend,
                    self.place(),
                    grant.doing()
                ),
            )
            .transient(true)
            .backend_failure_of(IDP_BACKEND, FailureKind::Http5xx));
        }
        if matches!(code, 400 | 401 | 403) {
            return Err(self.refused(grant, code, body, secrets));
        }
        Err(ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "the call to {} was not made: the identity provider's token endpoint ({}) answered HTTP {code} when toolgate asked it to {}. Do not retry; an operator must check this backend's `token_url`.",
                self.backend,
                self.place(),
                grant.doing()
            ),
        )
        .transient(false)
        .backend_failure_of(IDP_BACKEND, FailureKind::Protocol))
    }

    /// A 400/401/403: the identity provider refused. PERMISSION_DENIED naming
    /// its `error` code, with what to do about that code.
    fn refused(&self, grant: Grant, status: u16, body: &[u8], secrets: &[&str]) -> ToolError {
        let answer: Option<ErrorAnswer> = serde_json::from_slice(body).ok();
        let code = answer.as_ref().and_then(|a| a.error.as_deref()).and_then(error_code);
        let description = answer
            .as_ref()
            .and_then(|a| a.error_description.as_deref())
            .map(|d| clean(d, secrets, DESCRIPTION_CHARS))
            .filter(|d| !d.trim().is_empty());
        let said = match (code, &description) {
            (Some(code), Some(description)) => format!("OAuth error `{code}`: {description}"),
            (Some(code), None) => format!("OAuth error `{code}`"),
            (None, _) => format!("HTTP {status} without an OAuth error code"),
        };
        let todo = match (code, grant) {
            (Some("invalid_grant"), Grant::Exchange) => {
                "The user's sign-in is no longer accepted for this (expired, revoked, or not meant for this exchange): tell the user to sign in again; do not retry as is."
                    .to_owned()
            }
            (Some("invalid_client" | "unauthorized_client"), _) => format!(
                "toolgate's client `{}` is not allowed to do this: an operator must check the client id and secret of this backend's `auth`, and that the identity provider allows this client the grant. Do not ask the user to sign in again; do not retry.",
                self.client_id
            ),
            (Some("invalid_target"), _) => "The identity provider will not issue a token for this backend's audience or resource: an operator must check `audience`/`resource` of this backend's `auth` and allow it at the identity provider. Do not retry."
                .to_owned(),
            (Some("invalid_scope"), _) => "The identity provider will not grant the configured scope: an operator must check `scope` of this backend's `auth`, or the user may lack that permission. Do not retry."
                .to_owned(),
            (Some("unsupported_grant_type"), _) => "The identity provider does not offer this grant to toolgate's client: an operator must enable it there. Do not retry."
                .to_owned(),
            (_, Grant::Exchange) => "Do not retry as is: the user may have to sign in again, or an operator must check this backend's `auth` at the identity provider."
                .to_owned(),
            (_, Grant::ClientCredentials) => "Do not retry: an operator must check this backend's `auth` (client id, secret, scope) at the identity provider."
                .to_owned(),
        };
        let mut details = serde_json::json!({ "status": status });
        if let Some(code) = code {
            details["oauth_error"] = serde_json::Value::String(code.to_owned());
        }
        ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "the call to {} was not made: the identity provider refused to {} ({said}). {todo}",
                self.backend,
                grant.doing()
            ),
        )
        .with_details(details)
        .transient(false)
    }

    fn protocol(&self, grant: Grant, what: &str) -> ToolError {
        ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "the call to {} was not made: asked to {}, the identity provider at {} {what}. Do not retry; an operator must check the identity provider and this backend's `token_url`.",
                self.backend,
                grant.doing(),
                self.place()
            ),
        )
        .transient(false)
        .backend_failure_of(IDP_BACKEND, FailureKind::Protocol)
    }

    /// A 2xx: the token and how long to keep it.
    fn read_token(&self, grant: Grant, body: &[u8]) -> Result<Issued, ToolError> {
        let answer: TokenAnswer = serde_json::from_slice(body)
            .map_err(|_| self.protocol(grant, "answered something that is not a JSON token answer"))?;
        let token = answer
            .access_token
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| self.protocol(grant, "answered without an `access_token`"))?;
        // Sent as `Authorization: Bearer <token>`: visible ASCII only.
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(self.protocol(grant, "issued a token that cannot be sent in an HTTP header"));
        }
        if let Some(kind) = answer.token_type.as_deref()
            && !kind.eq_ignore_ascii_case("bearer")
        {
            let kind: String = kind.chars().filter(|c| c.is_ascii_graphic()).take(32).collect();
            return Err(self.protocol(
                grant,
                &format!("issued a `{kind}` token; toolgate sends bearer tokens only (configure the identity provider to issue `Bearer` tokens)"),
            ));
        }
        if let Some(kind) = answer.issued_token_type.as_deref()
            && !matches!(kind, crate::grant::ACCESS_TOKEN_TYPE | crate::grant::JWT_TOKEN_TYPE)
        {
            let kind: String = kind.chars().filter(|c| c.is_ascii_graphic()).take(80).collect();
            return Err(
                self.protocol(grant, &format!("issued a token of type `{kind}`, not an access token"))
            );
        }
        let keep_for = keep_for(answer.expires_in.as_ref().and_then(seconds));
        Ok(Issued { token: Secret::new(token), keep_for })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_kept_until_shortly_before_it_expires() {
        assert_eq!(keep_for(None), Duration::from_secs(60));
        assert_eq!(keep_for(Some(3600)), Duration::from_secs(3570), "30 s early");
        assert_eq!(keep_for(Some(100)), Duration::from_secs(90), "10 % early");
        assert_eq!(keep_for(Some(1)), Duration::from_millis(900));
        assert_eq!(keep_for(Some(0)), Duration::ZERO, "used once, not kept");
        assert_eq!(keep_for(Some(u64::MAX)), Duration::from_secs(24 * 3600 - 30), "at most a day");
    }

    #[test]
    fn expires_in_may_be_a_number_or_a_string() {
        assert_eq!(seconds(&serde_json::json!(300)), Some(300));
        assert_eq!(seconds(&serde_json::json!(299.7)), Some(299));
        assert_eq!(seconds(&serde_json::json!("300")), Some(300));
        assert_eq!(seconds(&serde_json::json!(-1)), None);
        assert_eq!(seconds(&serde_json::json!("soon")), None);
    }

    #[test]
    fn the_form_is_urlencoded() {
        assert_eq!(form_body(&[("a", "x y&z=1"), ("b", "é*-._~")]), "a=x%20y%26z%3D1&b=%C3%A9*-._%7E");
    }

    #[test]
    fn what_the_identity_provider_says_is_scrubbed_and_clipped() {
        let said = clean("bad token sub-secret-123 \u{7}here", &["sub-secret-123"], 200);
        assert_eq!(said, "bad token [redacted] here");
        let long = clean(&"x".repeat(500), &[], 200);
        assert_eq!(long.chars().count(), 201);
        assert!(long.ends_with('…'));
        assert_eq!(error_code("invalid_grant"), Some("invalid_grant"));
        assert_eq!(error_code("bad\"code"), None);
        assert_eq!(error_code(""), None);
    }
}
