//! Orders' checkpoints (ARCHITECTURE.md §21): the agent of a lease whose order has a
//! `checkpoint` sends its checkpoint folder as one tar archive
//! (`PUT /v1/agent/assignments/{lease_id}/checkpoint`), numbered per order;
//! the agent of the order's next lease, when the order resumes, fetches the
//! latest (`GET` of the same path) before the workload starts. Only the
//! latest is kept; its bytes are in the outputs store.

use super::agent::{agent_node, node_lease};
use super::store::LeaseRow;
use super::NodesState;
use crate::auth::{Caller, RouterState};
use crate::db::{dispatch, execute_tx, Db};
use crate::error::responses::{NotANodeToken, UnknownNodeToken};
use crate::error::{ApiError, Json, Problem};
use crate::ids::{LeaseId, PathId};
use anyhow::Context;
use axum::body::Body;
use axum::extract::{FromRef, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(put_checkpoint, get_checkpoint))
}

/// One stored checkpoint of an order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CheckpointView {
    /// Its number within the order, from 1.
    pub seq: i64,
    /// The lease whose agent sent it.
    pub lease_id: Uuid,
    /// Bytes of the tar archive.
    pub size: i64,
    /// Hex SHA-256 of the archive.
    pub sha256: String,
    pub stored_at: DateTime<Utc>,
}

/// Where a checkpoint's bytes are.
fn object_key(order: Uuid, seq: i64) -> String {
    format!("orders/{order}/checkpoints/{seq}.tar")
}

/// The order's latest checkpoint.
pub async fn latest(db: &Db, order: Uuid) -> anyhow::Result<Option<CheckpointView>> {
    let row: Option<(i64, Uuid, i64, String, DateTime<Utc>)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT seq, lease_id, size, sha256, stored_at FROM order_checkpoints \
             WHERE order_id = $1 ORDER BY seq DESC LIMIT 1",
        )
        .bind(order)
        .fetch_optional(pool)
        .await
    })
    .context("failed to read an order's checkpoint")?;
    Ok(
        row.map(|(seq, lease_id, size, sha256, stored_at)| CheckpointView {
            seq,
            lease_id,
            size,
            sha256,
            stored_at,
        }),
    )
}

/// The checkpoint an order's latest resumed lease started from.
pub async fn resumed_from(
    db: &Db,
    order: Uuid,
) -> anyhow::Result<Option<(Uuid, i64, DateTime<Utc>)>> {
    let row: Option<(Uuid, i64, DateTime<Utc>)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT lease_id, seq, stored_at FROM checkpoint_restores WHERE order_id = $1 \
             ORDER BY restored_at DESC LIMIT 1",
        )
        .bind(order)
        .fetch_optional(pool)
        .await
    })
    .context("failed to read where an order resumed from")?;
    Ok(row)
}

/// Whether the lease's order asked for a checkpoint.
fn checkpointed(lease: &LeaseRow) -> Result<(), ApiError> {
    let request: serde_json::Value = serde_json::from_str(&lease.request_json).unwrap_or_default();
    if request["checkpoint"].is_object() {
        Ok(())
    } else {
        Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "no_checkpoint",
            detail: format!("lease {}'s order has no `checkpoint`", lease.id),
        })
    }
}

/// Store the lease's checkpoint folder, a tar archive, as its order's next
/// checkpoint; the earlier one goes. Capped at `outputs_max_bytes`.
#[utoipa::path(put, path = "/v1/agent/assignments/{lease_id}/checkpoint", tag = "agent", security(("bearer" = [])),
    params(("lease_id" = Uuid, Path, description = "The lease (assignment) id")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The checkpoint folder as a tar archive (regular files and folders only)"),
    responses(
        (status = 200, description = "Stored as the order's latest checkpoint", body = CheckpointView),
        UnknownNodeToken,
        NotANodeToken,
        (status = 404, description = "No such lease on this node", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The order has no checkpoint (`no_checkpoint`), or the lease ended more than an hour ago", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid lease id", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Over `outputs_max_bytes` (`checkpoint_quota`)", body = Problem, content_type = "application/problem+json"),
    ))]
