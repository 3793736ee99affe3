//! Tasks (the 2026-07-28 tasks extension, `io.modelcontextprotocol/tasks`):
//! a `tools/call` of a tool that can run long, from a client that declared
//! the extension, answers at once with a task handle; the call runs on, and
//! the client polls `tasks/get` for its state and result, or ends it with
//! `tasks/cancel`.
//!
//! This module is the store ([`Tasks`]): who owns each task (the principal
//! that created it; anyone else is told there is no such task), its state,
//! and the bounds (tasks per owner, tasks in all, how long one is kept).
//! [`run`] holds the MCP side: which calls become tasks, and the answers of
//! the `tasks/*` methods.
//!
//! Tasks live in the server's memory: a restart forgets them (their calls
//! with them), as it ends a session's calls.

mod legacy;
mod run;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::JsonObject;
use tokio_util::sync::CancellationToken;

pub(crate) use legacy::{amend as amend_legacy, amend_events, answer as answer_legacy, legacy as is_legacy};
pub use run::LONG_RUNNING_TAG;
pub(crate) use run::{cancel, get, start, update, wanted};

/// Capabilities for `initialize`, i.e. a revision before 2026-07-28: the
/// tasks extension is not one of its, so it is not advertised there.
pub(crate) fn legacy_capabilities(capabilities: &mut rmcp::model::ServerCapabilities) {
    if let Some(extensions) = capabilities.extensions.as_mut() {
        extensions.remove(rmcp::model::TASKS_EXTENSION_ID);
        if extensions.is_empty() {
            capabilities.extensions = None;
        }
    }
}

/// How many tasks are kept and for how long ([`crate::McpServer::with_task_limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLimits {
    /// The most tasks one principal (API key, token subject) may hold at a
    /// time, running or finished and not yet expired. Default 32.
    pub per_owner: usize,
    /// The most tasks the server holds in all. Default 1,024.
    pub total: usize,
    /// How long a task is kept after it was created (its `ttlMs`); a task
    /// still running then is cancelled. Default 1 hour.
    pub retention: Duration,
    /// The polling interval suggested to clients (`pollIntervalMs`). Default 500 ms.
    pub poll_interval: Duration,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            per_owner: 32,
            total: 1024,
            retention: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(500),
        }
    }
}

/// Where a task is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum State {
    Working,
    /// The call's result (a `CallToolResult`, `isError` included).
    Completed(JsonObject),
    /// A JSON-RPC error ended the call.
    Failed(JsonObject),
    Cancelled,
}

impl State {
    fn is_terminal(&self) -> bool {
        !matches!(self, Self::Working)
    }
}

/// What a client is told about a task.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) state: State,
    pub(crate) created: SystemTime,
    pub(crate) updated: SystemTime,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
}

struct Entry {
    owner: String,
    tool: String,
    state: State,
    created: SystemTime,
    updated: SystemTime,
    expires: Instant,
    cancel: CancellationToken,
}

/// Why a task could not be created or found, in words for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The owner holds `per_owner` tasks already.
    OwnerFull(usize),
    /// The server holds `total` tasks already.
    ServerFull(usize),
    /// No task of this owner has this id (or it expired).
    NotFound,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OwnerFull(n) => write!(
                f,
                "this caller already holds {n} tasks, the most allowed; wait for one to finish and expire, or cancel one with tasks/cancel"
            ),
            Self::ServerFull(n) => {
                write!(f, "the server holds {n} tasks, the most it keeps; try again later")
            }
            Self::NotFound => {
                write!(f, "no task with this id: it was never created by this caller, or it has expired")
            }
        }
    }
}

