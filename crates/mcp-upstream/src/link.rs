//! The live link to one upstream: whether it is up (and its peer), the
//! progress routes of calls in flight, and the rmcp client handler that
//! feeds both from the upstream's notifications.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, Peer, RoleClient};
use tokio::sync::mpsc;
use tool_core::ProgressSink;

/// Up with a peer, or down with the reason.
#[derive(Debug, Clone)]
pub(crate) enum State {
    Up(Peer<RoleClient>),
    Down(String),
}

/// Shared by the supervisor (which writes the state) and the tools (which read it).
pub(crate) struct Link {
    pub(crate) name: String,
    state: RwLock<State>,
    progress: Mutex<HashMap<String, Arc<dyn ProgressSink>>>,
    /// Asks the supervisor to drop the connection and reconnect now (a call
    /// saw the transport fail before the supervisor did).
    pub(crate) reconnect: tokio::sync::Notify,
    /// Bumped with each new connection, so that a failure seen on an old
    /// one never tears down its successor.
    generation: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Link {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            state: RwLock::new(State::Down("not connected yet".into())),
            progress: Mutex::new(HashMap::new()),
            reconnect: tokio::sync::Notify::new(),
            generation: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub(crate) fn state(&self) -> State {
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set(&self, state: State) {
        let mut slot = self.state.write().unwrap_or_else(|e| e.into_inner());
        if matches!(state, State::Up(_)) {
            self.generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        *slot = state;
    }

    /// The state and the generation of the connection it belongs to.
    pub(crate) fn current(&self) -> (State, u64) {
        let slot = self.state.read().unwrap_or_else(|e| e.into_inner());
        (slot.clone(), self.generation.load(std::sync::atomic::Ordering::SeqCst))
    }

    /// A call on connection `generation` saw its transport fail: reconnect,
    /// unless that connection has already been replaced.
    pub(crate) fn failed(&self, generation: u64) {
        if self.generation.load(std::sync::atomic::Ordering::SeqCst) == generation {
            self.reconnect.notify_waiters();
        }
    }

    /// Route the upstream's progress for `token` to `sink` until the guard drops.
    pub(crate) fn route_progress(
        self: &Arc<Self>,
        token: &ProgressToken,
        sink: Arc<dyn ProgressSink>,
    ) -> Route {
        let key = key(token);
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), sink);
        Route { link: self.clone(), key }
    }

    fn sink(&self, token: &ProgressToken) -> Option<Arc<dyn ProgressSink>> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).get(&key(token)).cloned()
    }
}

fn key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// Removes a progress route when the call ends, however it ends.
pub(crate) struct Route {
    link: Arc<Link>,
    key: String,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.link.progress.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.key);
    }
}

/// The rmcp client side of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) link: Arc<Link>,
    /// Tells the supervisor to read the tool list again.
    pub(crate) refresh: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(sink) = self.link.sink(&params.progress_token) {
            sink.report(params.progress, params.total, params.message.as_deref());
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(upstream = %self.link.name, "upstream says its tool list changed");
        let _ = self.refresh.send(());
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities = ClientCapabilities::default();
        // The `initialize` handshake, which every server version speaks; on
        // it `notifications/tools/list_changed` arrives without a
        // subscription (2026-07-28 servers send it only to `subscriptions/listen`).
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info.client_info = Implementation::new("toolgate", env!("CARGO_PKG_VERSION"));
        info
    }
}
