//! Asking the authorization server about an opaque token (RFC 7662).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::metadata::{IDP_TIMEOUT, body};
use super::{IntrospectionConfig, Rejection, http_error};

/// The introspection answer for `token`, when the token is active: its
/// claims. Authenticates as `client_secret_basic` (RFC 6749 §2.3.1: the
/// client id and secret form-urlencoded, then HTTP Basic).
pub(crate) async fn introspect(
    client: &reqwest::Client,
    config: &IntrospectionConfig,
    token: &str,
) -> Result<Map<String, Value>, Rejection> {
    let url = &config.url;
    let body_text = format!("token={}&token_type_hint=access_token", form_encode(token));
    let response = client
        .post(url)
        .basic_auth(form_encode(&config.client_id), Some(form_encode(config.client_secret.expose())))
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(IDP_TIMEOUT)
        .body(body_text)
        .send()
        .await
        .map_err(|e| {
            tracing::warn!(%url, error = %http_error(&e), "token introspection failed");
            Rejection::Unavailable(format!(
                "could not reach the introspection endpoint {url}: {}",
                http_error(&e)
            ))
        })?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        tracing::warn!(%url, %status, "the introspection endpoint refused toolgate's client credentials");
        return Err(Rejection::Unavailable(format!(
            "the introspection endpoint {url} refused toolgate's client credentials ({status}): check \
             introspection client_id and client_secret"
        )));
    }
    if !status.is_success() {
        tracing::warn!(%url, %status, "token introspection failed");
        return Err(Rejection::Unavailable(format!("the introspection endpoint {url} answered {status}")));
    }
    let bytes = body(response)
        .await
        .map_err(|e| Rejection::Unavailable(format!("the introspection endpoint {url}: {e}")))?;
    let Ok(Value::Object(claims)) = serde_json::from_slice::<Value>(&bytes) else {
        tracing::warn!(%url, "the introspection endpoint did not answer a JSON object");
        return Err(Rejection::Unavailable(format!(
            "the introspection endpoint {url} did not answer with a JSON object (RFC 7662 §2.2)"
        )));
    };
    match claims.get("active") {
        Some(Value::Bool(true)) => Ok(claims),
        _ => Err(Rejection::Invalid(
            "the authorization server says the token is not active (expired, revoked or unknown)".to_owned(),
        )),
    }
}

/// `value` encoded as `application/x-www-form-urlencoded` (the WHATWG
/// serializer: alphanumerics and `*-._` stay, space becomes `+`, every other
/// byte `%XX`).
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(byte as char),
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding() {
        assert_eq!(form_encode("abc-XYZ_0.9*"), "abc-XYZ_0.9*");
        assert_eq!(form_encode("a b+c:d/é%"), "a+b%2Bc%3Ad%2F%C3%A9%25");
        assert_eq!(form_encode(""), "");
    }
}
