//! Gangs: `count` identical units of one order, placed in one step
//! (ARCHITECTURE.md §22, "Order types"). At least `min_count` of them are
//! placed together — all of them for all-or-none and fill-or-kill — or none.
//!
//! A gang is placed only on capacity free now: it neither takes resale
//! listings nor gives anyone notice, because a gang that then fell short
//! would have preempted others for nothing. Its legs are found first on the
//! live view (each taken, so the next sees it gone, then all put back as
//! they were), and only when enough were found are any granted.

use rust_decimal::Decimal;

use super::core::Engine;
use super::events::Event;
use super::lease::{Lease, LeaseState};
use super::place_order::{over_max_price, Fill};
use super::placement::{place, CapacityView, DemandMix, Placement, PlacementRequest, Policy};
use super::pricing::PriceRule;
use super::reject::RejectReason;
use super::types::{BuyerId, Gang, OrderId, OrderSpec};

/// Where up to `count` legs of `req` would go on `view`, in the order
/// placement chooses them. `view` is left exactly as it was found, its
/// counters included, so a trial leaves no trace a memo could see.
fn legs(
    view: &mut CapacityView,
    req: &PlacementRequest,
    mix: &DemandMix,
    policy: &Policy,
    count: u32,
) -> Vec<Placement> {
    let mut found: Vec<Placement> = Vec::new();
    // The nodes as they were before any leg, to put back exactly.
    let mut before = Vec::new();
    let mark = view.mark();
    while found.len() < count as usize {
        let Some(p) = place(view, req, mix, policy) else {
            break;
        };
        if !before.iter().any(|(id, _)| *id == p.node) {
            if let Some(node) = view.node(p.node) {
                before.push((p.node, node.clone()));
            }
        }
        if view.allocate(&p).is_err() {
            break;
        }
        found.push(p);
    }
    view.put_back(before, mark);
    found
}

impl Engine {
    /// How many of a gang's units free capacity holds now, and what they
    /// would be charged per hour together (a quote's `units`). The legs are
    /// tried on the live view and put back, leaving the engine exactly as
    /// it was: a copy of the view cost 44 ms at 100,000 GPUs, the trial
    /// as much as placing the gang (BENCHMARKS.md, "Order types").
    pub fn gang_room(&mut self, spec: &OrderSpec) -> Result<(u32, Decimal), RejectReason> {
        let req = self.resolve(spec)?;
        let count = spec.gang.map_or(1, |g| g.count);
        let found = legs(&mut self.view, &req, &self.mix, &self.cfg.policy, count);
        let price = found
            .iter()
            .map(|p| self.primary_price(spec.mode, p))
            .try_fold(Decimal::ZERO, |sum, p| sum.checked_add(p))
            .ok_or(RejectReason::OutOfRange)?;
        Ok((u32::try_from(found.len()).unwrap_or(u32::MAX), price))
    }

    /// Fills a gang now, or says why it cannot: too few legs free
    /// (`NoCapacity`), too few within `max_price` (which binds on each
    /// unit), or funds for too few of their holds.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fill_gang(
        &mut self,
        order_id: OrderId,
        buyer: BuyerId,
        spec: &OrderSpec,
        funds: Decimal,
        fills: u32,
        req: &PlacementRequest,
        accepted_before: bool,
        events: &mut Vec<Event>,
    ) -> Fill {
        let gang = spec.gang.unwrap_or(Gang {
            count: 1,
            min_count: 1,
        });
        self.refresh_offpeak();
        let found = legs(&mut self.view, req, &self.mix, &self.cfg.policy, gang.count);
        if found.len() < gang.min_count as usize {
            return Fill::NoCapacity;
        }
        let rule = PriceRule::fixed(spec.mode);
        let mut leases: Vec<Lease> = Vec::with_capacity(found.len());
        let mut dearest_refused: Option<Decimal> = None;
        let mut held = Decimal::ZERO;
        let mut short_of_funds = false;
        for p in found {
            let leg = u32::try_from(leases.len()).unwrap_or(u32::MAX);
            let lease = self.build_lease(
                order_id,
                buyer,
                spec,
                Gang::fill_no(fills, leg),
                p,
                rule,
                LeaseState::Provisioning,
                self.now,
            );
            if let Some(price) = over_max_price(spec, lease.price_per_hour) {
                dearest_refused = dearest_refused.max(Some(price));
                continue;
            }
            match held.checked_add(lease.hold).filter(|h| *h <= funds) {
                Some(total) => held = total,
                None => {
                    short_of_funds = true;
                    break;
                }
            }
            leases.push(lease);
        }
        if leases.len() < gang.min_count as usize {
            return match (dearest_refused, short_of_funds) {
                (_, true) => Fill::Refused(RejectReason::InsufficientFunds),
                (Some(price), false) => Fill::OverMaxPrice(price),
                (None, false) => Fill::NoCapacity,
            };
        }
        if !accepted_before {
            events.push(Event::OrderAccepted {
                order_id,
                at: self.now,
            });
        }
        // Every grant before any fill: the ledger refuses the whole order
        // when it cannot hold one leg, and then no fill may have been told.
        let mut filled = Vec::with_capacity(leases.len());
        for lease in leases {
            let report = self.report(&lease, Vec::new(), None);
            filled.push((lease.id, report));
            self.grant(lease, events);
        }
        for (lease_id, report) in filled {
            events.push(Event::OrderFilled {
                order_id,
                lease_id,
                report: Box::new(report),
                at: self.now,
            });
        }
        Fill::Filled
    }

    /// Fills an on-demand or pooled order now: one unit as always, or a gang.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fill_now(
        &mut self,
        order_id: OrderId,
        buyer: BuyerId,
        spec: &OrderSpec,
        funds: Decimal,
        fills: u32,
        req: &PlacementRequest,
        accepted_before: bool,
        events: &mut Vec<Event>,
    ) -> Fill {
        if spec.gang.is_some() {
            self.fill_gang(
                order_id,
                buyer,
                spec,
                funds,
                fills,
                req,
                accepted_before,
                events,
            )
        } else {
            self.fill_fixed(
                order_id,
                buyer,
                spec,
                funds,
                fills,
                req,
                accepted_before,
                events,
            )
        }
    }
}
