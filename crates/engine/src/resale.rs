//! Resale (ARCHITECTURE.md §6): the holder of a reserved lease lists the tail of its
//! window. From `from` on the listing, not the lease, holds that slice in the
//! calendars, so neither primary orders nor spot can use it; an order that
//! fits takes it before primary capacity (it is always cheaper than the same
//! slice's primary price), and what is left of it either side stays listed
//! when at least an hour long.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use rust_decimal_macros::dec;
use serde::{Deserialize, Serialize};

use super::calendar::Booking;
use super::core::{lease_id, Engine, EngineError};
use super::events::{Event, ListingEnd};
use super::lease::Lease;
use super::placement::{
    model_at, ModelIdx, Placement, PlacementRequest, RegionIdx, Slot, UnitPrices,
};
use super::pricing::{self, PriceRule};
use super::timers::Timer;
use super::types::{BuyerId, Isolation, LeaseId, ListingId, Mode, NodeId, OrderSpec, Priority, Ts};
use gpuex_wire::catalog::UNIT_VRAM_GB;

/// The shortest listing, and the shortest part of one kept listed after a sale.
pub const MIN_LISTING_S: Ts = 3600;
/// The highest ask, as a share of the slice's reserved price per hour.
pub const MAX_ASK_SHARE: Decimal = dec!(0.9);

/// An open listing: the tail of a reserved lease's window, for sale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    pub id: ListingId,
    pub seller: BuyerId,
    /// The seller's lease whose window this is the tail of.
    pub lease_id: LeaseId,
    /// The listing this one is what remained of after a sale.
    pub parent: Option<ListingId>,
    pub node: NodeId,
    pub region: String,
    pub model: String,
    /// The slice, exactly as the seller's lease holds it.
    pub placement: Placement,
    pub from: Ts,
    pub until: Ts,
    /// For the whole slice.
    pub ask_per_hour: Decimal,
    /// What the seller pays for the slice per hour: the ask's cap derives from it.
    pub reserved_price_per_hour: Decimal,
    /// The seller's unit prices, which a buyer's are scaled from.
    pub reserved_unit_prices: UnitPrices,
    pub listed_at: Ts,
}

impl Listing {
    /// The listing's hold on one GPU's slot: as firm as a reservation.
    pub fn booking(&self, slot: &Slot) -> Booking {
        Booking {
            lease: self.id,
            slot: slot.clone(),
            from: self.from,
            until: Some(self.until),
            priority: Priority::Reserved,
        }
    }

    /// How many GPUs the slice has (0 for more than any node has).
    pub fn gpu_count(&self) -> u8 {
        u8::try_from(self.placement.gpus.len()).unwrap_or(0)
    }

    /// Hours on sale, whole or not.
    pub fn hours(&self) -> Decimal {
        Decimal::from(self.until - self.from) / Decimal::from(3600)
    }
}

/// Where a lease bought on resale came from: charges go to `seller`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResaleSource {
    pub listing_id: ListingId,
    pub seller: BuyerId,
    /// What primary capacity would have charged per hour (`None`: none was free).
    pub primary_price_per_hour: Option<Decimal>,
    /// The end of the seller's window: the outer bound of the bought lease
    /// (ARCHITECTURE.md §19). Past it the seller paid the provider for nothing, so no
    /// conversion may carry the lease beyond it. `None` on leases stored
    /// before it was recorded: their own end bounds them instead.
    #[serde(default)]
    pub window_until: Option<Ts>,
}

/// A seller's request to list the tail of its reserved lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListResale {
    pub listing_id: ListingId,
    pub lease_id: LeaseId,
    pub seller: BuyerId,
    pub from: Ts,
    pub ask_per_hour: Decimal,
}

