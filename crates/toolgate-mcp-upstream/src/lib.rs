//! Other MCP servers as tool sources: each upstream's tools become ordinary
//! gateway tools named `<upstream>__<tool>`, so authorization, validation,
//! limits, the envelope and the trace apply to them unchanged.
//!
//! | Item | What it is |
//! |---|---|
//! | [`UpstreamConfig`], [`Transport`], [`IdentityMode`] | one upstream: a stdio child process or a streamable HTTP endpoint, its role, read-only tools, identity mode, timeouts and backoff |
//! | [`Upstreams::start`] | connect every upstream (waiting at most each one's connect timeout), register its tools, and keep it connected |
//! | [`local_name`] | the naming rule |
//!
//! # Life cycle
//!
//! Each upstream has a supervisor task. It connects, lists the tools and
//! registers them under the source `upstream:<name>` (a tool whose name or
//! schema fails our checks is left out with a logged reason; a description
//! past 8 KiB is clipped with a note, a schema past 64 KiB is left out, and at
//! most 256 tools of one upstream are taken). It follows
//! `notifications/tools/list_changed` by listing again, which replaces the
//! registered set and makes the gateway tell its own clients. When the
//! connection ends (the child crashed, the server went away) its tools stay
//! listed and answer `UNAVAILABLE` with the reason, and the supervisor
//! reconnects (a child is spawned anew) after a pause that doubles from
//! `backoff_min` to `backoff_max`. An upstream that is down at start does
//! not stop toolgate; its tools appear once it answers.
//!
//! # Calls
//!
//! Our caller's progress token is not forwarded as is: the upstream gets a
//! token of our own connection and its progress notifications are routed to
//! the caller's progress sink, at most one per 50 ms per call (the first and
//! the latest always arrive). A call the connection lost is "not sent, try
//! again" only when nothing left toolgate; a write that may have reached the
//! upstream says its change may or may not have been applied, not retryable. When our call is dropped (the client
//! cancelled, the deadline passed) the upstream gets `notifications/cancelled`.
//! An `isError` result is `EXECUTION_ERROR` with the upstream's text;
//! `structuredContent` is the result (else the text, parsed when it is
//! JSON); image content is kept beside the result.
//!
//! # Identity
//!
//! The upstream learns who calls only as configured ([`IdentityMode`]):
//! nothing; user id, role and tenant in `_meta`; or, over HTTP, the user id
//! (and role) as headers on the POST of that caller's call only (rmcp's
//! client shares one session, so a wrapper under it sets them per request).
//! The caller's token and toolgate's API keys never leave; every other
//! header is a configured one, and an identity header can never be a
//! credential one ([`check_identity`]).
//!
//! # Tokens
//!
//! An HTTP upstream that takes tokens from the identity provider gets a
//! [`toolgate_core::TokenSource`] ([`UpstreamConfig::with_token_source`]). With
//! a token exchange, each tool call's POST carries `Authorization: Bearer`
//! with the caller's own token for that upstream, fetched before the call
//! is sent (a source that cannot give one fails the call with its error and
//! nothing is sent); the handshake, listings and the event stream carry the
//! configured headers only. With client credentials every request carries
//! toolgate's service token, renewed by the source before it expires. The
//! caller's own sign-in is never sent, and an `Authorization` in `headers`
//! beside a token source is refused ([`UpstreamConfig::check`]).
//!
//! # Example
//!
//! Upstreams are configured in code (the `toolgate` binary builds these from
//! `[[upstreams]]`) and checked before anything is spawned or connected:
//!
//! ```
//! use std::time::Duration;
//!
//! use toolgate_mcp_upstream::{IdentityMode, UpstreamConfig, local_name};
//!
//! let mut files = UpstreamConfig::stdio("files", vec!["mcp-server-files".into(), "/srv/docs".into()]);
//! files.read_only_tools = vec!["read_file".into(), "list_dir".into()];
//! files.timeout = Duration::from_secs(10);
//! assert!(files.check().is_ok());
//!
//! // Its tools reach the gateway's clients under the upstream's name:
//! assert_eq!(local_name("files", "read_file").as_deref(), Some("files__read_file"));
//!
//! // Who calls, as a header on each call's POST: fine over HTTP...
//! let mut crm = UpstreamConfig::http("crm", "https://crm.example.com/mcp");
//! crm.identity = IdentityMode::Header { user: "X-Toolgate-User".into(), role: None };
//! assert!(crm.check().is_ok());
//!
//! // ...but never in a credential header.
//! crm.identity = IdentityMode::Header { user: "Authorization".into(), role: None };
//! let refused = crm.check().unwrap_err();
//! assert!(refused.contains("crm"), "{refused}");
//! ```
//!
//! Starting them needs the servers (a child process, a URL), so this part
//! does not run here:
//!
//! ```no_run
//! # async fn start(gateway: toolgate_gateway::Gateway) {
//! use toolgate_mcp_upstream::{UpstreamConfig, Upstreams};
//!
//! let configs = vec![UpstreamConfig::http("crm", "https://crm.example.com/mcp")];
//! let upstreams = Upstreams::start(&gateway, configs).await;
//! for status in upstreams.status() {
//!     println!("{}: connected = {} {:?}", status.name, status.connected, status.reason);
//! }
//! // Keep `upstreams` alive while serving: dropping it stops the supervisors.
//! # }
//! ```
#![deny(missing_docs)]

