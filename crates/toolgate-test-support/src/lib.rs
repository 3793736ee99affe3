//! What the workspace's integration tests share, written once so that every
//! crate gates, spawns and speaks to servers the same way.
//!
//! * [`gate`]: the skip-or-require rule behind every optional outside tool
//!   (`TOOLGATE_REQUIRE_*=1` turns a skip into a failure).
//! * [`pg`], [`redis`]: the machine's databases from `TOOLGATE_TEST_*_URL`,
//!   a SQLite file or PostgreSQL per test ([`pg::Backend`]), and a throwaway
//!   PostgreSQL server for tests that stop or restart it.
//! * [`python`], [`browser`]: the MCP Python SDK and Chromium + playwright-core.
//! * [`mcp`]: a minimal JSON-RPC-over-streamable-HTTP client (raw, so tests see
//!   status codes, headers and SSE as a client would).
//! * [`process`]: workspace binaries and servers as child processes, killed on drop.
//! * [`tls`]: a test CA and a server certificate it signed (rcgen).
//! * [`oidc`]: a real OpenID provider (`oidc-provider`, npm) for end-to-end sign-in.
//! * [`idp`]: an identity provider's discovery and JWKS, and tokens signed with its key.
//! * [`json`]: proptest strategies for any JSON a model may send.

pub mod browser;
pub mod gate;
pub mod idp;
pub mod json;
pub mod mcp;
pub mod oidc;
pub mod pg;
pub mod process;
pub mod python;
pub mod redis;
pub mod tls;

use std::time::{Duration, Instant};

/// A name no other test, run or concurrent test binary uses (users,
/// Redis prefixes): the machine's PostgreSQL and Redis are shared.
pub fn unique(label: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{label}-{}-{nanos:x}-{n}", std::process::id())
}

/// Wait until `check` holds, polling every 50 ms; panic naming `what` after `within`.
pub async fn eventually(within: Duration, what: &str, mut check: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < within, "not within {within:?}: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The workspace root (paths in `TOOLGATE_*` variables are relative to it).
pub fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
