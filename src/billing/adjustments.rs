//! `POST /v1/admin/billing/adjustments`: an admin credits a buyer with a
//! reason. The credit is a charge line of its own (kind `credit`), so
//! invoices, cost by tag and FOCUS exports show it next to what it offsets.

use super::lines::{self, Credit};
use super::BillingState;
use crate::audit;
use crate::auth::{Caller, Role, RouterState};
use crate::error::responses::{MalformedJson, NotAnAdmin};
use crate::error::{ApiError, FieldError, Json, Problem};
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(adjust))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdjustmentRequest {
    pub user_id: Uuid,
    /// Positive: what the buyer gets back.
    #[serde(deserialize_with = "crate::decimal::money")]
    #[schema(value_type = crate::bounds::Amount)]
    pub amount: Decimal,
    /// Why; shown on the invoice and in the export.
    #[schema(min_length = 1, max_length = 500, pattern = r"\S")]
    pub reason: String,
    /// The lease it concerns, if any.
    #[serde(default)]
    pub lease_id: Option<Uuid>,
    /// The period it concerns (default: now).
    #[serde(default)]
    pub period_start: Option<DateTime<Utc>>,
    #[serde(default)]
    pub period_end: Option<DateTime<Utc>>,
    /// Tags the credit belongs to, so cost by tag nets it.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AdjustmentView {
    pub entry_id: Uuid,
    pub user_id: Uuid,
    #[schema(schema_with = crate::bounds::money_out)]
    pub amount: Decimal,
    pub reason: String,
}

/// Credit a buyer with a reason (admin): a credit line and a ledger entry.
#[utoipa::path(post, path = "/v1/admin/billing/adjustments", tag = "billing", security(("bearer" = [])),
    request_body = AdjustmentRequest,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first answer; another body with it is 422 `idempotency_key_reused`; while the first is under way, 409 `idempotency_key_in_use`")),
    responses(
        (status = 201, description = "Credited", body = AdjustmentView),
        MalformedJson,
        NotAnAdmin,
        (status = 422, description = "Invalid fields or unknown user", body = Problem, content_type = "application/problem+json"),
    ))]
async fn adjust(
    State(state): State<BillingState>,
    caller: Caller,
    Json(mut req): Json<AdjustmentRequest>,
) -> Result<(StatusCode, Json<AdjustmentView>), ApiError> {
    caller.require(&[Role::Admin])?;
    let mut errors = Vec::new();
    errors.extend(crate::bounds::AMOUNT.take("amount", &mut req.amount));
    let reason = req.reason.trim().to_owned();
    if reason.is_empty() || reason.chars().count() > 500 {
        errors.push(FieldError::new("reason", "must be 1 to 500 characters"));
    }
    let now = state.settings.clock.now();
    let start = req.period_start.unwrap_or(now).timestamp();
    let end = req.period_end.map_or(start + 1, |t| t.timestamp());
    if end <= start {
        errors.push(FieldError::new("period_end", "must be after period_start"));
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let credit = Credit {
        buyer: req.user_id,
        lease: req.lease_id,
        amount: req.amount,
        reason: reason.clone(),
        period_start: start,
        period_end: end,
        tags_json: serde_json::to_string(&req.tags.unwrap_or_default())
            .map_err(|e| ApiError::Internal(e.into()))?,
    };
    let mut tx = state.db.begin().await?;
    let entry_id = lines::credit(&mut tx, &credit, Some(caller.id), now)
        .await
        .map_err(super::routes::credit_refused)?;
    audit::record(
        &mut tx,
        caller.id,
        audit::Action::BillingAdjustment,
        &format!("user:{}", req.user_id),
        serde_json::json!({ "amount": req.amount.to_string(), "reason": reason }),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(AdjustmentView {
            entry_id,
            user_id: req.user_id,
            amount: req.amount,
            reason,
        }),
    ))
}
