//! Security schemes to the `auth` of a `[[domains]]` entry.

use serde_json::Value;

/// The `auth` a declared domain should use, read from the document's security schemes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthHint {
    /// Bearer tokens (HTTP bearer, OAuth 2, OpenID Connect): each caller's own token.
    BearerFromCaller,
    /// An API key in a header (or HTTP basic credentials in `Authorization`), read from the
    /// environment variable `env`.
    Static {
        /// The header.
        header: String,
        /// Suggested environment variable.
        env: String,
        /// What the variable must hold, when it is not the bare key.
        note: Option<String>,
    },
    /// No scheme, or one toolgate cannot send (a key in the query or a cookie: see `note`).
    None {
        /// Why, when a scheme was declared but cannot be used.
        note: Option<String>,
    },
}

impl AuthHint {
    /// The scheme the document's operations use: the global `security` requirement first,
    /// else the first declared scheme.
    pub(crate) fn from_document(doc: &Value, env_prefix: &str) -> Self {
        let schemes = doc.pointer("/components/securitySchemes").and_then(Value::as_object);
        let Some(schemes) = schemes.filter(|s| !s.is_empty()) else { return AuthHint::None { note: None } };
        let wanted = doc
            .get("security")
            .and_then(Value::as_array)
            .and_then(|reqs| reqs.iter().find_map(|r| r.as_object()?.keys().next().cloned()));
        let (name, scheme) = match wanted.as_deref().and_then(|w| schemes.get_key_value(w)) {
            Some(found) => found,
            None => match schemes.iter().next() {
                Some(first) => first,
                None => return AuthHint::None { note: None },
            },
        };
        let env = format!("{}_API_KEY", env_prefix.to_ascii_uppercase());
        let text = |k: &str| scheme.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        match text("type").as_str() {
            "http" if text("scheme").eq_ignore_ascii_case("bearer") => AuthHint::BearerFromCaller,
            "oauth2" | "openIdConnect" => AuthHint::BearerFromCaller,
            "http" if text("scheme").eq_ignore_ascii_case("basic") => AuthHint::Static {
                header: "Authorization".into(),
                env,
                note: Some("the variable holds `Basic <base64 of user:password>`".into()),
            },
            "apiKey" if text("in") == "header" => AuthHint::Static { header: text("name"), env, note: None },
            "apiKey" => AuthHint::None {
                note: Some(format!(
                    "scheme `{name}` sends its key in the {} (`{}`); only header keys can be sent, so auth is none",
                    text("in"),
                    text("name")
                )),
            },
            other => {
                AuthHint::None { note: Some(format!("scheme `{name}` of type {other:?} is not supported")) }
            }
        }
    }

    /// The TOML inline table for `auth = ...`.
    pub fn to_toml(&self) -> String {
        match self {
            AuthHint::BearerFromCaller => r#"{ kind = "bearer_from_caller" }"#.to_owned(),
            AuthHint::Static { header, env, .. } => {
                format!(r#"{{ kind = "static", header = "{header}", env = "{env}" }}"#)
            }
            AuthHint::None { .. } => r#"{ kind = "none" }"#.to_owned(),
        }
    }
}
