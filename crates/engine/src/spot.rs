//! Wiring the spot auction to capacity: bids are placed on idle capacity
//! (never inside a booked window), the clearing index is set per
//! (model, region), live spot leases are repriced and warned.

use std::collections::{BTreeMap, HashSet};

use rust_decimal::Decimal;

use super::auction::{self, Bid};
use super::core::Engine;
use super::events::Event;
use super::lease::{LeaseState, NoticeReason};
use super::orders::OpenState;
use super::placement::{model_at, place, ModelSet, Placement, PlacementRequest, RegionIdx, Units};
use super::preemption::Claim;
use super::pricing::{self, PriceRule, SPOT_FLOOR};
use super::spot_memo::{at_least, no_room_on, Known, Prepared, Resolved};
use super::spot_state::Markets;
use super::types::{LeaseId, OrderId, Priority};

/// What the greedy fit of one step of a clearing decided.
pub(super) struct Fit {
    pub outcome: auction::Outcome,
    /// Winners with their placement (taken provisionally in the view) and index.
    pub won: Vec<(OrderId, Placement, Decimal)>,
    /// Every bid that did not win: the models and region it asked, its index.
    pub losers: Vec<(ModelSet, Option<RegionIdx>, Decimal)>,
    /// Bids that found no room at a price they could win at (not merely
    /// lost on price where there was such room, nor to the holdback).
    pub no_room: HashSet<OrderId>,
}

/// Displacement tries per clearing (see [`Engine::displace_one`]).
const MAX_DISPLACEMENTS: usize = 2;

/// How a winning bid's lease starts.
enum Start {
    /// On idle capacity: provisioning now.
    Now,
    /// On capacity these leases hold: pending until their notice runs out.
    AfterNotice(Vec<LeaseId>),
}

impl Engine {
    /// Phase 1: greedy fit of a step's `bids` by index then time, taking
    /// capacity in the view as it goes; what the last clearing learned
    /// spares placements that cannot have changed.
    pub(super) fn fit_bids(&mut self, bids: &[Bid], prepared: &Prepared) -> Fit {
        let mut spot_room = self.spot_room();
        let inputs = self.placement_inputs();
        let known = Known::of(&self.spot.memo, &self.view, &inputs);
        let (mut won, mut losers, mut found_no_room) = (Vec::new(), Vec::new(), HashSet::new());
        let (view, mix, policy, book) = (&mut self.view, &self.mix, &self.cfg.policy, &self.book);
        // Capacity only shrinks during a step, so a bid at least as large as
        // one that found no room (anywhere, or on the nodes that grew) finds
        // none either: skip its placement.
        let mut no_room: Vec<&PlacementRequest> = Vec::new();
        let mut none_on_grown: Vec<&PlacementRequest> = Vec::new();
        let mut outcome = auction::Outcome::default();
        for bid in bids {
            // Cancelled, or no longer the bid queued when the clearing
            // began: neither a winner nor a loser.
            let queued = book
                .get(bid.order)
                .is_some_and(|o| o.state == OpenState::SpotQueued && o.seq == bid.seq);
            if !queued {
                continue;
            }
            let mut try_bid = || {
                let Some(resolved) = prepared.get(&bid.order) else {
                    return false;
                };
                let (req, max_price) = (&resolved.req, &resolved.max_price);
                let mut lose = |no_winning_room: bool| {
                    if no_winning_room {
                        found_no_room.insert(bid.order);
                    }
                    losers.push((req.models, req.region, bid.index));
                    false
                };
                if known.no_room(&bid.order) || no_room.iter().any(|f| at_least(req, f)) {
                    return lose(true);
                }
                if let Some((was_no_room, grown)) = &known.no_room_but {
                    if was_no_room.contains(&bid.order) {
                        if none_on_grown.iter().any(|f| at_least(req, f)) {
                            return lose(true);
                        }
                        if no_room_on(grown, view, req, mix, policy) {
                            none_on_grown.push(req);
                            return lose(true);
                        }
                    }
                }
                if won.is_empty() && req.ends.is_none() && known.lost(&bid.order) {
                    return lose(false);
                }
                let Some(p) = place(view, req, mix, policy) else {
                    no_room.push(req);
                    return lose(true);
                };
                // Its index where it landed; below the floor there, it lost on price.
                let index = p
                    .list_value
                    .and_then(|v| pricing::price_index(*max_price, v));
                let Some(index) = index.filter(|i| *i >= SPOT_FLOOR) else {
                    // Cheapest first, and not moved to an off-peak region: every
                    // option that would price it at the floor is cheaper than
                    // where it landed (the index falls as the list value rises),
                    // and none had room. For the memo it found no room at a price
                    // it could win at, which only freed capacity can change.
                    let priced_out = policy.cheapest_first && p.why.offpeak_over.is_none();
                    return lose(priced_out && index.is_some());
                };
                // Capacity the forecast keeps for primary orders: lost for lack of it.
                if !spot_room.take(&p) {
                    return lose(false);
                }
                if view.allocate(&p).is_err() {
                    return false;
                }
                won.push((bid.order, p, index));
                true
            };
            if try_bid() {
                outcome.winners.push(bid.order);
            } else {
                outcome.losers.push((bid.order, bid.index));
            }
        }
        Fit {
            outcome,
            won,
            losers,
            no_room: found_no_room,
        }
    }

