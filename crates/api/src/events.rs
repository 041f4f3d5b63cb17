//! Events (ARCHITECTURE.md §15) as the page, the stream and webhooks show them.

use chrono::{DateTime, Utc};
use gpuex_wire::catalog::text_names;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

/// What an event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum EventType {
    /// The engine took the order.
    #[serde(rename = "order.accepted")]
    OrderAccepted,
    /// The order got a lease: `lease_id`, its price and why.
    #[serde(rename = "order.filled")]
    OrderFilled,
    /// Refused, at once or later (e.g. the wallet could not cover the hold
    /// when capacity freed): `reason` and `message`.
    #[serde(rename = "order.rejected")]
    OrderRejected,
    #[serde(rename = "order.cancelled")]
    OrderCancelled,
    /// It waited `max_wait_s` without capacity.
    #[serde(rename = "order.expired")]
    OrderExpired,
    /// The order is back in the book: its spot lease was preempted, or its
    /// lease's node was lost with no room elsewhere. A waiting order's
    /// `max_wait_s` counts from here; `order.expired` follows if it runs out.
    #[serde(rename = "order.requeued")]
    OrderRequeued,
    /// The agent provisioned the slice; billing runs from here.
    #[serde(rename = "lease.running")]
    LeaseRunning,
    /// The lease ends at `preempt_at`; the workload gets SIGTERM now.
    #[serde(rename = "lease.preempt_notice")]
    LeasePreemptNotice,
    /// A spot lease's clearing index came within 10 % of its own index.
    #[serde(rename = "lease.rebalance")]
    LeaseRebalance,
    /// The lease changed mode (ARCHITECTURE.md §3 "Mode changes"): `from_mode`,
    /// `to_mode`, the prices per hour before and after, and `effective_at`.
    #[serde(rename = "lease.converted")]
    LeaseConverted,
    /// The lease is over: `reason`.
    #[serde(rename = "lease.ended")]
    LeaseEnded,
    /// A budget's spend plus its running leases' notice period reached its
    /// limit; those leases are on notice.
    #[serde(rename = "budget.notice")]
    BudgetNotice,
    /// The wallet could not fund a lease any further; it is on notice.
    #[serde(rename = "funds.low")]
    FundsLow,
    /// A listing opened (`parent_id` names the listing a sale left it of).
    #[serde(rename = "listing.created")]
    ListingCreated,
    /// Part of a listing was sold: `from`, `until` and `amount` (the ask
    /// for it; each charge pays the seller's wallet less the platform fee).
    #[serde(rename = "listing.sold")]
    ListingSold,
    /// The listing's window ran out unsold, or its node left the market
    /// (`reason`).
    #[serde(rename = "listing.expired")]
    ListingExpired,
    #[serde(rename = "listing.cancelled")]
    ListingCancelled,
}

text_names!(EventType {
    OrderAccepted => "order.accepted",
    OrderFilled => "order.filled",
    OrderRejected => "order.rejected",
    OrderCancelled => "order.cancelled",
    OrderExpired => "order.expired",
    OrderRequeued => "order.requeued",
    LeaseRunning => "lease.running",
    LeasePreemptNotice => "lease.preempt_notice",
    LeaseRebalance => "lease.rebalance",
    LeaseConverted => "lease.converted",
    LeaseEnded => "lease.ended",
    BudgetNotice => "budget.notice",
    FundsLow => "funds.low",
    ListingCreated => "listing.created",
    ListingSold => "listing.sold",
    ListingExpired => "listing.expired",
    ListingCancelled => "listing.cancelled",
});

/// An event as stored and as every channel shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StoredEvent {
    /// Grows with every event; resume after it with `after` or `Last-Event-ID`.
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: EventType,
    pub at: DateTime<Utc>,
    /// The order it concerns (for a lease's event, the lease's order).
    pub order_id: Option<Uuid>,
    pub lease_id: Option<Uuid>,
    /// What happened; its fields depend on `type` (README, "Events").
    #[schema(value_type = Object)]
    pub data: Box<RawValue>,
    #[serde(skip)]
    pub user_id: Uuid,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventPage {
    /// Oldest first.
    pub items: Vec<StoredEvent>,
    /// Pass as `after` for the next page (the last id here, or the `after`
    /// given when the page is empty).
    pub next_after: i64,
    /// Whether more events follow at once.
    pub has_more: bool,
}
