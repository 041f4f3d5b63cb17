//! The market's clock: wall time, which a test can move forward.
//!
//! Reservations start an hour or more ahead and resale listings begin on a
//! whole hour, so a test that watches a reservation start or a listing take
//! over its slice would otherwise wait hours. Everything that runs the market
//! reads this clock (the engine's ticks, order windows, heartbeats, the node
//! watchdog, billing periods); what guards access or paces the network keeps
//! wall time (token expiry, login delays, webhook retries), so moving the
//! market on never expires a session.

use chrono::{DateTime, Utc};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Cheap to clone; clones share how far ahead they run.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    ahead_s: Arc<AtomicI64>,
    /// Where a stopped clock stands (before `advance`): a test that asserts
    /// exact durations moves time only by hand, so the real seconds its
    /// requests take never show up in what it measures.
    stopped_at: Option<DateTime<Utc>>,
}

impl Clock {
    /// A clock that stands still at the current whole second until
    /// [`Clock::advance`] moves it.
    pub fn stopped() -> Clock {
        let now = Utc::now();
        let whole_second =
            now - chrono::Duration::nanoseconds(i64::from(now.timestamp_subsec_nanos()));
        Clock {
            ahead_s: Arc::default(),
            stopped_at: Some(whole_second),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.stopped_at.unwrap_or_else(Utc::now)
            + chrono::Duration::seconds(self.ahead_s.load(Ordering::Relaxed))
    }

    /// Moves the clock on by `by` (whole seconds). Only forward: the ledger
    /// and the engine never see time run backwards.
    pub fn advance(&self, by: Duration) {
        let secs = i64::try_from(by.as_secs()).unwrap_or(i64::MAX);
        self.ahead_s.fetch_add(secs, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_move_together_and_only_forward() {
        let clock = Clock::default();
        let seen_by_the_market = clock.clone();
        let before = seen_by_the_market.now();
        clock.advance(Duration::from_secs(7200));
        let after = seen_by_the_market.now();
        assert!(after - before >= chrono::Duration::seconds(7200));
        assert!(after - before < chrono::Duration::seconds(7260));
    }

    #[test]
    fn a_stopped_clock_moves_only_when_advanced() {
        let clock = Clock::stopped();
        let start = clock.now();
        assert_eq!(start.timestamp_subsec_nanos(), 0);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(clock.now(), start);
        clock.clone().advance(Duration::from_secs(900));
        assert_eq!(clock.now() - start, chrono::Duration::seconds(900));
    }
}
