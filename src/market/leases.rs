//! `/v1/leases`: list, read, release.

use super::views::{self, LeaseView};
use super::MarketState;
use crate::auth::{Caller, Role, RouterState};
use crate::engine::{Command, LeaseState};
use crate::error::responses::{InvalidQuery, NotABuyer};
use crate::error::{ApiError, Json, Problem, Query};
use crate::ids::{LeaseId, PathId};
use crate::page::{self, Limit};
use axum::extract::{FromRef, State};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    MarketState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_leases))
        .routes(routes!(get_lease))
        .routes(routes!(release_lease))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LeaseQuery {
    /// `pending`, `provisioning`, `running`, `preempting`, `ended` or `failed`.
    #[param(inline)]
    pub state: Option<LeaseState>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Limit<500, 50>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<Uuid>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LeasePage {
    pub items: Vec<LeaseView>,
    pub next_cursor: Option<Uuid>,
}

/// The caller's leases, newest first.
#[utoipa::path(get, path = "/v1/leases", tag = "leases", security(("bearer" = [])),
    params(LeaseQuery),
    responses(
        (status = 200, description = "A page of leases", body = LeasePage),
        NotABuyer,
        InvalidQuery,
    ))]
async fn list_leases(
    State(state): State<MarketState>,
    caller: Caller,
    Query(q): Query<LeaseQuery>,
) -> Result<Json<LeasePage>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let limit = q.limit.get();
    let filter = views::LeaseFilter {
        buyer: caller.id,
        state: q.state,
        cursor: q.cursor,
        limit,
    };
    let mut items = views::leases(&state.db, &filter).await?;
    let next_cursor = page::next_cursor(&mut items, limit, |l| l.id);
    Ok(Json(LeasePage { items, next_cursor }))
}

/// One of the caller's leases: placement, state, price, units and usage.
#[utoipa::path(get, path = "/v1/leases/{id}", tag = "leases", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Lease id")),
    responses(
        (status = 200, description = "The lease", body = LeaseView),
        NotABuyer,
        (status = 404, description = "No such lease of the caller's", body = Problem, content_type = "application/problem+json"),
    ))]
async fn get_lease(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<LeaseId>,
) -> Result<Json<LeaseView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    Ok(Json(views::lease(&state.db, caller.id, id.uuid()).await?))
}

/// End a lease now. Charges stop; a reserved window is still owed whole.
#[utoipa::path(post, path = "/v1/leases/{id}/release", tag = "leases", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Lease id")),
    responses(
        (status = 200, description = "Released", body = LeaseView),
        NotABuyer,
        (status = 404, description = "No such lease of the caller's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`lease_ended`: already ended", body = Problem, content_type = "application/problem+json"),
    ))]
async fn release_lease(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<LeaseId>,
) -> Result<Json<LeaseView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = id.uuid();
    views::live_lease(&state.db, caller.id, id).await?;
    // A lease that ended since the view was read is refused as `lease_ended`.
    state
        .market
        .command(Command::Release { lease_id: id })
        .await?;
    Ok(Json(views::lease(&state.db, caller.id, id).await?))
}
