//! What a backend failure was, carried beside a [`crate::ToolError`] so that
//! the gateway can count failures of the services behind the tools (HTTP
//! APIs, databases, other MCP servers) apart from the callers' own mistakes.
//! Never shown to the model: the error's code and message are its answer.

/// How a backend failed (the `kind` label of `toolgate_backend_errors_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FailureKind {
    /// No answer within the time limit.
    Timeout,
    /// Not reachable: connection refused, broken, or the service not connected.
    Unavailable,
    /// It answered HTTP 5xx (or 429: it is overloaded).
    Http5xx,
    /// Its certificate was refused.
    Tls,
    /// It answered something that breaks its protocol (not a tool result, not JSON).
    Protocol,
    /// A database error that is not the caller's (lost connection, pool timeout, ...).
    Database,
}

impl FailureKind {
    /// Every kind, in declaration order.
    pub const ALL: [FailureKind; 6] = [
        FailureKind::Timeout,
        FailureKind::Unavailable,
        FailureKind::Http5xx,
        FailureKind::Tls,
        FailureKind::Protocol,
        FailureKind::Database,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::Unavailable => "unavailable",
            FailureKind::Http5xx => "http_5xx",
            FailureKind::Tls => "tls",
            FailureKind::Protocol => "protocol",
            FailureKind::Database => "database",
        }
    }
}

/// A failure of the service behind a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendFailure {
    /// Which backend, when the tool knows better than its domain (an upstream
    /// MCP server's name, `travel-db`); `None` means the tool's domain.
    pub backend: Option<String>,
    /// How it failed.
    pub kind: FailureKind,
}
