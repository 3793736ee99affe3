//! Tasks through `toolgate serve` as a user starts it, with an upstream that supports them:
//! the official Python SDK server `tests/python/task_upstream.py` (a child process) lists
//! `slow_report` with `execution.taskSupport: "optional"` and `hold_report` with
//! `"required"`. At 2025-11-25 (by hand, JSON-RPC over HTTP) a task of the upstream's tool
//! is created, polled to completion and read; another is cancelled, and the upstream's call
//! ends (its marker file). `[tasks] per_owner = 1` refuses a second task of the same key
//! while the first is held, and `toolgate check` refuses out-of-bounds and unknown keys.
//! The same upstream over streamable HTTP has its marks read from its event stream, and from
//! its plain JSON listing when it answers without one.
//!
//! Needs `TOOLGATE_PYTHON` with `mcp` 2.x; skips without it unless
//! `TOOLGATE_REQUIRE_INTEROP=1`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_test_support::mcp::Reply;

use crate::common::key_of;
use crate::serve::launch;

pub(crate) const UPSTREAM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/task_upstream.py");
const REVISION: &str = "2025-11-25";

/// A `[[upstreams]]` entry for the task upstream, named `reports`, its markers in `markers`.
pub(crate) fn upstream_entry(python: &str, markers: &Path) -> String {
    format!(
        "[[upstreams]]\nname = \"reports\"\ncommand = [{python:?}, {UPSTREAM:?}]\nenv = {{ MARKER_DIR = {:?} }}\n\
         read_only_tools = [\"slow_report\", \"echo_word\"]\nconnect_timeout_ms = 60000\n",
        markers.display().to_string()
    )
}

/// A client of one 2025-11-25 session.
struct Session {
    client: reqwest::Client,
    endpoint: String,
    key: String,
    id: Option<String>,
    next: u64,
}

impl Session {
    async fn open(endpoint: &str, key: &str) -> (Self, Value) {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
        let mut session =
            Self { client, endpoint: endpoint.to_owned(), key: key.to_owned(), id: None, next: 0 };
        let init = session
            .call(
                "initialize",
                json!({"protocolVersion": REVISION, "capabilities": {}, "clientInfo": {"name": "tasks-test", "version": "0"}}),
            )
            .await;
        session.notify("notifications/initialized").await;
        (session, init)
    }

    async fn post(&self, body: &Value) -> Reply {
        let mut request = self
            .client
            .post(&self.endpoint)
            .bearer_auth(&self.key)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", REVISION)
            .json(body);
        if let Some(id) = &self.id {
            request = request.header("Mcp-Session-Id", id);
        }
        Reply::read(request.send().await.unwrap()).await.unwrap()
    }

