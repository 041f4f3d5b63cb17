//! Leases' outputs (ARCHITECTURE.md §21): what a workload leaves in `/outputs`, sent
//! by its agent while it runs and when it ends, kept in the outputs store
//! for `outputs_retention_days` and served to the lease's owner only.
//!
//! - [`routes`]: the agent's streamed `PUT`, the owner's list and download.
//! - [`store`]: the bytes (a folder, or S3-compatible storage).
//! - This file: the `lease_outputs` rows and the retention pruner.

mod routes;
pub mod store;

use crate::db::{dispatch, execute_tx, Db};
use crate::nodes::NodesState;
use anyhow::Context;
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub use routes::{router, LeaseOutput, LeaseOutputs};
pub use store::OutputStore;

/// How long after its lease ends a node may still send outputs: the final
/// upload of a large folder, or what a restarted agent found left over.
pub const OUTPUTS_GRACE_S: i64 = 3600;

/// Refuses a node's upload for a lease that ended more than
/// [`OUTPUTS_GRACE_S`] ago: what it left is final by then.
pub(crate) async fn check_fresh(
    state: &NodesState,
    lease: &crate::nodes::store::LeaseRow,
) -> Result<(), crate::error::ApiError> {
    if lease.state.live() {
        return Ok(());
    }
    let ended_at = crate::nodes::store::lease_ended_at(&state.db, lease.id).await?;
    let now = state.settings.clock.now().timestamp();
    if ended_at.is_some_and(|at| now > at.saturating_add(OUTPUTS_GRACE_S)) {
        return Err(crate::error::ApiError::Conflict(format!(
            "lease {} ended more than {OUTPUTS_GRACE_S} s ago: what it left is final",
            lease.id
        )));
    }
    Ok(())
}

/// Streams a node's upload `body` into the store at `key`, at most `cap`
/// bytes: its size and sha256. Past the cap the answer is `too_large(cap)`,
/// after what is left of the body (up to [`DRAIN_MAX`]) is read and dropped:
/// a client still sending when the answer comes may otherwise see the
/// connection reset and lose the answer that says why.
pub(crate) async fn store_upload(
    state: &NodesState,
    key: &str,
    body: axum::body::Body,
    cap: u64,
    declared: Option<u64>,
    too_large: impl Fn(u64) -> crate::error::ApiError,
) -> Result<(u64, String), crate::error::ApiError> {
    use crate::error::ApiError;
    use futures::{StreamExt, TryStreamExt};
    use store::PutError;
    let mut body = body.into_data_stream();
    if declared.is_some_and(|n| n > cap) {
        drain(&mut body).await;
        return Err(too_large(cap));
    }
    let stream = body.by_ref().map_err(|e| e.to_string());
    match state.outputs.put(key, stream, cap).await {
        Ok(stored) => Ok(stored),
        Err(PutError::TooLarge(cap)) => {
            drain(&mut body).await;
            Err(too_large(cap))
        }
        Err(PutError::Body(e)) => Err(ApiError::Refused {
            status: axum::http::StatusCode::BAD_REQUEST,
            code: "upload_broken",
            detail: format!("the upload broke off: {e}"),
        }),
        Err(PutError::Store(e)) => Err(ApiError::Internal(e)),
    }
}

/// Reads and drops what is left of a refused upload, up to [`DRAIN_MAX`].
async fn drain(body: &mut axum::body::BodyDataStream) {
    use futures::StreamExt;
    let mut left = DRAIN_MAX;
    while left > 0 {
        match body.next().await {
            Some(Ok(chunk)) => left = left.saturating_sub(chunk.len() as u64),
            _ => return,
        }
    }
}

/// The most of a refused upload read to keep its connection orderly.
const DRAIN_MAX: u64 = 64 << 20;

/// One stored output.
#[derive(Debug, Clone)]
pub struct OutputRow {
    pub name: String,
    pub size: i64,
    pub sha256: String,
    pub stored_at: DateTime<Utc>,
}

/// Where an output's bytes are in the store.
pub fn object_key(lease: Uuid, name: &str) -> String {
    format!("leases/{lease}/{name}")
}

/// A lease's outputs, by name.
pub async fn list(db: &Db, lease: Uuid) -> anyhow::Result<Vec<OutputRow>> {
    let rows: Vec<(String, i64, String, DateTime<Utc>)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT name, size, sha256, stored_at FROM lease_outputs WHERE lease_id = $1 ORDER BY name",
        )
        .bind(lease)
        .fetch_all(pool)
        .await
    })
    .context("failed to list a lease's outputs")?;
    Ok(rows
        .into_iter()
        .map(|(name, size, sha256, stored_at)| OutputRow {
            name,
            size,
            sha256,
            stored_at,
        })
        .collect())
}

