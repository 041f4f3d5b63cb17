//! A spot clearing in steps (ARCHITECTURE.md "A clearing in steps"): the
//! tick that finds a clearing due begins it, and each tick takes one step
//! until it closes, so no tick holds the market for a whole clearing.
//!
//! The steps of a clearing of 10,000 bids: 40 of 256 bids each, every
//! step's winners granted at once at the index as it stands; the last of
//! them sets the new indexes; then a tick per displacement tried; then the
//! close, which announces the clearing and reprices every spot lease. A
//! clearing of at most 256 bids does all of it in one tick, as clearings
//! always did.

use std::collections::HashSet;

use super::auction::Bid;
use super::core::Engine;
use super::events::Event;
use super::spot::add_granted;
use super::spot_memo::{ClearingMemo, Prepared};
use super::spot_state::{ClearingRun, RunMemo};
use super::types::OrderId;

impl Engine {
    /// Whether a spot clearing is under way: the next tick carries it on,
    /// so the server ticks again at once instead of at its next second.
    pub fn clearing_under_way(&self) -> bool {
        self.spot.running()
    }

    /// Begins a clearing of the bids queued now; ticks carry it on
    /// ([`Engine::step_clearing`]).
    pub(super) fn begin_clearing(&mut self) {
        let bids = self
            .book
            .ranked_bids()
            .map(|(order, index, seq)| Bid { order, index, seq })
            .collect();
        self.spot.run = Some(ClearingRun {
            bids,
            ..ClearingRun::default()
        });
        self.spot.run_memo = RunMemo {
            start_growth: Some(self.view.growth()),
            ..RunMemo::default()
        };
    }

    /// One step of the clearing under way: the next `clearing_step_bids`
    /// bids, placed greedily by index then time and the winners granted at
    /// once; or, once every bid was tried, one displacement; or the close.
    pub(super) fn step_clearing(&mut self, events: &mut Vec<Event>) {
        let Some(mut run) = self.spot.run.take() else {
            return;
        };
        self.refresh_offpeak();
        if run.steps > 0 {
            let inputs = Some(self.placement_inputs());
            let memo = &mut self.spot.run_memo;
            memo.disturbed |= memo.after_step != inputs;
        }
        let prepared = if run.markets.is_none() {
            let prepared = self.try_bids(&mut run, events);
            if run.markets.is_some() && run.steps == 1 {
                // One step: all of it now, as a clearing run whole.
                let mut granted = std::mem::take(&mut run.granted);
                while self.displace_one(
                    run.displacements,
                    &run.lost,
                    &prepared,
                    &mut granted,
                    events,
                ) {
                    run.displacements += 1;
                }
                run.granted = granted;
                return self.close_clearing(run, prepared, events);
            }
            prepared
        } else {
            // Every bid was tried: a displacement a tick, then the close.
            let prepared = self.losers_prepared(&run);
            let mut granted = std::mem::take(&mut run.granted);
            let tried = run.displacements;
            let more = self.displace_one(tried, &run.lost, &prepared, &mut granted, events);
            run.granted = granted;
            if !more {
                return self.close_clearing(run, prepared, events);
            }
            run.displacements += 1;
            prepared
        };
        self.spot.run_memo.after_step = Some(self.placement_inputs());
        self.spot.resolved = prepared;
        self.spot.run = Some(run);
    }

    /// Tries the run's next bids, granting the winners; after its last,
    /// sets the new indexes (`run.markets`). Returns the bids' parsed
    /// requests.
    fn try_bids(&mut self, run: &mut ClearingRun, events: &mut Vec<Event>) -> Prepared {
        let start = run.next.min(run.bids.len());
        let step = self.cfg.clearing_step_bids.max(1) as usize;
        let end = (start + step).min(run.bids.len());
        let window = &run.bids[start..end];
        let prepared = self.resolve_bids(window, run.bids.len());
        let fit = self.fit_bids(window, &prepared);
        run.next = end;
        run.steps += 1;
        run.lost.extend(fit.outcome.losers.iter().cloned());
        run.lost_kinds.extend(fit.losers.iter().copied());
        let memo = &mut self.spot.run_memo;
        memo.no_room.extend(fit.no_room.iter().copied());
        if run.next >= run.bids.len() {
            // The indexes first: the last step's winners are granted at them.
            run.markets = Some(self.set_clearing_indexes(&run.lost_kinds, events));
        }
        // Earlier steps' winners are granted at the index as it stands;
        // the close reprices them.
        let granted = self.grant_winners(fit.won, events);
        add_granted(&mut run.granted, granted);
        prepared
    }

    /// The parsed requests of every bid of the run that lost, those of
    /// earlier steps too (displacement reads them).
    fn losers_prepared(&mut self, run: &ClearingRun) -> Prepared {
        let lost: HashSet<OrderId> = run.lost.iter().map(|(id, _)| *id).collect();
        let losers: Vec<Bid> = run
            .bids
            .iter()
            .filter(|b| lost.contains(&b.order))
            .cloned()
            .collect();
        self.resolve_bids(&losers, run.bids.len())
    }

    /// Ends the clearing: one `AuctionCleared` per market with the units
    /// won in all its steps, every spot lease repriced at the new indexes
    /// (the earlier steps' winners included), and what it learned kept.
    fn close_clearing(&mut self, run: ClearingRun, prepared: Prepared, events: &mut Vec<Event>) {
        let markets = run.markets.clone().unwrap_or_default();
        self.announce_clearings(markets, &run.granted, events);
        self.reprice_spot(events);
        self.remember_clearing(&run, prepared);
    }

    /// What the clearing just ended learned, for the next one
    /// ([`ClearingMemo`]). When something between its steps changed what
    /// placement reads (or it was restored between them), its bids that
    /// found no room count nodes grown since it began, and what its losers
    /// lost to is not remembered; otherwise it stands as a clearing run
    /// whole would.
    fn remember_clearing(&mut self, run: &ClearingRun, prepared: Prepared) {
        let run_memo = std::mem::take(&mut self.spot.run_memo);
        let undisturbed = run.steps == 1 || (!run_memo.disturbed && run_memo.after_step.is_some());
        let lost = if undisturbed {
            run.lost
                .iter()
                .map(|(id, _)| *id)
                .filter(|id| prepared.get(id).is_some_and(|r| r.req.ends.is_none()))
                .collect()
        } else {
            HashSet::new()
        };
        self.spot.memo = ClearingMemo {
            growth: if undisturbed {
                Some(self.view.growth())
            } else {
                run_memo.start_growth
            },
            no_room: run_memo.no_room,
            seen: undisturbed.then(|| self.placement_inputs()),
            lost,
        };
        self.spot.resolved = prepared;
    }
}
