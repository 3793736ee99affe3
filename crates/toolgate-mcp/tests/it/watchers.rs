//! What a session starts ends with it: the direct-mode `list_changed`
//! watcher is tied to the session, not to the next change of the tool list.

use std::time::{Duration, Instant};

use reqwest::header::AUTHORIZATION;
use toolgate_mcp::{Exposure, HttpConfig};
use toolgate_test_support::mcp::PROTOCOL;

use crate::common::TestServer;

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current().metrics().num_alive_tasks()
}

/// The runtime's task count once it stops moving (idle connections and
/// timers settle), or the last count seen when `within` is over.
async fn settled_tasks(at_most: usize, within: Duration) -> usize {
    let start = Instant::now();
    loop {
        let now = alive_tasks();
        if now <= at_most || start.elapsed() > within {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_closed_sessions_leave_no_task_behind() {
    let server = TestServer::start(Exposure::Direct, HttpConfig::default()).await;
    let close = |session: String| {
        server
            .client
            .delete(server.url("/mcp"))
            .header(AUTHORIZATION, format!("Bearer {}", server.member))
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", PROTOCOL)
            .send()
    };
    // One session first, so lazily started parts (pools, timers) are counted
    // in the baseline.
    let (session, _) = server.open_session(&server.member).await;
    assert!(close(session).await.unwrap().status().is_success());
    let baseline = settled_tasks(0, Duration::from_millis(500)).await;

    for _ in 0..1_000 {
        let (session, _) = server.open_session(&server.member).await;
        let closed = close(session).await.unwrap();
        assert!(closed.status().is_success(), "{}", closed.status());
    }
    // A leaked watcher per session would leave about a thousand tasks; a
    // few may still be winding down (connections the client keeps idle).
    let after = settled_tasks(baseline + 8, Duration::from_secs(10)).await;
    assert!(after <= baseline + 8, "{after} tasks alive after 1,000 closed sessions, {baseline} before");
    server.stop().await;
}
