//! The webhook tables: endpoints, the account's default secret, the
//! dispatcher's cursor, deliveries and their attempts.

use super::DeliveryState;
use crate::db::{dispatch, dispatch_tx, execute_tx, Db, Text};
use crate::events::EventType;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// An endpoint as its owner sees it (the secret is shown only once).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Webhook {
    pub id: Uuid,
    pub url: String,
    /// The event types it receives; `null`: all of them.
    pub events: Option<Vec<EventType>>,
    pub created_at: DateTime<Utc>,
}

type WebhookRow = (Uuid, String, Option<String>, DateTime<Utc>);

fn webhook(row: WebhookRow) -> anyhow::Result<Webhook> {
    let (id, url, events, created_at) = row;
    let events = events.map(|e| serde_json::from_str(&e)).transpose()?;
    Ok(Webhook {
        id,
        url,
        events,
        created_at,
    })
}

/// Adds `hook` with `secret` unless `user` has `max` already; `false` then.
pub async fn create(
    db: &Db,
    user: Uuid,
    hook: &Webhook,
    secret: &str,
    max: i64,
) -> anyhow::Result<bool> {
    let events = hook
        .events
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    let mut tx = db.begin().await?;
    let count: i64 = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT COUNT(*) FROM webhooks WHERE user_id = $1")
            .bind(user)
            .fetch_one(conn)
            .await
    })?;
    if count >= max {
        return Ok(false);
    }
    execute_tx!(
        tx,
        "INSERT INTO webhooks (id, user_id, url, events_json, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        hook.id,
        user,
        hook.url.as_str(),
        events,
        secret,
        hook.created_at,
    )?;
    tx.commit().await?;
    Ok(true)
}

/// `user`'s endpoints, oldest first.
pub async fn list(db: &Db, user: Uuid) -> anyhow::Result<Vec<Webhook>> {
    let rows: Vec<WebhookRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, url, events_json, created_at FROM webhooks WHERE user_id = $1 ORDER BY created_at, id",
        )
        .bind(user)
        .fetch_all(pool)
        .await
    })?;
    rows.into_iter().map(webhook).collect()
}

/// Whether `id` is one of `user`'s endpoints.
pub async fn owns(db: &Db, user: Uuid, id: Uuid) -> anyhow::Result<bool> {
    let found: Option<Uuid> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT id FROM webhooks WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user)
            .fetch_optional(pool)
            .await
    })?;
    Ok(found.is_some())
}

/// Deletes `user`'s endpoint `id` with its deliveries, so the pending ones
/// stop; `false` when there is no such endpoint of `user`.
pub async fn delete(db: &Db, user: Uuid, id: Uuid) -> anyhow::Result<bool> {
    let mut tx = db.begin().await?;
    let n = execute_tx!(
        tx,
        "DELETE FROM webhooks WHERE id = $1 AND user_id = $2",
        id,
        user
    )?;
    if n == 0 {
        return Ok(false);
    }
    execute_tx!(
        tx,
        "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = $1)",
        id,
    )?;
    execute_tx!(
        tx,
        "DELETE FROM webhook_deliveries WHERE webhook_id = $1",
        id
    )?;
    tx.commit().await?;
    Ok(true)
}

/// Sets `user`'s default secret, replacing any before it.
pub async fn set_default_secret(
    db: &Db,
    user: Uuid,
    secret: &str,
    at: DateTime<Utc>,
) -> anyhow::Result<()> {
    let mut tx = db.begin().await?;
    execute_tx!(
        tx,
        "INSERT INTO webhook_secrets (user_id, secret, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at",
        user,
        secret,
        at,
    )?;
    tx.commit().await
}

/// `user`'s default secret, if it made one.
pub async fn default_secret(db: &Db, user: Uuid) -> anyhow::Result<Option<String>> {
    Ok(dispatch!(db, pool => {
        sqlx::query_scalar("SELECT secret FROM webhook_secrets WHERE user_id = $1")
            .bind(user)
            .fetch_optional(pool)
            .await
    })?)
}

