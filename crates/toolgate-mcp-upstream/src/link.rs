//! The live link to one upstream: whether it is up (and its peer), and the
//! progress routes and askers of calls in flight, which [`crate::handler`] feeds
//! from the upstream's notifications and requests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::{ProgressToken, RequestId};
use rmcp::service::InboundStreamOrigin;
use rmcp::{Peer, RoleClient};
use tokio::sync::watch;
use toolgate_core::{Asker, ProgressSink};

/// Up with a peer, or down with the reason.
#[derive(Debug, Clone)]
pub(crate) enum State {
    Up(Peer<RoleClient>),
    Down(String),
}

/// Shared by the supervisor (which writes the state) and the tools (which read it).
pub(crate) struct Link {
    pub(crate) name: String,
    /// The upstream's settings (prefix, role, identity).
    pub(crate) config: crate::UpstreamConfig,
    /// Its prompts and resources ([`crate::surface`]).
    pub(crate) surface: RwLock<crate::surface::Surface>,
    /// Where changes of them are told.
    pub(crate) signals: Arc<crate::federation::Signals>,
    /// Its tools that could not be registered because another source has the name
    /// (`prefix = false`), in words.
    pub(crate) collisions: Mutex<Vec<String>>,
    /// Its tools that may run as tasks, as its listings say ([`crate::task_support`]).
    pub(crate) task_tools: Arc<crate::task_support::TaskTools>,
    state: RwLock<State>,
    /// The direct path of the current HTTP connection ([`crate::direct`]).
    direct: RwLock<Option<Arc<crate::direct::Direct>>>,
    progress: Mutex<HashMap<String, Arc<Throttle>>>,
    /// The calls in flight, by request id: whom to ask when the upstream
    /// elicits during one of them.
    calls: Mutex<HashMap<String, Call>>,
    /// The longest wait for the person's answer to an upstream's question.
    pub(crate) ask_timeout: Duration,
    /// Asks the supervisor to drop the connection and reconnect now (a call
    /// saw the transport fail before the supervisor did).
    pub(crate) reconnect: tokio::sync::Notify,
    /// Bumped with each new connection, so that a failure seen on an old
    /// one never tears down its successor.
    generation: std::sync::atomic::AtomicU64,
    /// A call found the link down: the supervisor tries again now instead of
    /// waiting out its backoff ([`Link::wait_up`]).
    pub(crate) wanted: tokio::sync::Notify,
    /// Ticks at every change of `state`, for calls waiting for a connection.
    changes: watch::Sender<()>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Link {
    /// `ask_timeout` bounds the wait for the person when the upstream elicits.
    pub(crate) fn new(
        config: &crate::UpstreamConfig,
        ask_timeout: Duration,
        signals: Arc<crate::federation::Signals>,
    ) -> Self {
        Self {
            name: config.name.clone(),
            config: config.clone(),
            surface: RwLock::default(),
            signals,
            collisions: Mutex::default(),
            task_tools: Arc::default(),
            state: RwLock::new(State::Down("not connected yet".into())),
            direct: RwLock::new(None),
            progress: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashMap::new()),
            ask_timeout,
            reconnect: tokio::sync::Notify::new(),
            generation: std::sync::atomic::AtomicU64::new(0),
            wanted: tokio::sync::Notify::new(),
            changes: watch::channel(()).0,
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
        drop(slot);
        self.changes.send_replace(());
    }

    /// The direct path of the connection being made or in use (`None`: a child process).
    pub(crate) fn set_direct(&self, direct: Option<Arc<crate::direct::Direct>>) {
        *self.direct.write().unwrap_or_else(|e| e.into_inner()) = direct;
    }

    pub(crate) fn direct(&self) -> Option<Arc<crate::direct::Direct>> {
        self.direct.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The live connection, waiting at most `within` for one when the link is
    /// down: the supervisor is asked to connect now (an upstream that came back
    /// is reached on the next call, not after the backoff), and the first
    /// connection it makes in that time is used. `None`: still down.
    pub(crate) async fn wait_up(&self, within: Duration) -> Option<(Peer<RoleClient>, u64)> {
        let mut changes = self.changes.subscribe();
        self.wanted.notify_one();
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let (State::Up(peer), generation) = self.current()
                && !peer.is_transport_closed()
            {
                return Some((peer, generation));
            }
            tokio::time::timeout_at(deadline, changes.changed()).await.ok()?.ok()?;
        }
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

    /// Route the upstream's progress for `token` to `sink`, throttled ([`Throttle`]), until
    /// the guard drops; the last report held back is delivered then.
    pub(crate) fn route_progress(
        self: &Arc<Self>,
        token: &ProgressToken,
        sink: Arc<dyn ProgressSink>,
    ) -> Route {
        let key = key(token);
        let throttle = Arc::new(Throttle { sink, state: Mutex::default() });
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), throttle.clone());
        Route { link: self.clone(), key, throttle }
    }

