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

pub use gpuex_api::events::EventPage;
pub use gpuex_api::events::{EventType, StoredEvent};
pub use hub::EventHub;
pub use routes::{router, EventsState};
pub use store::{NewEvent, Owner};

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
