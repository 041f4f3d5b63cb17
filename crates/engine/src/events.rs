//! Events out of the engine: everything the server persists and tells buyers,
//! providers and agents.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::lease::{EndReason, Lease, LeaseState, NoticeReason};
use super::placement::{UnitPrices, Units, Why};
use super::pricing::PriceRule;
use super::reject::RejectReason;
use super::resale::Listing;
use super::types::{DurationPrediction, LeaseId, ListingId, Mode, OrderId, Ts};

/// Where a fill's slice came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    #[default]
    Primary,
    Resale,
}

/// Why a fill has its price and its slice (ARCHITECTURE.md §4 fill reports).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FillReport {
    /// The sources matched against, cheapest first.
    pub sources_considered: Vec<String>,
    /// Where the slice came from.
    #[serde(default)]
    pub source: Source,
    /// Resale: the listing taken.
    #[serde(default)]
    pub listing_id: Option<ListingId>,
    /// Resale: what primary capacity would have charged per hour (`None`:
    /// none was free).
    #[serde(default)]
    pub primary_price_per_hour: Option<Decimal>,
    /// Resale: the primary price per hour less the ask.
    #[serde(default)]
    pub saving_per_hour: Option<Decimal>,
    /// List prices of the chosen (region, model).
    pub list_prices: UnitPrices,
    pub rule: PriceRule,
    /// Spot: the clearing index applied.
    pub clearing_index: Option<Decimal>,
    /// Units held and what they cost per hour.
    pub units: Units,
    pub price_per_hour: Decimal,
    /// Why this slice: options and candidates weighed, fragmentation, NVLink, off-peak.
    pub why_slice: Why,
    /// Leases given notice to make room.
    pub preempted: Vec<LeaseId>,
    /// The lease's expected duration that placement used, and its basis
    /// (ARCHITECTURE.md §17): the order's `duration_s`, or predicted from the
    /// buyer's ended leases of the same tags, the same command, or all of
    /// them; `none` without history.
    #[serde(default)]
    pub duration_prediction: DurationPrediction,
    /// One human sentence.
    pub explanation: String,
}

/// Why a spot lease got its `rebalance` warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RebalanceReason {
    /// The clearing index came within 10 % of the lease's bid index.
    #[default]
    ClearingNear,
    /// Its slice is booked (a reservation, or on-demand work waiting for it)
    /// to be taken within 15 minutes.
    Booked,
    /// The demand forecast expects on-demand and reserved work in its market
    /// beyond the idle capacity there.
    Forecast,
}

/// How a listing closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListingEnd {
    Sold,
    Cancelled,
    /// Its window ran out unsold.
    Expired,
    /// Its node or GPUs left the market.
    Withdrawn,
}

/// An event out of the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    OrderAccepted {
        order_id: OrderId,
        at: Ts,
    },
    OrderRejected {
        order_id: OrderId,
        reason: RejectReason,
        message: String,
        at: Ts,
    },
    OrderFilled {
        order_id: OrderId,
        lease_id: LeaseId,
        report: Box<FillReport>,
        at: Ts,
    },
    OrderCancelled {
        order_id: OrderId,
        at: Ts,
    },
    /// Waited `max_wait_s` without capacity.
    OrderExpired {
        order_id: OrderId,
        at: Ts,
    },
    /// Back in the book: a spot order whose lease was preempted (in the
    /// auction again), or an order whose lease was lost with its node and
    /// found no room elsewhere (waiting again, `max_wait_s` from now).
    OrderRequeued {
        order_id: OrderId,
        at: Ts,
    },
    /// A new lease: placement, units, price, window, and the hold it needs.
    LeaseGranted {
        lease: Box<Lease>,
        at: Ts,
    },
    LeaseStateChanged {
        lease_id: LeaseId,
        from: LeaseState,
        to: LeaseState,
        ready_at: Option<Ts>,
        preempt_at: Option<Ts>,
        at: Ts,
    },
    /// A notice is scheduled: sent at `notice_at`, the lease ending at
    /// `preempt_at` (a reserved window booked over it, or its funding ending).
    PreemptScheduled {
        lease_id: LeaseId,
        notice_at: Ts,
        preempt_at: Ts,
        reason: NoticeReason,
        at: Ts,
    },
    /// The lease ends at `preempt_at`; the workload gets SIGTERM now, SIGKILL then.
    PreemptNotice {
        lease_id: LeaseId,
        preempt_at: Ts,
        reason: NoticeReason,
        at: Ts,
    },
    /// The lease is at elevated risk of preemption (ARCHITECTURE.md §3): the clearing
    /// index came within 10 % of the spot bid's index, or its capacity is
    /// booked or forecast for on-demand or reserved work within 15 minutes.
    RebalanceWarning {
        lease_id: LeaseId,
        /// The market's clearing index, or the lease's own when its market
        /// has not cleared.
        clearing_index: Decimal,
        bid_index: Decimal,
        #[serde(default)]
        reason: RebalanceReason,
        at: Ts,
    },
    /// A spot lease's price moved with the clearing index.
    LeaseRepriced {
        lease_id: LeaseId,
        price_per_hour: Decimal,
        at: Ts,
    },
    /// The buyer converted the lease's mode (ARCHITECTURE.md §3): recorded at once,
    /// with the hold the lease needs from now on; the new price applies from
    /// `effective_at` (now, or a reserved window's `from`), when
    /// [`Event::LeaseModeChanged`] follows.
    LeaseConverted {
        lease_id: LeaseId,
        from_mode: Mode,
        to_mode: Mode,
        price_per_hour_before: Decimal,
        price_per_hour_after: Decimal,
        /// What the ledger should hold for the lease from now on.
        hold: Decimal,
        at: Ts,
        effective_at: Ts,
    },
    /// A conversion took effect: from `at` the lease is charged as `lease`
    /// says (mode, price); the seconds before, as it was.
    LeaseModeChanged {
        lease: Box<Lease>,
        at: Ts,
    },
    LeaseEnded {
        lease_id: LeaseId,
        reason: EndReason,
        at: Ts,
    },
    /// One market's result at a spot clearing, sent for every (model,
    /// region) with list prices at every clearing, changed or not: what
    /// market history and the public market stream are built from.
    AuctionCleared {
        gpu_model: String,
        region: String,
        clearing_index: Decimal,
        /// What a winner at the clearing index pays per unit-hour.
        unit_prices: UnitPrices,
        /// Units granted to winners in this market at this clearing.
        won: Units,
        at: Ts,
    },
    /// A listing opened: the seller listed a tail, or a sale left part of one.
    ListingCreated {
        listing: Box<Listing>,
        at: Ts,
    },
    /// `[from, until)` of a listing was sold as the buyer's `lease_id`;
    /// `amount` is the ask for it (what the seller's proceeds derive from).
    ListingSold {
        listing_id: ListingId,
        lease_id: LeaseId,
        from: Ts,
        until: Ts,
        amount: Decimal,
        at: Ts,
    },
    /// A listing closed unsold.
    ListingClosed {
        listing_id: ListingId,
        end: ListingEnd,
        at: Ts,
    },
    /// The spot clearing index of one (model, region) changed.
    PriceChanged {
        gpu_model: String,
        region: String,
        clearing_index: Decimal,
        at: Ts,
    },
}
