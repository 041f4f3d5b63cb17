//! A keyed state store for `governor` whose cells can be given back and whose
//! keys can be forgotten, which the stock stores cannot do.
//!
//! The login throttle takes a cell *before* it checks a password, so parallel
//! guesses cannot all slip through; a correct password then gives the cell
//! back, so only failures are counted.

use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed, StateStore};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Entries beyond this many (at least) make the store drop the ones idle long
/// enough to be full again, which is the same as forgetting them.
const PRUNE_ABOVE: usize = 10_000;

struct Inner<K> {
    states: HashMap<K, (InMemoryState, Instant)>,
    /// The size at which idle keys are dropped next: doubled past what a
    /// prune leaves, so pruning stays cheap however many keys are busy.
    prune_at: usize,
}

/// One GCRA state per key, shared between a `RateLimiter` and its owner.
pub struct RefundableStore<K> {
    inner: Arc<Mutex<Inner<K>>>,
    /// How long an idle key takes to refill completely.
    idle_full_after: Duration,
}

impl<K> Clone for RefundableStore<K> {
    fn clone(&self) -> Self {
        RefundableStore {
            inner: self.inner.clone(),
            idle_full_after: self.idle_full_after,
        }
    }
}

impl<K: Hash + Eq + Clone> RefundableStore<K> {
    pub fn new(idle_full_after: Duration) -> Self {
        RefundableStore {
            inner: Arc::new(Mutex::new(Inner {
                states: HashMap::new(),
                prune_at: PRUNE_ABOVE,
            })),
            idle_full_after,
        }
    }

    fn map(&self) -> MutexGuard<'_, Inner<K>> {
        // A panic elsewhere leaves the counters valid; keep using them.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives one cell of `period` back to `key`.
    pub fn refund(&self, key: &K, period: Duration) {
        if let Some((state, _)) = self.map().states.get(key) {
            let period = Nanos::from(period);
            // GCRA takes max(state, now), so an arrival time moved into the
            // past never grants more than a full burst.
            let _ = state.measure_and_replace(&NotKeyed::NonKey, |tat| {
                Ok::<_, ()>(((), tat.unwrap_or_default().saturating_sub(period)))
            });
        }
    }

    /// Forgets `key`: its next attempt starts with a full burst.
    pub fn forget(&self, key: &K) {
        self.map().states.remove(key);
    }
}

impl<K: Hash + Eq + Clone> StateStore for RefundableStore<K> {
    type Key = K;

    fn measure_and_replace<T, F, E>(&self, key: &K, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut inner = self.map();
        let now = Instant::now();
        if inner.states.len() > inner.prune_at {
            let full_after = self.idle_full_after;
            inner
                .states
                .retain(|_, (_, touched)| now.saturating_duration_since(*touched) < full_after);
            inner.prune_at = PRUNE_ABOVE.max(inner.states.len().saturating_mul(2));
        }
        let (state, touched) = inner
            .states
            .entry(key.clone())
            .or_insert_with(|| (InMemoryState::default(), now));
        *touched = now;
        state.measure_and_replace(&NotKeyed::NonKey, f)
    }
}
