//! The minted tokens, one slot per key (a user, or the one service identity),
//! each refreshed by one request at a time: callers of one key that come
//! while its token is being minted wait for that one answer (single flight)
//! and share it, its failure included; other keys never wait on them.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use toolgate_core::{Secret, ToolError};

use crate::grant::endpoint::Issued;

/// A SHA-256 of the credential a token was minted from: a slot's token is
/// handed out only for the same one (a user who signed in anew, with other
/// scopes, gets a token of the new sign-in). `None`: no credential (the
/// client-credentials grant).
pub(crate) type Subject = Option<[u8; 32]>;

/// Minted tokens by key, at most `max` slots (plus those in use).
pub(crate) struct Cache<K> {
    slots: Mutex<HashMap<K, Arc<Slot>>>,
    max: usize,
}

#[derive(Default)]
struct Slot {
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    minted: Option<Minted>,
    failed: Option<Failed>,
}

struct Minted {
    token: Secret,
    subject: Subject,
    fresh_until: Instant,
}

/// The last attempt's failure, handed to the callers that waited for it.
struct Failed {
    at: Instant,
    subject: Subject,
    error: ToolError,
}

impl<K> std::fmt::Debug for Cache<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("slots", &self.len()).field("max", &self.max).finish()
    }
}

impl<K> Cache<K> {
    /// How many slots are held.
    pub(crate) fn len(&self) -> usize {
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

impl<K: Eq + Hash + Clone> Cache<K> {
    /// A cache of at most `max` slots (at least one).
    pub(crate) fn new(max: usize) -> Self {
        Self { slots: Mutex::new(HashMap::new()), max: max.max(1) }
    }

    /// The token of `key` minted from `subject`, while fresh; otherwise the
    /// one `mint` makes (by one caller of the key at a time: the others wait
    /// and take its token, or its error).
    pub(crate) async fn get<F, Fut>(&self, key: &K, subject: Subject, mint: F) -> Result<Secret, ToolError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Issued, ToolError>>,
    {
        let slot = self.slot(key);
        let asked = Instant::now();
        let mut state = slot.state.lock().await;
        if let Some(minted) = &state.minted
            && minted.subject == subject
            && Instant::now() < minted.fresh_until
        {
            return Ok(minted.token.clone());
        }
        // Minted while this caller waited, and it failed: the same answer,
        // rather than one more request to a provider that just refused or failed.
        if let Some(failed) = &state.failed
            && failed.subject == subject
            && failed.at >= asked
        {
            return Err(failed.error.clone());
        }
        match mint().await {
            Ok(Issued { token, keep_for }) => {
                state.failed = None;
                state.minted = (keep_for > Duration::ZERO).then(|| Minted {
                    token: token.clone(),
                    subject,
                    fresh_until: Instant::now() + keep_for,
                });
                Ok(token)
            }
            Err(error) => {
                state.minted = None;
                state.failed = Some(Failed { at: Instant::now(), subject, error: error.clone() });
                Err(error)
            }
        }
    }

    /// The slot of `key`, made when missing; a full cache first lets go of
    /// slots nobody is using whose token is stale, then of those whose token
    /// expires soonest, down to 7/8 of `max` (so that the sweep is rare).
    fn slot(&self, key: &K) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = slots.get(key) {
            return slot.clone();
        }
        if slots.len() >= self.max {
            let now = Instant::now();
            // A slot in use (held outside the map) or being minted is kept.
            let idle_until = |slot: &Arc<Slot>| -> Option<Option<Instant>> {
                if Arc::strong_count(slot) > 1 {
                    return None;
                }
                let state = slot.state.try_lock().ok()?;
                Some(state.minted.as_ref().map(|m| m.fresh_until).filter(|until| *until > now))
            };
            slots.retain(|_, slot| !matches!(idle_until(slot), Some(None)));
            let target = self.max - self.max / 8 - 1;
            if slots.len() > target {
                let mut idle: Vec<(Instant, K)> = slots
                    .iter()
                    .filter_map(|(key, slot)| idle_until(slot).flatten().map(|until| (until, key.clone())))
                    .collect();
                idle.sort_by_key(|(until, _)| *until);
                let excess = slots.len() - target;
                for (_, key) in idle.into_iter().take(excess) {
                    slots.remove(&key);
                }
            }
        }
        slots.entry(key.clone()).or_default().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issued(token: &str, keep_for: Duration) -> Result<Issued, ToolError> {
        Ok(Issued { token: Secret::new(token), keep_for })
    }

    #[tokio::test]
    async fn a_full_cache_lets_go_of_stale_slots_first_then_the_soonest_to_expire() {
        let cache: Cache<u32> = Cache::new(8);
        for key in 0..8u32 {
            // Keys 0 and 1 keep nothing (stale at once); the others expire in key order.
            let keep = if key < 2 { Duration::ZERO } else { Duration::from_secs(100 + u64::from(key)) };
            cache.get(&key, None, || async move { issued(&format!("t{key}"), keep) }).await.unwrap();
        }
        assert_eq!(cache.len(), 8);
        cache.get(&100, None, || async { issued("new", Duration::from_secs(60)) }).await.unwrap();
        // The 2 stale ones went (6 left, the target), then the new one came: 7.
        {
            let slots = cache.slots.lock().unwrap();
            assert_eq!(slots.len(), 7);
            assert!(!slots.contains_key(&0) && !slots.contains_key(&1));
            assert!((2..8).all(|k| slots.contains_key(&k)) && slots.contains_key(&100));
        }
        // Full again with fresh tokens only: the soonest to expire go, down to 6.
        cache.get(&101, None, || async { issued("n1", Duration::from_secs(500)) }).await.unwrap();
        assert_eq!(cache.len(), 8);
        cache.get(&102, None, || async { issued("n2", Duration::from_secs(500)) }).await.unwrap();
        let slots = cache.slots.lock().unwrap();
        assert_eq!(slots.len(), 7);
        // 100 (60 s) and 2 (102 s) expired soonest.
        assert!(!slots.contains_key(&100) && !slots.contains_key(&2), "{:?}", slots.keys());
        assert!(slots.contains_key(&3) && slots.contains_key(&102));
    }

    #[tokio::test]
    async fn a_slot_in_use_is_never_let_go() {
        let cache: Cache<u32> = Cache::new(1);
        let held = cache.slot(&1);
        cache.get(&2, None, || async { issued("two", Duration::from_secs(60)) }).await.unwrap();
        assert!(Arc::ptr_eq(&held, &cache.slot(&1)), "the slot in use stayed");
    }

    #[tokio::test]
    async fn a_token_minted_from_another_credential_is_not_handed_out() {
        let cache: Cache<u32> = Cache::new(8);
        let a = cache.get(&1, Some([1; 32]), || async { issued("from-a", Duration::from_secs(60)) }).await;
        assert_eq!(a.unwrap().expose(), "from-a");
        let again =
            cache.get(&1, Some([1; 32]), || async { issued("unused", Duration::from_secs(60)) }).await;
        assert_eq!(again.unwrap().expose(), "from-a");
        let b = cache.get(&1, Some([2; 32]), || async { issued("from-b", Duration::from_secs(60)) }).await;
        assert_eq!(b.unwrap().expose(), "from-b");
    }
}