async fn put_checkpoint(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(lease_id): PathId<LeaseId>,
    body: Body,
) -> Result<Json<CheckpointView>, ApiError> {
    let node = agent_node(&state, &caller).await?;
    let lease = node_lease(&state, node.id, lease_id).await?;
    checkpointed(&lease)?;
    super::outputs::check_fresh(&state, &lease).await?;
    let order = lease.record.order_id;
    let seq = latest(&state.db, order).await?.map_or(1, |c| c.seq + 1);
    let key = object_key(order, seq);
    let too_large = |cap: u64| ApiError::Refused {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code: "checkpoint_quota",
        detail: format!("a checkpoint may weigh at most {cap} bytes"),
    };
    let cap = state.settings.outputs_max_bytes;
    let (size, sha256) =
        super::outputs::store_upload(&state, &key, body, cap, None, too_large).await?;
    let now = state.settings.clock.now();
    let view = CheckpointView {
        seq,
        lease_id: lease.id,
        size: i64::try_from(size).unwrap_or(i64::MAX),
        sha256,
        stored_at: now,
    };
    let mut tx = state.db.begin().await?;
    // Two uploads racing for one number: the second is refused by the key.
    let stored = execute_tx!(
        tx,
        "INSERT INTO order_checkpoints (order_id, seq, lease_id, size, sha256, stored_at) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (order_id, seq) DO NOTHING",
        order,
        seq,
        lease.id,
        view.size,
        &view.sha256,
        now,
    )
    .context("failed to record a checkpoint")?;
    execute_tx!(
        tx,
        "DELETE FROM order_checkpoints WHERE order_id = $1 AND seq < $2",
        order,
        seq,
    )
    .context("failed to forget older checkpoints")?;
    tx.commit().await?;
    if stored == 0 {
        return Err(ApiError::Conflict(format!(
            "another checkpoint of order {order} took number {seq}: send it again"
        )));
    }
    for older in 1.max(seq - 3)..seq {
        state.outputs.delete(&object_key(order, older)).await?;
    }
    Ok(Json(view))
}

/// The lease's order's latest checkpoint, a tar archive, for the lease to
/// resume from; the lease is recorded as resumed from it.
#[utoipa::path(get, path = "/v1/agent/assignments/{lease_id}/checkpoint", tag = "agent", security(("bearer" = [])),
    params(("lease_id" = Uuid, Path, description = "The lease (assignment) id")),
    responses(
        (status = 200, description = "The tar archive; `Gpuex-Checkpoint-Seq` says which", content_type = "application/octet-stream", body = Vec<u8>,
            headers(("X-Checksum-Sha256" = String, description = "Hex SHA-256 of the body"),
                    ("Gpuex-Checkpoint-Seq" = i64, description = "The checkpoint's number in its order"))),
        UnknownNodeToken,
        NotANodeToken,
        (status = 404, description = "No such lease on this node, or no checkpoint yet", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The order has no checkpoint (`no_checkpoint`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid lease id", body = Problem, content_type = "application/problem+json"),
    ))]
async fn get_checkpoint(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(lease_id): PathId<LeaseId>,
) -> Result<Response, ApiError> {
    let node = agent_node(&state, &caller).await?;
    let lease = node_lease(&state, node.id, lease_id).await?;
    checkpointed(&lease)?;
    let order = lease.record.order_id;
    let checkpoint = latest(&state.db, order)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("order {order} has no checkpoint yet")))?;
    let bytes = state
        .outputs
        .get(&object_key(order, checkpoint.seq))
        .await?;
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    execute_tx!(
        tx,
        "INSERT INTO checkpoint_restores (lease_id, order_id, seq, stored_at, restored_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (lease_id) DO UPDATE SET seq = excluded.seq, \
         stored_at = excluded.stored_at, restored_at = excluded.restored_at",
        lease.id,
        order,
        checkpoint.seq,
        checkpoint.stored_at,
        now,
    )
    .context("failed to record a resumption")?;
    tx.commit().await?;
    let mut response = Body::from_stream(bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(checkpoint.size));
    headers.insert("gpuex-checkpoint-seq", HeaderValue::from(checkpoint.seq));
    if let Ok(v) = HeaderValue::from_str(&checkpoint.sha256) {
        headers.insert("x-checksum-sha256", v);
    }
    Ok(response)
}

/// Checkpoints stored before `before`: the bytes, then the rows.
pub async fn prune(
    db: &Db,
    outputs: &super::outputs::OutputStore,
    before: DateTime<Utc>,
) -> anyhow::Result<usize> {
    let rows: Vec<(Uuid, i64)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT order_id, seq FROM order_checkpoints WHERE stored_at < $1")
            .bind(before)
            .fetch_all(pool)
            .await
    })
    .context("failed to find expired checkpoints")?;
    for (order, seq) in &rows {
        outputs.delete(&object_key(*order, *seq)).await?;
        let mut tx = db.begin().await?;
        execute_tx!(
            tx,
            "DELETE FROM order_checkpoints WHERE order_id = $1 AND seq = $2",
            *order,
            *seq,
        )
        .context("failed to forget a checkpoint")?;
        tx.commit().await?;
    }
    Ok(rows.len())
}