/// Why a listing or its cancellation was refused.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize,
)]
pub enum ListingRefusal {
    #[error("the lease is not the caller's")]
    NotHolder,
    #[error("only a reserved lease can be listed for resale")]
    NotReserved,
    #[error("`from` must be at least the notice period ({notice_s} s) ahead")]
    TooSoon { notice_s: Ts },
    #[error(
        "`from` must be a whole hour inside the lease's window, at least an hour before it ends"
    )]
    OutsideWindow,
    #[error("`ask_per_hour` must be above 0 and at most {cap} (0.9 × the slice's reserved price per hour)")]
    AskTooHigh { cap: Decimal },
    #[error("the lease is already listed for resale")]
    AlreadyListed,
    #[error("a lease bought on resale cannot be listed again")]
    Resold,
    #[error("no such open listing")]
    UnknownListing,
    #[error(
        "a listing can only be cancelled until a notice period ({notice_s} s) before its start"
    )]
    TooLateToCancel { notice_s: Ts },
}

impl Engine {
    /// The open listings, by id.
    pub fn listings(&self) -> impl Iterator<Item = &Listing> {
        self.listings.values()
    }

    /// An open listing.
    pub fn listing(&self, id: ListingId) -> Option<&Listing> {
        self.listings.get(id)
    }

    /// Lists the tail `[from, window end)` of a reserved lease: the lease now
    /// ends at `from`, sold or not.
    pub(super) fn list_resale(
        &mut self,
        ask: ListResale,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let refuse = |r| Err(EngineError::Listing(r));
        let lease = self
            .leases
            .get(ask.lease_id)
            .ok_or(EngineError::UnknownLease(ask.lease_id))?;
        if lease.buyer != ask.seller {
            return refuse(ListingRefusal::NotHolder);
        }
        if lease.mode != Mode::Reserved {
            return refuse(ListingRefusal::NotReserved);
        }
        if lease.resale.is_some() {
            return refuse(ListingRefusal::Resold);
        }
        if lease.vacate_at.is_some() || self.listings.contains(ask.listing_id) {
            return refuse(ListingRefusal::AlreadyListed);
        }
        let Some(window_end) = lease.booked_until() else {
            return refuse(ListingRefusal::OutsideWindow);
        };
        if ask.from.rem_euclid(3600) != 0
            || ask.from < lease.starts_at
            || window_end - ask.from < MIN_LISTING_S
        {
            return refuse(ListingRefusal::OutsideWindow);
        }
        if ask.from < self.now + self.cfg.notice_s {
            return refuse(ListingRefusal::TooSoon {
                notice_s: self.cfg.notice_s,
            });
        }
        let cap = lease.price_per_hour * MAX_ASK_SHARE;
        if ask.ask_per_hour <= Decimal::ZERO || ask.ask_per_hour > cap {
            return refuse(ListingRefusal::AskTooHigh { cap });
        }
        let listing = Listing {
            id: ask.listing_id,
            seller: ask.seller,
            lease_id: lease.id,
            parent: None,
            node: lease.node,
            region: lease.region.clone(),
            model: lease.model.clone(),
            placement: lease.placement.clone(),
            from: ask.from,
            until: window_end,
            ask_per_hour: ask.ask_per_hour,
            reserved_price_per_hour: lease.price_per_hour,
            reserved_unit_prices: lease.unit_prices,
            listed_at: self.now,
        };
        if let Some(l) = self.lease_mut(ask.lease_id) {
            l.vacate_at = Some(ask.from);
        }
        self.rebook(ask.lease_id);
        self.open_listing(listing, events);
        Ok(())
    }