    /// A request; its whole JSON-RPC answer (`result` or `error`).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let reply =
            self.post(&json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})).await;
        assert_eq!(reply.status, 200, "{method}: {}", reply.text);
        if self.id.is_none() {
            self.id = reply.session();
        }
        reply.answer().unwrap_or_else(|| panic!("{method}: no answer in {}", reply.text))
    }

    async fn notify(&self, method: &str) {
        let reply = self.post(&json!({"jsonrpc": "2.0", "method": method})).await;
        assert_eq!(reply.status, 202, "{method}: {}", reply.text);
    }

    /// `tools/call` of `name` asked for as a task.
    async fn task(&mut self, name: &str, arguments: Value) -> Value {
        self.call("tools/call", json!({"name": name, "arguments": arguments, "task": {"ttl": 60_000}})).await
    }

    /// `tasks/get` until the task is no longer `working` (at most 20 s); its last state.
    async fn poll(&mut self, id: &str) -> Value {
        for _ in 0..200 {
            let state = self.call("tasks/get", json!({"taskId": id})).await;
            if state["result"]["status"] != "working" {
                return state["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("task {id} still working after 20 s");
    }
}

fn toolgate_check(config: &Path, db: &Path) -> (i32, String) {
    let out = crate::common::toolgate()
        .arg("--db")
        .arg(format!("sqlite:{}", db.display()))
        .args(["--config", config.to_str().unwrap(), "check"])
        .env_remove("TOOLGATE_DATABASE_URL")
        .env_remove("TOOLGATE_CONFIG")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `toolgate check` names each bad `[tasks]` key; good limits pass.
#[test]
fn check_refuses_bad_task_limits_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = (dir.path().join("toolgate.toml"), dir.path().join("t.db"));
    for (toml, expect) in [
        ("[tasks]\nper_owner = 0\n", "[tasks] per_owner = 0: must be from 1 to 100000"),
        ("[tasks]\npoll_interval_ms = 1\n", "[tasks] poll_interval_ms = 1: must be from 10"),
        ("[tasks]\nretention_s = 31536000\n", "[tasks] retention_s = 31536000: must be from 1 to 604800"),
        ("[tasks]\nper_owner = 64\ntotal = 8\n", "per_owner = 64 is more than total = 8"),
        ("[tasks]\nper_user = 2\n", "unknown field `per_user`"),
    ] {
        std::fs::write(&config, toml).unwrap();
        let (code, out) = toolgate_check(&config, &db);
        assert_eq!(code, 1, "check passed {toml}: {out}");
        assert!(out.contains(expect), "{toml}: {out}");
    }
    std::fs::write(
        &config,
        "[tasks]\nper_owner = 4\ntotal = 64\nretention_s = 600\npoll_interval_ms = 250\n",
    )
    .unwrap();
    let (code, out) = toolgate_check(&config, &db);
    assert_eq!(code, 0, "{out}");
}

#[tokio::test]
async fn an_upstream_tool_that_supports_tasks_runs_as_a_toolgate_task() {
    let Some(python) = toolgate_test_support::python::with("from mcp.server.mcpserver import MCPServer")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    let tasks = "[tasks]\nper_owner = 1\npoll_interval_ms = 200\n";
    std::fs::write(&config, format!("{tasks}{}", upstream_entry(&python, dir.path()))).unwrap();
    let demo = launch(&["--expose", "direct"], &[("TOOLGATE_CONFIG", config.to_str().unwrap())], None);
    let endpoint = format!("{}/mcp", demo.url);
    let (mut alice, init) = Session::open(&endpoint, &key_of(&demo.banner, "alice")).await;
    assert!(init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object(), "{init}");

    // The upstream's marks come through: both task tools may run as tasks, the plain one not.
    let list = alice.call("tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let support = |name: &str| {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name} in {list}"));
        tool["execution"]["taskSupport"].as_str().map(str::to_owned)
    };
    assert_eq!(support("reports__slow_report").as_deref(), Some("optional"));
    assert_eq!(support("reports__hold_report").as_deref(), Some("optional"));
    assert_eq!(support("reports__echo_word"), None);

    // Bob's task holds his one place while it works; alice's are her own.
    let (mut bob, _) = Session::open(&endpoint, &key_of(&demo.banner, "bob")).await;
    let held = bob.task("reports__hold_report", json!({"label": "bob"})).await;
    let held_id =
        held["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {held}")).to_owned();
    assert_eq!(held["result"]["task"]["status"], "working", "{held}");
    assert_eq!(held["result"]["task"]["pollInterval"], 200, "[tasks] poll_interval_ms: {held}");

    // A task created, polled to completion, its result the upstream's.
    let created = alice.task("reports__slow_report", json!({"city": "Oslo", "ms": 400})).await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    let done = alice.poll(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = alice.call("tasks/result", json!({"taskId": id})).await;
    let envelope = &result["result"]["structuredContent"];
    assert_eq!(envelope["success"], true, "{result}");
    assert_eq!(envelope["result"]["report"], "the report on Oslo", "{result}");
    assert_eq!(envelope["result"]["took_ms"], 400, "{result}");

    // per_owner = 1: bob's second task is refused while his first is held.
    let refused = bob.task("reports__slow_report", json!({"city": "Bergen"})).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("already holds 1 tasks"), "{message}");

    // Cancelled: the task says so, and the upstream's call ends (its marker).
    // The upstream has the call before it is cancelled (a cancel sent earlier reaches nothing).
    let started = dir.path().join("started-bob");
    toolgate_test_support::eventually(Duration::from_secs(20), "the upstream's call started", || async {
        started.exists()
    })
    .await;
    let cancelled = bob.call("tasks/cancel", json!({"taskId": held_id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(bob.poll(&held_id).await["status"], "cancelled");
    let marker = dir.path().join("cancelled-bob");
    toolgate_test_support::eventually(
        Duration::from_secs(10),
        "the upstream's call is cancelled",
        || async { marker.exists() },
    )
    .await;
    let gone = bob.call("tasks/result", json!({"taskId": held_id})).await;
    assert_eq!(gone["error"]["code"], -32800, "{gone}");

    // A call that asks for no task is the plain call.
    let plain = alice
        .call("tools/call", json!({"name": "reports__slow_report", "arguments": {"city": "Rome", "ms": 0}}))
        .await;
    assert_eq!(plain["result"]["structuredContent"]["result"]["city"], "Rome", "{plain}");
}

/// The same upstream over streamable HTTP: its listing comes in an event stream, where toolgate
/// reads the marks too; a task of its tool is polled to its result, another cancelled.
#[tokio::test]
async fn an_http_upstreams_task_marks_are_read_from_its_event_stream() {
    over_http("--http", "http").await;
}

/// The same with every answer a plain JSON body, which rmcp's client parses into a `Tool`
/// without `execution`: toolgate sends the listing itself and reads the marks first.
#[tokio::test]
async fn an_http_upstreams_task_marks_are_read_from_a_plain_json_listing() {
    over_http("--http-json", "json").await;
}

/// Tasks of the HTTP upstream started with `flag`; `label` names its held call's markers.
async fn over_http(flag: &str, label: &str) {
    use tokio::io::AsyncBufReadExt;
    let Some(python) = toolgate_test_support::python::with("import uvicorn, mcp") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut upstream = tokio::process::Command::new(&python)
        .args([UPSTREAM, flag])
        .env("MARKER_DIR", dir.path())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("task_upstream.py starts");
    let mut lines = tokio::io::BufReader::new(upstream.stdout.take().unwrap()).lines();
    let port = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(port) = line.strip_prefix("listening ") {
                return port.trim().to_owned();
            }
        }
        panic!("task_upstream.py ended without listening");
    })
    .await
    .expect("task_upstream.py listens within 60 s");
    let config = dir.path().join("toolgate.toml");
    std::fs::write(
        &config,
        format!("[[upstreams]]\nname = \"reports\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nconnect_timeout_ms = 60000\n"),
    )
    .unwrap();
    let demo = launch(&["--expose", "direct"], &[("TOOLGATE_CONFIG", config.to_str().unwrap())], None);
    let (mut alice, _) = Session::open(&format!("{}/mcp", demo.url), &key_of(&demo.banner, "alice")).await;
    let list = alice.call("tools/list", json!({})).await;
    let mut marked: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["execution"]["taskSupport"] == "optional")
        .filter_map(|t| t["name"].as_str())
        .filter(|name| name.starts_with("reports__"))
        .collect();
    marked.sort_unstable();
    assert_eq!(marked, ["reports__hold_report", "reports__slow_report"], "{list}");

    let created = alice.task("reports__slow_report", json!({"city": "Bergen", "ms": 200})).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    assert_eq!(alice.poll(&id).await["status"], "completed");
    let result = alice.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["structuredContent"]["result"]["report"], "the report on Bergen", "{result}");

    let held = alice.task("reports__hold_report", json!({"label": label})).await;
    let held_id =
        held["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {held}")).to_owned();
    // The upstream has the call before it is cancelled (a cancel sent earlier reaches nothing).
    let started = dir.path().join(format!("started-{label}"));
    toolgate_test_support::eventually(Duration::from_secs(20), "the upstream's call started", || async {
        started.exists()
    })
    .await;
    let cancelled = alice.call("tasks/cancel", json!({"taskId": held_id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let marker = dir.path().join(format!("cancelled-{label}"));
    toolgate_test_support::eventually(
        Duration::from_secs(10),
        "the upstream's call is cancelled",
        || async { marker.exists() },
    )
    .await;
}
