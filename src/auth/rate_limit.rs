//! Login throttling: failures counted per (account, client address) and per
//! address, answered with growing delays instead of a lockout.
//!
//! An attempt takes its cells *before* the password is checked, so parallel
//! guesses cannot all pass one check; a correct password gives its own cells
//! back, so only failures count. A success does not wipe the failures before
//! it: guesses in flight beside a correct password (someone who knows it
//! racing someone who does not) get no fresh budget, so however they
//! interleave no more than the allowed failures are ever checked. Each key runs through stages of `governor` buckets,
//! each twice as deep and four times as slow as the one before: with the
//! defaults, 5 quick failures, then one every 2 s, past 10 one every 8 s, past
//! 20 one every 32 s, past 40 one every 128 s. Someone guessing from another
//! address does not slow the owner at theirs.

use crate::limits::store::RefundableStore;
use governor::clock::{Clock, DefaultClock};
use governor::{Quota, RateLimiter};
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

/// How many buckets a key passes through; the last one's pace is the slowest.
const STAGES: u32 = 4;

/// Failures allowed per address, relative to the per-account-and-address
/// ones: one address may serve many users (a NAT, an office).
const ADDRESS_FACTOR: u32 = 4;

struct Stage<K: Hash + Eq + Clone> {
    limiter: RateLimiter<K, RefundableStore<K>, DefaultClock>,
    store: RefundableStore<K>,
    period: Duration,
}

struct Stages<K: Hash + Eq + Clone>(Vec<Stage<K>>);

impl<K: Hash + Eq + Clone> Stages<K> {
    fn new(first_burst: u32, first_delay: Duration) -> Self {
        Stages(
            (0..STAGES)
                .map(|i| {
                    let burst = NonZeroU32::new(first_burst.saturating_mul(1 << i))
                        .unwrap_or(NonZeroU32::MIN);
                    let period = first_delay
                        .max(Duration::from_millis(1))
                        .saturating_mul(4u32.pow(i));
                    let quota = Quota::with_period(period)
                        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
                        .allow_burst(burst);
                    let store = RefundableStore::new(period.saturating_mul(burst.get()));
                    Stage {
                        limiter: RateLimiter::new(quota, store.clone(), DefaultClock::default()),
                        store,
                        period,
                    }
                })
                .collect(),
        )
    }

    /// Takes a cell from every stage, or none and the wait until one is free.
    fn take(&self, key: &K) -> Result<(), Duration> {
        for (i, stage) in self.0.iter().enumerate() {
            if let Err(not_until) = stage.limiter.check_key(key) {
                // A refused attempt checks no password, so it costs nothing.
                for earlier in &self.0[..i] {
                    earlier.store.refund(key, earlier.period);
                }
                return Err(not_until.wait_time_from(stage.limiter.clock().now()));
            }
        }
        Ok(())
    }

    fn refund(&self, key: &K) {
        for stage in &self.0 {
            stage.store.refund(key, stage.period);
        }
    }
}

/// The login throttle of one server.
pub struct LoginLimiter {
    pair: Stages<(String, IpAddr)>,
    address: Stages<IpAddr>,
}

/// A login attempt that holds its cells; dropped without [`Attempt::succeeded`]
/// it stays counted as a failure.
pub struct Attempt<'a> {
    limiter: &'a LoginLimiter,
    pair: (String, IpAddr),
}

impl Attempt<'_> {
    /// The password was right: this attempt's cells come back, so a success
    /// never counts against the owner; earlier failures still decay at the
    /// throttle's pace.
    pub fn succeeded(self) {
        self.limiter.pair.refund(&self.pair);
        self.limiter.address.refund(&self.pair.1);
    }
}

impl LoginLimiter {
    pub fn new(max_failures: u32, first_delay: Duration) -> Self {
        LoginLimiter {
            pair: Stages::new(max_failures, first_delay),
            address: Stages::new(max_failures.saturating_mul(ADDRESS_FACTOR), first_delay),
        }
    }

    /// Reserves an attempt at `email` from `addr`, or says how many seconds
    /// to wait.
    pub fn reserve(&self, email: &str, addr: IpAddr) -> Result<Attempt<'_>, u64> {
        // The address first: one over its budget creates no key per email,
        // so cycling through emails cannot fill memory.
        self.address.take(&addr).map_err(whole_seconds)?;
        let pair = (email.to_owned(), addr);
        if let Err(wait) = self.pair.take(&pair) {
            self.address.refund(&addr);
            return Err(whole_seconds(wait));
        }
        Ok(Attempt {
            limiter: self,
            pair,
        })
    }
}

fn whole_seconds(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn failures_are_slowed_per_account_and_address_and_successes_cost_nothing() {
        let limiter = LoginLimiter::new(2, Duration::from_secs(60));
        let (attacker, owner) = (ip("192.0.2.1"), ip("198.51.100.1"));
        for _ in 0..2 {
            assert!(limiter.reserve("a@x.io", attacker).is_ok());
        }
        let wait = limiter
            .reserve("a@x.io", attacker)
            .err()
            .expect("slowed down");
        assert!((1..=60).contains(&wait), "{wait}");
        // The owner, elsewhere, is not slowed, and succeeding costs nothing.
        for _ in 0..5 {
            limiter
                .reserve("a@x.io", owner)
                .expect("the owner logs in")
                .succeeded();
        }
        assert!(limiter.reserve("a@x.io", attacker).is_err());
    }

    #[test]
    fn a_success_beside_failures_gives_them_no_fresh_budget() {
        let limiter = LoginLimiter::new(3, Duration::from_secs(60));
        let addr = ip("192.0.2.9");
        let right = limiter.reserve("a@x.io", addr).expect("first attempt");
        let wrong: Vec<_> = (0..2)
            .map(|_| limiter.reserve("a@x.io", addr).expect("within the budget"))
            .collect();
        right.succeeded();
        // The success gave back only its own cell: one more guess, then none.
        let one_more = limiter.reserve("a@x.io", addr).expect("the success's cell");
        assert!(limiter.reserve("a@x.io", addr).is_err());
        drop((wrong, one_more));
    }

    #[test]
    fn an_address_failing_on_many_accounts_is_slowed_for_new_ones() {
        let limiter = LoginLimiter::new(1, Duration::from_secs(60));
        let addr = ip("192.0.2.7");
        for i in 0..ADDRESS_FACTOR {
            assert!(limiter.reserve(&format!("u{i}@x.io"), addr).is_ok());
        }
        assert!(limiter.reserve("fresh@x.io", addr).is_err());
        assert!(limiter.reserve("fresh@x.io", ip("192.0.2.8")).is_ok());
    }
}
