//! What the spot auction keeps between clearings.

use std::collections::{BTreeMap, HashSet};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::auction::Bid;
use super::placement::{ModelSet, RegionIdx, UnitPrices, Units};
use super::spot_memo::{ClearingMemo, DisplaceMemo, PlacementInputs, Prepared};
use super::types::{OrderId, Ts};

/// A spot market by (GPU model, region) names.
pub(super) type Market = (String, String);

#[derive(Debug, Clone, Default)]
pub(super) struct SpotState {
    /// Each market's clearing index, once cleared.
    clearing: BTreeMap<Market, Decimal>,
    last_clear: Option<Ts>,
    /// Capacity changed since the last clearing: clear at the next tick.
    dirty: bool,
    /// What the last clearing learned of its losers (see [`ClearingMemo`]).
    pub memo: ClearingMemo,
    /// Queued bids' parsed requests, kept between clearings so a clearing
    /// parses only new bids. Derived, so not in a snapshot.
    pub resolved: Prepared,
    /// Displacements that found no plan (see [`DisplaceMemo`]).
    pub displaced: DisplaceMemo,
    /// Standard TFLOPS primary orders are expected to ask for within the
    /// notice period, per market: not sold to spot.
    pub holdback: BTreeMap<Market, Decimal>,
    /// The clearing under way, if one is (in a snapshot: ticks carry it on).
    pub run: Option<ClearingRun>,
    /// What the clearing under way learns for the next one's memo. Derived,
    /// so not in a snapshot: a run restored without it leaves no memo.
    pub run_memo: RunMemo,
}

/// A spot clearing under way (ARCHITECTURE.md "What a spot clearing
/// remembers"). A clearing tries the bids queued when it began, a bounded
/// step of them per tick, so that no tick holds the market task for long;
/// orders are applied between steps. Each step grants its winners at once
/// (at their market's clearing index as it stands); the last step sets the
/// new indexes from every bid that lost, reprices every spot lease, the
/// step's winners included, and plans displacements.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClearingRun {
    /// The bids queued when the clearing began, in auction order.
    pub bids: Vec<Bid>,
    /// How many of them were tried.
    pub next: usize,
    /// Bids that lost, in auction order, with their index.
    pub lost: Vec<(OrderId, Decimal)>,
    /// What each bid that lost asked (models, region) and its index: the
    /// markets' clearing indexes come from these.
    pub lost_kinds: Vec<(ModelSet, Option<RegionIdx>, Decimal)>,
    /// The units won so far, per market.
    pub granted: BTreeMap<Market, Units>,
    /// Steps taken.
    pub steps: u32,
    /// Every bid was tried and these are the new indexes; displacements
    /// and the clearing's close are left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markets: Option<Markets>,
    /// Displacements tried.
    #[serde(default)]
    pub displacements: usize,
}

/// Each market's clearing index and list prices, by (model, region) names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Markets {
    pub index: BTreeMap<Market, Decimal>,
    pub list: BTreeMap<Market, UnitPrices>,
}

/// See [`SpotState::run_memo`].
#[derive(Debug, Clone, Default)]
pub struct RunMemo {
    /// The view's growth count when the clearing began (`None`: restored).
    pub start_growth: Option<u64>,
    /// Bids that found no room at a price they could win at.
    pub no_room: HashSet<OrderId>,
    /// What placement read when the last step ended (`None`: none yet, or
    /// restored).
    pub after_step: Option<PlacementInputs>,
    /// Something between two steps changed what placement reads (or the
    /// run was restored): what its losers lost to is not remembered.
    pub disturbed: bool,
}

impl SpotState {
    /// A market's clearing index, once cleared.
    pub fn index(&self, market: &Market) -> Option<Decimal> {
        self.clearing.get(market).copied()
    }

    /// Every market's clearing index.
    pub fn indexes(&self) -> impl Iterator<Item = (&Market, Decimal)> {
        self.clearing.iter().map(|(m, i)| (m, *i))
    }

    /// Sets a market's index; whether it moved.
    pub fn set_index(&mut self, market: Market, index: Decimal) -> bool {
        self.clearing.insert(market, index) != Some(index)
    }

    pub fn last_clear(&self) -> Option<Ts> {
        self.last_clear
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Asks for a clearing at the next tick.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether a clearing is under way.
    pub fn running(&self) -> bool {
        self.run.is_some()
    }

    /// Whether a clearing is due at `now` (its interval is up, or capacity
    /// changed since the last); when it is, the next is counted from `now`.
    pub fn take_due(&mut self, now: Ts, interval_s: Ts) -> bool {
        let due = self.last_clear.is_none_or(|t| now >= t + interval_s) || self.dirty;
        if due {
            self.dirty = false;
            self.last_clear = Some(now);
        }
        due
    }

    /// Forgets everything derived that clearings keep (tests check that it
    /// changes no outcome).
    #[cfg(test)]
    pub fn forget_derived(&mut self) {
        self.memo = ClearingMemo::default();
        self.resolved = Prepared::default();
        self.displaced = DisplaceMemo::default();
        self.run_memo = RunMemo::default();
    }

    /// The auction clock as a snapshot kept it.
    pub fn restore_clock(&mut self, last_clear: Option<Ts>, dirty: bool) {
        self.last_clear = last_clear;
        self.dirty = dirty;
    }
}
