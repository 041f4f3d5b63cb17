//! Events (ARCHITECTURE.md §15): every change a user should hear about is written to
//! an outbox, the `events` table, in the transaction of the change itself,
//! so nothing acknowledged goes unheard. Ids only grow; a page
//! (`GET /v1/events?after=`) and a stream (`GET /v1/events/stream`,
//! resumed with `Last-Event-ID`) read the same rows. The [`EventHub`] reads
//! each new row once and hands it to every open stream.

pub mod hub;
mod routes;
pub mod store;
pub mod webhooks;

pub use hub::EventHub;
pub use routes::{router, EventPage, EventsState};
pub use store::{NewEvent, Owner, StoredEvent};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

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

crate::catalog::text_names!(EventType {
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

/// Deletes events older than `retention_days`, and finished webhook
/// deliveries as old, hourly, until aborted.
pub fn spawn_pruner(db: crate::db::Db, retention_days: u32) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let before = chrono::Utc::now() - chrono::Duration::days(i64::from(retention_days));
            match store::prune(&db, before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "pruned old events"),
                Err(e) => tracing::warn!(error = %e, "pruning old events failed"),
            }
            // Webhook deliveries are kept as long as the events they carried.
            match webhooks::store::prune(&db, before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "pruned old webhook deliveries"),
                Err(e) => tracing::warn!(error = %e, "pruning old webhook deliveries failed"),
            }
        }
    })
}