    /// Cancels an open listing until a notice period before its start. Its
    /// time goes back to the seller's lease when it directly follows it, else
    /// back to the market.
    pub(super) fn cancel_listing(
        &mut self,
        id: ListingId,
        seller: BuyerId,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let listing = self
            .listings
            .get(id)
            .filter(|l| l.seller == seller)
            .ok_or(EngineError::Listing(ListingRefusal::UnknownListing))?;
        if self.now > listing.from - self.cfg.notice_s {
            return Err(EngineError::Listing(ListingRefusal::TooLateToCancel {
                notice_s: self.cfg.notice_s,
            }));
        }
        let listing = self.close_listing(id, ListingEnd::Cancelled, self.now, events);
        let Some(listing) = listing else {
            return Ok(());
        };
        let resumes = self
            .leases
            .get(listing.lease_id)
            .filter(|l| l.vacate_at == Some(listing.from))
            .map(|l| (l.ends_at != Some(listing.until)).then_some(listing.until));
        if let Some(vacate_at) = resumes {
            if let Some(l) = self.lease_mut(listing.lease_id) {
                l.vacate_at = vacate_at;
            }
            self.rebook(listing.lease_id);
        }
        Ok(())
    }

    /// Books a listing's slice and says so.
    fn open_listing(&mut self, listing: Listing, events: &mut Vec<Event>) {
        let node = listing.node;
        self.book_listing(listing, events);
        self.refresh_node(node);
    }

    /// `open_listing` but for the view, which the caller refreshes.
    fn book_listing(&mut self, listing: Listing, events: &mut Vec<Event>) {
        if let Some(node) = self.nodes.get_mut(&listing.node) {
            for gs in &listing.placement.gpus {
                if let Some(pos) = node.spec.gpus.iter().position(|g| g.index == gs.index) {
                    node.calendars[pos].bookings.push(listing.booking(&gs.slot));
                }
            }
        }
        self.timers
            .set(listing.until, Timer::ListingEnd, listing.id);
        events.push(Event::ListingCreated {
            listing: Box::new(listing.clone()),
            at: self.now,
        });
        self.listings.file(listing);
    }

    /// Takes a listing out of the book and the calendars.
    pub(super) fn close_listing(
        &mut self,
        id: ListingId,
        end: ListingEnd,
        at: Ts,
        events: &mut Vec<Event>,
    ) -> Option<Listing> {
        let listing = self.unbook_listing(id, end, at, events)?;
        self.refresh_node(listing.node);
        Some(listing)
    }

    /// `close_listing` but for the view, which the caller refreshes.
    fn unbook_listing(
        &mut self,
        id: ListingId,
        end: ListingEnd,
        at: Ts,
        events: &mut Vec<Event>,
    ) -> Option<Listing> {
        let listing = self.listings.unfile(id)?;
        if let Some(node) = self.nodes.get_mut(&listing.node) {
            for cal in &mut node.calendars {
                cal.remove(id);
            }
        }
        self.capacity_changed = true;
        if end != ListingEnd::Sold {
            events.push(Event::ListingClosed {
                listing_id: id,
                end,
                at,
            });
        }
        Some(listing)
    }

    /// A listing's window is over (skipped when it already closed).
    pub(super) fn due_listing_end(&mut self, id: ListingId, at: Ts, events: &mut Vec<Event>) {
        if self.listings.get(id).is_some_and(|l| l.until == at) {
            self.close_listing(id, ListingEnd::Expired, at, events);
        }
    }

    /// Withdraws the listings on a node whose GPUs `intact` no longer has.
    pub(super) fn withdraw_listings(
        &mut self,
        node: NodeId,
        intact: impl Fn(&Listing) -> bool,
        events: &mut Vec<Event>,
    ) {
        let gone: Vec<ListingId> = self
            .listings
            .values()
            .filter(|l| l.node == node && !intact(l))
            .map(|l| l.id)
            .collect();
        for id in gone {
            self.close_listing(id, ListingEnd::Withdrawn, self.now, events);
        }
    }

    /// Whether an order of this kind may take a listing (ARCHITECTURE.md §6: reserved
    /// orders, and on-demand ones with a duration) and any is open.
    pub(super) fn resale_applies(&self, spec: &OrderSpec) -> bool {
        !self.listings.is_empty()
            && match spec.mode {
                Mode::Reserved => true,
                Mode::OnDemand => spec.duration_s.is_some(),
                Mode::Spot | Mode::Pooled => false,
            }
    }

