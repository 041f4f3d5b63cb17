//! Placing an order: validation, funds, and the on-demand, pooled and
//! reserved paths (spot bids join the auction, see `spot.rs`).

use super::commands::PlaceOrder;
use super::core::Engine;
use super::events::Event;
use super::lease::{Lease, LeaseState, NoticeReason};
use super::orders::{OpenOrder, OpenState};
use super::placement::{self, place, Placement, PlacementRequest};
use super::pricing::{self, PriceRule, RESERVED_LEAD_S, SPOT_FLOOR};
use super::reject::RejectReason;
use super::timers::Timer;
use super::types::{BuyerId, LeaseId, ListingId, Mode, OrderId, OrderSpec, Priority, Qos, Ts};
use rust_decimal::Decimal;

/// The order a listing may fill.
pub(super) struct FromListing<'a> {
    pub order_id: OrderId,
    pub buyer: BuyerId,
    pub spec: &'a OrderSpec,
    pub funds: Decimal,
    pub fill_no: u32,
    pub accepted_before: bool,
}

/// Where primary capacity would put an on-demand or pooled order now.
enum PrimarySlot {
    /// On free capacity.
    Free(Placement),
    /// On capacity that these lower-priority leases give up after notice.
    AfterNotice(Placement, Vec<LeaseId>),
}

impl PrimarySlot {
    fn placement(&self) -> &Placement {
        match self {
            PrimarySlot::Free(p) | PrimarySlot::AfterNotice(p, _) => p,
        }
    }
}

/// How an attempt to fill a fixed-price order went.
pub(super) enum Fill {
    Filled,
    NoCapacity,
    /// ARCHITECTURE.md §22: `max_price` binds on every mode. The cheapest slice there
    /// is would cost this much per hour, above the order's `max_price`.
    OverMaxPrice(Decimal),
    Refused(RejectReason),
}

/// The price per hour of a fill that `max_price` forbids (ARCHITECTURE.md §22), if it does.
pub(super) fn over_max_price(spec: &OrderSpec, price_per_hour: Decimal) -> Option<Decimal> {
    // Spot's max_price is its bid: the auction never charges above it.
    let max = spec.max_price.filter(|_| spec.mode != Mode::Spot)?;
    (price_per_hour > max).then_some(price_per_hour)
}

impl Engine {
    pub(super) fn reject(&self, order_id: OrderId, reason: RejectReason, events: &mut Vec<Event>) {
        events.push(Event::OrderRejected {
            order_id,
            reason,
            message: reason.message(),
            at: self.now,
        });
    }

    /// Refuses an order whose fill would cost `price` per hour, above its
    /// `max_price`: the message names the current price so the buyer can
    /// decide again (issue 34 item 5).
    pub(super) fn reject_over_max(
        &self,
        order_id: OrderId,
        spec: &OrderSpec,
        price: Decimal,
        events: &mut Vec<Event>,
    ) {
        let max = spec.max_price.unwrap_or_default();
        events.push(Event::OrderRejected {
            order_id,
            reason: RejectReason::MaxPriceExceeded,
            message: format!(
                "the price is {} per hour, above max_price {}",
                price.normalize(),
                max.normalize()
            ),
            at: self.now,
        });
    }

