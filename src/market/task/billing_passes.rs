//! When the market bills its running leases: a pass every billing interval,
//! each batch billing one slice of it until every lease due was charged.

use crate::billing::settle::BillingSlice;

/// Leases one batch bills at most. Each costs a handful of statements
/// (the charge, its postings, the lease's row, a hold renewal), so a slice
/// holds the market's batch for a bounded time however large the fleet:
/// the market-scale bench (BENCHMARKS.md) stalled every order for tens of
/// seconds when a batch billed 25,000 leases at once.
pub(super) const BILLING_SLICE: u32 = 200;

#[derive(Debug, Default)]
pub(super) struct BillingPasses {
    /// When the last pass began (0: bill at the first batch).
    started: i64,
    /// Where the pass under way goes on; `None` between passes.
    under_way: Option<BillingSlice>,
}

impl BillingPasses {
    /// Whether a batch at `ts` bills: a pass is under way, or one is due.
    pub(super) fn due(&self, ts: i64, interval_s: i64) -> bool {
        self.under_way.is_some() || ts - self.started >= interval_s
    }

    /// Whether a batch at `ts` begins a pass (not one that goes on with
    /// a pass under way).
    pub(super) fn begins(&self, ts: i64, interval_s: i64) -> bool {
        self.under_way.is_none() && ts - self.started >= interval_s
    }

    /// The slice to bill now, beginning a pass at `ts` if none is under way.
    pub(super) fn next_slice(&mut self, ts: i64) -> BillingSlice {
        self.under_way.take().unwrap_or_else(|| {
            self.started = ts;
            BillingSlice {
                after: None,
                limit: BILLING_SLICE,
            }
        })
    }

    /// After a slice: where the pass goes on, or `None` when it is over.
    pub(super) fn billed(&mut self, rest: Option<BillingSlice>) {
        self.under_way = rest;
    }

    /// Bill at the next batch, from the start, as after a restart.
    pub(super) fn restart(&mut self) {
        *self = Self::default();
    }
}
