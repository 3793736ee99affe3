//! A tool's progress reports as MCP `notifications/progress`.
//!
//! [`toolgate_core::ProgressSink::report`] is synchronous and may be called from
//! anywhere in a tool; it only puts the update in a small bounded channel.
//! The request's own future forwards the updates to the client while the
//! tool runs, so they arrive in order and before the result. When the
//! client reads slower than the tool reports, updates are dropped (progress
//! is advisory), and an update that does not move forward is skipped, since
//! MCP requires `progress` to increase.

use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate_core::{Envelope, ProgressSink};

/// How many updates may wait for the client before new ones are dropped.
const CAPACITY: usize = 64;

#[derive(Debug)]
struct Update {
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
}

/// The sink a tool reports to.
struct ChannelSink {
    tx: Mutex<Option<mpsc::Sender<Update>>>,
}

impl ProgressSink for ChannelSink {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if !progress.is_finite() {
            return;
        }
        let total = total.filter(|t| t.is_finite());
        let update = Update { progress, total, message: message.map(str::to_owned) };
        // Full or closed: the update is dropped, the tool never waits.
        if let Ok(guard) = self.tx.lock()
            && let Some(tx) = guard.as_ref()
        {
            let _ = tx.try_send(update);
        }
    }
}

/// The progress plumbing of one request that carried a progress token.
pub(crate) struct ProgressChannel {
    token: ProgressToken,
    sink: Arc<ChannelSink>,
    rx: mpsc::Receiver<Update>,
}

impl ProgressChannel {
    pub(crate) fn new(token: ProgressToken) -> Self {
        let (tx, rx) = mpsc::channel(CAPACITY);
        Self { token, sink: Arc::new(ChannelSink { tx: Mutex::new(Some(tx)) }), rx }
    }

    /// The sink to hand to the tool's context.
    pub(crate) fn sink(&self) -> Arc<dyn ProgressSink> {
        self.sink.clone()
    }
}

/// Run `call` to its end while forwarding its progress to `peer`; `None`
/// when `ct` (the client's `notifications/cancelled`) fires first, in which
/// case `call` is dropped, and the tool with it.
pub(crate) async fn drive<F>(
    call: F,
    channel: ProgressChannel,
    peer: &Peer<RoleServer>,
    ct: &CancellationToken,
) -> Option<Envelope>
where
    F: Future<Output = Envelope>,
{
    let ProgressChannel { token, sink, mut rx } = channel;
    let mut last: Option<f64> = None;
    tokio::pin!(call);
    let envelope = loop {
        tokio::select! {
            biased;
            () = ct.cancelled() => return None,
            envelope = &mut call => break envelope,
            Some(update) = rx.recv() => send(peer, &token, &mut last, update).await,
        }
    };
    // Updates reported just before the tool returned still go out, before the result.
    if let Ok(mut guard) = sink.tx.lock() {
        guard.take();
    }
    while let Ok(update) = rx.try_recv() {
        send(peer, &token, &mut last, update).await;
    }
    Some(envelope)
}

async fn send(peer: &Peer<RoleServer>, token: &ProgressToken, last: &mut Option<f64>, update: Update) {
    if last.is_some_and(|last| update.progress <= last) {
        return;
    }
    *last = Some(update.progress);
    let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
    param.total = update.total;
    param.message = update.message;
    if let Err(error) = peer.notify_progress(param).await {
        tracing::debug!(%error, "progress notification not delivered");
    }
}