    pub(super) fn place_order(&mut self, po: PlaceOrder, events: &mut Vec<Event>) {
        let id = po.order_id;
        if self.book.contains(id) || self.leases.has_order(id) {
            return self.reject(id, RejectReason::DuplicateOrder, events);
        }
        let req = match self.resolve(&po.spec) {
            Ok(r) => r,
            Err(reason) => return self.reject(id, reason, events),
        };
        if let Some(node) = po.spec.node.and_then(|n| self.nodes.get(&n)) {
            if node.cordoned {
                return self.reject(id, RejectReason::NodeCordoned, events);
            }
        }
        match po.spec.mode {
            Mode::Spot => self.accept_bid(po, &req, events),
            Mode::Reserved => self.place_reserved(po, &req, events),
            Mode::OnDemand | Mode::Pooled => {
                match self.fill_now(
                    id,
                    po.buyer,
                    &po.spec,
                    po.funds_available,
                    0,
                    &req,
                    false,
                    events,
                ) {
                    Fill::Filled => {}
                    Fill::Refused(reason) => self.reject(id, reason, events),
                    // Too dear now, like no capacity now, waits when the order
                    // may wait: a price change or a cheaper slice may come.
                    fill @ (Fill::NoCapacity | Fill::OverMaxPrice(_)) => {
                        let wait = po.spec.max_wait_s.unwrap_or(0);
                        if wait > 0 && po.spec.qos != Qos::Realtime {
                            let seq = self.next_seq();
                            let deadline = self.now + wait;
                            self.book.insert(OpenOrder {
                                id,
                                buyer: po.buyer,
                                spec: po.spec,
                                state: OpenState::Waiting,
                                accepted_at: self.now,
                                seq,
                                deadline: Some(deadline),
                                funds_available: po.funds_available,
                                bid_index: None,
                                fills: 0,
                                lease: None,
                            });
                            self.timers.set(deadline, Timer::Expire, id);
                            events.push(Event::OrderAccepted {
                                order_id: id,
                                at: self.now,
                            });
                        } else if let Fill::OverMaxPrice(price) = fill {
                            self.reject_over_max(id, &po.spec, price, events);
                        } else {
                            let reason = self.diagnose(&req);
                            self.reject(id, reason, events);
                        }
                    }
                }
            }
        }
    }

    /// Why nothing could hold `req`: unsatisfiable, all cordoned, or simply full.
    pub(super) fn diagnose(&self, req: &PlacementRequest) -> RejectReason {
        match placement::adequacy(&self.view, req, &self.cfg.policy) {
            placement::Adequacy::Nowhere => self.nowhere_reason(req),
            placement::Adequacy::OnlyCordoned => RejectReason::NodeCordoned,
            placement::Adequacy::Somewhere { .. } => RejectReason::NoCapacity,
        }
    }

    /// No GPU of the request's region could ever hold it. ARCHITECTURE.md §6: a known
    /// region without capacity for it answers `no_capacity` (a region with no
    /// nodes, or whose nodes lack what another region has);
    /// `unsatisfiable_resources` is kept for what no node anywhere could hold.
    fn nowhere_reason(&self, req: &PlacementRequest) -> RejectReason {
        let Some(region) = req.region else {
            return RejectReason::UnsatisfiableResources;
        };
        let region_empty = !self
            .view
            .buckets()
            .iter()
            .any(|b| b.region == region && !b.nodes.is_empty());
        let anywhere = PlacementRequest {
            region: None,
            ..req.clone()
        };
        let elsewhere = !matches!(
            placement::adequacy(&self.view, &anywhere, &self.cfg.policy),
            placement::Adequacy::Nowhere
        );
        if region_empty || elsewhere {
            RejectReason::NoCapacity
        } else {
            RejectReason::UnsatisfiableResources
        }
    }