/// One output of a lease.
pub async fn get(db: &Db, lease: Uuid, name: &str) -> anyhow::Result<Option<OutputRow>> {
    Ok(list(db, lease).await?.into_iter().find(|o| o.name == name))
}

/// Bytes a lease's outputs hold, but for `name` (which an upload replaces).
pub async fn bytes_besides(db: &Db, lease: Uuid, name: &str) -> anyhow::Result<u64> {
    let total: Option<i64> = dispatch!(db, pool => {
        sqlx::query_scalar(
            "SELECT CAST(SUM(size) AS BIGINT) FROM lease_outputs WHERE lease_id = $1 AND name <> $2",
        )
        .bind(lease)
        .bind(name)
        .fetch_one(pool)
        .await
    })
    .context("failed to sum a lease's outputs")?;
    Ok(u64::try_from(total.unwrap_or(0)).unwrap_or(0))
}

/// Record an output stored (or stored again).
pub async fn record(
    db: &Db,
    lease: Uuid,
    name: &str,
    size: u64,
    sha256: &str,
    at: DateTime<Utc>,
) -> anyhow::Result<()> {
    let size = i64::try_from(size).context("an output's size is out of range")?;
    let mut tx = db.begin().await?;
    execute_tx!(
        tx,
        "INSERT INTO lease_outputs (lease_id, name, size, sha256, stored_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (lease_id, name) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256, \
         stored_at = excluded.stored_at",
        lease,
        name,
        size,
        sha256,
        at,
    )
    .context("failed to record an output")?;
    tx.commit().await?;
    Ok(())
}

/// Outputs stored before `before`, at most `limit` of them.
async fn expired(
    db: &Db,
    before: DateTime<Utc>,
    limit: i64,
) -> anyhow::Result<Vec<(Uuid, String)>> {
    let rows: Vec<(Uuid, String)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT lease_id, name FROM lease_outputs WHERE stored_at < $1 ORDER BY stored_at LIMIT $2",
        )
        .bind(before)
        .bind(limit)
        .fetch_all(pool)
        .await
    })
    .context("failed to find expired outputs")?;
    Ok(rows)
}

async fn forget(db: &Db, lease: Uuid, name: &str) -> anyhow::Result<()> {
    let mut tx = db.begin().await?;
    execute_tx!(
        tx,
        "DELETE FROM lease_outputs WHERE lease_id = $1 AND name = $2",
        lease,
        name,
    )
    .context("failed to forget an output")?;
    tx.commit().await?;
    Ok(())
}

/// Remove the outputs older than the retention: the bytes first, then the
/// row, so a row never names bytes that are gone. Returns how many went.
pub async fn prune(db: &Db, store: &OutputStore, before: DateTime<Utc>) -> anyhow::Result<usize> {
    let mut removed = 0;
    loop {
        let batch = expired(db, before, 500).await?;
        if batch.is_empty() {
            return Ok(removed);
        }
        for (lease, name) in batch {
            store.delete(&object_key(lease, &name)).await?;
            forget(db, lease, &name).await?;
            removed += 1;
        }
    }
}

/// The leader's hourly pass over the outputs past their retention (and
/// the registry credentials of finished orders).
pub fn spawn_pruner(state: NodesState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            every.tick().await;
            let days = i64::from(state.settings.outputs_retention_days);
            let before = state.settings.clock.now() - chrono::Duration::days(days);
            match prune(&state.db, &state.outputs, before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(removed = n, "pruned outputs past their retention"),
                Err(e) => tracing::warn!("cannot prune outputs: {e:#}"),
            }
            match super::checkpoints::prune(&state.db, &state.outputs, before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(removed = n, "pruned checkpoints past their retention"),
                Err(e) => tracing::warn!("cannot prune checkpoints: {e:#}"),
            }
            let settled = state.settings.clock.now() - chrono::Duration::hours(1);
            match crate::market::pull_secrets::prune(&state.db, settled).await {
                Ok(0) => {}
                Ok(n) => {
                    tracing::info!(removed = n, "dropped finished orders' registry credentials")
                }
                Err(e) => tracing::warn!("cannot drop registry credentials: {e:#}"),
            }
        }
    })
}
