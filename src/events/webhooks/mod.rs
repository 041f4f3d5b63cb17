//! Webhooks (ARCHITECTURE.md §15): events POSTed to the account's endpoints and to an
//! order's `webhook_url`, signed like Stripe's (`Gpuex-Signature:
//! t=…,v1=…`), at least once, in order per endpoint, retried with backoff
//! for a day.
//!
//! Two workers, one task: the dispatcher turns new events into delivery
//! rows behind a durable cursor ([`dispatch`]); the deliverer sends the due
//! ones ([`deliver`]). Nothing lives only in memory, so a restart, even
//! after SIGKILL, resumes every pending delivery. Both are safe to run on
//! several replicas of one database: the cursor moves only from where it
//! was read, and a delivery is claimed in the database before it is sent.

pub mod address;
pub mod deliver;
pub mod dispatch;
pub mod history;
mod routes;
pub mod sign;
pub mod store;

pub use routes::{check_order_webhook, router};

use super::EventsState;
use chrono::Utc;
use deliver::Deliverer;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use utoipa::ToSchema;

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not delivered yet: waiting for its turn or its next try.
    Pending,
    /// A 2xx came back.
    Delivered,
    /// No 2xx within a day of the event; the endpoint moved on.
    Failed,
}

crate::catalog::text_names!(DeliveryState {
    Pending => "pending",
    Delivered => "delivered",
    Failed => "failed",
});

/// How often the worker looks for due retries and events it was not told of.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long the dispatcher waits after being told of new events, for more.
const GATHER: Duration = Duration::from_millis(100);

/// Starts the webhook worker; abort the handle to stop it.
pub fn spawn(state: &EventsState) -> tokio::task::JoinHandle<()> {
    let db = state.db.clone();
    let latest = state.events.latest();
    let allow_private = state.settings.webhook_allow_private;
    let outcomes = state.metrics.webhook_deliveries.clone();
    tokio::spawn(async move {
        match Deliverer::new(db.clone(), allow_private, outcomes) {
            Ok(deliverer) => run(db, latest, Arc::new(deliverer)).await,
            Err(e) => tracing::error!(error = %e, "webhooks are off: no HTTP client"),
        }
    })
}

/// Dispatches new events and keeps up to [`deliver::CONCURRENCY`]
/// endpoints' deliveries in flight, one per endpoint, until aborted.
async fn run(
    db: crate::db::Db,
    mut latest: tokio::sync::watch::Receiver<i64>,
    deliverer: Arc<Deliverer>,
) {
    let mut in_flight: JoinSet<()> = JoinSet::new();
    let mut endpoint_of: HashMap<tokio::task::Id, String> = HashMap::new();
    let mut busy: HashSet<String> = HashSet::new();
    let mut hub_open = true;
    loop {
        loop {
            match dispatch::once(&db).await {
                Ok(true) => continue,
                Ok(false) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "could not dispatch events to webhooks");
                    break;
                }
            }
        }
        let room = deliver::CONCURRENCY.saturating_sub(in_flight.len());
        if room > 0 {
            // Heads of busy endpoints come back too; ask for enough to fill
            // the room with the others.
            let want = u32::try_from(room + busy.len()).unwrap_or(u32::MAX);
            match store::due(&db, Utc::now(), want).await {
                Ok(due) => {
                    let mut started = 0;
                    for d in due {
                        if started == room || !busy.insert(d.endpoint.clone()) {
                            continue;
                        }
                        started += 1;
                        let endpoint = d.endpoint.clone();
                        let task = in_flight.spawn(deliverer.clone().attempt(d));
                        endpoint_of.insert(task.id(), endpoint);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not read due webhook deliveries"),
            }
        }
        tokio::select! {
            changed = latest.changed(), if hub_open => {
                hub_open = changed.is_ok();
                // Under load every market commit moves the hub; gathering
                // what follows makes one dispatch (four reads and a write
                // beside the market's) cover many commits.
                tokio::time::sleep(GATHER).await;
            }
            Some(done) = in_flight.join_next_with_id() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(e) => e.id(),
                };
                if let Some(endpoint) = endpoint_of.remove(&id) {
                    busy.remove(&endpoint);
                }
            }
            () = tokio::time::sleep(LOOK_EVERY) => {}
        }
    }
}
