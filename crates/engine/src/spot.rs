//! Wiring the spot auction to capacity: bids are placed on idle capacity
//! (never inside a booked window), the clearing index is set per
//! (model, region), live spot leases are repriced and warned.

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;

use super::auction::{self, Bid};
use super::core::Engine;
use super::events::Event;
use super::lease::{LeaseState, NoticeReason};
use super::orders::OpenState;
use super::placement::{
    model_at, place, Compute, ForecastClass, ModelSet, Placement, PlacementRequest, RegionIdx,
    UnitPrices, Units,
};
use super::preemption::Claim;
use super::pricing::{self, PriceRule, SPOT_FLOOR};
use super::types::OrderId;
use super::types::Priority;

/// A queued bid's parsed request and its max price per hour.
type Prepared = BTreeMap<OrderId, (PlacementRequest, Decimal)>;

/// What the greedy fit of one clearing decided.
struct Fit {
    outcome: auction::Outcome,
    /// Winners with their placement (taken provisionally in the view) and index.
    won: Vec<(OrderId, Placement, Decimal)>,
    /// Every bid that did not win, with its request.
    losers: Vec<(OrderId, PlacementRequest)>,
    /// Bids that found no room at all (not merely lost on price).
    no_room: BTreeSet<OrderId>,
}

/// Each market's clearing index and list prices, by (model, region) names.
struct Markets {
    index: BTreeMap<(String, String), Decimal>,
    list: BTreeMap<(String, String), UnitPrices>,
}

