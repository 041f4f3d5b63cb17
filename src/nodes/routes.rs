//! `/v1/nodes`: providers create nodes (and get their node token once), list
//! them, see each GPU's slices and who holds them, cordon and delete them.

use super::inventory::{self, Declared, DeclaredGpu};
use super::store::{self, NewNode, NodeRow, NodeStatus};
use super::view::{self, NodeDetail, NodeSummary};
use super::{removal, NodesState};
use crate::audit;
use crate::auth::{tokens, Caller, Role, RouterState};
use crate::engine::Command;
use crate::error::responses::{InvalidFields, MalformedJson, NotAProviderOrAdmin};
use crate::error::{ApiError, FieldError, Json, Problem, Query};
use crate::ids::{NodeId, PathId};
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(create_node, list_nodes))
        .routes(routes!(get_node, delete_node))
        .routes(routes!(cordon_node))
}

/// A new node, optionally with its inventory declared ahead of its agent.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNodeRequest {
    /// 1 to 64 characters.
    #[schema(min_length = 1, max_length = 64, pattern = r"\S")]
    pub name: String,
    /// An existing region.
    pub region: String,
    /// The node's failure domain within the region (a rack, a building, a
    /// power feed): when a node is lost, its leases are placed in another
    /// zone first. 1 to 63 of a-z, 0-9, `.`, `_`, `-`.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 63, pattern = "^[a-z0-9._-]{1,63}$")]
    pub zone: Option<String>,
    /// The GPUs, until the agent registers its own inventory.
    #[serde(default)]
    pub gpus: Vec<DeclaredGpu>,
    /// Host CPU in milli-CPU (default 16 000 per GPU).
    #[schema(minimum = 1)]
    pub cpu_milli: Option<u64>,
    /// Host memory in MiB (default 128 GiB per GPU).
    #[schema(minimum = 1)]
    pub memory_mib: Option<u64>,
}

/// A created node and its token, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedNode {
    #[serde(flatten)]
    pub node: NodeSummary,
    /// The agent's bearer token (`gpn_…`); stored hashed, never shown again.
    pub token: String,
}

/// Create a node (provider or admin): its id and its node token.
#[utoipa::path(post, path = "/v1/nodes", tag = "nodes", security(("bearer" = [])),
    request_body = CreateNodeRequest,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first answer; another body with it is 422 `idempotency_key_reused`; while the first is under way, 409 `idempotency_key_in_use`")),
    responses(
        (status = 201, description = "Created; the token is shown only here", body = CreatedNode),
        MalformedJson,
        NotAProviderOrAdmin,
        (status = 422, description = "Invalid fields, each named", body = Problem, content_type = "application/problem+json"),
    ))]
async fn create_node(
    State(state): State<NodesState>,
    caller: Caller,
    Json(req): Json<CreateNodeRequest>,
) -> Result<(StatusCode, Json<CreatedNode>), ApiError> {
    caller.require(&[Role::Provider, Role::Admin])?;
    let mut errors = Vec::new();
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        errors.push(FieldError::new("name", "must be 1 to 64 characters"));
    }
    if !state.regions.exists(&state.db, &req.region).await? {
        errors.push(FieldError::new(
            "region",
            format!("no region `{}` (see GET /v1/regions)", req.region),
        ));
    }
    let id = Uuid::now_v7();
    if req.zone.as_deref().is_some_and(|z| {
        z.is_empty()
            || z.len() > 63
            || !z
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
    }) {
        errors.push(FieldError::new(
            "zone",
            "must be 1 to 63 of a-z, 0-9, `.`, `_`, `-`",
        ));
    }
    let declared = Declared {
        zone: req.zone.as_deref(),
        gpus: &req.gpus,
        cpu_milli: req.cpu_milli,
        memory_mib: req.memory_mib,
    };
    let spec = match inventory::declared_spec(id, &req.region, &declared) {
        Ok(spec) => Some(spec),
        Err(e) => {
            errors.extend(e);
            None
        }
    };
    let Some(spec) = spec.filter(|_| errors.is_empty()) else {
        return Err(ApiError::Invalid(errors));
    };
    let token = tokens::new_node_token();
    let token_hash = tokens::hash_secret(&token);
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    store::insert(
        &mut tx,
        &NewNode {
            id,
            provider_id: caller.id,
            name,
            region: &req.region,
            token_hash: &token_hash,
            spec: &spec,
        },
        now,
    )
    .await?;
    tx.commit().await?;
    state.market.command(Command::UpsertNode(spec)).await?;
    let node = store::get(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("the new node vanished")))?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedNode {
            node: NodeSummary::from(&node),
            token,
        }),
    ))
}

/// Your nodes (a provider's own; an admin sees all).
#[utoipa::path(get, path = "/v1/nodes", tag = "nodes", security(("bearer" = [])),
    responses(
        (status = 200, description = "Nodes, oldest first", body = [NodeSummary]),
        NotAProviderOrAdmin,
    ))]
async fn list_nodes(
    State(state): State<NodesState>,
    caller: Caller,
) -> Result<Json<Vec<NodeSummary>>, ApiError> {
    caller.require(&[Role::Provider, Role::Admin])?;
    let owner = (!caller.is_admin()).then_some(caller.id);
    let mut nodes = store::list(&state.db, owner).await?;
    for node in &mut nodes {
        view::latest_beat(node, &state.heartbeats);
    }
    Ok(Json(nodes.iter().map(NodeSummary::from).collect()))
}

/// One node: each GPU's slices and the lease holding each, and its latest metrics.
#[utoipa::path(get, path = "/v1/nodes/{id}", tag = "nodes", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Node id")),
    responses(
        (status = 200, description = "The node", body = NodeDetail),
        NotAProviderOrAdmin,
        (status = 404, description = "No such node of yours", body = Problem, content_type = "application/problem+json"),
    ))]
