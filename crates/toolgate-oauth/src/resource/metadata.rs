//! Metadata both ways: the issuer's (OpenID Connect Discovery / RFC 8414),
//! fetched to find its JWKS, and toolgate's own Protected Resource Metadata
//! (RFC 9728), served to clients so that they know where to sign in.

use std::time::Duration;

use serde_json::{Value, json};

use super::config::split_origin;
use super::jwks::KeySet;
use super::{ResourceConfig, http_error};

/// How long one request to the identity provider may take.
pub(crate) const IDP_TIMEOUT: Duration = Duration::from_secs(10);
/// The most a metadata, JWKS or introspection answer may weigh.
pub(crate) const MAX_BODY: usize = 1 << 20;

const PROTECTED_RESOURCE: &str = "/.well-known/oauth-protected-resource";
const OIDC: &str = "/.well-known/openid-configuration";
const RFC8414: &str = "/.well-known/oauth-authorization-server";

/// What toolgate uses of the issuer's metadata.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// Where the signing keys are; `None` when the issuer publishes none.
    pub(crate) jwks_uri: Option<String>,
}

/// `path` with one terminating slash removed (so "/" becomes ""): what goes
/// after a well-known prefix (RFC 8414 §3.1, RFC 9728 §3.1).
fn suffix(path: &str) -> &str {
    path.strip_suffix('/').unwrap_or(path)
}

/// Where the issuer's metadata may be, in the order tried: OpenID Connect
/// Discovery appended to the issuer, RFC 8414 with the issuer's path
/// inserted after the well-known prefix, and (for issuers with a path) the
/// OpenID Connect document with the path inserted likewise.
pub(crate) fn discovery_urls(issuer: &str) -> Vec<String> {
    let (origin, path) = split_origin(issuer);
    let path = suffix(path);
    let mut urls = vec![format!("{}{OIDC}", suffix(issuer)), format!("{origin}{RFC8414}{path}")];
    let inserted = format!("{origin}{OIDC}{path}");
    if !urls.contains(&inserted) {
        urls.push(inserted);
    }
    urls
}

/// Fetch the issuer's metadata from the first of [`discovery_urls`] that
/// answers with it; its `issuer` must equal `issuer` byte for byte.
pub(crate) async fn discover(client: &reqwest::Client, issuer: &str) -> Result<Discovered, String> {
    let mut tried = Vec::new();
    for url in discovery_urls(issuer) {
        let response = client
            .get(&url)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(IDP_TIMEOUT)
            .send()
            .await
            .map_err(|e| format!("could not reach the identity provider at {url}: {}", http_error(&e)))?;
        let status = response.status();
        if !status.is_success() {
            tried.push(format!("{url} ({status})"));
            continue;
        }
        let metadata = match body(response)
            .await
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).map_err(|_| "not JSON".to_owned()))
        {
            Ok(Value::Object(metadata)) => metadata,
            Ok(_) => {
                tried.push(format!("{url} (not a JSON object)"));
                continue;
            }
            Err(e) => {
                tried.push(format!("{url} ({e})"));
                continue;
            }
        };
        let Some(found) = metadata.get("issuer").and_then(Value::as_str) else {
            tried.push(format!("{url} (no issuer in it)"));
            continue;
        };
        if found != issuer {
            return Err(format!(
                "the metadata at {url} names the issuer {found:?}, but the configured issuer is {issuer:?}: \
                 they must be equal byte for byte (mind a trailing slash); set [auth.oauth] issuer to the \
                 provider's issuer"
            ));
        }
        let jwks_uri = match metadata.get("jwks_uri") {
            None | Some(Value::Null) => None,
            Some(Value::String(uri)) => {
                super::config::check_url("the issuer's jwks_uri", uri, true)?;
                Some(uri.clone())
            }
            Some(_) => return Err(format!("the metadata at {url} has a jwks_uri that is not a string")),
        };
        return Ok(Discovered { jwks_uri });
    }
    Err(format!(
        "no authorization server metadata found for the issuer {issuer:?}; tried {}",
        tried.join(", ")
    ))
}

