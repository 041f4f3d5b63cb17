//! Leases: what an order gets — a slice of one node for a window, at a price.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::placement::{Placement, UnitPrices};
use super::pricing::PriceRule;
use super::pricing::RESERVED_LEAD_S;
use super::resale::ResaleSource;
use gpuex_wire::catalog::text_names;

use super::types::{BuyerId, LeaseId, Mode, NodeId, OrderId, OrderSpec, Priority, Qos, Ts};

/// Lease states (ARCHITECTURE.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(
    feature = "openapi",
    schema(description = "Where a lease stands (ARCHITECTURE.md §4); rows keep the name as text.")
)]
#[serde(rename_all = "snake_case")]
pub enum LeaseState {
    /// Waiting: on a preemption notice (`ready_at`) or for a reserved window to start.
    Pending,
    /// The agent is told to set the slice up.
    Provisioning,
    /// The agent reported the slice provisioned; billing runs.
    Running,
    /// Notice given; the lease ends at `preempt_at`.
    Preempting,
    Ended,
    Failed,
}

impl LeaseState {
    /// Whether the lease still holds (or will hold) its slice.
    pub fn live(self) -> bool {
        !matches!(self, LeaseState::Ended | LeaseState::Failed)
    }
}

text_names!(LeaseState {
    Pending => "pending",
    Provisioning => "provisioning",
    Running => "running",
    Preempting => "preempting",
    Ended => "ended",
    Failed => "failed",
});

/// Why a lease ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    Released,
    /// The window or `duration_s` ran out.
    Expired,
    /// Taken for higher-priority work after notice.
    Preempted,
    /// Funds ran out (after notice, or where a reserved booking's funding ends).
    FundsExhausted,
    /// The agent reported the workload ended.
    AgentEnded,
    AgentFailed,
    NodeLost,
    /// The node's inventory changed under the lease.
    CapacityRemoved,
    /// The spot order was cancelled.
    OrderCancelled,
    /// Its holder listed the rest of its reserved window for resale.
    Listed,
    /// The workload filled its disk quota (the agent ended it).
    DiskQuota,
}

/// Why a lease got a preemption notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeReason {
    /// Higher-priority work needs the slice.
    Priority,
    FundsExhausted,
}

/// A lease and everything it promises.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub id: LeaseId,
    pub order_id: OrderId,
    pub buyer: BuyerId,
    pub mode: Mode,
    pub qos: Qos,
    pub priority: Priority,
    pub state: LeaseState,
    pub node: NodeId,
    pub region: String,
    pub model: String,
    pub placement: Placement,
    /// Price per unit-hour charged for each unit.
    pub unit_prices: UnitPrices,
    /// Price per hour of everything held.
    pub price_per_hour: Decimal,
    pub rule: PriceRule,
    /// Spot: the bid's price index (max_price ÷ list value per hour).
    pub bid_index: Option<Decimal>,
    /// When the lease takes its slice (the window start; billing starts at `provisioned`).
    pub starts_at: Ts,
    /// When the window or duration ends (`None`: open-ended).
    pub ends_at: Option<Ts>,
    /// Pending: when the slice becomes free.
    pub ready_at: Option<Ts>,
    /// When a scheduled preemption notice is due (reserved booking ahead).
    pub notice_at: Option<Ts>,
    /// Preempting: when the lease ends.
    pub preempt_at: Option<Ts>,
    pub notice_reason: Option<NoticeReason>,
    /// When the notice was actually given (to prove it came a full notice ahead).
    pub noticed_at: Option<Ts>,
    /// Spot: when the clearing index last came within 10 % of the bid's
    /// (the `rebalance` warning); cleared when it moves away again, so each
    /// approach warns once.
    #[serde(default)]
    pub rebalance_at: Option<Ts>,
    /// Which fill of its order this is (lease ids derive from it).
    pub fill_no: u32,
    /// Funds the ledger should hold for it (ARCHITECTURE.md §4).
    pub hold: Decimal,
    /// The order it fills (kept to re-place it when its node is lost).
    pub spec: OrderSpec,
    /// Listed for resale: the lease gives up its slice here, and its window,
    /// still owed whole, ends at `ends_at`.
    #[serde(default)]
    pub vacate_at: Option<Ts>,
    /// Bought on resale: the listing it came from and whom it pays.
    #[serde(default)]
    pub resale: Option<ResaleSource>,
    /// Mode conversions so far, oldest first (ARCHITECTURE.md §3 "Mode changes").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversions: Vec<super::convert::Conversion>,
    /// An on-demand lease converted to reserved: the reserved window it turns into at `from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converts_to_reserved: Option<super::convert::ReservedWindow>,
}

impl Lease {
    /// The end of its booking in the calendar: the earliest of the window end and the preemption.
    pub fn booked_until(&self) -> Option<Ts> {
        [self.ends_at, self.preempt_at, self.vacate_at]
            .into_iter()
            .flatten()
            .min()
    }

    /// The order to re-place this lease elsewhere at `now`: a reserved window
    /// still ahead keeps its window; otherwise what remains of it runs from
    /// now, and so does what remains of its predicted duration.
    pub fn spec_for_replacement(&self, now: Ts) -> OrderSpec {
        let mut s = self.spec.clone();
        // A lost leg of a gang is placed again alone: its siblings run on.
        s.gang = None;
        let ahead = self.mode == Mode::Reserved && self.starts_at > now + RESERVED_LEAD_S;
        if !ahead {
            s.start_at = None;
            s.duration_s = self.ends_at.map(|e| (e - now).max(1));
            if let Some(p) = &mut s.predicted_duration {
                p.seconds = p.seconds.map(|d| (self.starts_at + d - now).max(1));
            }
        }
        s
    }

    /// When the lease is expected to give up its slice: its booking's end,
    /// else its start plus its predicted duration (`None`: unknown).
    pub fn expected_end(&self) -> Option<Ts> {
        self.booked_until().or_else(|| {
            let seconds = self.spec.predicted_duration.as_ref()?.seconds?;
            // From the fixed start, not `booked_from`: a pending lease's
            // `ready_at` moves without its bookings changing.
            Some(self.starts_at.saturating_add(seconds))
        })
    }

    /// The state a replacement for this lease starts in.
    pub fn state_for_replacement(&self) -> LeaseState {
        LeaseState::Pending
    }

    /// When it starts holding its slice in the calendar.
    pub fn booked_from(&self) -> Ts {
        self.ready_at.unwrap_or(self.starts_at).max(self.starts_at)
    }
}
