//! Security schemes to the `auth` of a `[[domains]]` entry.
//!
//! Nothing from the document reaches the printed entry except through a TOML serializer, and
//! a header name that is not a plain HTTP header name (RFC 9110 token characters) is left out
//! with the reason, so a hostile document cannot close a string and append a table.

use serde::Serialize;
use serde_json::Value;

/// The `auth` a declared domain should use, read from the document's security schemes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthHint {
    /// Bearer tokens (HTTP bearer, OAuth 2, OpenID Connect): each caller's own token.
    BearerFromCaller,
    /// An API key in a header (or HTTP basic credentials in `Authorization`), read from the
    /// environment variable `env`.
    Static {
        /// The header: only RFC 9110 token characters.
        header: String,
        /// Suggested environment variable.
        env: String,
        /// What the variable must hold, when it is not the bare key.
        note: Option<String>,
    },
    /// No scheme, or one toolgate cannot send (a key in the query or a cookie, a header name
    /// that is not one: see `note`).
    None {
        /// Why, when a scheme was declared but cannot be used. It holds no document text
        /// except names made only of RFC 9110 token characters.
        note: Option<String>,
    },
}

/// The `auth` inline table as configuration spells it (`toolgate::domains::AuthConfig`).
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum AuthToml<'a> {
    BearerFromCaller,
    Static { header: &'a str, env: &'a str },
    None,
}

/// RFC 9110 `token`: what a header name is made of.
pub(crate) fn is_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A document's name as a message may show it: itself when it is a short token, else a
/// placeholder (so no quote, space, newline or control character of the document is shown).
pub(crate) fn shown(text: &str) -> &str {
    if is_token(text) && text.len() <= 64 { text } else { "(a name that is not plain)" }
}

impl AuthHint {
    /// The scheme the document's operations use ([`crate::servers::main_scheme`]): the global
    /// `security` requirement first, else the first declared scheme.
    pub(crate) fn from_document(doc: &Value, env_prefix: &str) -> Self {
        match crate::servers::main_scheme(doc) {
            Some(name) => Self::of_scheme(doc, name, format!("{}_API_KEY", env_prefix.to_ascii_uppercase())),
            None => AuthHint::None { note: None },
        }
    }

    /// The `auth` for the declared scheme `name`, a static one read from `env`.
    pub(crate) fn of_scheme(doc: &Value, name: &str, env: String) -> Self {
        let Some(scheme) = doc.pointer("/components/securitySchemes").and_then(|s| s.get(name)) else {
            return AuthHint::None { note: None };
        };
        let name = shown(name);
        let text = |k: &str| scheme.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        match text("type").as_str() {
            "http" if text("scheme").eq_ignore_ascii_case("bearer") => AuthHint::BearerFromCaller,
            "oauth2" | "openIdConnect" => AuthHint::BearerFromCaller,
            "http" if text("scheme").eq_ignore_ascii_case("basic") => AuthHint::Static {
                header: "Authorization".into(),
                env,
                note: Some("the variable holds `Basic <base64 of user:password>`".into()),
            },
            "apiKey" if text("in") == "header" && is_token(&text("name")) => {
                AuthHint::Static { header: text("name"), env, note: None }
            }
            "apiKey" if text("in") == "header" => AuthHint::None {
                note: Some(format!(
                    "scheme `{name}` names a header that is not a plain HTTP header name (RFC 9110 token characters only), so it was left out and auth is none; set auth by hand"
                )),
            },
            "apiKey" => AuthHint::None {
                note: Some(format!(
                    "scheme `{name}` sends its key in the {} (`{}`); only header keys can be sent, so auth is none",
                    match text("in").as_str() {
                        "query" => "query",
                        "cookie" => "cookie",
                        _ => "wrong place",
                    },
                    shown(&text("name"))
                )),
            },
            other => AuthHint::None {
                note: Some(format!("scheme `{name}` of type `{}` is not supported", shown(other))),
            },
        }
    }

    /// The TOML inline table for `auth = ...`, written by the `toml` serializer.
    pub fn to_toml(&self) -> String {
        let value = match self {
            AuthHint::BearerFromCaller => AuthToml::BearerFromCaller,
            AuthHint::Static { header, env, .. } => AuthToml::Static { header, env },
            AuthHint::None { .. } => AuthToml::None,
        };
        toml_value(&value)
    }
}

/// `schemes = { name = { kind = "static", ... } }` for the static hints (others are left out).
pub(crate) fn schemes_toml(hints: &[&(String, AuthHint)]) -> String {
    let table: std::collections::BTreeMap<&str, AuthToml<'_>> = hints
        .iter()
        .filter_map(|(name, hint)| match hint {
            AuthHint::Static { header, env, .. } => Some((name.as_str(), AuthToml::Static { header, env })),
            _ => None,
        })
        .collect();
    toml_value(&table)
}

/// One TOML value (a string, an inline table) as the `toml` serializer writes it.
pub(crate) fn toml_value(value: &impl Serialize) -> String {
    let mut out = String::new();
    // Strings, integers and structs of them always serialize.
    value.serialize(toml::ser::ValueSerializer::new(&mut out)).expect("a TOML value");
    out
}