    /// Phase 2: the clearing index of every market from the losers that
    /// could use it: the highest losing index per (models, region) asked,
    /// then per market the highest of the kinds that can use it. Emits
    /// `PriceChanged` where an index moved.
    pub(super) fn set_clearing_indexes(
        &mut self,
        losers: &[(ModelSet, Option<RegionIdx>, Decimal)],
        events: &mut Vec<Event>,
    ) -> Markets {
        let mut highest_by_kind: BTreeMap<(ModelSet, Option<RegionIdx>), Decimal> = BTreeMap::new();
        for &(models, region, index) in losers {
            let top = highest_by_kind.entry((models, region)).or_insert(index);
            *top = (*top).max(index);
        }
        let mut markets = Markets::default();
        for b in self.view.buckets() {
            let Some(prices) = self.view.price(b.region, b.model) else {
                continue;
            };
            let region = self
                .view
                .regions
                .get(usize::from(b.region))
                .map_or_else(String::new, |r| r.name.clone());
            let model = model_at(b.model).name.to_owned();
            let idx = auction::clearing_index(highest_by_kind.iter().filter_map(
                |((models, region), index)| {
                    let usable = models.contains(b.model) && region.is_none_or(|r| r == b.region);
                    usable.then_some(*index)
                },
            ));
            markets.list.insert((model.clone(), region.clone()), prices);
            markets.index.insert((model, region), idx);
        }
        for ((model, region), idx) in &markets.index {
            let key = (model.clone(), region.clone());
            if self.spot.set_index(key, *idx) {
                events.push(Event::PriceChanged {
                    gpu_model: model.clone(),
                    region: region.clone(),
                    clearing_index: *idx,
                    at: self.now,
                });
            }
        }
        markets
    }

    /// Phase 3: grants the winners, their capacity moving from the view's
    /// provisional take into the calendars. Returns the units won per market.
    pub(super) fn grant_winners(
        &mut self,
        won: Vec<(OrderId, Placement, Decimal)>,
        events: &mut Vec<Event>,
    ) -> BTreeMap<(String, String), Units> {
        let mut granted: BTreeMap<(String, String), Units> = BTreeMap::new();
        for won in won {
            let _ = self.view.release(&won.1);
            self.grant_bid(won, Start::Now, &mut granted, events);
        }
        granted
    }

    /// One `AuctionCleared` per market: its index, its unit prices at that
    /// index and the units won there.
    pub(super) fn announce_clearings(
        &self,
        markets: Markets,
        granted: &BTreeMap<(String, String), Units>,
        events: &mut Vec<Event>,
    ) {
        for (market, index) in markets.index {
            let Some(prices) = markets.list.get(&market).copied() else {
                continue;
            };
            let won = granted.get(&market).copied().unwrap_or_default();
            let (gpu_model, region) = market;
            events.push(Event::AuctionCleared {
                gpu_model,
                region,
                clearing_index: index,
                unit_prices: pricing::unit_prices(
                    prices,
                    &PriceRule::ListMultiple { multiplier: index },
                ),
                won,
                at: self.now,
            });
        }
    }

    /// Bids that found no idle capacity may displace running spot leases
    /// with a lower index, lowest first, after notice; the new lease waits
    /// `pending`. At most [`MAX_DISPLACEMENTS`] tries per clearing, since
    /// each plan walks the fleet: this is the try number `tried` (of the
    /// losers in auction order). Whether there is one to make: the tries
    /// end at the first loser whose index is no higher than every spot
    /// lease's.
    pub(super) fn displace_one(
        &mut self,
        tried: usize,
        losers: &[(OrderId, Decimal)],
        prepared: &Prepared,
        granted: &mut BTreeMap<(String, String), Units>,
        events: &mut Vec<Event>,
    ) -> bool {
        let Some((order_id, index)) = losers.get(tried) else {
            return false;
        };
        let lowest = self.leases.spot().filter_map(|l| l.bid_index).min();
        if tried >= MAX_DISPLACEMENTS || lowest.is_none_or(|low| low >= *index) {
            return false;
        }
        let Some(bid) = prepared.get(order_id) else {
            return true;
        };
        // A plan that failed fails again while nothing it reads has
        // changed (a bid with a predicted end reads the clock: always tried).
        let seen = self.displace_inputs();
        let lasting = bid.req.ends.is_none();
        if lasting && self.spot.displaced.failed(&seen, *order_id, bid.seq) {
            return true;
        }
        match self.plan_displacement(bid, *index) {
            Some((p, victims, placed_index)) => {
                let won = (*order_id, p, placed_index);
                self.grant_bid(won, Start::AfterNotice(victims), granted, events);
            }
            None if lasting => self.spot.displaced.record(seen, *order_id, bid.seq),
            None => {}
        }
        true
    }

