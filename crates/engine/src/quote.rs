//! Quotes and market depth: read-only answers for `POST /v1/quotes` and
//! `GET /v1/market/book`. Nothing here changes the engine.

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::core::Engine;
use super::events::Source;
use super::lease::LeaseState;
use super::orders::OpenState;
use super::place_order::{over_max_price, FromListing};
use super::placement::{self, model_at, place, Placement, PlacementRequest, UnitPrices};
use super::pricing::{self, PriceRule, RESERVED_LEAD_S, SPOT_FLOOR};
use super::reject::RejectReason;
use super::types::{Isolation, ListingId, Mode, OrderId, OrderSpec};

/// What an order would get if placed now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quote {
    /// The slice and the units it holds.
    pub placement: Placement,
    pub region: String,
    pub gpu_model: String,
    pub rule: PriceRule,
    pub unit_prices: UnitPrices,
    pub price_per_hour: Decimal,
    /// The hold the order would need.
    pub hold: Decimal,
    /// On-demand: whether it would wait on a preemption notice first.
    pub needs_preemption: bool,
    /// Where the slice would come from.
    pub source: Source,
    /// Resale: the listing, and what primary capacity would charge per hour
    /// (`None`: none is free).
    pub listing_id: Option<ListingId>,
    pub primary_price_per_hour: Option<Decimal>,
    /// Whether the order's `max_price` would refuse this price (or keep the
    /// order waiting): ARCHITECTURE.md §22, it binds on every mode but spot, whose
    /// `max_price` is its bid.
    pub max_price_binds: bool,
}

/// One (model, region) of the market book.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarketLevel {
    pub gpu_model: String,
    pub region: String,
    /// Idle GPU compute, milli-GPU, on uncordoned nodes.
    pub idle_milli: u64,
    /// GPUs with nothing on them.
    pub idle_gpus: u64,
    pub clearing_index: Option<Decimal>,
}

/// The market book: idle capacity per (model, region) and the queued spot bids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarketBook {
    pub levels: Vec<MarketLevel>,
    /// Queued spot bids, best first: (order, price index, max_price).
    pub bids: Vec<(OrderId, Decimal, Decimal)>,
    pub open_orders: usize,
    pub live_leases: usize,
}

impl Engine {
    /// What `spec` would get now, or why it would be refused (funds are not
    /// checked): the cheaper of primary capacity and a resale listing, as
    /// placing it would choose.
    pub fn quote(&self, spec: &OrderSpec) -> Result<Quote, RejectReason> {
        let mut quote = self.quote_source(spec)?;
        quote.max_price_binds = over_max_price(spec, quote.price_per_hour).is_some();
        Ok(quote)
    }

    /// The cheaper of primary capacity and a resale listing for `spec`.
    fn quote_source(&self, spec: &OrderSpec) -> Result<Quote, RejectReason> {
        let req = self.resolve(spec)?;
        let primary = self.primary_quote(spec, &req);
        let listing_may_serve = matches!(primary, Ok(_) | Err(RejectReason::NoCapacity));
        if !listing_may_serve || !self.resale_applies(spec) {
            return primary;
        }
        let from = match spec.mode {
            Mode::Reserved => spec.start_at.unwrap_or(self.now),
            _ => self.now,
        };
        let until = from + spec.duration_s.unwrap_or(0);
        let order = FromListing {
            order_id: OrderId::nil(),
            buyer: OrderId::nil(),
            spec,
            funds: Decimal::ZERO,
            fill_no: 0,
            accepted_before: true,
        };
        let primary_slice = primary.as_ref().ok().map(|q| &q.placement);
        let Some((listing_id, lease)) = self.offer_from_listing(
            &order,
            &req,
            (from, until),
            LeaseState::Pending,
            primary_slice,
        ) else {
            return primary;
        };
        Ok(Quote {
            region: lease.region,
            gpu_model: lease.model,
            rule: lease.rule,
            unit_prices: lease.unit_prices,
            price_per_hour: lease.price_per_hour,
            hold: lease.hold,
            needs_preemption: false,
            source: Source::Resale,
            listing_id: Some(listing_id),
            primary_price_per_hour: lease.resale.and_then(|r| r.primary_price_per_hour),
            placement: lease.placement,
            max_price_binds: false,
        })
    }

