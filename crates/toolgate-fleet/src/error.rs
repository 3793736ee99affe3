//! Errors of the shared stores.

/// What went wrong talking to a shared store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database answered with an error or could not be reached.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// The pool could not be made, or the migrations not applied.
    #[error(transparent)]
    Db(#[from] toolgate_db::Error),
    /// The URL names neither SQLite nor PostgreSQL.
    #[error("the database URL must start with sqlite: or postgres://")]
    UnsupportedUrl,
    /// The Redis URL does not parse.
    #[error("the Redis URL is not valid: {0}")]
    RedisUrl(String),
    /// A query parameter is not acceptable (e.g. `since` is not a time).
    #[error("{0}")]
    InvalidQuery(String),
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