/// The secret that signs a delivery: its endpoint's, or for an order's
/// `webhook_url` the account's default secret as it is now.
pub async fn secret_of(db: &Db, due: &Due) -> anyhow::Result<Option<String>> {
    match due.webhook_id {
        Some(id) => Ok(dispatch!(db, pool => {
            sqlx::query_scalar("SELECT secret FROM webhooks WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
        })?),
        None => default_secret(db, due.user_id).await,
    }
}

/// The last event turned into deliveries.
pub async fn cursor(db: &Db) -> anyhow::Result<i64> {
    Ok(dispatch!(db, pool => {
        sqlx::query_scalar("SELECT after_id FROM webhook_cursor WHERE id = 1")
            .fetch_one(pool)
            .await
    })?)
}

/// An endpoint that may want events of the range being dispatched.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub id: Uuid,
    pub user_id: Uuid,
    pub url: String,
    pub events: Option<Vec<EventType>>,
}

/// The endpoints of every user with an event in `(after, upto]`.
pub async fn endpoints_for(db: &Db, after: i64, upto: i64) -> anyhow::Result<Vec<Endpoint>> {
    let rows: Vec<(Uuid, Uuid, String, Option<String>)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, user_id, url, events_json FROM webhooks WHERE user_id IN \
             (SELECT user_id FROM events WHERE id > $1 AND id <= $2)",
        )
        .bind(after)
        .bind(upto)
        .fetch_all(pool)
        .await
    })?;
    rows.into_iter()
        .map(|(id, user_id, url, events)| {
            Ok(Endpoint {
                id,
                user_id,
                url,
                events: events.map(|e| serde_json::from_str(&e)).transpose()?,
            })
        })
        .collect()
}

/// `(order, webhook_url)` of the orders with an event in `(after, upto]`
/// that asked for one (the URL lives in the order's stored request).
pub async fn order_urls_for(db: &Db, after: i64, upto: i64) -> anyhow::Result<Vec<(Uuid, String)>> {
    #[derive(serde::Deserialize)]
    struct Request {
        webhook_url: Option<String>,
    }
    let rows: Vec<(Uuid, String)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, request_json FROM orders WHERE id IN \
             (SELECT order_id FROM events WHERE id > $1 AND id <= $2 AND order_id IS NOT NULL) \
             AND request_json LIKE '%\"webhook_url\":\"%'",
        )
        .bind(after)
        .bind(upto)
        .fetch_all(pool)
        .await
    })?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, json)| {
            let url = serde_json::from_str::<Request>(&json).ok()?.webhook_url?;
            Some((id, url))
        })
        .collect())
}

/// A delivery to make.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    pub endpoint: String,
    pub webhook_id: Option<Uuid>,
    pub user_id: Uuid,
    pub url: String,
    pub event_id: i64,
    pub event_type: EventType,
    pub event_at: DateTime<Utc>,
    pub body: String,
}

/// Writes `deliveries` and moves the cursor from `from` to `to`, in one
/// transaction; `false` (and nothing written) when the cursor was no longer
/// at `from`: another server dispatched the range first.
pub async fn enqueue(
    db: &Db,
    from: i64,
    to: i64,
    deliveries: &[NewDelivery],
    now: DateTime<Utc>,
) -> anyhow::Result<bool> {
    let mut tx = db.begin().await?;
    let moved = execute_tx!(
        tx,
        "UPDATE webhook_cursor SET after_id = $1 WHERE id = 1 AND after_id = $2",
        to,
        from,
    )?;
    if moved == 0 {
        return Ok(false);
    }
    for d in deliveries {
        execute_tx!(
            tx,
            "INSERT INTO webhook_deliveries (endpoint, webhook_id, user_id, url, event_id, event_type, \
             event_at, body, state, attempts, next_at, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10, $11)",
            d.endpoint.as_str(),
            d.webhook_id,
            d.user_id,
            d.url.as_str(),
            d.event_id,
            Text(d.event_type),
            d.event_at,
            d.body.as_str(),
            DeliveryState::Pending,
            now,
            now,
        )?;
    }
    tx.commit().await?;
    Ok(true)
}

