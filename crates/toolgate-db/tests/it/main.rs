//! Integration tests of the toolgate-db crate against real databases: SQLite files,
//! the machine's PostgreSQL, and a throwaway PostgreSQL that the tests start,
//! restart and stop.

mod connect;
mod restart;
mod sqlite;
mod unflushed;