    /// The cheapest open listing, not the buyer's own, whose slice holds
    /// `req` over all of `[from, until)`, when it asks less than `below`:
    /// the first in the ask index order (ask, then id) that does, so the
    /// dearer ones are never looked at.
    pub(super) fn listing_for(
        &self,
        buyer: BuyerId,
        req: &PlacementRequest,
        (from, until): (Ts, Ts),
        below: Option<Decimal>,
    ) -> Option<&Listing> {
        let mut wants = Wants::new(req);
        let (id, _) = self.listings.asks_below(req.gpus, below).find(|(_, f)| {
            wants.held_by(f)
                && f.seller != buyer
                && f.from <= from
                && until <= f.until
                // The node's driver now: it may have changed since the listing.
                && req.accepts_cuda(self.view.node(f.node).and_then(|n| n.cuda))
        })?;
        self.listings.get(id)
    }

    /// Sells `[from, until)` of a listing: the listing closes, the parts either
    /// side at least an hour long are listed again, and the slice is free for
    /// the buyer's lease to be granted on. Returns the listing as it was.
    pub(super) fn sell_listing(
        &mut self,
        id: ListingId,
        from: Ts,
        until: Ts,
        buyer_lease: LeaseId,
        events: &mut Vec<Event>,
    ) -> Option<Listing> {
        let now = self.now;
        // The node's view is refreshed once, when the parts are listed again.
        let sold = self.unbook_listing(id, ListingEnd::Sold, now, events)?;
        let amount =
            pricing::money(sold.ask_per_hour * Decimal::from(until - from) / Decimal::from(3600));
        events.push(Event::ListingSold {
            listing_id: id,
            lease_id: buyer_lease,
            from,
            until,
            amount,
            at: now,
        });
        let before = (sold.from.max(now), from);
        let after = (until, sold.until);
        for (part, (start, end)) in [(1, before), (2, after)] {
            if end - start >= MIN_LISTING_S {
                let rest = Listing {
                    id: lease_id(id, part),
                    parent: Some(id),
                    from: start,
                    until: end,
                    listed_at: now,
                    ..sold.clone()
                };
                self.book_listing(rest, events);
            }
        }
        self.refresh_node(sold.node);
        Some(sold)
    }

    /// Makes `lease` (built on the listing's slice) the buyer's lease from a
    /// listing: the ask per hour, unit prices scaled from the seller's, and the
    /// hold its mode needs at that price.
    pub(super) fn price_from_listing(
        listing: &Listing,
        spec: &OrderSpec,
        primary_price_per_hour: Option<Decimal>,
        lease: &mut Lease,
    ) {
        let share = listing
            .ask_per_hour
            .checked_div(listing.reserved_price_per_hour)
            .unwrap_or(Decimal::ZERO);
        let scaled = |p: Decimal| (p * share).round_dp_with_strategy(8, RoundingStrategy::ToZero);
        lease.unit_prices = UnitPrices {
            tflops_h: scaled(listing.reserved_unit_prices.tflops_h),
            vram_h: scaled(listing.reserved_unit_prices.vram_h),
        };
        // Recorded as a multiple of list, so exports recover the list price.
        lease.rule = PriceRule::ListMultiple {
            multiplier: (pricing::RESERVED * share).normalize(),
        };
        lease.price_per_hour = pricing::per_hour(lease.placement.units, lease.unit_prices);
        lease.hold = pricing::hold(
            spec.mode,
            lease.price_per_hour,
            spec.duration_s,
            spec.max_price,
        );
        lease.resale = Some(ResaleSource {
            listing_id: listing.id,
            seller: listing.seller,
            primary_price_per_hour,
            window_until: Some(listing.until),
        });
    }
}

