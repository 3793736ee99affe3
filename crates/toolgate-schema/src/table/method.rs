//! A route's HTTP method: how a table writes it, and what it says about the call (a read,
//! an idempotent write).

use serde::{Deserialize, Serialize};

/// HTTP method of a route. Written `GET`, `POST`, ... (lowercase accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// Read.
    #[serde(alias = "get")]
    Get,
    /// Create (not idempotent).
    #[serde(alias = "post")]
    Post,
    /// Replace (idempotent).
    #[serde(alias = "put")]
    Put,
    /// Partial update (not idempotent).
    #[serde(alias = "patch")]
    Patch,
    /// Delete (idempotent).
    #[serde(alias = "delete")]
    Delete,
}

impl Method {
    /// `"GET"`, `"POST"`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Whether the method only reads.
    pub fn is_read(self) -> bool {
        self == Method::Get
    }

    /// Whether repeating the call has the effect of one call (HTTP semantics).
    pub fn is_idempotent(self) -> bool {
        matches!(self, Method::Get | Method::Put | Method::Delete)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
