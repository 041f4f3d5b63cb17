//! What an endpoint's owner reads back: its deliveries and their attempts.

use super::DeliveryState;
use crate::db::{dispatch, Db, Text};
use crate::events::EventType;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// A delivery as its endpoint's owner sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveryView {
    pub id: i64,
    pub event_id: i64,
    pub event_type: EventType,
    pub state: DeliveryState,
    pub created_at: DateTime<Utc>,
    /// When the next try is due, while pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Oldest first.
    pub attempts: Vec<AttemptView>,
}

/// One POST of a delivery.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AttemptView {
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status; `null` when none came (see `error`).
    pub status: Option<u16>,
    /// Why no status came (timeout, refused address, connection error).
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// `(delivery_id, at, status, error, duration_ms)`.
type AttemptRow = (i64, DateTime<Utc>, Option<i32>, Option<String>, i64);

type DeliveryRow = (
    i64,
    i64,
    Text<EventType>,
    DeliveryState,
    DateTime<Utc>,
    DateTime<Utc>,
);

/// Endpoint `webhook`'s deliveries before id `before`, newest first.
pub async fn deliveries(
    db: &Db,
    webhook: Uuid,
    before: i64,
    limit: u32,
) -> anyhow::Result<Vec<DeliveryView>> {
    let rows: Vec<DeliveryRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, event_id, event_type, state, created_at, next_at FROM webhook_deliveries \
             WHERE webhook_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
        )
        .bind(webhook)
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await
    })?;
    let (Some(newest), Some(oldest)) = (rows.first().map(|r| r.0), rows.last().map(|r| r.0)) else {
        return Ok(vec![]);
    };
    let attempts: Vec<AttemptRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT a.delivery_id, a.at, a.status, a.error, a.duration_ms FROM webhook_attempts a \
             JOIN webhook_deliveries d ON d.id = a.delivery_id \
             WHERE d.webhook_id = $1 AND a.delivery_id >= $2 AND a.delivery_id <= $3 ORDER BY a.at",
        )
        .bind(webhook)
        .bind(oldest)
        .bind(newest)
        .fetch_all(pool)
        .await
    })?;
    let mut by_delivery: std::collections::HashMap<i64, Vec<AttemptView>> = Default::default();
    for (delivery, at, status, error, duration_ms) in attempts {
        by_delivery.entry(delivery).or_default().push(AttemptView {
            at,
            status: status.and_then(|s| u16::try_from(s).ok()),
            error,
            duration_ms,
        });
    }
    Ok(rows
        .into_iter()
        .map(
            |(id, event_id, event_type, state, created_at, next_at)| DeliveryView {
                id,
                event_id,
                event_type: event_type.0,
                state,
                created_at,
                next_attempt_at: (state == DeliveryState::Pending).then_some(next_at),
                attempts: by_delivery.remove(&id).unwrap_or_default(),
            },
        )
        .collect())
}
