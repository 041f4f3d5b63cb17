//! The admin audit log: who changed prices, credits, cordons, nodes and
//! roles, and when; recorded in the changing transaction and read back by
//! `GET /v1/admin/audit`.

use crate::auth::{Caller, Role, RouterState};
use crate::catalog::text_names;
use crate::db::{dispatch, execute_tx, Db, Tx};
use crate::error::responses::{InvalidQuery, NotAnAdmin};
use crate::error::{ApiError, Json, Query};
use crate::page::{self, Limit};
use axum::extract::{FromRef, State};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// What an admin did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    SetPrice,
    PutRegion,
    Credit,
    BillingAdjustment,
    CordonNode,
    UncordonNode,
    DeleteNode,
    SetRole,
    SetNode,
}

text_names!(Action {
    SetPrice => "set_price",
    PutRegion => "put_region",
    Credit => "credit",
    BillingAdjustment => "billing_adjustment",
    CordonNode => "cordon_node",
    UncordonNode => "uncordon_node",
    DeleteNode => "delete_node",
    SetRole => "set_role",
    SetNode => "set_node",
});

/// Records an admin action in the caller's transaction, so the log and the
/// change commit together.
pub async fn record(
    tx: &mut Tx<'_>,
    actor: Uuid,
    action: Action,
    target: &str,
    details: serde_json::Value,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    execute_tx!(
        tx,
        "INSERT INTO audit_log (actor_id, action, target, details, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        actor,
        action.as_str(),
        target,
        details.to_string(),
        now,
    )?;
    Ok(())
}

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    Db: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(audit_page))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this kind of action.
    pub action: Option<Action>,
    /// Only actions at or after this time (RFC 3339).
    pub from: Option<DateTime<Utc>>,
    /// Only actions before this time (RFC 3339).
    pub to: Option<DateTime<Utc>>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Limit<500, 50>,
    /// `next_cursor` of the previous page.
    #[param(minimum = 1)]
    pub cursor: Option<i64>,
}

/// One admin action.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEntry {
    pub id: i64,
    pub actor_id: Option<Uuid>,
    /// The actor's email; absent when the account is gone.
    pub actor_email: Option<String>,
    pub action: Action,
    /// What was changed, e.g. `price:eu-west:H100-SXM:tflops_h` or `node:<id>`.
    pub target: String,
    /// The change itself, as the action recorded it (a JSON object whose
    /// fields depend on `action`).
    #[schema(schema_with = free_form_object)]
    pub details: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

/// `{"type": "object", "additionalProperties": true}`: any fields.
fn free_form_object() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::<
            utoipa::openapi::Schema,
        >::FreeForm(true)))
        .description(Some(
            "The change itself, as the action recorded it (a JSON object whose fields depend on `action`).",
        ))
        .build()
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPage {
    pub items: Vec<AuditEntry>,
    /// Pass as `cursor` for the next (older) page; absent on the last page.
    pub next_cursor: Option<i64>,
}

type AuditRow = (
    i64,
    Option<Uuid>,
    Option<String>,
    String,
    String,
    String,
    DateTime<Utc>,
);

/// The audit log, newest first.
#[utoipa::path(get, path = "/v1/admin/audit", tag = "ops", security(("bearer" = [])),
    params(AuditQuery),
    responses(
        (status = 200, description = "A page of admin actions", body = AuditPage),
        NotAnAdmin,
        InvalidQuery,
    ))]
async fn audit_page(
    State(db): State<Db>,
    caller: Caller,
    Query(q): Query<AuditQuery>,
) -> Result<Json<AuditPage>, ApiError> {
    caller.require(&[Role::Admin])?;
    let limit = q.limit.get();
    if let (Some(from), Some(to)) = (q.from, q.to) {
        if to <= from {
            return Err(ApiError::field("query.to", "must be after `from`"));
        }
    }
    if q.cursor.is_some_and(|c| c < 1) {
        return Err(ApiError::field("query.cursor", "must be at least 1"));
    }
    let mut rows: Vec<AuditRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT a.id, a.actor_id, u.email, a.action, a.target, a.details, a.created_at \
             FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id \
             WHERE a.id < $1 AND ($2 IS NULL OR a.action = $2) \
               AND ($3 IS NULL OR a.created_at >= $3) AND ($4 IS NULL OR a.created_at < $4) \
             ORDER BY a.id DESC LIMIT $5",
        )
        .bind(q.cursor.unwrap_or(i64::MAX))
        .bind(q.action.map(Action::as_str))
        .bind(q.from)
        .bind(q.to)
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await
    })?;
    let next_cursor = page::next_cursor(&mut rows, limit, |row| row.0);
    let mut items = Vec::with_capacity(rows.len());
    for (id, actor_id, actor_email, action, target, details, created_at) in rows {
        let action = action
            .parse()
            .map_err(|e| anyhow::anyhow!("audit row {id}: {e}"))?;
        // Rows are written by `record` from a JSON object, so they parse; a
        // hand-edited row is shown as its text rather than failing the page.
        let details = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&details)
            .map(serde_json::Value::Object)
            .unwrap_or_else(|_| serde_json::json!({ "text": details }));
        items.push(AuditEntry {
            id,
            actor_id,
            actor_email,
            action,
            target,
            details,
            created_at,
        });
    }
    Ok(Json(AuditPage { items, next_cursor }))
}
