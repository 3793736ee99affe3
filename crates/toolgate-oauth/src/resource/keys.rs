//! The issuer's keys in use, and when they are fetched (again): on the
//! first token, when old, on an unknown key id (never more often than the
//! refresh floor), one fetch at a time.

use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use super::jwks::KeySet;
use super::metadata::{self, Discovered};
use super::{Rejection, Verifier};

/// Keys older than this are refetched on the next token that needs them (a
/// key the issuer withdrew stops being trusted).
const JWKS_MAX_AGE: Duration = Duration::from_secs(3600);

/// The keys in use.
#[derive(Clone, Default)]
pub(super) struct Snapshot {
    pub(super) set: Option<Arc<KeySet>>,
    /// Bumped by every successful fetch.
    pub(super) generation: u64,
    fetched_at: Option<Instant>,
}

/// What the one fetch at a time knows (behind the refresh lock).
#[derive(Default)]
pub(super) struct RefreshState {
    discovered: Option<Discovered>,
    /// The last failed attempt and its error.
    last_failure: Option<(Instant, String)>,
    /// The last fetch triggered by an unknown key.
    last_unknown_key: Option<Instant>,
}

/// Why keys are fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    /// No keys yet.
    Initial,
    /// A token names a key the set does not have.
    UnknownKey,
    /// The keys are older than [`JWKS_MAX_AGE`].
    Stale,
    /// [`Verifier::discover`].
    Explicit,
}

impl Verifier {
    /// The keys to check a token against and their generation: the current
    /// ones, fetched first when there are none yet (or refreshed when old).
    pub(super) async fn keys_for_token(&self) -> Result<(Arc<KeySet>, u64), Rejection> {
        let snapshot = self.snapshot();
        let Some(set) = snapshot.set else {
            return match self.refresh(Reason::Initial, snapshot.generation).await {
                Ok(Some(Snapshot { set: Some(set), generation, .. })) => Ok((set, generation)),
                Ok(_) => Err(Rejection::Unavailable("the issuer's keys could not be fetched".to_owned())),
                Err(e) => Err(Rejection::Unavailable(e)),
            };
        };
        if snapshot.fetched_at.is_some_and(|at| at.elapsed() >= JWKS_MAX_AGE) {
            // on failure the old keys stay in use
            if let Ok(Some(Snapshot { set: Some(fresh), generation, .. })) =
                self.refresh(Reason::Stale, snapshot.generation).await
            {
                return Ok((fresh, generation));
            }
        }
        Ok((set, snapshot.generation))
    }

    /// Fetch the keys (and the issuer's metadata when not known yet), one
    /// fetch at a time. `seen` is the generation the caller looked at: when a
    /// fetch succeeded since, its keys are returned without fetching again.
    /// `Ok(None)`: not fetched, the floor forbids it. `Err`: the fetch
    /// failed (now, or within the floor).
    pub(super) async fn refresh(&self, reason: Reason, seen: u64) -> Result<Option<Snapshot>, String> {
        let mut state = self.inner.refresh.lock().await;
        let current = self.snapshot();
        if reason != Reason::Explicit && current.generation != seen && current.set.is_some() {
            return Ok(Some(current));
        }
        let floor = self.inner.config.jwks_refresh_floor;
        if reason != Reason::Explicit
            && let Some((at, error)) = &state.last_failure
            && at.elapsed() < floor
        {
            return match reason {
                Reason::Initial => Err(format!(
                    "{error} (the last attempt was {} s ago; the next is made {} s after it)",
                    at.elapsed().as_secs(),
                    floor.as_secs()
                )),
                _ => Ok(None),
            };
        }
        if reason == Reason::UnknownKey {
            if state.last_unknown_key.is_some_and(|at| at.elapsed() < floor) {
                return Ok(None);
            }
            state.last_unknown_key = Some(Instant::now());
        }
        if reason == Reason::Explicit {
            state.discovered = None;
        }
        match self.fetch(&mut state).await {
            Ok(set) => {
                state.last_failure = None;
                let mut keys = self.inner.keys.write().unwrap_or_else(PoisonError::into_inner);
                let fresh = Snapshot {
                    set: Some(Arc::new(set)),
                    generation: keys.generation + 1,
                    fetched_at: Some(Instant::now()),
                };
                *keys = fresh.clone();
                Ok(Some(fresh))
            }
            Err(error) => {
                state.last_failure = Some((Instant::now(), error.clone()));
                Err(error)
            }
        }
    }

    /// One fetch of the metadata (unless known) and of the JWKS.
    async fn fetch(&self, state: &mut RefreshState) -> Result<KeySet, String> {
        let client = &self.inner.client;
        let issuer = &self.inner.config.issuer;
        let discovered = match &state.discovered {
            Some(discovered) => discovered.clone(),
            None => {
                let discovered = metadata::discover(client, issuer).await.inspect_err(|error| {
                    tracing::warn!(%issuer, %error, "the issuer's metadata could not be fetched");
                })?;
                state.discovered = Some(discovered.clone());
                discovered
            }
        };
        let Some(jwks_uri) = discovered.jwks_uri else {
            return Err(format!(
                "the metadata of the issuer {issuer:?} has no jwks_uri, so JWT access tokens cannot be verified"
            ));
        };
        let set = metadata::fetch_jwks(client, &jwks_uri).await.inspect_err(|error| {
            tracing::warn!(url = %jwks_uri, %error, "the issuer's JWKS could not be fetched");
            // the metadata may have moved too: discover again next time
            state.discovered = None;
        })?;
        tracing::debug!(url = %jwks_uri, keys = set.len(), "fetched the issuer's JWKS");
        Ok(set)
    }
}