/// Fetch and parse the JWKS at `url`.
pub(crate) async fn fetch_jwks(client: &reqwest::Client, url: &str) -> Result<KeySet, String> {
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(IDP_TIMEOUT)
        .send()
        .await
        .map_err(|e| format!("could not fetch the issuer's JWKS at {url}: {}", http_error(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the issuer's JWKS at {url} answered {status}"));
    }
    let bytes = body(response).await.map_err(|e| format!("the issuer's JWKS at {url}: {e}"))?;
    KeySet::parse(&bytes, url)
}

/// A response's body, at most [`MAX_BODY`] bytes.
pub(crate) async fn body(response: reqwest::Response) -> Result<Vec<u8>, String> {
    if response.content_length().is_some_and(|len| len > MAX_BODY as u64) {
        return Err(format!("the answer is larger than {MAX_BODY} bytes"));
    }
    let bytes = response.bytes().await.map_err(|e| format!("the answer broke off: {}", http_error(&e)))?;
    if bytes.len() > MAX_BODY {
        return Err(format!("the answer is larger than {MAX_BODY} bytes"));
    }
    Ok(bytes.to_vec())
}

/// The Protected Resource Metadata document (RFC 9728 §2) for `config`,
/// every string as configured.
pub(crate) fn protected_resource(config: &ResourceConfig, scopes: &[String]) -> Value {
    let mut metadata = json!({
        "resource": config.resource,
        "authorization_servers": [config.issuer],
    });
    if !scopes.is_empty() {
        metadata["scopes_supported"] = json!(scopes);
    }
    metadata["bearer_methods_supported"] = json!(["header"]);
    metadata
}

/// The path of the metadata document for `resource` (RFC 9728 §3.1).
pub(crate) fn protected_resource_path(resource: &str) -> String {
    let (_, path) = split_origin(resource);
    format!("{PROTECTED_RESOURCE}{}", suffix(path))
}

/// The URL of the metadata document for `resource` (RFC 9728 §3.1).
pub(crate) fn protected_resource_url(resource: &str) -> String {
    let (origin, _) = split_origin(resource);
    format!("{origin}{}", protected_resource_path(resource))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_urls_in_order() {
        assert_eq!(
            discovery_urls("https://h.example/realms/acme"),
            [
                "https://h.example/realms/acme/.well-known/openid-configuration",
                "https://h.example/.well-known/oauth-authorization-server/realms/acme",
                "https://h.example/.well-known/openid-configuration/realms/acme",
            ]
        );
        assert_eq!(
            discovery_urls("https://h.example/realms/acme/"),
            [
                "https://h.example/realms/acme/.well-known/openid-configuration",
                "https://h.example/.well-known/oauth-authorization-server/realms/acme",
                "https://h.example/.well-known/openid-configuration/realms/acme",
            ]
        );
        for issuer in ["https://h.example", "https://h.example/"] {
            assert_eq!(
                discovery_urls(issuer),
                [
                    "https://h.example/.well-known/openid-configuration",
                    "https://h.example/.well-known/oauth-authorization-server",
                ]
            );
        }
    }

    #[test]
    fn metadata_locations() {
        assert_eq!(
            protected_resource_url("https://mcp.example.com/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            protected_resource_path("https://mcp.example.com/mcp"),
            "/.well-known/oauth-protected-resource/mcp"
        );
        for bare in ["https://mcp.example.com", "https://mcp.example.com/"] {
            assert_eq!(
                protected_resource_url(bare),
                "https://mcp.example.com/.well-known/oauth-protected-resource"
            );
            assert_eq!(protected_resource_path(bare), "/.well-known/oauth-protected-resource");
        }
        assert_eq!(
            protected_resource_url("http://127.0.0.1:8080/a/b/"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b"
        );
    }
}