    pub(crate) fn sink(&self, token: &ProgressToken) -> Option<Arc<Throttle>> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).get(&key(token)).cloned()
    }
}

fn key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// One call in flight: whom to ask (`None`: its client cannot be asked), and a
/// receiver that fails once the call has ended.
#[derive(Clone)]
pub(crate) struct Call {
    pub(crate) asker: Option<Arc<dyn Asker>>,
    pub(crate) ended: watch::Receiver<()>,
}

impl Link {
    /// Record the call `id` as in flight, with the asker of its caller, until
    /// the guard drops.
    pub(crate) fn track_call(self: &Arc<Self>, id: &RequestId, asker: Option<Arc<dyn Asker>>) -> InFlight {
        let key = request_key(id);
        let (ended, receiver) = watch::channel(());
        let call = Call { asker, ended: receiver };
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), call);
        InFlight { link: self.clone(), key, _ended: ended }
    }

    /// The call an upstream's request belongs to: the one whose response
    /// stream carried it (streamable HTTP), else the only call in flight;
    /// otherwise why none can be chosen.
    pub(crate) fn call_for(&self, origin: Option<&InboundStreamOrigin>) -> Result<Call, &'static str> {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = origin {
            return calls
                .get(&request_key(id))
                .cloned()
                .ok_or("it came with a request that is not a tool call in flight");
        }
        let mut calls = calls.values();
        match (calls.next(), calls.next()) {
            (Some(call), None) => Ok(call.clone()),
            (None, _) => Err("no tool call to it is in flight"),
            (Some(_), Some(_)) => {
                Err("several tool calls to it are in flight and the question does not say whose it is")
            }
        }
    }
}

fn request_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// Removes a call from those in flight when it ends, however it ends; a question
/// still waiting for its person is abandoned then.
pub(crate) struct InFlight {
    link: Arc<Link>,
    key: String,
    _ended: watch::Sender<()>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.link.calls.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.key);
    }
}

/// Removes a progress route when the call ends, however it ends, and delivers the last
/// report the throttle held back.
pub(crate) struct Route {
    link: Arc<Link>,
    key: String,
    throttle: Arc<Throttle>,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.link.progress.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.key);
        self.throttle.close();
    }
}

/// The shortest time between two progress reports forwarded for one call. An upstream may
/// send thousands a second; our caller (a model's client) needs a few.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// One report: progress, total, message.
type Report = (f64, Option<f64>, Option<String>);

/// Forwards a call's progress at most once per [`PROGRESS_INTERVAL`]: a report that comes
/// sooner is held, replacing any held before it, and sent when the interval has passed (or
/// when the call ends), so the first and the latest always arrive and intermediate ones
/// are dropped. A report that does not move forward is dropped (MCP wants `progress` to
/// grow; rmcp hands notifications over on tasks of their own, which may run out of order).
pub(crate) struct Throttle {
    sink: Arc<dyn ProgressSink>,
    state: Mutex<ThrottleState>,
}

#[derive(Default)]
struct ThrottleState {
    sent_at: Option<Instant>,
    highest: Option<f64>,
    held: Option<Report>,
    timer: bool,
    closed: bool,
}

impl Throttle {
    pub(crate) fn report(self: &Arc<Self>, report: Report) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.closed || state.highest.is_some_and(|h| report.0 <= h) {
            return;
        }
        state.highest = Some(report.0);
        let now = Instant::now();
        let due = state.sent_at.map(|at| at + PROGRESS_INTERVAL);
        match due {
            Some(due) if due > now => {
                state.held = Some(report);
                if !state.timer {
                    state.timer = true;
                    let throttle = self.clone();
                    tokio::spawn(async move {
                        let mut due = due;
                        loop {
                            tokio::time::sleep_until(due.into()).await;
                            match throttle.on_timer() {
                                Some(later) => due = later,
                                None => break,
                            }
                        }
                    });
                }
            }
            _ => {
                // Newer than anything held: that one is dropped.
                state.held = None;
                state.sent_at = Some(now);
                drop(state);
                self.sink.report(report.0, report.1, report.2.as_deref());
            }
        }
    }

    /// The timer fired: send the held report if its interval has passed; when a report
    /// was sent directly meanwhile, the time to wait again (`None`: the timer ends).
    fn on_timer(&self) -> Option<Instant> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if !state.closed
            && state.held.is_some()
            && let Some(due) = state.sent_at.map(|at| at + PROGRESS_INTERVAL)
            && due > now
        {
            return Some(due);
        }
        state.timer = false;
        let report = if state.closed { None } else { state.held.take() };
        if let Some(report) = report {
            state.sent_at = Some(now);
            drop(state);
            self.sink.report(report.0, report.1, report.2.as_deref());
        }
        None
    }

    /// The call ended: the held report goes out now, nothing after it.
    fn close(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.closed = true;
        if let Some(report) = state.held.take() {
            drop(state);
            self.sink.report(report.0, report.1, report.2.as_deref());
        }
    }
}
