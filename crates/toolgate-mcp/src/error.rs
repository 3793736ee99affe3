//! The crate's error type.

/// What can go wrong when setting up or running a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The key database answered with an error.
    #[error("key store database error: {0}")]
    Database(#[from] sqlx::Error),
    /// Connecting to the key database or applying its migrations failed
    /// (the message names the cause, never a password).
    #[error("key store: {0}")]
    Store(#[from] toolgate_db::Error),
    /// The database URL names no supported backend (the URL is not repeated:
    /// it may hold a password).
    #[error("unsupported database URL: use `sqlite:<path>` or `postgres://...`")]
    UnsupportedUrl,
    /// An argument was refused (e.g. an empty user id).
    #[error("{0}")]
    Invalid(String),
    /// A socket or stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The MCP session could not start or ended with an error.
    #[error("MCP session error: {0}")]
    Mcp(String),
}

/// A result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