    /// What primary capacity would give `spec` now.
    fn primary_quote(
        &self,
        spec: &OrderSpec,
        req: &PlacementRequest,
    ) -> Result<Quote, RejectReason> {
        let (p, needs_preemption) = match spec.mode {
            Mode::Reserved => {
                let start = spec.start_at.ok_or(RejectReason::InvalidWindow)?;
                let dur = spec
                    .duration_s
                    .filter(|d| *d > 0)
                    .ok_or(RejectReason::InvalidWindow)?;
                if start < self.now + RESERVED_LEAD_S {
                    return Err(RejectReason::ReservedTooSoon);
                }
                let (p, victims) = self
                    .plan_preemption(req, Mode::Reserved.priority(), start, Some(start + dur))
                    .ok_or_else(|| self.diagnose(req))?;
                (p, !victims.is_empty())
            }
            _ => match place(&self.view, req, &self.mix, &self.cfg.policy) {
                Some(p) => (p, false),
                None if spec.mode == Mode::Spot => return Err(self.diagnose(req)),
                None => {
                    let (p, _) = self
                        .plan_preemption(req, spec.mode.priority_with(spec.qos), self.now, None)
                        .ok_or_else(|| self.diagnose(req))?;
                    (p, true)
                }
            },
        };
        let rule = match spec.mode {
            Mode::Spot => {
                let max = spec.max_price.ok_or(RejectReason::MissingMaxPrice)?;
                let index = p
                    .list_value
                    .and_then(|v| pricing::price_index(max, v))
                    .filter(|i| *i >= SPOT_FLOOR)
                    .ok_or(RejectReason::BelowFloor)?;
                let market = (model_at(p.model).name.to_owned(), self.region_name(&p));
                let clearing = self.spot.index(&market).unwrap_or(SPOT_FLOOR);
                PriceRule::Spot {
                    bid_index: index,
                    clearing_index: clearing,
                }
            }
            m => PriceRule::fixed(m),
        };
        let lease = self.build_lease(
            OrderId::nil(),
            OrderId::nil(),
            spec,
            0,
            p,
            rule,
            LeaseState::Pending,
            self.now,
        );
        Ok(Quote {
            region: lease.region,
            gpu_model: lease.model,
            rule,
            unit_prices: lease.unit_prices,
            price_per_hour: lease.price_per_hour,
            hold: lease.hold,
            needs_preemption,
            source: Source::Primary,
            listing_id: None,
            primary_price_per_hour: None,
            placement: lease.placement,
            max_price_binds: false,
        })
    }

    /// Every (model, region), by name, where `spec` could be served at all:
    /// an uncordoned node whose GPUs could hold it were they idle, NVLink
    /// included (ARCHITECTURE.md §6). The quote's options, the regions an order may
    /// name and TCO's region all come from it (issue 34 item 7: they
    /// disagreed). Busy capacity counts: it frees up, and reserved work is
    /// booked ahead.
    pub fn servable(&self, spec: &OrderSpec) -> Result<BTreeSet<(String, String)>, RejectReason> {
        let req = self.resolve(spec)?;
        Ok(self.servable_names(&req))
    }

    /// The regions where an uncordoned node could hold one whole GPU of
    /// `model`: where TCO may price it.
    pub fn supplied_regions(&self, model: &str) -> BTreeSet<String> {
        let Some(idx) = placement::model_idx(model) else {
            return BTreeSet::new();
        };
        let whole = PlacementRequest {
            models: placement::ModelSet::only(idx),
            isolation: Isolation::Whole,
            ..PlacementRequest::milli(1000, model_at(idx).memory_mb())
        };
        self.servable_names(&whole)
            .into_iter()
            .map(|(_, region)| region)
            .collect()
    }

    fn servable_names(&self, req: &PlacementRequest) -> BTreeSet<(String, String)> {
        placement::servable(&self.view, req, &self.cfg.policy)
            .into_iter()
            .filter_map(|(model, region)| {
                let region = self.view.regions.get(usize::from(region))?;
                Some((model_at(model).name.to_owned(), region.name.clone()))
            })
            .collect()
    }

    /// The market book, per (model, region).
    pub fn market_book(&self) -> MarketBook {
        let mut levels: BTreeMap<(String, String), MarketLevel> = BTreeMap::new();
        for b in self.view.buckets() {
            let model = model_at(b.model);
            let region = self
                .view
                .regions
                .get(usize::from(b.region))
                .map_or_else(String::new, |r| r.name.clone());
            let key = (model.name.to_owned(), region.clone());
            let level = levels.entry(key.clone()).or_insert_with(|| MarketLevel {
                gpu_model: key.0.clone(),
                region,
                idle_milli: 0,
                idle_gpus: 0,
                clearing_index: self.spot.index(&key),
            });
            for n in b
                .nodes
                .iter()
                .filter_map(|p| self.view.node_at(*p))
                .filter(|n| !n.cordoned)
            {
                for g in n
                    .gpus
                    .iter()
                    .filter(|g| g.model == b.model && g.mode == b.mode)
                {
                    level.idle_milli += u64::from(g.free.free_milli(g.mode));
                    level.idle_gpus += u64::from(g.free.is_idle(model, g.mode));
                }
            }
        }
        let mut bids: Vec<(OrderId, Decimal, Decimal)> = self
            .book
            .ids_in(OpenState::SpotQueued)
            .into_iter()
            .filter_map(|id| {
                let o = self.book.get(id)?;
                Some((id, o.bid_index?, o.spec.max_price?))
            })
            .collect();
        bids.sort_by_key(|b| std::cmp::Reverse(b.1));
        MarketBook {
            levels: levels.into_values().collect(),
            bids,
            open_orders: self.book.len(),
            live_leases: self.leases.len(),
        }
    }
}
