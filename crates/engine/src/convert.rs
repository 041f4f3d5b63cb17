//! Mode changes of a live lease (ARCHITECTURE.md §3 "Mode changes"): the lease keeps
//! its slice and its workload keeps running; only its price, guarantees,
//! hold and end change.
//!
//! - spot → on-demand: at once, while running and not yet noticed, and only
//!   when no other booking claims the slice later. The spot order leaves
//!   the auction for good: it is no longer requeued or repriced.
//! - on-demand → reserved: a whole-hour window `[from, until)` at least an
//!   hour ahead. The lease pays on-demand until `from`, reserved after, and
//!   ends at `until`; the switch is a timer, so it happens at `from` even
//!   when the engine catches up after downtime.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::core::{Engine, EngineError};
use super::events::Event;
use super::lease::{Lease, LeaseState};
use super::placement::take;
use super::pricing::{self, PriceRule, MAX_WINDOW_S, RESERVED_LEAD_S};
use super::types::{LeaseId, Mode, Priority, Ts};

/// What a lease converts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "to")]
pub enum ConvertTo {
    OnDemand,
    /// A reserved window `[from, until)`, both whole hours, `from` at least an hour ahead.
    Reserved {
        from: Ts,
        until: Ts,
    },
}

/// The reserved window an on-demand lease turns into at `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservedWindow {
    pub from: Ts,
    pub until: Ts,
}

/// One conversion, as the lease records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversion {
    /// When the buyer asked.
    pub at: Ts,
    /// When the new price applies (`at`, or a reserved window's `from`).
    pub effective_at: Ts,
    pub from_mode: Mode,
    pub to_mode: Mode,
    pub price_per_hour_before: Decimal,
    pub price_per_hour_after: Decimal,
}

/// Why a conversion is refused; nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum ConversionRefused {
    #[error("the lease is already on preemption notice")]
    AlreadyNoticed,
    #[error("another booking claims the lease's slice before the new end")]
    SliceBooked,
    #[error("only spot → on_demand and on_demand → reserved conversions exist, once each")]
    NotAllowed,
    #[error("only a running lease converts (its workload keeps running)")]
    NotRunning,
    #[error("from and until must be whole hours, from at least one hour ahead and until after it")]
    InvalidWindow,
    #[error("the hold the converted lease needs exceeds the available funds")]
    InsufficientFunds,
    /// A lease bought on resale ends with the seller's window at the latest:
    /// the time after it was never bought from the provider.
    #[error("a lease bought on resale cannot run past the seller's window; order new capacity for the time after it")]
    ResaleWindow,
}

impl ConversionRefused {
    /// The stable machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            ConversionRefused::AlreadyNoticed => "already_noticed",
            ConversionRefused::SliceBooked => "slice_booked",
            ConversionRefused::NotAllowed | ConversionRefused::NotRunning => {
                "conversion_not_allowed"
            }
            ConversionRefused::InvalidWindow => "invalid_window",
            ConversionRefused::InsufficientFunds => "insufficient_funds",
            ConversionRefused::ResaleWindow => "resale_window",
        }
    }
}

impl Engine {
    /// `Command::Convert`.
    pub(super) fn convert(
        &mut self,
        id: LeaseId,
        to: ConvertTo,
        funds_available: Decimal,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let lease = self.leases.get(id).ok_or(EngineError::UnknownLease(id))?;
        let allowed = match (lease.mode, to) {
            (Mode::Spot, ConvertTo::OnDemand) => true,
            (Mode::OnDemand, ConvertTo::Reserved { .. }) => lease.converts_to_reserved.is_none(),
            _ => false,
        };
        if !allowed {
            return Err(ConversionRefused::NotAllowed.into());
        }
        if lease.noticed_at.is_some() || lease.state == LeaseState::Preempting {
            return Err(ConversionRefused::AlreadyNoticed.into());
        }
        if lease.state != LeaseState::Running {
            return Err(ConversionRefused::NotRunning.into());
        }
        // A notice scheduled ahead: a reserved window is booked over the slice.
        if lease.notice_at.is_some() || lease.preempt_at.is_some() {
            return Err(ConversionRefused::SliceBooked.into());
        }
        match to {
            ConvertTo::OnDemand => self.spot_to_on_demand(id, funds_available, events),
            ConvertTo::Reserved { from, until } => self.on_demand_to_reserved(
                id,
                ReservedWindow { from, until },
                funds_available,
                events,
            ),
        }
    }

