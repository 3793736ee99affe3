//! Asking the authorization server about an opaque token (RFC 7662).

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::jwt::{EXPIRED, NOT_YET, as_time, bad_time, seconds_claim, wrong_audience};
use super::metadata::{IDP_TIMEOUT, body};
use super::{CACHE_TTL, IntrospectionConfig, Rejection, Verified, Verifier, http_error};

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

impl Verifier {
    /// An opaque token, asked about at the introspection endpoint.
    pub(super) async fn introspect(&self, token: &str) -> Result<Verified, Rejection> {
        let config = &self.inner.config;
        let Some(introspection) = &config.introspection else {
            return Err(Rejection::Invalid(
                "the token is not a JWT, and no introspection endpoint is configured for opaque tokens"
                    .to_owned(),
            ));
        };
        let claims = introspect(&self.inner.client, introspection, token).await?;
        match claims.get("iss") {
            None => {}
            Some(Value::String(iss)) if *iss == config.issuer => {}
            Some(_) => {
                return Err(Rejection::Invalid(format!(
                    "the token's iss is not the issuer {:?}",
                    config.issuer
                )));
            }
        }
        let for_us = match claims.get("aud") {
            None => true,
            Some(Value::String(aud)) => *aud == config.resource,
            Some(Value::Array(auds)) => auds.iter().any(|aud| aud.as_str() == Some(config.resource.as_str())),
            Some(_) => false,
        };
        if !for_us {
            return Err(Rejection::Invalid(wrong_audience(config)));
        }
        // whole seconds, as for JWTs (jsonwebtoken)
        let now = SystemTime::now();
        let now_secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let leeway = config.leeway.as_secs();
        let expires_at = match claims.get("exp") {
            None => now + CACHE_TTL,
            Some(_) => {
                let exp = seconds_claim(&claims, "exp").ok_or_else(|| bad_time("exp"))?;
                if exp.saturating_add(leeway) < now_secs {
                    return Err(Rejection::Invalid(EXPIRED.to_owned()));
                }
                as_time(exp).ok_or_else(|| bad_time("exp"))?
            }
        };
        if claims.contains_key("nbf") {
            let nbf = seconds_claim(&claims, "nbf").ok_or_else(|| bad_time("nbf"))?;
            if nbf > now_secs.saturating_add(leeway) {
                return Err(Rejection::Invalid(NOT_YET.to_owned()));
            }
        }
        self.inner.mapper.verified(config, &claims, false, expires_at)
    }
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