/// What a buyer's order checks of an open listing, worked out when it is
/// listed and kept beside its ask in the ask index: looking for a listing
/// then reads neither the listing nor any decimal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ListingFit {
    seller: BuyerId,
    from: Ts,
    until: Ts,
    node: NodeId,
    region: RegionIdx,
    model: ModelIdx,
    every_mig: bool,
    every_whole: bool,
    every_shared: bool,
    nvlinked: bool,
    cpu_milli: u64,
    memory_mib: u64,
    /// The least compute any of its GPUs holds, milli-GPU.
    least_slot_milli: u32,
    /// GPU memory held per GPU, MB, rounded down: orders ask whole MB, so
    /// `asked <= this` is `asked <= the exact figure`.
    memory_per_gpu_mb: i128,
}

impl ListingFit {
    pub(super) fn of(l: &Listing) -> ListingFit {
        let p = &l.placement;
        let every = |kind: fn(&Slot) -> bool| p.gpus.iter().all(|g| kind(&g.slot));
        let held_mb = p
            .units
            .vram_h
            .checked_mul(Decimal::from(u64::from(UNIT_VRAM_GB) * 1000))
            .and_then(|mb| mb.checked_div(Decimal::from(l.gpu_count().max(1))));
        ListingFit {
            seller: l.seller,
            from: l.from,
            until: l.until,
            node: l.node,
            region: p.region,
            model: p.model,
            every_mig: every(|s| matches!(s, Slot::Mig { .. })),
            every_whole: every(|s| matches!(s, Slot::Whole)),
            every_shared: every(|s| matches!(s, Slot::Shared { .. })),
            nvlinked: p.why.nvlink_links > 0,
            cpu_milli: p.cpu_milli,
            memory_mib: p.memory_mib,
            least_slot_milli: p
                .gpus
                .iter()
                .map(|g| g.slot.milli())
                .min()
                .unwrap_or(u32::MAX),
            // Too large to count: it holds whatever an order asks.
            memory_per_gpu_mb: held_mb
                .and_then(|mb| mb.floor().to_i128())
                .unwrap_or(i128::MAX),
        }
    }
}

/// What one request needs of a listed slice of its GPU count. The compute
/// per GPU takes decimal arithmetic and depends on the model, so it is
/// worked out once per model rather than once per listing looked at.
struct Wants<'r> {
    req: &'r PlacementRequest,
    memory_per_gpu_mb: i128,
    /// Per model index: `None` not worked out yet, `Some(None)` not expressible on it.
    milli_per_gpu: [Option<Option<u32>>; 32],
}

impl<'r> Wants<'r> {
    fn new(req: &'r PlacementRequest) -> Wants<'r> {
        Wants {
            req,
            memory_per_gpu_mb: i128::from(req.memory_per_gpu()),
            milli_per_gpu: [None; 32],
        }
    }

    /// The request's compute per GPU of `model`.
    fn milli_on(&mut self, model: ModelIdx) -> Option<u32> {
        let req = self.req;
        let work_out = || req.milli_per_gpu(model_at(model));
        match self.milli_per_gpu.get_mut(usize::from(model)) {
            Some(known) => *known.get_or_insert_with(work_out),
            None => work_out(),
        }
    }

    /// Whether a listed slice of the request's GPU count holds what it asks for.
    fn held_by(&mut self, f: &ListingFit) -> bool {
        let req = self.req;
        let isolation_ok = match req.isolation {
            Isolation::Any => true,
            Isolation::Mig => f.every_mig,
            Isolation::Whole => f.every_whole,
            Isolation::Shared => f.every_shared,
        };
        // Size first: it is what turns most listings down.
        self.memory_per_gpu_mb <= f.memory_per_gpu_mb
            && req.models.contains(f.model)
            && self
                .milli_on(f.model)
                .is_some_and(|m| m <= f.least_slot_milli)
            && req.region.is_none_or(|r| r == f.region)
            && req.node.is_none_or(|n| n == f.node)
            && isolation_ok
            && !(req.nvlink && req.gpus > 1 && !f.nvlinked)
            && req.cpu_milli.is_none_or(|c| c <= f.cpu_milli)
            && req.memory_mib.is_none_or(|m| m <= f.memory_mib)
    }
}
