//! The errors of connecting and migrating. Messages name the server without
//! its password, and the cause in words.

use crate::classify::{Classify, ErrorClass, classify};
use crate::config::Backend;
use crate::connect::ConnectCause;

/// What connecting, migrating or a query through [`on_pool!`](crate::on_pool) can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is neither `sqlite:` nor `postgres://` / `postgresql://`, or does not parse.
    #[error(
        "unsupported database URL {url} (expected sqlite:path, sqlite::memory: or postgres://user@host/db)"
    )]
    UnsupportedUrl {
        /// The URL without its password.
        url: String,
    },
    /// The URL names a backend this build of the crate leaves out: enable
    /// toolgate-db's cargo feature of that name (`sqlite` or `postgres`).
    #[error("{url} needs the {} backend, which this build leaves out (enable toolgate-db's `{}` feature)", backend.as_str(), backend.as_str())]
    BackendNotEnabled {
        /// The backend the URL asks for.
        backend: Backend,
        /// The URL without its password.
        url: String,
    },
    /// The first connection failed; `cause` says why in words.
    #[error("cannot connect to {target}: {cause}")]
    Connect {
        /// The server (or file), without a password.
        target: String,
        /// Why, in words an operator can act on.
        cause: ConnectCause,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The SQLite file could not be created.
    #[error("cannot create the SQLite file {path}: {source}")]
    CreateFile {
        /// The file's path.
        path: String,
        /// The operating system's error (a missing folder, no permission).
        #[source]
        source: std::io::Error,
    },
    /// Applying a crate's migrations failed.
    #[error("applying the {owner} migrations failed: {source}")]
    Migrate {
        /// The crate whose migrations failed (the `owner` of its `MigrationSet`).
        owner: &'static str,
        /// sqlx's migration error (a failed statement, a changed applied migration).
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// A query failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Classify for Error {
    fn database_error(&self) -> Option<&sqlx::Error> {
        match self {
            Error::Database(e) => Some(e),
            Error::Migrate { source, .. } => source.database_error(),
            _ => None,
        }
    }

    fn class(&self) -> ErrorClass {
        match self {
            Error::Connect { cause, .. } if cause.is_transient() => ErrorClass::Unavailable,
            other => other.database_error().map_or(ErrorClass::Permanent, classify),
        }
    }
}
