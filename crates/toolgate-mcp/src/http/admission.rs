//! Room for clients with a key: a connection that has not yet carried a
//! request with a valid API key is *unproven*, and unproven connections are
//! capped per peer IP ([`HttpConfig::max_unauthenticated_per_peer`]) and in
//! total ([`HttpConfig::max_unauthenticated_connections`]), apart from the
//! connection cap. A new connection over either cap closes the oldest idle
//! unproven connection under that cap (the same peer's for the per-peer
//! cap), so a client without a key that holds sockets open (reopening them
//! as they close) holds only its share, and a client with a key, whose
//! first request proves its connection within milliseconds, still gets in.
//! When every unproven connection under the cap is in the middle of a
//! request, the new one is closed instead.
//!
//! [`HttpConfig::max_unauthenticated_per_peer`]: super::HttpConfig::max_unauthenticated_per_peer
//! [`HttpConfig::max_unauthenticated_connections`]: super::HttpConfig::max_unauthenticated_connections

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

/// The unproven connections of one server.
#[derive(Debug)]
pub(super) struct Admission {
    per_peer: usize,
    total: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    /// Every unproven connection, oldest first (by the order of acceptance).
    all: BTreeMap<u64, Arc<Entry>>,
    /// The same, per peer.
    by_peer: HashMap<IpAddr, BTreeMap<u64, Arc<Entry>>>,
}

struct Entry {
    seq: u64,
    peer: IpAddr,
    /// Cleared once the connection is proven, evicted or closed (a lock-free check per request).
    unproven: AtomicBool,
    /// Cancelled to close the connection.
    evict: CancellationToken,
    /// Whether the connection is between requests (the only time it may be closed).
    idle: Box<dyn Fn() -> bool + Send + Sync>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("seq", &self.seq).field("peer", &self.peer).finish_non_exhaustive()
    }
}

/// One connection's place among the unproven; dropping it (the connection
/// ended) gives the place back.
#[derive(Debug, Clone)]
pub(super) struct Ticket {
    admission: Arc<Admission>,
    entry: Arc<Entry>,
}

impl Admission {
    pub(super) fn new(per_peer: usize, total: usize) -> Arc<Self> {
        Arc::new(Self { per_peer: per_peer.max(1), total: total.max(1), inner: Mutex::default() })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A place for a new connection from `peer`, making room by closing the
    /// oldest idle unproven connection when a cap is reached; `None` when no
    /// room can be made (close the new connection).
    pub(super) fn admit(
        self: &Arc<Self>,
        peer: IpAddr,
        idle: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Option<Ticket> {
        let peer = peer.to_canonical();
        let mut inner = self.lock();
        if inner.by_peer.get(&peer).is_some_and(|mine| mine.len() >= self.per_peer) {
            let oldest = inner.by_peer[&peer].values().find(|e| (e.idle)()).cloned()?;
            inner.remove(&oldest);
            oldest.evict.cancel();
            tracing::debug!(%peer, "closed a peer's oldest connection without a key to make room for its new one");
        }
        if inner.all.len() >= self.total {
            let oldest = inner.all.values().find(|e| (e.idle)()).cloned()?;
            inner.remove(&oldest);
            oldest.evict.cancel();
            tracing::debug!("closed the oldest connection without a key: too many connections without one");
        }
        let seq = inner.next;
        inner.next += 1;
        let entry = Arc::new(Entry {
            seq,
            peer,
            unproven: AtomicBool::new(true),
            evict: CancellationToken::new(),
            idle: Box::new(idle),
        });
        inner.all.insert(seq, entry.clone());
        inner.by_peer.entry(peer).or_default().insert(seq, entry.clone());
        Some(Ticket { admission: self.clone(), entry })
    }
}

impl Inner {
    fn remove(&mut self, entry: &Entry) {
        entry.unproven.store(false, Ordering::Relaxed);
        self.all.remove(&entry.seq);
        if let Some(mine) = self.by_peer.get_mut(&entry.peer) {
            mine.remove(&entry.seq);
            if mine.is_empty() {
                self.by_peer.remove(&entry.peer);
            }
        }
    }
}

impl Ticket {
    /// Whether the connection still counts as unproven.
    pub(super) fn unproven(&self) -> bool {
        self.entry.unproven.load(Ordering::Relaxed)
    }

    /// A request on the connection carried a valid key: it leaves the unproven.
    pub(super) fn proven(&self) {
        if self.unproven() {
            self.admission.lock().remove(&self.entry);
        }
    }

    /// Resolves when the connection is closed to make room.
    pub(super) async fn evicted(&self) {
        self.entry.evict.cancelled().await
    }

    /// The connection ended: its place goes back.
    pub(super) fn release(&self) {
        self.proven();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn the_oldest_idle_unproven_connection_makes_room_and_proven_ones_leave() {
        let admission = Admission::new(2, 3);
        let busy = Arc::new(AtomicBool::new(true));
        let a1 = admission.admit(ip(1), || true).unwrap();
        let b = busy.clone();
        let a2 = admission.admit(ip(1), move || !b.load(Ordering::Relaxed)).unwrap();
        // The peer's cap: its oldest idle connection goes.
        let a3 = admission.admit(ip(1), || true).unwrap();
        assert!(a1.entry.evict.is_cancelled() && !a1.unproven());
        assert!(a2.unproven() && a3.unproven());
        // The total cap: another peer's new connection closes the oldest idle one (a2 is in a request).
        let b1 = admission.admit(ip(2), || true).unwrap();
        let b2 = admission.admit(ip(2), || true).unwrap();
        assert!(a3.entry.evict.is_cancelled() && !a2.entry.evict.is_cancelled());
        // A proven connection no longer counts, and is never closed to make room.
        b1.proven();
        let b3 = admission.admit(ip(2), || true).unwrap();
        assert!(b2.unproven() && b3.unproven() && !b1.entry.evict.is_cancelled());
        busy.store(false, Ordering::Relaxed);
        let _c = admission.admit(ip(3), || true).unwrap();
        assert!(a2.entry.evict.is_cancelled(), "a2 is idle again and the oldest");
        // A connection that ends gives its place back.
        b2.release();
        assert!(!b2.unproven());
        let _d = admission.admit(ip(4), || true).unwrap();
        assert!(!b3.entry.evict.is_cancelled());
    }

    #[test]
    fn without_an_idle_connection_to_close_the_new_one_is_refused() {
        let admission = Admission::new(1, 2);
        let _busy = admission.admit(ip(1), || false).unwrap();
        assert!(admission.admit(ip(1), || true).is_none(), "the peer's one place is in a request");
        let _other = admission.admit(ip(2), || false).unwrap();
        assert!(admission.admit(ip(3), || true).is_none(), "both places are in a request");
    }
}
