//! The error classifier every store uses: is a database error worth trying
//! again (the connection died, the server is away or busy) or permanent (a
//! constraint, a bug)?

use std::io::ErrorKind;

/// What a database error means for the call that got it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The pooled connection was dead (the server restarted or ended the
    /// session): the statement did not run on it. A fresh connection may
    /// well succeed, so [`on_pool!`](crate::on_pool) tries again at once.
    Stale,
    /// The database cannot be reached or is overloaded right now (refused,
    /// pool wait timed out, shutting down, lock contention, serialization
    /// failure): UNAVAILABLE, worth trying again later.
    Unavailable,
    /// Anything else (constraint violation, bad SQL, decode error): trying
    /// again unchanged will fail the same way.
    Permanent,
}

impl ErrorClass {
    /// Whether trying again unchanged may succeed.
    pub fn is_transient(self) -> bool {
        !matches!(self, ErrorClass::Permanent)
    }
}

/// Classify a sqlx error.
pub fn classify(error: &sqlx::Error) -> ErrorClass {
    match error {
        sqlx::Error::Io(io) => match io.kind() {
            // The peer closed or reset a connection that was open: a pooled
            // connection outlived its server process.
            ErrorKind::BrokenPipe
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::UnexpectedEof
            | ErrorKind::NotConnected => ErrorClass::Stale,
            _ => ErrorClass::Unavailable,
        },
        sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => ErrorClass::Unavailable,
        sqlx::Error::Database(db) => classify_code(db.code().as_deref().unwrap_or_default()),
        _ => ErrorClass::Permanent,
    }
}

/// Classify a PostgreSQL SQLSTATE or a SQLite result code.
pub fn classify_code(code: &str) -> ErrorClass {
    match code {
        // admin_shutdown, crash_shutdown: the server ended this session
        // (restart, failover); whatever was in flight was rolled back.
        "57P01" | "57P02" => ErrorClass::Stale,
        // serialization failure, deadlock
        "40001" | "40P01" => ErrorClass::Unavailable,
        // 08 connection exception, 53 insufficient resources, 57 operator
        // intervention (cannot connect now, query cancelled)
        c if c.starts_with("08") || c.starts_with("53") || c.starts_with("57") => ErrorClass::Unavailable,
        // SQLite: 5 SQLITE_BUSY, 6 SQLITE_LOCKED (and their extended codes)
        c if c.parse::<i64>().is_ok_and(|n| matches!(n & 0xff, 5 | 6)) => ErrorClass::Unavailable,
        _ => ErrorClass::Permanent,
    }
}

/// An error type that may carry a database error; what [`on_pool!`](crate::on_pool)
/// reads to decide whether to try again on a fresh connection.
pub trait Classify {
    /// The database error inside, if any.
    fn database_error(&self) -> Option<&sqlx::Error>;

    /// The class of this error ([`ErrorClass::Permanent`] when it is not a database error).
    fn class(&self) -> ErrorClass {
        self.database_error().map_or(ErrorClass::Permanent, classify)
    }
}

impl Classify for sqlx::Error {
    fn database_error(&self) -> Option<&sqlx::Error> {
        Some(self)
    }
}

impl Classify for sqlx::migrate::MigrateError {
    fn database_error(&self) -> Option<&sqlx::Error> {
        match self {
            sqlx::migrate::MigrateError::Execute(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_classified() {
        for (code, class) in [
            ("57P01", ErrorClass::Stale),
            ("57P02", ErrorClass::Stale),
            ("57P03", ErrorClass::Unavailable),
            ("08006", ErrorClass::Unavailable),
            ("53300", ErrorClass::Unavailable),
            ("40001", ErrorClass::Unavailable),
            ("5", ErrorClass::Unavailable),
            ("517", ErrorClass::Unavailable),
            ("23505", ErrorClass::Permanent),
            ("2067", ErrorClass::Permanent),
            ("", ErrorClass::Permanent),
        ] {
            assert_eq!(classify_code(code), class, "{code}");
        }
    }

    #[test]
    fn io_errors_of_a_closed_connection_are_stale() {
        let closed = sqlx::Error::Io(std::io::Error::from(ErrorKind::UnexpectedEof));
        assert_eq!(classify(&closed), ErrorClass::Stale);
        let refused = sqlx::Error::Io(std::io::Error::from(ErrorKind::ConnectionRefused));
        assert_eq!(classify(&refused), ErrorClass::Unavailable);
        assert!(!classify(&sqlx::Error::RowNotFound).is_transient());
        assert!(classify(&sqlx::Error::PoolTimedOut).is_transient());
    }
}
