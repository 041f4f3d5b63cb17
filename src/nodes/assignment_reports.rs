//! `/v1/agent/assignments/{lease_id}/status` and `/logs`: what an agent
//! reports about one lease it runs.

use super::agent::{agent_node, node_lease};
use super::{store, NodesState};
use crate::auth::{Caller, RouterState};
use crate::engine::{AgentReport, Command, LeaseState};
use crate::error::responses::{InvalidFields, MalformedJson, NotANodeToken, UnknownNodeToken};
use crate::error::{ApiError, Json, Problem};
use crate::ids::{LeaseId, PathId};
use crate::protocol::{AssignmentStatus, EndReason, LogsUpload, StatusReport, LOGS_TAIL_BYTES};
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(assignment_status))
        .routes(routes!(upload_logs))
}

/// What happened to an assignment: `provisioned` (the lease runs), `ended`, `failed`.
/// Idempotent: a report for a lease that is already over changes nothing.
#[utoipa::path(post, path = "/v1/agent/assignments/{lease_id}/status", tag = "agent", security(("bearer" = [])),
    params(("lease_id" = Uuid, Path, description = "The lease (assignment) id")),
    request_body(content = StatusReport, description = "A lease's state change on the node (crates/wire/src/protocol/README.md)"),
    responses(
        (status = 204, description = "Applied (or already applied)"),
        MalformedJson,
        UnknownNodeToken,
        NotANodeToken,
        (status = 404, description = "No such lease on this node", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease cannot take this report in its state", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
    ))]
async fn assignment_status(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(lease_id): PathId<LeaseId>,
    Json(report): Json<StatusReport>,
) -> Result<StatusCode, ApiError> {
    let node = agent_node(&state, &caller).await?;
    let lease = node_lease(&state, node.id, lease_id).await?;
    if !lease.state.live() {
        return Ok(StatusCode::NO_CONTENT);
    }
    let status = match &report.status {
        AssignmentStatus::Provisioned { device, image_id } => {
            if device.trim().is_empty() {
                return Err(ApiError::field("device", "must name the device"));
            }
            if image_id.as_deref().is_some_and(|id| !is_image_id(id)) {
                return Err(ApiError::field(
                    "image_id",
                    "must be `sha256:` and 64 lower-case hex digits",
                ));
            }
            store::set_provisioned(&state.db, lease.id, device, image_id.as_deref()).await?;
            if lease.state != LeaseState::Provisioning {
                // Already running (a repeated report), or preempting: nothing to change.
                return Ok(StatusCode::NO_CONTENT);
            }
            AgentReport::Provisioned
        }
        AssignmentStatus::Ended {
            exit_code,
            signal,
            reason,
        } => {
            let code = exit_code.or(signal.map(|s| 128 + s));
            store::set_exit_code(&state.db, lease.id, code).await?;
            if *reason == EndReason::DiskQuota {
                AgentReport::DiskQuota
            } else {
                AgentReport::Ended
            }
        }
        AssignmentStatus::Failed { reason } => {
            store::set_failure(&state.db, lease.id, reason).await?;
            AgentReport::Failed
        }
    };
    state
        .market
        .command(Command::AgentStatus {
            lease_id: lease.id,
            status,
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `sha256:` and 64 lower-case hex digits, as the agent normalises an image ID.
fn is_image_id(id: &str) -> bool {
    id.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The workload's output tail, replacing the previous one; served to the buyer
/// at `GET /v1/leases/{id}/logs`.
#[utoipa::path(post, path = "/v1/agent/assignments/{lease_id}/logs", tag = "agent", security(("bearer" = [])),
    params(("lease_id" = Uuid, Path, description = "The lease (assignment) id")),
    request_body(content = LogsUpload, description = "The workload's output tail (crates/wire/src/protocol/README.md)"),
    responses(
        (status = 204, description = "Stored"),
        MalformedJson,
        UnknownNodeToken,
        NotANodeToken,
        (status = 404, description = "No such lease on this node", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease has ended and its logs are final (one complete upload is taken within 60 s of the end)", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
    ))]
async fn upload_logs(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(lease_id): PathId<LeaseId>,
    Json(mut logs): Json<LogsUpload>,
) -> Result<StatusCode, ApiError> {
    let node = agent_node(&state, &caller).await?;
    let lease = node_lease(&state, node.id, lease_id).await?;
    if logs.tail.len() > LOGS_TAIL_BYTES {
        // Keep the end, cut at a character boundary.
        let mut cut = logs.tail.len() - LOGS_TAIL_BYTES;
        while !logs.tail.is_char_boundary(cut) {
            cut += 1;
        }
        logs.tail = logs.tail.split_off(cut);
    }
    // The server ends a lease before the agent has sent its last tail, so an
    // ended lease takes one final complete upload for a short while; after
    // that, or after its final tail, a node can no longer rewrite what the
    // buyer reads.
    let ended_at = if lease.state.live() {
        None
    } else {
        store::lease_ended_at(&state.db, lease.id).await?
    };
    let final_only = !lease.state.live();
    if let Some(ended_at) = ended_at {
        let now = state.settings.clock.now().timestamp();
        if now > ended_at.saturating_add(FINAL_LOGS_GRACE_S) {
            return Err(ApiError::Conflict(format!(
                "lease {} ended more than {FINAL_LOGS_GRACE_S} s ago: its logs are final",
                lease.id
            )));
        }
    }
    if !store::put_logs(&state.db, lease.id, &logs, final_only).await? {
        return Err(ApiError::Conflict(format!(
            "lease {} has ended: only one final, complete upload of its logs is taken",
            lease.id
        )));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// How long after a lease ends its node may still send the final tail.
pub const FINAL_LOGS_GRACE_S: i64 = 60;
