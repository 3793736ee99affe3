//! Tokens already verified, keyed by a SHA-256 of the token (never the token
//! itself), so that a client sending the same token on every request costs a
//! hash and a map lookup instead of a signature check or an introspection.

use std::collections::{HashMap, VecDeque};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::Verified;

/// The SHA-256 of a token: what the cache is keyed by.
pub(crate) type TokenHash = [u8; 32];

/// The hash of `token`.
pub(crate) fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

#[derive(Debug)]
struct Entry {
    verified: Verified,
    /// When the entry stops being used: never after the token's `exp`.
    until: SystemTime,
    /// Insertion number, to find the oldest entry.
    seq: u64,
}

/// A bounded map of verified tokens. When full, an insertion first drops the
/// expired entries, then the oldest ones.
#[derive(Debug)]
pub(crate) struct TokenCache {
    capacity: usize,
    entries: HashMap<TokenHash, Entry>,
    /// Insertion order (hash, seq); entries removed or replaced since leave
    /// stale pairs behind, skipped when met and compacted now and then.
    order: VecDeque<(TokenHash, u64)>,
    next_seq: u64,
}

impl TokenCache {
    /// An empty cache of at most `capacity` entries (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self { capacity, entries: HashMap::new(), order: VecDeque::new(), next_seq: 0 }
    }

    /// The verified token with hash `key`, if cached and still good at `now`.
    pub(crate) fn get(&mut self, key: &TokenHash, now: SystemTime) -> Option<Verified> {
        let entry = self.entries.get(key)?;
        if entry.until > now {
            return Some(entry.verified.clone());
        }
        self.entries.remove(key);
        None
    }

    /// Remember `verified` under `key` until `until` (nothing when that is
    /// not after `now`).
    pub(crate) fn insert(&mut self, key: TokenHash, verified: Verified, until: SystemTime, now: SystemTime) {
        if until <= now {
            return;
        }
        if !self.entries.contains_key(&key) && self.entries.len() >= self.capacity {
            self.make_room(now);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.entries.insert(key, Entry { verified, until, seq });
        self.order.push_back((key, seq));
        if self.order.len() > 2 * self.capacity {
            let entries = &self.entries;
            self.order.retain(|(key, seq)| entries.get(key).is_some_and(|entry| entry.seq == *seq));
        }
    }

    /// Drop the expired entries, then the oldest ones until a tenth of the
    /// capacity is free: the scan is paid once per that many insertions.
    fn make_room(&mut self, now: SystemTime) {
        self.entries.retain(|_, entry| entry.until > now);
        let target = self.capacity - self.capacity.div_ceil(10);
        while self.entries.len() > target {
            let Some((oldest, seq)) = self.order.pop_front() else { break };
            if self.entries.get(&oldest).is_some_and(|entry| entry.seq == seq) {
                self.entries.remove(&oldest);
            }
        }
    }

    /// How many entries the cache holds (expired ones included until met).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn verified(user: &str) -> Verified {
        Verified {
            subject: user.to_owned(),
            user_id: user.to_owned(),
            role: "member".to_owned(),
            tenant: None,
            toolset: None,
            scopes: Vec::new(),
            expires_at: SystemTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn entries_end_at_their_time() {
        let mut cache = TokenCache::new(10);
        let now = SystemTime::now();
        let key = hash("token-a");
        cache.insert(key, verified("a"), now + Duration::from_secs(5), now);
        assert_eq!(cache.get(&key, now).unwrap().user_id, "a");
        assert_eq!(cache.get(&key, now + Duration::from_secs(4)).unwrap().user_id, "a");
        assert!(cache.get(&key, now + Duration::from_secs(5)).is_none());
        assert_eq!(cache.len(), 0, "an expired entry met is dropped");
        // nothing is stored that is already over
        cache.insert(key, verified("a"), now, now);
        assert!(cache.get(&key, now - Duration::from_secs(1)).is_none());
    }

    #[test]
    fn full_cache_drops_expired_then_oldest() {
        let mut cache = TokenCache::new(3);
        let now = SystemTime::now();
        let soon = now + Duration::from_secs(1);
        let later = now + Duration::from_secs(100);
        cache.insert(hash("a"), verified("a"), later, now);
        cache.insert(hash("b"), verified("b"), soon, now);
        cache.insert(hash("c"), verified("c"), later, now);
        // at now+2, b is expired: it goes, a and c stay
        let t = now + Duration::from_secs(2);
        cache.insert(hash("d"), verified("d"), later, t);
        assert!(cache.get(&hash("a"), t).is_some());
        assert!(cache.get(&hash("b"), t).is_none());
        assert!(cache.get(&hash("c"), t).is_some());
        assert!(cache.get(&hash("d"), t).is_some());
        // nothing expired: the oldest (a) goes
        cache.insert(hash("e"), verified("e"), later, t);
        assert_eq!(cache.len(), 3);
        assert!(cache.get(&hash("a"), t).is_none());
        for kept in ["c", "d", "e"] {
            assert!(cache.get(&hash(kept), t).is_some(), "{kept} was dropped");
        }
        // replacing an entry does not evict another one
        cache.insert(hash("c"), verified("c2"), later, t);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&hash("c"), t).unwrap().user_id, "c2");
        // the replaced c is now newer than d: d goes first
        cache.insert(hash("f"), verified("f"), later, t);
        assert!(cache.get(&hash("d"), t).is_none());
        assert!(cache.get(&hash("c"), t).is_some());
    }

    #[test]
    fn a_full_cache_frees_a_tenth_at_once() {
        let mut cache = TokenCache::new(100);
        let now = SystemTime::now();
        let later = now + Duration::from_secs(100);
        for i in 0..100 {
            cache.insert(hash(&format!("t{i}")), verified("x"), later, now);
        }
        assert_eq!(cache.len(), 100);
        cache.insert(hash("t100"), verified("x"), later, now);
        assert_eq!(cache.len(), 91, "the 10 oldest went, the new one came");
        assert!(cache.get(&hash("t9"), now).is_none());
        assert!(cache.get(&hash("t10"), now).is_some());
        for i in 101..110 {
            cache.insert(hash(&format!("t{i}")), verified("x"), later, now);
        }
        assert_eq!(cache.len(), 100, "no eviction until full again");
    }

    #[test]
    fn order_stays_bounded() {
        let mut cache = TokenCache::new(4);
        let now = SystemTime::now();
        let later = now + Duration::from_secs(100);
        for i in 0..1000 {
            cache.insert(hash(&format!("t{}", i % 2)), verified("x"), later, now);
        }
        assert_eq!(cache.len(), 2);
        assert!(cache.order.len() <= 8);
    }
}
