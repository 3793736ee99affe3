//! The machine's Redis for tests: `TOOLGATE_TEST_REDIS_URL`, required under
//! `TOOLGATE_REQUIRE_REDIS=1`.

/// The Redis URL, or `None` after saying the test skipped.
pub fn url() -> Option<String> {
    crate::gate::url("TOOLGATE_TEST_REDIS_URL", REQUIRE)
}

/// The flag that turns a missing Redis into a failure.
pub const REQUIRE: &str = "TOOLGATE_REQUIRE_REDIS";
