//! Errors of the store and how they reach the model: opaque messages plus a
//! log line, never SQL text or driver details.

use toolgate_core::{ErrorCode, FailureKind, ToolError};

/// What went wrong in the travel store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Connecting or migrating failed (the message names the cause, never a password).
    #[error(transparent)]
    Connect(#[from] toolgate_db::Error),
    /// The database could not be reached or answered with an error.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// The database failed at or after the COMMIT of a write: the write may
    /// or may not have been stored.
    #[error("outcome unknown: {0}")]
    OutcomeUnknown(#[source] sqlx::Error),
    /// A write did not do what it had to (e.g. a row changed under it); it was rolled back.
    #[error("inconsistent write: {0}")]
    Inconsistent(&'static str),
}

/// `Result` with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Whether a database error means "the database is not reachable right now"
/// (connection lost, pool wait timed out, server shutting down, lock
/// contention, serialization failure) rather than a bug or a constraint.
pub(crate) fn is_transient(error: &sqlx::Error) -> bool {
    toolgate_db::classify(error).is_transient()
}

impl toolgate_db::Classify for StoreError {
    fn database_error(&self) -> Option<&sqlx::Error> {
        match self {
            StoreError::Database(e) => Some(e),
            StoreError::Connect(e) => e.database_error(),
            StoreError::OutcomeUnknown(e) => Some(e),
            StoreError::Inconsistent(_) => None,
        }
    }

    fn class(&self) -> toolgate_db::ErrorClass {
        match self {
            StoreError::Connect(e) => e.class(),
            // Never rerun on a fresh connection: the write may have been stored.
            StoreError::OutcomeUnknown(_) => toolgate_db::ErrorClass::Permanent,
            other => other.database_error().map_or(toolgate_db::ErrorClass::Permanent, toolgate_db::classify),
        }
    }
}

/// Turn a database error into the model-facing error: `UNAVAILABLE` when the
/// database is unreachable or busy, `INTERNAL_ERROR` otherwise. The message
/// names the operation, never the SQL; the details go to the log.
pub(crate) fn db_error(operation: &str, error: &sqlx::Error) -> ToolError {
    tracing::error!(target: "toolgate_travel::store", operation, error = %error, "travel store error");
    let error = if is_transient(error) {
        ToolError::new(
            ErrorCode::Unavailable,
            format!(
                "the travel database is not reachable right now ({operation} did not complete and nothing was \
                 changed); try again in a moment"
            ),
        )
    } else {
        ToolError::new(
            ErrorCode::InternalError,
            format!(
                "the travel database could not complete {operation}; the call did not take effect. Report it if it persists."
            ),
        )
    };
    error.backend_failure_of(DATABASE, FailureKind::Database)
}

/// The travel database's name in `toolgate_backend_errors_total`.
const DATABASE: &str = "travel-db";

impl StoreError {
    /// The model-facing error for this store error, logged once.
    pub(crate) fn to_tool_error(&self, operation: &str) -> ToolError {
        match self {
            StoreError::Database(e) => db_error(operation, e),
            StoreError::OutcomeUnknown(e) => {
                tracing::error!(target: "toolgate_travel::store", operation, error = %e, "travel store failed at or after commit");
                ToolError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "the travel database stopped answering while {operation} was being committed, so it may or \
                         may not have been saved. Repeating the identical call is safe: it creates nothing new, and \
                         answers the saved record if there is one"
                    ),
                )
                .with_details(serde_json::json!({"outcome": "unknown", "safe_to_repeat": true}))
                .backend_failure_of(DATABASE, FailureKind::Database)
                // Not repeated by the gateway at once: the repeat should come
                // after the creating call's moment (see `write::submit::JUST_WRITTEN`).
                .transient(false)
            }
            StoreError::Inconsistent(why) => {
                tracing::error!(target: "toolgate_travel::store", operation, error = why, "travel store write rolled back");
                ToolError::new(
                    ErrorCode::ExecutionError,
                    format!(
                        "{operation} was rolled back because the record changed while it was written; try again"
                    ),
                )
                .transient(true)
            }
            other => {
                tracing::error!(target: "toolgate_travel::store", operation, error = %other, "travel store error");
                ToolError::new(
                    ErrorCode::Unavailable,
                    format!("the travel database is not available ({operation})"),
                )
                .backend_failure_of(DATABASE, FailureKind::Database)
            }
        }
    }
}
