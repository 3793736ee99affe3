//! Serving the router on TCP: a cap on open connections, and apart from it
//! on connections without a valid key yet, per peer and in total
//! (`admission`), header and idle timeouts (slowloris, silent sockets),
//! TCP_NODELAY, and a shutdown that drains: stop accepting, let calls in
//! flight finish within the grace period, answer the rest with a JSON-RPC
//! error, then end the sessions.

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};
use tower_service::Service;

use super::admission::{Admission, Ticket};
use super::{HttpState, http_router};

/// Serve the router on `listener` until `shutdown` resolves, then drain
/// (see the module docs): at most [`super::HttpConfig::max_connections`]
/// connections, each closed when its headers take longer than
/// [`super::HttpConfig::header_timeout`] or it idles for
/// [`super::HttpConfig::idle_timeout`]; of those, at most
/// [`super::HttpConfig::max_unauthenticated_connections`] (and
/// [`super::HttpConfig::max_unauthenticated_per_peer`] per peer IP) that
/// have not yet carried a request with a valid key, the oldest idle one
/// closed to make room for a new one. Also watches the key store for
/// revocations made by other processes while it runs.
pub async fn serve_http<F>(listener: tokio::net::TcpListener, state: HttpState, shutdown: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let config = state.config.clone();
    let token = state.shutdown_token();
    let drain = state.drain.clone();
    tokio::spawn(state.keys.clone().watch_revocations(token.clone()));
    let router = http_router(state);
    let permits = Arc::new(Semaphore::new(config.max_connections.max(1)));
    // Every connection task holds a receiver; `closed()` says they are all done.
    let (open_tx, open_rx) = watch::channel(());
    let limits = Arc::new(ConnLimits { header: config.header_timeout, idle: config.idle_timeout });
    let admission =
        Admission::new(config.max_unauthenticated_per_peer, config.max_unauthenticated_connections);
    let mut shutdown = pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Small JSON-RPC answers must not wait for Nagle's algorithm.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let activity = Arc::new(Activity::new());
        let idle = Arc::downgrade(&activity);
        let idle = move || idle.upgrade().is_none_or(|a| a.running.load(Ordering::Relaxed) == 0);
        let Some(ticket) = admission.admit(peer.ip(), idle) else {
            // Every connection without a key under the cap is in a request: no room for another.
            tracing::debug!("refused a connection: too many without a key are in a request");
            continue;
        };
        let task = connection(
            tcp,
            router.clone(),
            limits.clone(),
            activity,
            ticket,
            drain.started.clone(),
            open_rx.clone(),
        );
        tokio::spawn(async move {
            task.await;
            drop(permit);
        });
    }
    drop(listener);
    drop(open_rx);
    tracing::info!(grace = ?config.drain_grace, "shutting down: no new connections; calls in flight may finish");
    drain.started.cancel();
    if tokio::time::timeout(config.drain_grace, open_tx.closed()).await.is_err() {
        tracing::warn!("grace period over: answering the calls still running with an error");
        drain.expired.cancel();
        // Time to write those answers before the sessions go.
        let _ = tokio::time::timeout(Duration::from_secs(2), open_tx.closed()).await;
    }
    token.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(2), open_tx.closed()).await;
    Ok(())
}

#[derive(Debug)]
struct ConnLimits {
    header: Duration,
    idle: Duration,
}

/// What the idle timer of one connection looks at.
#[derive(Debug)]
struct Activity {
    start: Instant,
    /// Milliseconds after `start` of the last byte read or written.
    last: AtomicU64,
    /// Requests whose handler has not answered yet.
    running: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Self { start: Instant::now(), last: AtomicU64::new(0), running: AtomicUsize::new(0) }
    }

    fn touch(&self) {
        self.last.store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    fn idle_for(&self) -> Duration {
        self.start.elapsed().saturating_sub(Duration::from_millis(self.last.load(Ordering::Relaxed)))
    }
}

/// Counts a request as running until its handler has answered.
struct Running(Arc<Activity>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.touch();
        self.0.running.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn connection(
    tcp: TcpStream,
    router: axum::Router,
    limits: Arc<ConnLimits>,
    activity: Arc<Activity>,
    ticket: Ticket,
    drain: tokio_util::sync::CancellationToken,
    _open: watch::Receiver<()>,
) {
    let activity_peer = tcp.peer_addr().ok();
    let io = TokioIo::new(Tracked { inner: tcp, activity: activity.clone() });
    let service_activity = activity.clone();
    let service_ticket = ticket.clone();
    // The peer address tells `/metrics` whether the scraper is on loopback.
    let peer = activity_peer;
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let mut router = router.clone();
        service_activity.running.fetch_add(1, Ordering::Relaxed);
        let running = Running(service_activity.clone());
        let mut request = request.map(Body::new);
        if let Some(peer) = peer {
            request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
        }
        // Until a request with a valid key proves the connection (`auth::check`).
        if service_ticket.unproven() {
            request.extensions_mut().insert(service_ticket.clone());
        }
        async move {
            let response = router.call(request).await;
            drop(running);
            response
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The header timer runs whenever the connection waits for a request:
    // a silent socket, partial headers, and the pause between kept-alive requests.
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header).keep_alive(true);
    let mut conn = pin!(builder.serve_connection(io, service));
    let mut draining = pin!(drain.cancelled());
    let mut drained = false;
    let _release = Release(ticket.clone());
    let mut evicted = pin!(ticket.evicted());
    loop {
        let idle_check = tokio::time::sleep(
            limits.idle.saturating_sub(activity.idle_for()).max(Duration::from_millis(50)),
        );
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            () = &mut evicted => {
                tracing::debug!("closed a connection without a key to make room");
                return;
            }
            () = &mut draining, if !drained => {
                drained = true;
                conn.as_mut().graceful_shutdown();
            }
            () = idle_check => {
                if activity.running.load(Ordering::Relaxed) == 0 && activity.idle_for() >= limits.idle {
                    tracing::debug!("closed an idle connection");
                    return;
                }
            }
        }
    }
}

/// Gives the connection's place among those without a key back when it ends.
struct Release(Ticket);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A TCP stream that notes when bytes move.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        result
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write(cx, data);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.touch();
        }
        result
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.touch();
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