mod config;
// Sampling, roots, logging and `resources/subscribe` are deprecated at 2026-07-28
// (SEP-2577) and live in every earlier revision, which upstreams and clients speak.
#[allow(deprecated)]
mod direct;
#[allow(deprecated)]
mod federation;
#[allow(deprecated)]
mod handler;
mod identity;
mod link;
mod listing;
mod spec;
mod supervisor;
mod surface;
mod task_support;
mod tool;

use std::sync::Arc;

use tokio::task::JoinHandle;
use toolgate_gateway::Gateway;

pub use config::{CALLER_META_KEY, IdentityMode, Transport, UpstreamConfig};
pub use federation::{Federation, Lists};
pub use identity::check_identity;
pub use spec::local_name;

use crate::link::{Link, State};

/// The running upstreams; dropping this stops them (children are killed).
#[derive(Debug)]
pub struct Upstreams {
    running: Vec<(Arc<Link>, JoinHandle<()>)>,
    federation: Federation,
}

/// One upstream's state, for status pages and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpstreamStatus {
    /// The upstream's name.
    pub name: String,
    /// Whether it is connected.
    pub connected: bool,
    /// Why not, when it is not.
    pub reason: Option<String>,
}

impl Upstreams {
    /// Start every upstream and wait until each has made its first attempt
    /// (at most its connect timeout): toolgate then starts with the tools of
    /// those that answered, and keeps trying the others.
    pub async fn start(gateway: &Gateway, configs: Vec<UpstreamConfig>) -> Self {
        let mut upstreams = Self { running: Vec::new(), federation: Federation::default() };
        upstreams.add(gateway, configs).await;
        upstreams
    }

    /// Start more upstreams beside the running ones (a configuration reloaded while
    /// serving), waiting as [`Upstreams::start`] does for each one's first attempt.
    pub async fn add(&mut self, gateway: &Gateway, configs: Vec<UpstreamConfig>) {
        let mut running = Vec::with_capacity(configs.len());
        let mut waits = Vec::with_capacity(configs.len());
        for config in configs {
            let ask_timeout = std::time::Duration::from_millis(gateway.limits().confirm_timeout_ms);
            let link = Arc::new(Link::new(&config, ask_timeout, self.federation.signals.clone()));
            self.federation.links.write().unwrap_or_else(|e| e.into_inner()).push(link.clone());
            let (tx, rx) = tokio::sync::oneshot::channel();
            let task = tokio::spawn(supervisor::supervise(config, gateway.clone(), link.clone(), tx));
            running.push((link, task));
            waits.push(rx);
        }
        for wait in waits {
            let _ = wait.await;
        }
        self.running.append(&mut running);
    }

    /// Their prompts, resources and the rest of their MCP surface, for the MCP server.
    pub fn federation(&self) -> Federation {
        self.federation.clone()
    }

    /// Names two sources share (an upstream with `prefix = false` whose tool or prompt has
    /// the name of another source's), each in a sentence that says how to fix it; empty
    /// when every name is unique. toolgate refuses to start with any.
    pub fn collisions(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut prompts: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        for (link, _) in &self.running {
            out.extend(link.collisions.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
            for prompt in link.surface().prompts {
                let local = link.local_prompt(&prompt.name);
                if local == "catalog" || local.starts_with("guide:") {
                    out.push(format!(
                        "upstream `{}`: its prompt `{local}` has the name of one of toolgate's own prompts (`catalog`, `guide:<skill>`); set `prefix = true`",
                        link.name
                    ));
                } else if let Some(other) = prompts.insert(local.clone(), link.name.clone()) {
                    out.push(format!(
                        "upstreams `{other}` and `{}` both have a prompt `{local}`; with `prefix = false` names must be unique: set `prefix = true` on one of them",
                        link.name
                    ));
                }
            }
        }
        out
    }

    /// Stop the upstream `name` (its child process ends with its supervisor) and take its
    /// tools out of the gateway; `false` when no such upstream runs.
    pub fn remove(&mut self, gateway: &Gateway, name: &str) -> bool {
        let Some(at) = self.running.iter().position(|(link, _)| link.name == name) else { return false };
        let (link, task) = self.running.remove(at);
        task.abort();
        self.federation.links.write().unwrap_or_else(|e| e.into_inner()).retain(|l| !Arc::ptr_eq(l, &link));
        link.signals.lists.send_modify(|lists| {
            lists.prompts += 1;
            lists.resources += 1;
        });
        gateway.replace_source_tools(&supervisor::source(name), Vec::new());
        gateway.set_unreachable(name, None);
        tracing::info!(upstream = name, "upstream removed");
        true
    }

    /// The names of the running upstreams.
    pub fn names(&self) -> Vec<String> {
        self.running.iter().map(|(link, _)| link.name.clone()).collect()
    }

    /// Each upstream's state.
    pub fn status(&self) -> Vec<UpstreamStatus> {
        self.running
            .iter()
            .map(|(link, _)| match link.state() {
                State::Up(peer) if !peer.is_transport_closed() => {
                    UpstreamStatus { name: link.name.clone(), connected: true, reason: None }
                }
                State::Up(_) => UpstreamStatus {
                    name: link.name.clone(),
                    connected: false,
                    reason: Some("the connection closed".into()),
                },
                State::Down(reason) => {
                    UpstreamStatus { name: link.name.clone(), connected: false, reason: Some(reason) }
                }
            })
            .collect()
    }
}

impl Drop for Upstreams {
    fn drop(&mut self) {
        for (_, task) in &self.running {
            task.abort();
        }
    }
}