    /// Where a bid would land by displacing lower spot bids, the leases it
    /// displaces and its index there; `None` without a plan or below the floor.
    fn plan_displacement(
        &self,
        bid: &Resolved,
        index: Decimal,
    ) -> Option<(Placement, Vec<LeaseId>, Decimal)> {
        let claim = Claim {
            priority: Priority::Spot,
            bid_index: Some(index),
        };
        let (p, victims) = self.plan_preemption(&bid.req, claim, self.now, None)?;
        let placed_index = p
            .list_value
            .and_then(|v| pricing::price_index(bid.max_price, v))
            .filter(|i| *i >= SPOT_FLOOR)?;
        Some((p, victims, placed_index))
    }

    /// Grants a winning bid its lease at its market's clearing index, and
    /// tells the buyer: running at once, or displacing `victims`, who get
    /// their notice, with the lease pending until it runs out.
    fn grant_bid(
        &mut self,
        (order_id, p, index): (OrderId, Placement, Decimal),
        start: Start,
        granted: &mut BTreeMap<(String, String), Units>,
        events: &mut Vec<Event>,
    ) {
        let now = self.now;
        let Some(o) = self.book.get(order_id).cloned() else {
            return;
        };
        let market = (model_at(p.model).name.to_owned(), self.region_name(&p));
        let clearing = self.spot.index(&market).unwrap_or(SPOT_FLOOR);
        add_units(granted.entry(market).or_default(), p.units);
        let rule = PriceRule::Spot {
            bid_index: index,
            clearing_index: clearing,
        };
        let (state, ready_at, victims) = match start {
            Start::Now => (LeaseState::Provisioning, now, Vec::new()),
            Start::AfterNotice(victims) => (LeaseState::Pending, now + self.cfg.notice_s, victims),
        };
        let lease = self.build_lease(
            order_id, o.buyer, &o.spec, o.fills, p, rule, state, ready_at,
        );
        for v in &victims {
            self.give_notice(*v, now, ready_at, NoticeReason::Priority, events);
        }
        let report = self.report(&lease, victims, Some(clearing));
        let lease_id = lease.id;
        if let Some(open) = self.book.get_mut(order_id) {
            open.state = OpenState::SpotLive;
            open.fills += 1;
            open.lease = Some(lease_id);
        }
        self.grant(lease, events);
        events.push(Event::OrderFilled {
            order_id,
            lease_id,
            report: Box::new(report),
            at: now,
        });
    }

    /// Reprices live spot leases at their market's clearing index and warns
    /// those whose bid the clearing index came within 10 % of.
    pub(super) fn reprice_spot(&mut self, events: &mut Vec<Event>) {
        let now = self.now;
        let ids = self.leases.spot_ids();
        for id in ids {
            let Some(l) = self.leases.get(id) else {
                continue;
            };
            let Some(bid_index) = l.bid_index else {
                continue;
            };
            let Some(clearing) = self.spot.index(&(l.model.clone(), l.region.clone())) else {
                continue;
            };
            let list = self.list_of(&l.placement);
            let rule = PriceRule::Spot {
                bid_index,
                clearing_index: clearing,
            };
            let unit_prices = pricing::unit_prices(list, &rule);
            let price = pricing::per_hour(l.placement.units, unit_prices);
            // Only a lease whose rule or price moves is touched: the server
            // rewrites the row of every lease a command touches.
            if same_rule(&l.rule, &rule) && price == l.price_per_hour {
                continue;
            }
            let Some(l) = self.lease_mut(id) else {
                continue;
            };
            l.rule = rule;
            if price != l.price_per_hour {
                l.price_per_hour = price;
                l.unit_prices = unit_prices;
                events.push(Event::LeaseRepriced {
                    lease_id: id,
                    price_per_hour: price,
                    at: now,
                });
            }
        }
        self.warn_rebalance(events);
    }
}

/// Whether two rules are the same down to each figure's scale (assigning
/// an equal rule of another scale would still change the lease's row).
fn same_rule(a: &PriceRule, b: &PriceRule) -> bool {
    let same = |x: &Decimal, y: &Decimal| x.serialize() == y.serialize();
    match (a, b) {
        (
            PriceRule::Spot {
                bid_index: a1,
                clearing_index: a2,
            },
            PriceRule::Spot {
                bid_index: b1,
                clearing_index: b2,
            },
        ) => same(a1, b1) && same(a2, b2),
        (PriceRule::ListMultiple { multiplier: x }, PriceRule::ListMultiple { multiplier: y }) => {
            same(x, y)
        }
        _ => false,
    }
}

/// Adds one step's units won per market to the clearing's.
pub(super) fn add_granted(
    total: &mut BTreeMap<(String, String), Units>,
    step: BTreeMap<(String, String), Units>,
) {
    for (market, units) in step {
        add_units(total.entry(market).or_default(), units);
    }
}

/// Adds a grant's units to its market's total. Units are bounded by the
/// fleet, far inside `Decimal`'s range.
fn add_units(total: &mut Units, more: Units) {
    total.tflops_h += more.tflops_h;
    total.vram_h += more.vram_h;
}
