//! `PUT /v1/agent/assignments/{lease_id}/outputs/{name}` (the lease's node),
//! `GET /v1/leases/{id}/outputs[/{name}]` (the lease's owner).

use super::{object_key, OutputRow};
use crate::auth::{Caller, Role, RouterState};
use crate::error::responses::{NotABuyer, NotANodeToken, UnknownNodeToken};
use crate::error::{ApiError, Json, Path, Problem};
use crate::ids::{self, LeaseId, PathId};
use crate::nodes::agent::{agent_node, node_lease};
use crate::nodes::{store, NodesState};
use axum::body::Body;
use axum::extract::{FromRef, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
pub use gpuex_api::nodes::{LeaseOutput, LeaseOutputs};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(upload_output))
        .routes(routes!(list_outputs))
        .routes(routes!(download_output))
}

/// The longest output name, in bytes.
const NAME_MAX: usize = 1024;

/// A relative path under `/outputs`: `/`-separated parts, none empty, `.`
/// or `..`, no control characters.
fn check_name(name: &str) -> Result<(), ApiError> {
    let bad = |why: &str| Err(ApiError::field("path.name", why));
    if name.is_empty() || name.len() > NAME_MAX {
        return bad("must be 1 to 1024 bytes");
    }
    if name.chars().any(char::is_control) {
        return bad("must not hold control characters");
    }
    if name
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return bad("must be a relative path without empty, `.` or `..` parts");
    }
    Ok(())
}

/// Store one file of the lease's `/outputs`, replacing an earlier upload of
/// it. The body is the file's bytes, streamed (not the API's 1 MiB body
/// limit); all of a lease's outputs together are capped at
/// `outputs_max_bytes`.
#[utoipa::path(put, path = "/v1/agent/assignments/{lease_id}/outputs/{name}", tag = "agent", security(("bearer" = [])),
    params(
        ("lease_id" = Uuid, Path, description = "The lease (assignment) id"),
        ("name" = String, Path, description = "The file's path under /outputs, percent-encoded (`/` as %2F)"),
    ),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The file's bytes"),
    responses(
        (status = 200, description = "Stored", body = LeaseOutput),
        UnknownNodeToken,
        NotANodeToken,
        (status = 404, description = "No such lease on this node", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease ended more than an hour ago", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "The lease's outputs would pass `outputs_max_bytes` (`outputs_quota`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name", body = Problem, content_type = "application/problem+json"),
    ))]
async fn upload_output(
    State(state): State<NodesState>,
    caller: Caller,
    Path((lease_id, name)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<LeaseOutput>, ApiError> {
    let lease_id: LeaseId = ids::parse(&lease_id)?;
    let node = agent_node(&state, &caller).await?;
    let lease = node_lease(&state, node.id, lease_id).await?;
    check_name(&name)?;
    super::check_fresh(&state, &lease).await?;
    let used = super::bytes_besides(&state.db, lease.id, &name).await?;
    let left = state.settings.outputs_max_bytes.saturating_sub(used);
    let quota = |left: u64| ApiError::Refused {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code: "outputs_quota",
        detail: format!(
            "a lease's outputs may weigh {} bytes in all; {left} are left for `{name}`",
            state.settings.outputs_max_bytes
        ),
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let key = object_key(lease.id, &name);
    let (size, sha256) = super::store_upload(&state, &key, body, left, declared, quota).await?;
    let now = state.settings.clock.now();
    super::record(&state.db, lease.id, &name, size, &sha256, now).await?;
    let row = OutputRow {
        name,
        size: i64::try_from(size).unwrap_or(i64::MAX),
        sha256,
        stored_at: now,
    };
    Ok(Json(view(&state, row)))
}

fn view(state: &NodesState, row: OutputRow) -> LeaseOutput {
    let days = i64::from(state.settings.outputs_retention_days);
    LeaseOutput {
        expires_at: row.stored_at + chrono::Duration::days(days),
        name: row.name,
        size: row.size,
        sha256: row.sha256,
        stored_at: row.stored_at,
    }
}

/// The caller's own lease `id`; anyone else's is 404 (an admin's too:
/// outputs are the buyer's data).
async fn own_lease(state: &NodesState, caller: &Caller, id: LeaseId) -> Result<Uuid, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = id.uuid();
    store::lease(&state.db, id)
        .await?
        .filter(|l| l.buyer_id == caller.id)
        .map(|l| l.id)
        .ok_or_else(|| ApiError::NotFound(format!("no lease {id} of yours")))
}

/// What the lease's workload left in `/outputs` (the lease's owner only).
#[utoipa::path(get, path = "/v1/leases/{id}/outputs", tag = "leases", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Lease id")),
    responses(
        (status = 200, description = "Its outputs, by name (none before the first upload)", body = LeaseOutputs),
        NotABuyer,
        (status = 404, description = "No such lease of yours", body = Problem, content_type = "application/problem+json"),
    ))]
async fn list_outputs(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(id): PathId<LeaseId>,
) -> Result<Json<LeaseOutputs>, ApiError> {
    let id = own_lease(&state, &caller, id).await?;
    let rows = super::list(&state.db, id).await?;
    let total_bytes = rows.iter().map(|r| r.size).sum();
    Ok(Json(LeaseOutputs {
        lease_id: id,
        outputs: rows.into_iter().map(|r| view(&state, r)).collect(),
        total_bytes,
        max_bytes: state.settings.outputs_max_bytes,
        retention_days: state.settings.outputs_retention_days,
        storage_price_per_gb_month: state.settings.outputs_price_per_gb_month,
    }))
}

/// One output's bytes, streamed, with its SHA-256 in `X-Checksum-Sha256`
/// (the lease's owner only).
#[utoipa::path(get, path = "/v1/leases/{id}/outputs/{name}", tag = "leases", security(("bearer" = [])),
    params(
        ("id" = Uuid, Path, description = "Lease id"),
        ("name" = String, Path, description = "The output's name, percent-encoded (`/` as %2F)"),
    ),
    responses(
        (status = 200, description = "The file", content_type = "application/octet-stream", body = Vec<u8>,
            headers(("X-Checksum-Sha256" = String, description = "Hex SHA-256 of the body"))),
        NotABuyer,
        (status = 404, description = "No such lease of yours, or no such output", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name", body = Problem, content_type = "application/problem+json"),
    ))]
async fn download_output(
    State(state): State<NodesState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let id = own_lease(&state, &caller, ids::parse(&id)?).await?;
    check_name(&name)?;
    let row = super::get(&state.db, id, &name)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("lease {id} has no output `{name}`")))?;
    let bytes = state.outputs.get(&object_key(id, &name)).await?;
    let file_name = name.rsplit('/').next().unwrap_or(&name);
    let disposition = format!(
        "attachment; filename=\"{}\"",
        file_name.replace(
            |c: char| !c.is_ascii_graphic() || c == '"' || c == '\\',
            "_"
        )
    );
    let mut response = Body::from_stream(bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(row.size));
    if let Ok(v) = HeaderValue::from_str(&row.sha256) {
        headers.insert("x-checksum-sha256", v);
    }
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}