/// The tasks of one server, shared by all its sessions (2026-07-28 requests
/// have none).
pub(crate) struct Tasks {
    limits: TaskLimits,
    entries: Mutex<HashMap<String, Entry>>,
    /// Ticks whenever a task ends (for `tasks/result`, which waits).
    ended: tokio::sync::watch::Sender<()>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl Tasks {
    pub(crate) fn new(limits: TaskLimits) -> Self {
        Self { limits, entries: Mutex::default(), ended: tokio::sync::watch::channel(()).0 }
    }

    /// Ticks whenever a task ends.
    pub(crate) fn ended(&self) -> tokio::sync::watch::Receiver<()> {
        self.ended.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drop expired tasks, cancelling the calls of those still running.
    fn sweep(entries: &mut HashMap<String, Entry>, now: Instant) {
        entries.retain(|_, entry| {
            let keep = entry.expires > now;
            if !keep {
                entry.cancel.cancel();
            }
            keep
        });
    }

    /// A new working task of `owner` for a call of `tool`: its snapshot and
    /// the token that cancels its call.
    pub(crate) fn create(&self, owner: &str, tool: &str) -> Result<(Snapshot, CancellationToken), Refused> {
        let now = Instant::now();
        let mut entries = self.lock();
        Self::sweep(&mut entries, now);
        if entries.len() >= self.limits.total {
            return Err(Refused::ServerFull(self.limits.total));
        }
        if entries.values().filter(|e| e.owner == owner).count() >= self.limits.per_owner {
            return Err(Refused::OwnerFull(self.limits.per_owner));
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        let created = SystemTime::now();
        let cancel = CancellationToken::new();
        let entry = Entry {
            owner: owner.to_owned(),
            tool: tool.to_owned(),
            state: State::Working,
            created,
            updated: created,
            expires: now + self.limits.retention,
            cancel: cancel.clone(),
        };
        let snapshot = self.snapshot(&id, &entry);
        entries.insert(id, entry);
        Ok((snapshot, cancel))
    }

    fn snapshot(&self, id: &str, entry: &Entry) -> Snapshot {
        Snapshot {
            id: id.to_owned(),
            tool: entry.tool.clone(),
            state: entry.state.clone(),
            created: entry.created,
            updated: entry.updated,
            ttl: self.limits.retention,
            poll_interval: self.limits.poll_interval,
        }
    }

    /// The call of task `id` ended with `state`; a task cancelled (or
    /// expired) meanwhile stays as it is.
    pub(crate) fn finish(&self, id: &str, state: State) {
        let mut entries = self.lock();
        if let Some(entry) = entries.get_mut(id)
            && !entry.state.is_terminal()
        {
            entry.state = state;
            entry.updated = SystemTime::now();
            self.ended.send_replace(());
        }
    }

    /// Task `id` as `owner` sees it.
    pub(crate) fn get(&self, owner: &str, id: &str) -> Result<Snapshot, Refused> {
        let mut entries = self.lock();
        Self::sweep(&mut entries, Instant::now());
        match entries.get(id) {
            Some(entry) if entry.owner == owner => Ok(self.snapshot(id, entry)),
            _ => Err(Refused::NotFound),
        }
    }

    /// Cancel `owner`'s task `id`: a working task's call is dropped (the
    /// gateway's cancellation) and the task says `cancelled`; a finished one
    /// keeps its outcome. The task as it is now.
    pub(crate) fn cancel(&self, owner: &str, id: &str) -> Result<Snapshot, Refused> {
        let mut entries = self.lock();
        Self::sweep(&mut entries, Instant::now());
        match entries.get_mut(id) {
            Some(entry) if entry.owner == owner => {
                if !entry.state.is_terminal() {
                    entry.cancel.cancel();
                    entry.state = State::Cancelled;
                    entry.updated = SystemTime::now();
                    self.ended.send_replace(());
                }
                Ok(self.snapshot(id, entry))
            }
            _ => Err(Refused::NotFound),
        }
    }

    /// The tasks `owner` holds, oldest first.
    pub(crate) fn list(&self, owner: &str) -> Vec<Snapshot> {
        let mut entries = self.lock();
        Self::sweep(&mut entries, Instant::now());
        let mut mine: Vec<Snapshot> =
            entries.iter().filter(|(_, e)| e.owner == owner).map(|(id, e)| self.snapshot(id, e)).collect();
        mine.sort_by_key(|s| s.created);
        mine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_owner: usize, total: usize, retention_ms: u64) -> TaskLimits {
        TaskLimits {
            per_owner,
            total,
            retention: Duration::from_millis(retention_ms),
            ..TaskLimits::default()
        }
    }

    #[test]
    fn a_task_is_seen_only_by_its_owner() {
        let tasks = Tasks::new(TaskLimits::default());
        let (task, _) = tasks.create("key-a", "plan").unwrap();
        assert_eq!(tasks.get("key-a", &task.id).unwrap().state, State::Working);
        assert_eq!(tasks.get("key-b", &task.id), Err(Refused::NotFound));
        assert_eq!(tasks.cancel("key-b", &task.id), Err(Refused::NotFound));
        assert!(tasks.list("key-b").is_empty());
        assert_eq!(tasks.list("key-a").len(), 1);
    }

    #[test]
    fn cancelling_drops_the_call_and_a_late_result_does_not_undo_it() {
        let tasks = Tasks::new(TaskLimits::default());
        let (task, token) = tasks.create("k", "plan").unwrap();
        assert_eq!(tasks.cancel("k", &task.id).unwrap().state, State::Cancelled);
        assert!(token.is_cancelled());
        tasks.finish(&task.id, State::Completed(JsonObject::new()));
        assert_eq!(tasks.get("k", &task.id).unwrap().state, State::Cancelled);
    }

    #[test]
    fn a_finished_task_keeps_its_outcome_when_cancelled() {
        let tasks = Tasks::new(TaskLimits::default());
        let (task, token) = tasks.create("k", "plan").unwrap();
        tasks.finish(&task.id, State::Completed(JsonObject::new()));
        assert_eq!(tasks.cancel("k", &task.id).unwrap().state, State::Completed(JsonObject::new()));
        assert!(!token.is_cancelled());
    }

    #[test]
    fn tasks_are_bounded_per_owner_and_in_all() {
        let tasks = Tasks::new(limits(2, 3, 60_000));
        tasks.create("a", "t").unwrap();
        tasks.create("a", "t").unwrap();
        assert_eq!(tasks.create("a", "t").unwrap_err(), Refused::OwnerFull(2));
        tasks.create("b", "t").unwrap();
        assert_eq!(tasks.create("c", "t").unwrap_err(), Refused::ServerFull(3));
    }

    #[test]
    fn an_expired_task_is_gone_and_its_call_cancelled() {
        let tasks = Tasks::new(limits(1, 10, 30));
        let (task, token) = tasks.create("a", "t").unwrap();
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(tasks.get("a", &task.id), Err(Refused::NotFound));
        assert!(token.is_cancelled());
        // Its place is free again.
        tasks.create("a", "t").unwrap();
    }
}