impl Engine {
    /// Runs one clearing: greedy placement of queued bids by index then time,
    /// the clearing index per market from the bids that lost, winners granted
    /// at min(own index, clearing) × list value.
    pub(super) fn clear_spot(&mut self, events: &mut Vec<Event>) {
        self.refresh_offpeak();
        let (mut bids, prepared) = self.queued_bids();
        let fit = self.fit_bids(&mut bids, &prepared);
        let markets = self.set_clearing_indexes(&fit, events);
        let mut granted = self.grant_winners(fit.won, events);
        self.displace(&fit.outcome.losers, &prepared, &mut granted, events);
        self.announce_clearings(markets, &granted, events);
        self.reprice_spot(events);
        let lost = fit
            .outcome
            .losers
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| prepared.get(id).is_some_and(|(req, _)| req.ends.is_none()))
            .collect();
        self.spot.memo = ClearingMemo {
            growth: Some(self.view.growth()),
            no_room: fit.no_room,
            seen: Some(self.placement_inputs()),
            lost,
        };
    }

    /// The queued bids, and the request and max price of each that resolves.
    fn queued_bids(&self) -> (Vec<Bid>, Prepared) {
        let bids: Vec<Bid> = self
            .book
            .ids_in(OpenState::SpotQueued)
            .into_iter()
            .filter_map(|id| {
                let o = self.book.get(id)?;
                Some(Bid {
                    order: id,
                    index: o.bid_index?,
                    seq: o.seq,
                })
            })
            .collect();
        let prepared = bids
            .iter()
            .filter_map(|b| {
                let o = self.book.get(b.order)?;
                let req = self.resolve(&o.spec).ok()?;
                Some((b.order, (req, o.spec.max_price.unwrap_or_default())))
            })
            .collect();
        (bids, prepared)
    }

    /// Phase 1: greedy fit by index then time, taking capacity in the view
    /// as it goes; what the last clearing learned spares placements that
    /// cannot have changed.
    fn fit_bids(&mut self, bids: &mut [Bid], prepared: &Prepared) -> Fit {
        let mut spot_room = self.spot_room();
        let memo = std::mem::take(&mut self.spot.memo);
        // A bid that found no room at the last clearing finds none while
        // nothing has been freed since: it loses without a placement.
        let known_no_room = if memo.growth == Some(self.view.growth()) {
            memo.no_room
        } else {
            BTreeSet::new()
        };
        // While nothing placement reads has changed either, every bid lands
        // where it did and loses the same way, until a bid of this clearing
        // wins and takes capacity (a bid with a predicted end reads the
        // clock, so it is always placed).
        let seen = self.placement_inputs();
        let known_lost = if memo.seen.as_ref() == Some(&seen) {
            memo.lost
        } else {
            BTreeSet::new()
        };
        let (mut won, mut losers, mut found_no_room) = (Vec::new(), Vec::new(), BTreeSet::new());
        let (view, mix, policy) = (&mut self.view, &self.mix, &self.cfg.policy);
        // Capacity only shrinks during a clearing, so a bid at least as large as
        // one that found no room finds none either: skip its placement.
        let mut no_room: Vec<&PlacementRequest> = Vec::new();
        let outcome = auction::run(bids, |bid| {
            let Some((req, max_price)) = prepared.get(&bid.order) else {
                return false;
            };
            let mut lose = |no_room_at_all: bool| {
                if no_room_at_all {
                    found_no_room.insert(bid.order);
                }
                losers.push((bid.order, req.clone()));
                false
            };
            if known_no_room.contains(&bid.order) || no_room.iter().any(|f| at_least(req, f)) {
                return lose(true);
            }
            if won.is_empty() && req.ends.is_none() && known_lost.contains(&bid.order) {
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
                return lose(false);
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
        });
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
    fn set_clearing_indexes(&mut self, fit: &Fit, events: &mut Vec<Event>) -> Markets {
        let losing: BTreeMap<OrderId, Decimal> = fit.outcome.losers.iter().copied().collect();
        let mut highest_by_kind: BTreeMap<(ModelSet, Option<RegionIdx>), Decimal> = BTreeMap::new();
        for (id, req) in &fit.losers {
            if let Some(&index) = losing.get(id) {
                let top = highest_by_kind
                    .entry((req.models, req.region))
                    .or_insert(index);
                *top = (*top).max(index);
            }
        }
        let mut markets = Markets {
            index: BTreeMap::new(),
            list: BTreeMap::new(),
        };
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
    fn grant_winners(
        &mut self,
        won: Vec<(OrderId, Placement, Decimal)>,
        events: &mut Vec<Event>,
    ) -> BTreeMap<(String, String), Units> {
        let mut granted: BTreeMap<(String, String), Units> = BTreeMap::new();
        for (order_id, p, index) in won {
            let _ = self.view.release(&p);
            let Some(o) = self.book.get(order_id).cloned() else {
                continue;
            };
            let market = (model_at(p.model).name.to_owned(), self.region_name(&p));
            let clearing = self.spot.index(&market).unwrap_or(SPOT_FLOOR);
            add_units(granted.entry(market).or_default(), p.units);
            let rule = PriceRule::Spot {
                bid_index: index,
                clearing_index: clearing,
            };
            let lease = self.build_lease(
                order_id,
                o.buyer,
                &o.spec,
                o.fills,
                p,
                rule,
                LeaseState::Provisioning,
                self.now,
            );
            let report = self.report(&lease, Vec::new(), Some(clearing));
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
                at: self.now,
            });
        }
        granted
    }

    /// One `AuctionCleared` per market: its index, its unit prices at that
    /// index and the units won there.
    fn announce_clearings(
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

    /// What placement and the spot holdback read besides the bids: equal
    /// values, the same placements.
    fn placement_inputs(&self) -> PlacementInputs {
        PlacementInputs {
            view_changes: self.view.changes(),
            demand_recorded: self.mix.recorded(),
            mix_forecast: self.mix.forecast().to_vec(),
            holdback: self.spot.holdback.clone(),
        }
    }

    /// Bids that found no idle capacity may displace running spot leases with
    /// a lower index, lowest first, after notice; the new lease waits
    /// `pending`. At most a few per clearing, since each plan walks the fleet.
    fn displace(
        &mut self,
        losers: &[(OrderId, Decimal)],
        prepared: &BTreeMap<OrderId, (PlacementRequest, Decimal)>,
        granted: &mut BTreeMap<(String, String), Units>,
        events: &mut Vec<Event>,
    ) {
        const MAX_PER_CLEARING: usize = 2;
        let now = self.now;
        for (tried, (order_id, index)) in losers.iter().enumerate() {
            let lowest = self.leases.spot().filter_map(|l| l.bid_index).min();
            if tried >= MAX_PER_CLEARING || lowest.is_none_or(|low| low >= *index) {
                break;
            }
            let Some((req, max_price)) = prepared.get(order_id) else {
                continue;
            };
            let claim = Claim {
                priority: Priority::Spot,
                bid_index: Some(*index),
            };
            let Some((p, victims)) = self.plan_preemption(req, claim, now, None) else {
                continue;
            };
            let Some(placed_index) = p
                .list_value
                .and_then(|v| pricing::price_index(*max_price, v))
                .filter(|i| *i >= SPOT_FLOOR)
            else {
                continue;
            };
            let Some(o) = self.book.get(*order_id).cloned() else {
                continue;
            };
            let market = (model_at(p.model).name.to_owned(), self.region_name(&p));
            let clearing = self.spot.index(&market).unwrap_or(SPOT_FLOOR);
            add_units(granted.entry(market).or_default(), p.units);
            let rule = PriceRule::Spot {
                bid_index: placed_index,
                clearing_index: clearing,
            };
            let ready_at = now + self.cfg.notice_s;
            let lease = self.build_lease(
                *order_id,
                o.buyer,
                &o.spec,
                o.fills,
                p,
                rule,
                LeaseState::Pending,
                ready_at,
            );
            for v in &victims {
                self.give_notice(*v, now, ready_at, NoticeReason::Priority, events);
            }
            let report = self.report(&lease, victims, Some(clearing));
            let lease_id = lease.id;
            if let Some(open) = self.book.get_mut(*order_id) {
                open.state = OpenState::SpotLive;
                open.fills += 1;
                open.lease = Some(lease_id);
            }
            self.grant(lease, events);
            events.push(Event::OrderFilled {
                order_id: *order_id,
                lease_id,
                report: Box::new(report),
                at: now,
            });
        }
    }

    /// Reprices live spot leases at their market's clearing index and warns
    /// those whose bid the clearing index came within 10 % of.
    fn reprice_spot(&mut self, events: &mut Vec<Event>) {
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

/// What the last spot clearing learned of the bids that lost, so the next
/// one skips placements whose outcome cannot have changed. Derived, so not
/// in a snapshot: a restored engine places those bids once and finds the same.
#[derive(Debug, Clone, Default)]
pub(super) struct ClearingMemo {
    /// The view's growth count after the clearing.
    growth: Option<u64>,
    /// Bids that found no room.
    no_room: BTreeSet<OrderId>,
    /// What placement read, after the clearing.
    seen: Option<PlacementInputs>,
    /// Bids that lost, for any reason (none with a predicted end).
    lost: BTreeSet<OrderId>,
}

#[derive(Debug, Clone, PartialEq)]
struct PlacementInputs {
    view_changes: u64,
    demand_recorded: u64,
    mix_forecast: Vec<ForecastClass>,
    holdback: BTreeMap<(String, String), Decimal>,
}

/// Adds a grant's units to its market's total. Units are bounded by the
/// fleet, far inside `Decimal`'s range.
fn add_units(total: &mut Units, more: Units) {
    total.tflops_h += more.tflops_h;
    total.vram_h += more.vram_h;
}

/// Whether `a` asks for at least what `b` asks, with the same constraints
/// (host CPU and memory left to the default share, which grows with size).
fn at_least(a: &PlacementRequest, b: &PlacementRequest) -> bool {
    let compute = match (a.compute, b.compute) {
        (Compute::Milli(x), Compute::Milli(y)) => x >= y,
        (
            Compute::Tflops {
                tflops: x,
                precision: px,
            },
            Compute::Tflops {
                tflops: y,
                precision: py,
            },
        ) => px == py && x >= y,
        _ => false,
    };
    compute
        && a.memory_mb >= b.memory_mb
        && a.gpus == b.gpus
        && a.models == b.models
        && a.nvlink == b.nvlink
        && a.isolation == b.isolation
        && a.region == b.region
        && a.node == b.node
        && a.cpu_milli.is_none()
        && b.cpu_milli.is_none()
        && a.memory_mib.is_none()
        && b.memory_mib.is_none()
}