    /// Fills an on-demand or pooled order now: on free capacity, or on
    /// capacity that lower-priority leases give up after notice (the lease
    /// then waits `pending` until `ready_at`). `accepted_before` is true for
    /// orders already accepted (waiting ones, replacements).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fill_fixed(
        &mut self,
        order_id: OrderId,
        buyer: BuyerId,
        spec: &OrderSpec,
        funds: Decimal,
        fill_no: u32,
        req: &PlacementRequest,
        accepted_before: bool,
        events: &mut Vec<Event>,
    ) -> Fill {
        self.refresh_offpeak();
        let now = self.now;
        let priority = Priority::of(spec.mode, spec.qos);
        let rule = PriceRule::fixed(spec.mode);
        // Found once: a listing is taken only when it beats this, and
        // otherwise this is what the order gets.
        let primary = self.primary_slot(req, priority);
        if self.resale_applies(spec) {
            let until = now + spec.duration_s.unwrap_or(0);
            let taken = self.fill_from_listing(
                FromListing {
                    order_id,
                    buyer,
                    spec,
                    funds,
                    fill_no,
                    accepted_before,
                },
                req,
                (now, until),
                LeaseState::Provisioning,
                primary.as_ref().map(PrimarySlot::placement),
                events,
            );
            if let Some(fill) = taken {
                return fill;
            }
        }
        let (p, victims, state, starts_at) = match primary {
            None => return Fill::NoCapacity,
            Some(PrimarySlot::Free(p)) => (p, Vec::new(), LeaseState::Provisioning, now),
            Some(PrimarySlot::AfterNotice(p, victims)) => {
                let ready_at = self.ready_after(&victims);
                (p, victims, LeaseState::Pending, ready_at)
            }
        };
        let lease = self.build_lease(order_id, buyer, spec, fill_no, p, rule, state, starts_at);
        if let Some(price) = over_max_price(spec, lease.price_per_hour) {
            return Fill::OverMaxPrice(price);
        }
        if lease.hold > funds {
            return Fill::Refused(RejectReason::InsufficientFunds);
        }
        if !accepted_before {
            events.push(Event::OrderAccepted { order_id, at: now });
        }
        for v in &victims {
            self.give_notice(
                *v,
                now,
                now + self.cfg.notice_s,
                NoticeReason::Priority,
                events,
            );
        }
        let report = self.report(&lease, victims, None);
        let lease_id = lease.id;
        self.grant(lease, events);
        events.push(Event::OrderFilled {
            order_id,
            lease_id,
            report: Box::new(report),
            at: now,
        });
        Fill::Filled
    }

    /// Where an order of `priority` lands from now: on free capacity, or on
    /// what lower-priority leases give up after notice.
    fn primary_slot(&self, req: &PlacementRequest, priority: Priority) -> Option<PrimarySlot> {
        match place(&self.view, req, &self.mix, &self.cfg.policy) {
            Some(p) => Some(PrimarySlot::Free(p)),
            None => self
                .plan_preemption(req, priority, self.now, None)
                .map(|(p, victims)| PrimarySlot::AfterNotice(p, victims)),
        }
    }

    /// When the last of `victims` is gone: a full notice from now, or sooner
    /// where a victim already had notice.
    fn ready_after(&self, victims: &[LeaseId]) -> Ts {
        let (now, notice_s) = (self.now, self.cfg.notice_s);
        victims
            .iter()
            .filter_map(|v| self.leases.get(*v))
            .map(|l| l.preempt_at.unwrap_or(now + notice_s).min(now + notice_s))
            .max()
            .unwrap_or(now)
    }

    /// Books a reserved window: capacity is guaranteed at booking; pooled and
    /// spot leases in the way get notice at `start_at` − notice.
    fn place_reserved(&mut self, po: PlaceOrder, req: &PlacementRequest, events: &mut Vec<Event>) {
        let now = self.now;
        let id = po.order_id;
        let (start, end) = match reserved_window(&po.spec, now) {
            Ok(window) => window,
            Err(reason) => return self.reject(id, reason, events),
        };
        self.refresh_offpeak();
        // Found once: a listing is taken only when it beats this.
        let planned = self.plan_preemption(req, Priority::Reserved, start, Some(end));
        if self.resale_applies(&po.spec) {
            let order = FromListing {
                order_id: id,
                buyer: po.buyer,
                spec: &po.spec,
                funds: po.funds_available,
                fill_no: 0,
                accepted_before: false,
            };
            let primary = planned.as_ref().map(|(p, _)| p);
            match self.fill_from_listing(
                order,
                req,
                (start, end),
                LeaseState::Pending,
                primary,
                events,
            ) {
                Some(Fill::Refused(reason)) => return self.reject(id, reason, events),
                Some(Fill::OverMaxPrice(price)) => {
                    return self.reject_over_max(id, &po.spec, price, events)
                }
                Some(_) => return,
                None => {}
            }
        }
        let Some((p, victims)) = planned else {
            let reason = self.diagnose(req);
            return self.reject(id, reason, events);
        };
        let rule = PriceRule::fixed(Mode::Reserved);
        let lease = self.build_lease(
            id,
            po.buyer,
            &po.spec,
            0,
            p,
            rule,
            LeaseState::Pending,
            start,
        );
        // A reservation never waits: above max_price it is refused at once.
        if let Some(price) = over_max_price(&po.spec, lease.price_per_hour) {
            return self.reject_over_max(id, &po.spec, price, events);
        }
        if lease.hold > po.funds_available {
            return self.reject(id, RejectReason::InsufficientFunds, events);
        }
        events.push(Event::OrderAccepted {
            order_id: id,
            at: now,
        });
        for v in &victims {
            self.give_notice(
                *v,
                start - self.cfg.notice_s,
                start,
                NoticeReason::Priority,
                events,
            );
        }
        let report = self.report(&lease, victims, None);
        let lease_id = lease.id;
        self.grant(lease, events);
        events.push(Event::OrderFilled {
            order_id: id,
            lease_id,
            report: Box::new(report),
            at: now,
        });
    }

    /// Fills an order from the cheapest listing that holds it over `window`
    /// when that beats `primary`, the slice primary capacity would give it
    /// (`None`: no listing does).
    fn fill_from_listing(
        &mut self,
        order: FromListing<'_>,
        req: &PlacementRequest,
        window: (Ts, Ts),
        state: LeaseState,
        primary: Option<&Placement>,
        events: &mut Vec<Event>,
    ) -> Option<Fill> {
        let (listing_id, lease) = self.offer_from_listing(&order, req, window, state, primary)?;
        // The listing is the cheapest source: above max_price, so is the rest.
        if let Some(price) = over_max_price(order.spec, lease.price_per_hour) {
            return Some(Fill::OverMaxPrice(price));
        }
        if lease.hold > order.funds {
            return Some(Fill::Refused(RejectReason::InsufficientFunds));
        }
        if !order.accepted_before {
            events.push(Event::OrderAccepted {
                order_id: order.order_id,
                at: self.now,
            });
        }
        self.sell_listing(listing_id, window.0, window.1, lease.id, events);
        let report = self.report(&lease, Vec::new(), None);
        let lease_id = lease.id;
        self.grant(lease, events);
        events.push(Event::OrderFilled {
            order_id: order.order_id,
            lease_id,
            report: Box::new(report),
            at: self.now,
        });
        Some(Fill::Filled)
    }

    /// The lease an order would get from the cheapest listing that holds it
    /// over `[from, until)`, when its ask beats what `primary` (the slice
    /// primary capacity would give the order, `None`: none is free) would
    /// charge; changes nothing (quotes ask it too).
    pub(super) fn offer_from_listing(
        &self,
        order: &FromListing<'_>,
        req: &PlacementRequest,
        (from, until): (Ts, Ts),
        state: LeaseState,
        primary: Option<&Placement>,
    ) -> Option<(ListingId, Lease)> {
        // Only a listing asking less than primary capacity would charge is
        // taken, so none dearer is looked at.
        let primary = primary.map(|p| self.primary_price(order.spec.mode, p));
        let listing = self.listing_for(order.buyer, req, (from, until), primary)?;
        let mut placement = listing.placement.clone();
        placement.why = Default::default();
        let mut lease = self.build_lease(
            order.order_id,
            order.buyer,
            order.spec,
            order.fill_no,
            placement,
            PriceRule::fixed(order.spec.mode),
            state,
            from,
        );
        Engine::price_from_listing(listing, order.spec, primary, &mut lease);
        Some((listing.id, lease))
    }

    /// What primary capacity charges per hour for a slice in `mode`.
    pub(super) fn primary_price(&self, mode: Mode, placement: &Placement) -> Decimal {
        let prices = pricing::unit_prices(self.list_of(placement), &PriceRule::fixed(mode));
        pricing::per_hour(placement.units, prices)
    }

    /// Accepts a spot bid into the auction, or refuses it below the floor or
    /// beyond the buyer's funds.
    fn accept_bid(&mut self, po: PlaceOrder, req: &PlacementRequest, events: &mut Vec<Event>) {
        let id = po.order_id;
        let Some(max_price) = po.spec.max_price.filter(|m| *m > Decimal::ZERO) else {
            return self.reject(id, RejectReason::MissingMaxPrice, events);
        };
        let cheapest = match placement::adequacy(&self.view, req, &self.cfg.policy) {
            placement::Adequacy::Nowhere => {
                return self.reject(id, self.nowhere_reason(req), events)
            }
            placement::Adequacy::OnlyCordoned => {
                return self.reject(id, RejectReason::NodeCordoned, events)
            }
            placement::Adequacy::Somewhere {
                cheapest_list_value,
            } => cheapest_list_value,
        };
        let index = cheapest.and_then(|v| pricing::price_index(max_price, v));
        let Some(index) = index.filter(|i| *i >= SPOT_FLOOR) else {
            return self.reject(id, RejectReason::BelowFloor, events);
        };
        if pricing::hold(Mode::Spot, Decimal::ZERO, None, Some(max_price)) > po.funds_available {
            return self.reject(id, RejectReason::InsufficientFunds, events);
        }
        let seq = self.next_seq();
        self.book.insert(OpenOrder {
            id,
            buyer: po.buyer,
            spec: po.spec,
            state: OpenState::SpotQueued,
            accepted_at: self.now,
            seq,
            deadline: None,
            funds_available: po.funds_available,
            bid_index: Some(index),
            fills: 0,
            lease: None,
        });
        events.push(Event::OrderAccepted {
            order_id: id,
            at: self.now,
        });
    }

    /// Retries waiting orders, oldest first, on capacity that freed.
    pub(super) fn retry_waiting(&mut self, events: &mut Vec<Event>) {
        for id in self.book.waiting_ids() {
            let Some(o) = self.book.get(id).cloned() else {
                continue;
            };
            let req = match self.resolve(&o.spec) {
                Ok(r) => r,
                Err(reason) => {
                    self.book.remove(id);
                    self.reject(id, reason, events);
                    continue;
                }
            };
            match self.fill_now(
                id,
                o.buyer,
                &o.spec,
                o.funds_available,
                o.fills,
                &req,
                true,
                events,
            ) {
                Fill::Filled => {
                    self.book.remove(id);
                }
                Fill::Refused(reason) => {
                    self.book.remove(id);
                    self.reject(id, reason, events);
                }
                Fill::NoCapacity | Fill::OverMaxPrice(_) => {}
            }
        }
    }

    /// Expires a waiting order whose deadline is `at`.
    pub(super) fn expire(&mut self, id: OrderId, at: Ts, events: &mut Vec<Event>) {
        if self
            .book
            .get(id)
            .is_some_and(|o| o.state == OpenState::Waiting && o.deadline == Some(at))
        {
            self.book.remove(id);
            events.push(Event::OrderExpired { order_id: id, at });
        }
    }
}

/// A reservation's `[start, end)`: a positive duration, starting at least
/// the reserved lead time from `now`.
fn reserved_window(spec: &OrderSpec, now: Ts) -> Result<(Ts, Ts), RejectReason> {
    let (Some(start), Some(dur)) = (spec.start_at, spec.duration_s) else {
        return Err(RejectReason::InvalidWindow);
    };
    if dur <= 0 {
        return Err(RejectReason::InvalidWindow);
    }
    if start < now + RESERVED_LEAD_S {
        return Err(RejectReason::ReservedTooSoon);
    }
    Ok((start, start + dur))
}
