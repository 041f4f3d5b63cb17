//! `PUT /v1/admin/users/{id}/role`: an admin gives an account another role.
//!
//! A role change ends what the old role was trusted with, in the same
//! transaction as the change: the account's sessions (its access and refresh
//! tokens) and its API keys (bound to the role they were made for) stop
//! working, and an account that becomes a buyer, which cannot hold nodes,
//! has every node token revoked; its nodes leave the market as lost nodes do
//! (their leases end, re-placed where possible, buyers credited). A provider
//! made admin keeps its nodes: admins may hold nodes too.

use super::routes::UserView;
use super::sessions::{self, RevokeReason};
use super::{store, AccountsState, Caller, Role, RouterState};
use crate::audit;
use crate::db::execute_tx;
use crate::error::responses::{MalformedJson, NotAnAdmin};
use crate::error::{ApiError, Json, Problem};
use crate::ids::{PathId, UserId};
use crate::nodes::removal;
use anyhow::Context;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use chrono::Utc;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    AccountsState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(set_role))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetRoleRequest {
    /// `buyer`, `provider` or `admin`.
    #[schema(value_type = AccountRole)]
    pub role: String,
}

/// The roles an account can be given; the body takes the name as text.
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
enum AccountRole {
    Buyer,
    Provider,
    Admin,
}

/// Give an account another role (admin only).
///
/// The account's sessions and API keys stop working; an account made a
/// buyer loses every node token (its agents get 401) and its nodes leave the
/// market like lost nodes. Setting the role it already has changes nothing
/// and answers the account again.
#[utoipa::path(put, path = "/v1/admin/users/{id}/role", tag = "auth", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The account's id")),
    request_body = SetRoleRequest,
    responses(
        (status = 200, description = "The account with its role", body = UserView),
        MalformedJson,
        NotAnAdmin,
        (status = 404, description = "No such account", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "An admin cannot change their own role", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid role", body = Problem, content_type = "application/problem+json"),
    ))]
async fn set_role(
    State(state): State<AccountsState>,
    caller: Caller,
    PathId(id): PathId<UserId>,
    Json(req): Json<SetRoleRequest>,
) -> Result<Json<UserView>, ApiError> {
    caller.require(&[Role::Admin])?;
    let id = id.uuid();
    let role = match Role::parse(&req.role) {
        Some(role) if role != Role::Agent => role,
        _ => {
            return Err(ApiError::field(
                "role",
                "must be `buyer`, `provider` or `admin`",
            ))
        }
    };
    if id == caller.id {
        // The last admin could otherwise lock every admin out.
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "own_role",
            detail: "an admin cannot change their own role; ask another admin".into(),
        });
    }
    let user = store::user_by_id(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no account {id}")))?;
    let changed = user.role != role;
    let now = Utc::now();
    let mut tx = state.db.begin().await?;
    if changed {
        execute_tx!(
            tx,
            "UPDATE users SET role = $1 WHERE id = $2",
            role.as_str(),
            id,
        )
        .context("failed to change a role")?;
        sessions::revoke_all_of(&mut tx, id, RevokeReason::RoleChanged, now).await?;
    }
    // Also on a repeat, so that it finishes what a failed attempt left.
    let lost_nodes = if role == Role::Buyer {
        removal::revoke_provider(&mut tx, id).await?
    } else {
        Vec::new()
    };
    if changed {
        audit::record(
            &mut tx,
            caller.id,
            audit::Action::SetRole,
            &format!("user:{id}"),
            serde_json::json!({ "from": user.role, "to": role, "nodes_ended": lost_nodes }),
            now,
        )
        .await?;
    }
    tx.commit().await?;
    if role == Role::Buyer {
        // Every token of the provider was revoked, deleted nodes' included.
        state.node_cache.forget_all();
    }
    for node in lost_nodes {
        removal::end_in_market(&state.market, &state.metrics, node).await?;
    }
    let user = store::user_by_id(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no account {id}")))?;
    Ok(Json(user.into()))
}