    fn spot_to_on_demand(
        &mut self,
        id: LeaseId,
        funds_available: Decimal,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let now = self.now;
        let lease = self.leases.get(id).ok_or(EngineError::UnknownLease(id))?;
        if !self.slice_free(lease, lease.ends_at) {
            return Err(ConversionRefused::SliceBooked.into());
        }
        let rule = PriceRule::fixed(Mode::OnDemand);
        let unit_prices = pricing::unit_prices(self.list_of(&lease.placement), &rule);
        let price = pricing::per_hour(lease.placement.units, unit_prices);
        let hold = pricing::hold(Mode::OnDemand, price, None, None);
        require_funds(hold, lease.hold, funds_available)?;
        let price_before = lease.price_per_hour;
        // Through `update`: it leaves the preemptible and spot indexes.
        let after = self.leases.update(id, |l| {
            l.mode = Mode::OnDemand;
            l.priority = Priority::of(Mode::OnDemand, l.qos);
            l.rule = rule;
            l.unit_prices = unit_prices;
            l.price_per_hour = price;
            l.bid_index = None;
            l.rebalance_at = None;
            l.hold = hold;
            l.spec.mode = Mode::OnDemand;
            l.spec.max_price = None;
            l.conversions.push(Conversion {
                at: now,
                effective_at: now,
                from_mode: Mode::Spot,
                to_mode: Mode::OnDemand,
                price_per_hour_before: price_before,
                price_per_hour_after: price,
            });
            l.clone()
        });
        let Some(after) = after else {
            return Err(EngineError::UnknownLease(id));
        };
        self.set_booking_priority(&after);
        // The spot order leaves the auction: no clearing requeues or reprices it again.
        if self
            .book
            .get(after.order_id)
            .is_some_and(|o| o.lease == Some(id))
        {
            self.book.remove(after.order_id);
        }
        events.push(Event::LeaseModeChanged {
            lease: Box::new(after),
            at: now,
        });
        events.push(Event::LeaseConverted {
            lease_id: id,
            from_mode: Mode::Spot,
            to_mode: Mode::OnDemand,
            price_per_hour_before: price_before,
            price_per_hour_after: price,
            hold,
            at: now,
            effective_at: now,
        });
        Ok(())
    }

    fn on_demand_to_reserved(
        &mut self,
        id: LeaseId,
        window: ReservedWindow,
        funds_available: Decimal,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let now = self.now;
        let ReservedWindow { from, until } = window;
        let whole_hours = from.rem_euclid(3600) == 0 && until.rem_euclid(3600) == 0;
        let in_range = now.checked_add(RESERVED_LEAD_S).is_some_and(|t| from >= t)
            && until > from
            && until.checked_sub(from).is_some_and(|w| w <= MAX_WINDOW_S);
        if !whole_hours || !in_range {
            return Err(ConversionRefused::InvalidWindow.into());
        }
        let lease = self.leases.get(id).ok_or(EngineError::UnknownLease(id))?;
        if let Some(source) = &lease.resale {
            // Past the seller's window the slice looks free, but nobody paid
            // the provider for it: refused rather than given away.
            let bound = source.window_until.or(lease.ends_at);
            if bound.is_none_or(|b| until > b) {
                return Err(ConversionRefused::ResaleWindow.into());
            }
        }
        if !self.slice_free(lease, Some(until)) {
            return Err(ConversionRefused::SliceBooked.into());
        }
        // Inside the seller's window a resold lease keeps paying the ask: the
        // seller, not the provider, is paid for that time.
        let price = if lease.resale.is_some() {
            lease.price_per_hour
        } else {
            reserved_price(self, lease)
        };
        // The reserved part is held like any reservation (a rolling 7 days),
        // beside the on-demand hour the lease holds until `from`.
        let reserved_hold = pricing::hold(Mode::Reserved, price, Some(until - from), None);
        let hold = lease
            .hold
            .checked_add(reserved_hold)
            .ok_or(ConversionRefused::InsufficientFunds)?;
        require_funds(hold, lease.hold, funds_available)?;
        let before = lease.price_per_hour;
        let Some(l) = self.lease_mut(id) else {
            return Err(EngineError::UnknownLease(id));
        };
        l.ends_at = Some(until);
        l.converts_to_reserved = Some(window);
        l.hold = hold;
        l.conversions.push(Conversion {
            at: now,
            effective_at: from,
            from_mode: Mode::OnDemand,
            to_mode: Mode::Reserved,
            price_per_hour_before: before,
            price_per_hour_after: price,
        });
        // The calendar holds the slice up to `until` now; the timers end it
        // then and switch its price at `from`.
        self.rebook(id);
        events.push(Event::LeaseConverted {
            lease_id: id,
            from_mode: Mode::OnDemand,
            to_mode: Mode::Reserved,
            price_per_hour_before: before,
            price_per_hour_after: price,
            hold,
            at: now,
            effective_at: from,
        });
        Ok(())
    }