async fn get_node(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(id): PathId<NodeId>,
) -> Result<Json<NodeDetail>, ApiError> {
    caller.require(&[Role::Provider, Role::Admin])?;
    let id = id.uuid();
    let node = visible_node(&state, &caller, id).await?;
    let leases = store::live_leases(&state.db, id).await?;
    Ok(Json(view::detail(&node, &leases)))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CordonRequest {
    /// `true` stops new placements; `false` resumes them (and lifts a quarantine).
    pub cordoned: bool,
}

/// Cordon or uncordon a node. Live leases keep running; new placements stop.
#[utoipa::path(post, path = "/v1/nodes/{id}/cordon", tag = "nodes", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Node id")),
    request_body = CordonRequest,
    responses(
        (status = 200, description = "The node", body = NodeSummary),
        MalformedJson,
        NotAProviderOrAdmin,
        (status = 404, description = "No such node of yours", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Uncordoning a node under review (`node_under_review`): an admin ends the review", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
    ))]
async fn cordon_node(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(id): PathId<NodeId>,
    Json(req): Json<CordonRequest>,
) -> Result<Json<NodeSummary>, ApiError> {
    caller.require(&[Role::Provider, Role::Admin])?;
    let id = id.uuid();
    let node = visible_node(&state, &caller, id).await?;
    if node.under_review && !req.cordoned {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "node_under_review",
            detail: format!(
                "node {id} is under review ({}); an admin ends it with PUT /v1/admin/nodes/{id}",
                node.review_reason
                    .as_deref()
                    .unwrap_or("no reason recorded")
            ),
        });
    }
    // Uncordoning is how a person clears a quarantine.
    let quarantined = node.quarantined && req.cordoned;
    let new_status = match node.status {
        NodeStatus::Quarantined if !quarantined => {
            if node.registered_at.is_some() {
                NodeStatus::Online
            } else {
                NodeStatus::Declared
            }
        }
        other => other,
    };
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    store::set_cordon(&mut tx, id, req.cordoned, quarantined, new_status).await?;
    audit::record(
        &mut tx,
        caller.id,
        if req.cordoned {
            audit::Action::CordonNode
        } else {
            audit::Action::UncordonNode
        },
        &format!("node:{id}"),
        serde_json::json!({ "cordoned": req.cordoned, "was_quarantined": node.quarantined }),
        now,
    )
    .await?;
    tx.commit().await?;
    state.cache.forget(id);
    if node.status != NodeStatus::Lost {
        state
            .market
            .command(Command::Cordon {
                node: id,
                cordoned: req.cordoned,
            })
            .await?;
    }
    let node = visible_node(&state, &caller, id).await?;
    Ok(Json(NodeSummary::from(&node)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DeleteNodeQuery {
    /// Delete even with live leases: they end as on node loss (on-demand and
    /// reserved re-placed where possible, the buyer credited past the node's
    /// last heartbeat). Without it such a node is refused with 409.
    #[serde(default)]
    pub force: bool,
}

/// Delete a node (its provider or an admin): its token is revoked at once
/// (the agent's next request gets 401) and it leaves the market.
///
/// A node still holding live leases is refused with 409 `node_has_leases`
/// unless `force=true`: cordon it first and let them finish, or force it and
/// they end as on node loss. Deleting a node that is already deleted
/// answers 204 again.
#[utoipa::path(delete, path = "/v1/nodes/{id}", tag = "nodes", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Node id"), DeleteNodeQuery),
    responses(
        (status = 204, description = "Deleted; its token no longer works"),
        NotAProviderOrAdmin,
        (status = 404, description = "No such node of yours", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The node has live leases and `force` is not set", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`force` is not a boolean", body = Problem, content_type = "application/problem+json"),
    ))]
async fn delete_node(
    State(state): State<NodesState>,
    caller: Caller,
    PathId(id): PathId<NodeId>,
    Query(query): Query<DeleteNodeQuery>,
) -> Result<StatusCode, ApiError> {
    caller.require(&[Role::Provider, Role::Admin])?;
    let id = id.uuid();
    let node = store::get_any(&state.db, id)
        .await?
        .filter(|n| caller.is_admin() || n.provider_id == caller.id)
        .ok_or_else(|| ApiError::NotFound(format!("no node {id}")))?;
    if node.status == NodeStatus::Deleted {
        // A repeat (its answer may have been lost): finish what it began.
        removal::end_in_market(&state.market, &state.metrics, id).await?;
        return Ok(StatusCode::NO_CONTENT);
    }
    let live = store::live_leases(&state.db, id).await?;
    if !live.is_empty() && !query.force {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "node_has_leases",
            detail: format!(
                "node {id} has {} live lease(s); cordon it and let them end, or delete \
                 with force=true to end them as on node loss",
                live.len()
            ),
        });
    }
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    removal::delete(&mut tx, id).await?;
    audit::record(
        &mut tx,
        caller.id,
        audit::Action::DeleteNode,
        &format!("node:{id}"),
        serde_json::json!({
            "provider_id": node.provider_id,
            "was": node.status.as_str(),
            "live_leases": live.len(),
            "force": query.force,
        }),
        now,
    )
    .await?;
    tx.commit().await?;
    // Refused from the next request on, before the provider hears it is done.
    state.cache.forget(id);
    if node.status != NodeStatus::Lost {
        removal::end_in_market(&state.market, &state.metrics, id).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

async fn visible_node(state: &NodesState, caller: &Caller, id: Uuid) -> Result<NodeRow, ApiError> {
    let mut node = store::visible(&state.db, caller, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no node {id}")))?;
    view::latest_beat(&mut node, &state.heartbeats);
    Ok(node)
}
