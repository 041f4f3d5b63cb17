//! Turning a placement into a lease: its price under the rule, its window,
//! its hold, and the fill report that explains it.

use rust_decimal::Decimal;
use uuid::Uuid;

use super::core::{lease_id, Engine};
use super::events::{FillReport, Source};
use super::lease::{Lease, LeaseState};
use super::placement::{model_at, Placement, UnitPrices};
use super::pricing::{self, PriceRule};
use super::types::{LeaseId, Mode, OrderId, OrderSpec, Priority, Ts};

impl Engine {
    /// List prices of a placement's (region, model).
    pub(super) fn list_of(&self, p: &Placement) -> UnitPrices {
        self.view.price(p.region, p.model).unwrap_or(UnitPrices {
            tflops_h: Decimal::ZERO,
            vram_h: Decimal::ZERO,
        })
    }

    pub(super) fn region_name(&self, p: &Placement) -> String {
        self.view
            .regions
            .get(usize::from(p.region))
            .map_or_else(String::new, |r| r.name.clone())
    }

    /// Builds a lease for `order_id`'s next fill on placement `p`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_lease(
        &self,
        order_id: OrderId,
        buyer: Uuid,
        spec: &OrderSpec,
        fill_no: u32,
        p: Placement,
        rule: PriceRule,
        state: LeaseState,
        starts_at: Ts,
    ) -> Lease {
        let list = self.list_of(&p);
        let unit_prices = pricing::unit_prices(list, &rule);
        let price_per_hour = pricing::per_hour(p.units, unit_prices);
        let ends_at = spec.duration_s.map(|d| starts_at + d);
        let hold = pricing::hold(spec.mode, price_per_hour, spec.duration_s, spec.max_price);
        let bid_index = match rule {
            PriceRule::Spot { bid_index, .. } => Some(bid_index),
            PriceRule::ListMultiple { .. } => None,
        };
        Lease {
            id: lease_id(order_id, fill_no),
            order_id,
            buyer,
            mode: spec.mode,
            qos: spec.qos,
            priority: Priority::of(spec.mode, spec.qos),
            state,
            node: p.node,
            region: self.region_name(&p),
            model: model_at(p.model).name.to_owned(),
            unit_prices,
            price_per_hour,
            rule,
            bid_index,
            starts_at,
            ends_at,
            ready_at: (state == LeaseState::Pending).then_some(starts_at),
            notice_at: None,
            preempt_at: None,
            notice_reason: None,
            noticed_at: None,
            rebalance_at: None,
            fill_no,
            hold,
            spec: spec.clone(),
            placement: p,
            vacate_at: None,
            resale: None,
            conversions: Vec::new(),
            converts_to_reserved: None,
        }
    }

    /// The fill report of a lease just built.
    pub(super) fn report(
        &self,
        lease: &Lease,
        preempted: Vec<LeaseId>,
        clearing: Option<Decimal>,
    ) -> FillReport {
        let p = &lease.placement;
        let list = self.list_of(p);
        let explanation = format!(
            "{} on {} GPU(s) of {} in {} at {} × list: cheapest adequate slice, then least fragmentation (Δ {}){}{}",
            match lease.mode {
                Mode::OnDemand => "on-demand",
                Mode::Reserved => "reserved",
                Mode::Spot => "spot",
                Mode::Pooled => "pooled",
            },
            p.gpus.len(),
            lease.model,
            lease.region,
            lease.rule.multiplier(),
            p.why.frag_delta,
            self.offpeak_clause(lease),
            if preempted.is_empty() {
                String::new()
            } else {
                format!("; {} lower-priority lease(s) given notice", preempted.len())
            }
        );
        let resale = lease.resale.as_ref();
        let explanation = match resale {
            None => explanation,
            Some(r) => format!(
                "resale listing {} on {} GPU(s) of {} in {} at the seller's ask of {} per hour{}",
                r.listing_id,
                p.gpus.len(),
                lease.model,
                lease.region,
                lease.price_per_hour,
                r.primary_price_per_hour.map_or_else(
                    || ": no primary capacity was free".to_owned(),
                    |primary| format!(
                        ", {} per hour under the primary price of {}",
                        primary - lease.price_per_hour,
                        primary
                    )
                ),
            ),
        };
        FillReport {
            sources_considered: if resale.is_some() || self.resale_applies(&lease.spec) {
                vec!["resale".to_owned(), "primary".to_owned()]
            } else {
                vec!["primary".to_owned()]
            },
            source: if resale.is_some() {
                Source::Resale
            } else {
                Source::Primary
            },
            listing_id: resale.map(|r| r.listing_id),
            primary_price_per_hour: resale.and_then(|r| r.primary_price_per_hour),
            saving_per_hour: resale.and_then(|r| {
                r.primary_price_per_hour
                    .map(|primary| primary - lease.price_per_hour)
            }),
            list_prices: list,
            rule: lease.rule,
            clearing_index: clearing,
            units: p.units,
            price_per_hour: lease.price_per_hour,
            why_slice: p.why.clone(),
            preempted,
            duration_prediction: lease.spec.duration_prediction(),
            explanation,
        }
    }
}