    /// The conversion timer: at `from` the lease becomes reserved, at the reserved price.
    pub(super) fn due_conversion(&mut self, id: LeaseId, at: Ts, events: &mut Vec<Event>) {
        let Some(lease) = self.leases.get(id) else {
            return;
        };
        let Some(window) = lease.converts_to_reserved.filter(|w| w.from == at) else {
            return;
        };
        // A resold lease keeps the ask it bought at (see `on_demand_to_reserved`).
        let (rule, unit_prices, price) = if lease.resale.is_some() {
            (lease.rule, lease.unit_prices, lease.price_per_hour)
        } else {
            let rule = PriceRule::fixed(Mode::Reserved);
            let unit_prices = pricing::unit_prices(self.list_of(&lease.placement), &rule);
            (
                rule,
                unit_prices,
                pricing::per_hour(lease.placement.units, unit_prices),
            )
        };
        let after = self.leases.update(id, |l| {
            l.mode = Mode::Reserved;
            l.priority = Priority::of(Mode::Reserved, l.qos);
            l.rule = rule;
            l.unit_prices = unit_prices;
            l.price_per_hour = price;
            l.converts_to_reserved = None;
            // Re-placed after a node loss, it keeps its window like any reservation.
            l.spec.mode = Mode::Reserved;
            l.spec.start_at = Some(window.from);
            l.spec.duration_s = Some(window.until - window.from);
            l.clone()
        });
        let Some(after) = after else {
            return;
        };
        self.set_booking_priority(&after);
        events.push(Event::LeaseModeChanged {
            lease: Box::new(after),
            at,
        });
    }

    /// Whether the lease's slice stays free of every other booking from now
    /// to `until` (`None`: indefinitely), host CPU and memory included.
    fn slice_free(&self, lease: &Lease, until: Option<Ts>) -> bool {
        let now = self.now;
        let Some(node) = self.nodes.get(&lease.node) else {
            return false;
        };
        let gpus_free = lease.placement.gpus.iter().all(|gs| {
            let Some(pos) = node.spec.gpus.iter().position(|g| g.index == gs.index) else {
                return false;
            };
            let Some((model, mode)) = self.gpu_kind(lease.node, gs.index) else {
                return false;
            };
            let free =
                node.calendars[pos].free_over(model, mode, now, until, |b| b.lease == lease.id);
            take(free, mode, &gs.slot, model).is_some()
        });
        let (cpu, mem) = node
            .leases
            .iter()
            .filter(|other| **other != lease.id)
            .filter_map(|other| self.leases.get(*other))
            .filter(|other| {
                other.booked_from() < until.unwrap_or(Ts::MAX)
                    && other.booked_until().is_none_or(|u| u > now)
            })
            .fold((0u64, 0u64), |(c, m), other| {
                (
                    c.saturating_add(other.placement.cpu_milli),
                    m.saturating_add(other.placement.memory_mib),
                )
            });
        gpus_free
            && cpu.saturating_add(lease.placement.cpu_milli) <= node.spec.cpu_milli
            && mem.saturating_add(lease.placement.memory_mib) <= node.spec.memory_mib
    }

    /// Keeps the calendar's bookings at the lease's priority.
    fn set_booking_priority(&mut self, lease: &Lease) {
        if let Some(node) = self.nodes.get_mut(&lease.node) {
            for cal in &mut node.calendars {
                for b in cal.bookings.iter_mut().filter(|b| b.lease == lease.id) {
                    b.priority = lease.priority;
                }
            }
        }
    }
}

/// The reserved price per hour of what the lease holds.
fn reserved_price(engine: &Engine, lease: &Lease) -> Decimal {
    let unit_prices = pricing::unit_prices(
        engine.list_of(&lease.placement),
        &PriceRule::fixed(Mode::Reserved),
    );
    pricing::per_hour(lease.placement.units, unit_prices)
}

/// Refuses a hold that grows by more than the wallet can add.
fn require_funds(
    hold: Decimal,
    held: Decimal,
    funds_available: Decimal,
) -> Result<(), ConversionRefused> {
    let more = hold
        .checked_sub(held)
        .ok_or(ConversionRefused::InsufficientFunds)?;
    if more > funds_available {
        return Err(ConversionRefused::InsufficientFunds);
    }
    Ok(())
}
