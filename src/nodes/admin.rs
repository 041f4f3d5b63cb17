//! `PUT /v1/admin/nodes/{id}`: what only an admin decides about a node — that
//! it may run the simulated backend, and that a review it is under is over
//! (ARCHITECTURE.md §7).

use super::store::{self, NodeStatus};
use super::view::NodeSummary;
use super::NodesState;
use crate::audit;
use crate::auth::{Caller, Role, RouterState};
use crate::engine::Command;
use crate::error::responses::{MalformedJson, NotAnAdmin};
use crate::error::{ApiError, Json, Problem};
use crate::ids::{NodeId, PathId};
use axum::extract::{FromRef, State};
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(put_node))
}

/// How an admin ends a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    /// The node's inventory is what it is: lift the review's cordon.
    Accept,
}

/// What an admin sets on a node; at least one field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdminNodeRequest {
    /// Whether the node's agent may register with the `simulated` backend
    /// (for the demo, tests and load tests; refused on any other node).
    pub simulated: Option<bool>,
    /// `accept` ends a review: the node takes new placements again (unless it
    /// is also quarantined). Accepting a node not under review changes nothing.
    pub review: Option<ReviewDecision>,
}

/// Mark a node simulated, or accept a node under review (admin).
#[utoipa::path(put, path = "/v1/admin/nodes/{id}", tag = "nodes", operation_id = "admin_put_node", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Node id")),
    request_body = AdminNodeRequest,
    responses(
        (status = 200, description = "The node", body = NodeSummary),
        MalformedJson,
        NotAnAdmin,
        (status = 404, description = "No such node", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields, or none given", body = Problem, content_type = "application/problem+json"),
    ))]
async fn put_node(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(id): PathId<NodeId>,
    Json(req): Json<AdminNodeRequest>,
) -> Result<Json<NodeSummary>, ApiError> {
    caller.require(&[Role::Admin])?;
    let id = id.uuid();
    if req.simulated.is_none() && req.review.is_none() {
        return Err(ApiError::field(
            "simulated",
            "give `simulated` or `review` (or both)",
        ));
    }
    let node = store::get(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no node {id}")))?;
    let accept = req.review == Some(ReviewDecision::Accept) && node.under_review;
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    if let Some(simulated) = req.simulated {
        store::set_simulated(&mut tx, id, simulated).await?;
    }
    if accept {
        store::accept_review(&mut tx, id).await?;
    }
    audit::record(
        &mut tx,
        caller.id,
        audit::Action::SetNode,
        &format!("node:{id}"),
        serde_json::json!({
            "simulated": req.simulated,
            "review_accepted": accept,
            "review_reason": node.review_reason,
        }),
        now,
    )
    .await?;
    tx.commit().await?;
    if accept && node.status != NodeStatus::Lost {
        state
            .market
            .command(Command::Cordon {
                node: id,
                cordoned: node.quarantined,
            })
            .await?;
    }
    let node = store::get(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no node {id}")))?;
    Ok(Json(NodeSummary::from(&node)))
}
