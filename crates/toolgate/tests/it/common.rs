//! What the toolgate binary tests share: `toolgate serve` started as a user
//! starts it (found by the address it prints), the keys of its banner, and
//! JSON-RPC calls to it.

use std::process::Command;

use serde_json::Value;
use toolgate_test_support::mcp;
use toolgate_test_support::process::Running;

/// The binary under test.
pub(crate) fn toolgate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
}

/// Spawn a `toolgate … serve` command; the process, its base URL (without
/// `/mcp`) and the banner printed up to the address.
pub(crate) fn serving(command: &mut Command) -> (Running, String, String) {
    let mut running = Running::spawn(command);
    let (rest, banner) = running.read_until("toolgate serving MCP at ");
    let url = rest.split("/mcp").next().unwrap().to_owned();
    (running, url, banner)
}

/// The demo key of `user` in a `serve --demo` banner.
pub(crate) fn key_of(banner: &str, user: &str) -> String {
    banner
        .lines()
        .find_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.first() == Some(&user) && cols.len() == 3).then(|| cols[2].to_owned())
        })
        .unwrap_or_else(|| panic!("no key for {user} in {banner}"))
}

/// One JSON-RPC request to an MCP endpoint; (status, session id, the answer
/// as JSON-RPC or as a JSON error body, else `null`).
pub(crate) async fn rpc(
    client: &reqwest::Client,
    endpoint: &str,
    key: Option<&str>,
    session: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, Value) {
    let reply = mcp::post(client, endpoint, key, session, body).await.unwrap();
    (reply.status, reply.session(), reply.answer().unwrap_or(Value::Null))
}
