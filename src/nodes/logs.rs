//! `GET /v1/leases/{id}/logs`: the latest output tail the agent uploaded.

use super::{store, NodesState};
use crate::auth::{Caller, Role, RouterState};
use crate::error::{ApiError, Json, Problem};
use crate::ids::{LeaseId, PathId};
use axum::extract::{FromRef, State};
pub use gpuex_api::nodes::LeaseLogs;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(lease_logs))
}

/// The lease's latest output tail (the buyer's own leases; admins see all).
#[utoipa::path(get, path = "/v1/leases/{id}/logs", tag = "leases", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Lease id")),
    responses(
        (status = 200, description = "The tail (empty before the first upload)", body = LeaseLogs),
        (status = 403, description = "Not a buyer or admin", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such lease of yours", body = Problem, content_type = "application/problem+json"),
    ))]
async fn lease_logs(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(id): PathId<LeaseId>,
) -> Result<Json<LeaseLogs>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = id.uuid();
    store::lease(&state.db, id)
        .await?
        .filter(|l| caller.is_admin() || l.buyer_id == caller.id)
        .ok_or_else(|| ApiError::NotFound(format!("no lease {id}")))?;
    let logs = store::logs(&state.db, id).await?;
    Ok(Json(match logs {
        Some((tail, total_bytes, complete, at)) => LeaseLogs {
            lease_id: id,
            tail,
            total_bytes,
            complete,
            updated_at: Some(at),
        },
        None => LeaseLogs {
            lease_id: id,
            tail: String::new(),
            total_bytes: 0,
            complete: false,
            updated_at: None,
        },
    }))
}