/// A delivery whose turn has come.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Due {
    pub id: i64,
    pub endpoint: String,
    pub webhook_id: Option<Uuid>,
    pub user_id: Uuid,
    pub url: String,
    pub event_id: i64,
    /// Read as its text name (see `db::Text`).
    pub event_type: Text<EventType>,
    pub event_at: DateTime<Utc>,
    pub body: String,
    pub attempts: i32,
}

/// The oldest pending delivery of each endpoint, where it is due by `now`;
/// the soonest due first. A later delivery of an endpoint waits for its
/// oldest, so each endpoint gets its events in order.
pub async fn due(db: &Db, now: DateTime<Utc>, limit: u32) -> anyhow::Result<Vec<Due>> {
    Ok(dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, endpoint, webhook_id, user_id, url, event_id, event_type, event_at, body, attempts \
             FROM webhook_deliveries WHERE id IN \
             (SELECT MIN(id) FROM webhook_deliveries WHERE state = $1 GROUP BY endpoint) \
             AND next_at <= $2 ORDER BY next_at, id LIMIT $3",
        )
        .bind(DeliveryState::Pending)
        .bind(now)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await
    })?)
}

/// Claims pending delivery `id`, due by `now`, until `until`: another
/// replica's deliverer, or this one after a crash, takes it only once the
/// claim lapses. `false` when it is not due any more (someone claimed it).
pub async fn claim(
    db: &Db,
    id: i64,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> anyhow::Result<bool> {
    let mut tx = db.begin().await?;
    let n = execute_tx!(
        tx,
        "UPDATE webhook_deliveries SET next_at = $1 WHERE id = $2 AND state = $3 AND next_at <= $4",
        until,
        id,
        DeliveryState::Pending,
        now,
    )?;
    tx.commit().await?;
    Ok(n == 1)
}

/// What one POST came to.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub at: DateTime<Utc>,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// Records `attempt` of delivery `id` and what follows it: `state`, and
/// when pending, the next try at `next_at`. Nothing is written when the
/// delivery is gone (its endpoint was deleted meanwhile).
pub async fn record(
    db: &Db,
    id: i64,
    attempt: &Attempt,
    state: DeliveryState,
    next_at: DateTime<Utc>,
) -> anyhow::Result<()> {
    let mut tx = db.begin().await?;
    let n = execute_tx!(
        tx,
        "UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, next_at = $2 \
         WHERE id = $3 AND state = $4",
        state,
        next_at,
        id,
        DeliveryState::Pending,
    )?;
    if n == 0 {
        return Ok(());
    }
    execute_tx!(
        tx,
        "INSERT INTO webhook_attempts (delivery_id, at, status, error, duration_ms) VALUES ($1, $2, $3, $4, $5)",
        id,
        attempt.at,
        attempt.status.map(i32::from),
        attempt.error.as_deref(),
        attempt.duration_ms,
    )?;
    tx.commit().await
}

/// Deletes finished deliveries (delivered or failed) made before `before`,
/// with their attempts; returns how many deliveries. Pending ones stay,
/// however old: they still owe their endpoint an answer.
pub async fn prune(db: &Db, before: DateTime<Utc>) -> anyhow::Result<u64> {
    let mut tx = db.begin().await?;
    execute_tx!(
        tx,
        "DELETE FROM webhook_attempts WHERE delivery_id IN \
         (SELECT id FROM webhook_deliveries WHERE state <> $1 AND created_at < $2)",
        DeliveryState::Pending,
        before,
    )?;
    let n = execute_tx!(
        tx,
        "DELETE FROM webhook_deliveries WHERE state <> $1 AND created_at < $2",
        DeliveryState::Pending,
        before,
    )?;
    tx.commit().await?;
    Ok(n)
}
