//! The dispatcher: turns new events into delivery rows. Its cursor is a row
//! too, moved in the transaction that writes the deliveries, so after a
//! crash each event is dispatched exactly once: either both happened or
//! neither did.

use super::store::{self, NewDelivery};
use crate::db::Db;
use crate::events::store as events;
use chrono::Utc;
use std::collections::HashMap;

/// Events dispatched per transaction.
const BATCH: u32 = 256;

/// The endpoint key of an order's `webhook_url`: one per account and URL,
/// so an order's events and its leases' arrive in order there too.
pub fn order_endpoint(user: uuid::Uuid, url: &str) -> String {
    format!("order:{user}:{url}")
}

/// Dispatches the next batch of events; whether more may follow at once.
pub async fn once(db: &Db) -> anyhow::Result<bool> {
    let from = store::cursor(db).await?;
    let batch = events::tail(db, from, BATCH).await?;
    let Some(to) = batch.last().map(|e| e.id) else {
        return Ok(false);
    };
    let endpoints = store::endpoints_for(db, from, to).await?;
    let order_urls: HashMap<uuid::Uuid, String> = store::order_urls_for(db, from, to)
        .await?
        .into_iter()
        .collect();
    let mut deliveries = Vec::new();
    for event in &batch {
        let wants = |types: &Option<Vec<_>>| types.as_ref().is_none_or(|t| t.contains(&event.kind));
        let body = serde_json::to_string(event)?;
        let delivery = |endpoint: String, webhook_id, url: &str| NewDelivery {
            endpoint,
            webhook_id,
            user_id: event.user_id,
            url: url.to_owned(),
            event_id: event.id,
            event_type: event.kind,
            event_at: event.at,
            body: body.clone(),
        };
        for hook in endpoints
            .iter()
            .filter(|h| h.user_id == event.user_id && wants(&h.events))
        {
            deliveries.push(delivery(hook.id.to_string(), Some(hook.id), &hook.url));
        }
        if let Some(url) = event.order_id.and_then(|o| order_urls.get(&o)) {
            deliveries.push(delivery(order_endpoint(event.user_id, url), None, url));
        }
    }
    // Another server may have moved the cursor first; it wrote these then.
    store::enqueue(db, from, to, &deliveries, Utc::now()).await?;
    Ok(batch.len() == BATCH as usize)
}
