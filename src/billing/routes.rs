//! `/v1/wallet`, `/v1/ledger`, `/v1/admin/credits`.

use super::ledger::{self, LedgerError};
use super::BillingState;
use crate::audit;
use crate::auth::{Caller, Role, RouterState};
use crate::db::{dispatch, Money};
use crate::error::responses::{InvalidQuery, MalformedJson, NotAnAdmin};
use crate::error::{ApiError, Json, Problem, Query};
use crate::idempotency::{self, IdempotencyKey};
use crate::page::{self, Limit};
use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(wallet))
        .routes(routes!(ledger_page))
        .routes(routes!(admin_credit))
}

/// The caller's money.
#[derive(Debug, Serialize, ToSchema)]
pub struct WalletView {
    pub currency: String,
    /// available + held.
    #[schema(schema_with = crate::bounds::money_out)]
    pub balance: Decimal,
    /// Set aside for open orders and running leases.
    #[schema(schema_with = crate::bounds::money_out)]
    pub held: Decimal,
    /// What new orders can use.
    #[schema(schema_with = crate::bounds::money_out)]
    pub available: Decimal,
}

/// The caller's balance, held and available funds.
#[utoipa::path(get, path = "/v1/wallet", tag = "wallet", security(("bearer" = [])),
    responses(
        (status = 200, description = "The wallet", body = WalletView),
        (status = 403, description = "Node tokens have no wallet", body = Problem, content_type = "application/problem+json"),
    ))]
async fn wallet(
    State(state): State<BillingState>,
    caller: Caller,
) -> Result<Json<WalletView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let b = ledger::balances(&state.db, caller.id).await?;
    Ok(Json(WalletView {
        currency: state.settings.currency.clone(),
        balance: b.available + b.held,
        held: b.held,
        available: b.available,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LedgerQuery {
    /// Only postings at or after this time (RFC 3339).
    pub from: Option<DateTime<Utc>>,
    /// Only postings before this time (RFC 3339).
    pub to: Option<DateTime<Utc>>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Limit<500, 50>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<i64>,
}

/// One posting to one of the caller's accounts.
#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerLine {
    pub id: i64,
    pub entry_id: Uuid,
    /// `wallet`, `holds` or `payable`.
    pub account: String,
    /// `credit`, `hold`, `capture`, `release`, `charge`, …
    pub kind: String,
    pub memo: String,
    pub reference: Option<String>,
    #[schema(schema_with = crate::bounds::money_out)]
    pub amount: Decimal,
    #[schema(schema_with = crate::bounds::money_out)]
    pub balance_after: Decimal,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerPage {
    pub items: Vec<LedgerLine>,
    /// Pass as `cursor` for the next (older) page; absent on the last page.
    pub next_cursor: Option<i64>,
}

type LedgerRow = (
    i64,
    Uuid,
    String,
    String,
    String,
    Option<String>,
    Money,
    Money,
    DateTime<Utc>,
);

/// The caller's postings, newest first.
#[utoipa::path(get, path = "/v1/ledger", tag = "wallet", security(("bearer" = [])),
    params(LedgerQuery),
    responses(
        (status = 200, description = "A page of postings", body = LedgerPage),
        (status = 403, description = "Node tokens have no ledger", body = Problem, content_type = "application/problem+json"),
        InvalidQuery,
    ))]
async fn ledger_page(
    State(state): State<BillingState>,
    caller: Caller,
    Query(q): Query<LedgerQuery>,
) -> Result<Json<LedgerPage>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let limit = q.limit.get();
    if let (Some(from), Some(to)) = (q.from, q.to) {
        if to <= from {
            return Err(ApiError::field("query.to", "must be after `from`"));
        }
    }
    let mut rows: Vec<LedgerRow> = dispatch!(state.db, pool => {
        sqlx::query_as(
            "SELECT p.id, p.entry_id, a.kind, e.kind, e.memo, e.reference, p.amount, p.balance_after, p.created_at \
             FROM postings p \
             JOIN accounts a ON a.code = p.account \
             JOIN journal_entries e ON e.id = p.entry_id \
             WHERE a.owner_id = $1 AND p.id < $2 AND ($3 IS NULL OR p.created_at >= $3) AND ($4 IS NULL OR p.created_at < $4) \
             ORDER BY p.id DESC LIMIT $5",
        )
        .bind(caller.id)
        .bind(q.cursor.unwrap_or(i64::MAX))
        .bind(q.from)
        .bind(q.to)
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await
    })?;
    let next_cursor = page::next_cursor(&mut rows, limit, |row| row.0);
    let items = rows
        .into_iter()
        .map(
            |(id, entry_id, account, kind, memo, reference, amount, balance_after, created_at)| {
                LedgerLine {
                    id,
                    entry_id,
                    account,
                    kind,
                    memo,
                    reference,
                    amount: amount.0,
                    balance_after: balance_after.0,
                    created_at,
                }
            },
        )
        .collect();
    Ok(Json(LedgerPage { items, next_cursor }))
}

