//! Integration tests of the shared stores with a real gateway: rate limits
//! counted in memory and in the machine's Redis (`TOOLGATE_TEST_REDIS_URL`),
//! the audit trail on a SQLite file and on PostgreSQL (`TOOLGATE_TEST_PG_URL`).
//! Without those variables the Redis / PostgreSQL cases say they skipped,
//! unless `TOOLGATE_REQUIRE_REDIS=1` / `TOOLGATE_REQUIRE_PG=1`.

mod audit;
mod common;
mod outage;
mod ratelimit;
