//! [`Auth`]: how the requests of one backend authenticate.

use tool_core::Secret;

/// How an [`crate::HttpExecutor`] authenticates its requests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Auth {
    /// `Authorization: Bearer <token>` with the caller's credential made for this backend
    /// ([`tool_core::Caller::credentials`] under [`crate::HttpOptions::backend_id`]); a call
    /// without one is refused before any I/O, and a credential made for another backend is
    /// never sent.
    #[default]
    BearerFromCaller,
    /// One fixed credential for every caller, sent in `header` (e.g. `X-Api-Key`). The value
    /// is a [`Secret`]: never logged, traced or returned.
    Static {
        /// The header name.
        header: String,
        /// The header value.
        value: Secret,
    },
    /// No credentials (a public or network-protected backend).
    None,
}

impl Auth {
    /// The kind, as configuration spells it: `bearer_from_caller`, `static`, `none`.
    pub fn kind(&self) -> &'static str {
        match self {
            Auth::BearerFromCaller => "bearer_from_caller",
            Auth::Static { .. } => "static",
            Auth::None => "none",
        }
    }

    /// Check the header name and value before any request is made.
    pub(crate) fn check(&self) -> crate::Result<()> {
        if let Auth::Static { header, value } = self {
            if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err(crate::Error::Auth(format!(
                    "header {:?} is not a valid HTTP header name (e.g. `X-Api-Key`)",
                    header.chars().take(64).collect::<String>()
                )));
            }
            let v = value.expose();
            if v.trim().is_empty() || reqwest::header::HeaderValue::from_str(v).is_err() {
                return Err(crate::Error::Auth(format!(
                    "the value for header `{header}` is empty or holds characters a header cannot carry"
                )));
            }
        }
        Ok(())
    }
}