#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreditRequest {
    pub user_id: Uuid,
    /// A decimal string (`"100.00"`), never a JSON number.
    #[serde(deserialize_with = "crate::decimal::money")]
    #[schema(value_type = crate::bounds::Amount)]
    pub amount: Decimal,
    /// Why the credit was given; shown on the ledger.
    #[serde(default)]
    pub memo: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CreditView {
    pub entry_id: Uuid,
    pub user_id: Uuid,
    #[schema(schema_with = crate::bounds::money_out)]
    pub amount: Decimal,
    pub currency: String,
    /// The user's available funds after the credit.
    #[schema(schema_with = crate::bounds::money_out)]
    pub available: Decimal,
}

/// Top up a user's wallet (admin). An `Idempotency-Key` header makes a retry harmless.
#[utoipa::path(post, path = "/v1/admin/credits", tag = "wallet", security(("bearer" = [])),
    request_body = CreditRequest,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "Makes a retry return the first result")),
    responses(
        (status = 201, description = "Credited", body = CreditView),
        MalformedJson,
        NotAnAdmin,
        (status = 422, description = "Invalid fields, unknown user, or a reused Idempotency-Key", body = Problem, content_type = "application/problem+json"),
    ))]
async fn admin_credit(
    State(state): State<BillingState>,
    caller: Caller,
    headers: HeaderMap,
    Json(mut req): Json<CreditRequest>,
) -> Result<Response, ApiError> {
    caller.require(&[Role::Admin])?;
    let mut errors = Vec::new();
    errors.extend(crate::bounds::AMOUNT.take("amount", &mut req.amount));
    let memo = req
        .memo
        .as_deref()
        .map(str::trim)
        .unwrap_or("admin credit")
        .to_owned();
    if memo.chars().count() > 500 {
        errors.push(crate::error::FieldError::new(
            "memo",
            "must be at most 500 characters",
        ));
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let canonical = serde_json::to_vec(&req).map_err(|e| ApiError::Internal(e.into()))?;
    let key = IdempotencyKey::from_headers(&headers, &canonical)?;
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    if let Some(key) = &key {
        if let Some(stored) = idempotency::lookup(&mut tx, caller.id, "admin_credit", key).await? {
            return Ok((stored.status, axum::Json(stored.body)).into_response());
        }
    }
    let entry_id = match ledger::credit(
        &mut tx,
        req.user_id,
        req.amount,
        &memo,
        Some(caller.id),
        now,
    )
    .await
    {
        Ok(id) => id,
        Err(e) => return Err(credit_refused(e)),
    };
    audit::record(
        &mut tx,
        caller.id,
        audit::Action::Credit,
        &format!("user:{}", req.user_id),
        serde_json::json!({ "amount": req.amount.to_string(), "memo": memo }),
        now,
    )
    .await?;
    let available = balance_in_tx(&mut tx, req.user_id).await?;
    let view = CreditView {
        entry_id,
        user_id: req.user_id,
        amount: req.amount,
        currency: state.settings.currency.clone(),
        available,
    };
    let body = serde_json::to_value(&view).map_err(|e| ApiError::Internal(e.into()))?;
    if let Some(key) = &key {
        idempotency::store(
            &mut tx,
            caller.id,
            "admin_credit",
            key,
            StatusCode::CREATED,
            &body,
            now,
        )
        .await?;
    }
    tx.commit().await?;
    Ok((StatusCode::CREATED, axum::Json(body)).into_response())
}

async fn balance_in_tx(tx: &mut crate::db::Tx<'_>, user: Uuid) -> Result<Decimal, ApiError> {
    let balance: Money = crate::db::dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT balance FROM accounts WHERE code = $1")
            .bind(ledger::Account::Wallet(user))
            .fetch_one(conn)
            .await
    })?;
    Ok(balance.0)
}

/// Why crediting a user (`user_id`, `amount`) was refused.
pub(super) fn credit_refused(e: LedgerError) -> ApiError {
    match e {
        LedgerError::UnknownAccount(_) => ApiError::field("user_id", "no user with this id"),
        LedgerError::Overflow => ApiError::field(
            "amount",
            "would take the balance beyond what an account can hold",
        ),
        e => ApiError::Internal(e.into()),
    }
}
