//! `/v1/orders`: place, list, read, fills, cancel.

pub use super::order_request::{OrderRequest, Qos};
use super::MarketState;
use crate::ids::{OrderId, PathId};

use super::handle::{MarketError, OrderMeta};
use super::views::{self, OrderState, OrderView};
use crate::auth::{Caller, Role, RouterState};
use crate::engine::{Command, Event, PlaceOrder};
use crate::error::responses::{InvalidQuery, MalformedJson, NotABuyer};
use crate::error::{ApiError, Json, Problem, Query};
use crate::idempotency::IdempotencyKey;
use crate::page::{self, Limit};
use crate::pricing::quotes::{self};
use crate::pricing::Mode;
use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    MarketState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(place_order, list_orders))
        .routes(routes!(get_order, cancel_order))
        .routes(routes!(order_fills))
}

/// Place an order. Filled at once, waiting for capacity (`max_wait_s`), or
/// refused with a reason code.
#[utoipa::path(post, path = "/v1/orders", tag = "orders", security(("bearer" = [])),
    request_body = OrderRequest,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first result")),
    responses(
        (status = 201, description = "Accepted: filled, or waiting for capacity", body = OrderView),
        MalformedJson,
        NotABuyer,
        (status = 409, description = "`duplicate_client_order_id`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields (`webhook_url` also when it resolves to a private address, or when the account has no webhook secret yet: `POST /v1/webhooks/secret` first), or refused: `insufficient_funds`, `no_capacity`, `below_floor`, `reserved_too_soon`, `unknown_model`, `unknown_precision`, `unsatisfiable_resources`, `node_cordoned`, `idempotency_key_reused`, `budget_exceeded`, `max_price_exceeded` (the price per hour, named in `detail`, is above `max_price`: on every mode, ARCHITECTURE.md §22); `start_at` off the whole hour on a reserved order", body = Problem, content_type = "application/problem+json"),
    ))]
async fn place_order(
    State(state): State<MarketState>,
    caller: Caller,
    headers: HeaderMap,
    Json(req): Json<OrderRequest>,
) -> Result<(StatusCode, Json<OrderView>), ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let view = submit(&state, caller.id, Some(&headers), req).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// Places `buyer`'s order as `POST /v1/orders` does: checked, budgeted,
/// then through the market. `headers` carry its Idempotency-Key; an order
/// placed for another create (a trial's) has none of its own.
pub(crate) async fn submit(
    state: &MarketState,
    buyer: Uuid,
    headers: Option<&HeaderMap>,
    mut req: OrderRequest,
) -> Result<OrderView, ApiError> {
    let errors = req.validate();
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    if let Some(price) = req.max_price.as_mut() {
        crate::bounds::PRICE_PER_HOUR.take("max_price", price);
    }
    // Before the market task: an order whose notices could not be sent,
    // or could reach a private address, is refused whole.
    if let Some(url) = &req.webhook_url {
        crate::events::webhooks::check_order_webhook(
            &state.db,
            state.settings.webhook_allow_private,
            buyer,
            url,
        )
        .await?;
    }
    let now = state.settings.clock.now();
    let wait_s = req.wait_s(now).map_err(|e| ApiError::Invalid(vec![e]))?;
    let start_at = match req.mode {
        Mode::Reserved => Some(quotes::window(req.mode, req.start_at, req.duration_s, now)?.0),
        _ => {
            if req
                .start_at
                .is_some_and(|s| s > now + chrono::Duration::seconds(60))
            {
                return Err(ApiError::field(
                    "start_at",
                    "only reserved orders start in the future",
                ));
            }
            None
        }
    };
    if let Some(name) = req.region.named() {
        if !state.regions.exists(&state.db, name).await? {
            return Err(ApiError::field(
                "region",
                format!("unknown region `{name}`"),
            ));
        }
    }
    // The credentials are kept apart (below), never in the stored request.
    let registry_auth = req.registry_auth.take();
    // One serialization serves the stored request, the reply and the retry
    // fingerprint (equal requests give equal bytes).
    let request =
        serde_json::value::to_raw_value(&req).map_err(|e| ApiError::Internal(e.into()))?;
    // The stored request leaves credentials out; a retry with other ones is
    // another request all the same.
    let fingerprint = match &registry_auth {
        None => request.get().as_bytes().to_vec(),
        Some(auth) => [
            request.get().as_bytes(),
            &state.pull_secrets.fingerprint(auth),
        ]
        .concat(),
    };
    let idempotency = match headers {
        Some(headers) => IdempotencyKey::from_headers(headers, &fingerprint)?,
        None => None,
    };
    // Budgets (ARCHITECTURE.md §4): refuse an order that would take a tag's monthly
    // budget over its limit, before it reaches the engine.
    if let Some(tags) = req.tags.as_ref().filter(|t| !t.is_empty()) {
        let estimate = crate::billing::budgets::estimate(
            &state.db,
            req.mode,
            &req.resources,
            req.region.named(),
            req.duration_s,
            req.max_price,
        )
        .await?;
        // Every unit of the order counts against the budget.
        let estimate = estimate
            .checked_mul(Decimal::from(req.units()))
            .ok_or_else(|| ApiError::field("count", "the order's cost is out of range"))?;
        crate::billing::budgets::check_order(&state.db, buyer, tags, estimate, now).await?;
    }
    let mut spec = req.spec(start_at, wait_s);
    // ARCHITECTURE.md §17: the lease's likely duration from the buyer's history, for
    // placement to line up ends; an order's own `duration_s` needs none.
    if spec.duration_s.is_none() {
        let no_tags = BTreeMap::new();
        let tags = req.tags.as_ref().unwrap_or(&no_tags);
        let prediction = super::predict::predict(&state.db, buyer, tags, req.command.as_deref())
            .await
            .map_err(ApiError::Internal)?;
        spec.predicted_duration = prediction.seconds.is_some().then_some(prediction);
    }
    let order_id = Uuid::now_v7();
    let command = Command::Place(PlaceOrder {
        order_id,
        buyer,
        funds_available: Decimal::ZERO,
        spec,
    });
    let tags = serde_json::value::to_raw_value(req.tags.as_ref().unwrap_or(&BTreeMap::new()))
        .map_err(|e| ApiError::Internal(e.into()))?;
    let region = req.region.to_string();
    let meta = OrderMeta {
        client_order_id: req.client_order_id.clone(),
        request_json: request.get().to_owned(),
        tags_json: tags.get().to_owned(),
        region: region.clone(),
        idempotency,
    };
    // Kept before the market sees the order: its lease may start at once.
    if let Some(auth) = &registry_auth {
        super::pull_secrets::keep(&state.db, &state.pull_secrets, order_id, auth, now).await?;
    }
    let started = std::time::Instant::now();
    let placed = state.market.place(command, meta).await;
    let refused = match &placed {
        Ok(committed) => committed
            .events
            .iter()
            .any(|e| matches!(e, Event::OrderRejected { order_id: id, .. } if *id == order_id)),
        Err(_) => true,
    };
    if refused && registry_auth.is_some() {
        super::pull_secrets::forget(&state.db, order_id).await?;
    }
    let committed = match placed {
        Ok(committed) => committed,
        Err(MarketError::AlreadyPlaced(id)) => {
            let view = views::order(&state.db, buyer, id).await?;
            return Ok(view);
        }
        Err(e) => return Err(e.into()),
    };
    state.metrics.observe_scheduling(started.elapsed());
    if let Some((reason, message)) = committed.events.iter().find_map(|e| match e {
        Event::OrderRejected {
            order_id: id,
            reason,
            message,
            ..
        } if *id == order_id => Some((*reason, message.clone())),
        _ => None,
    }) {
        return Err(ApiError::refused(
            reason.code(),
            format!("order {order_id} was refused: {message}"),
        ));
    }
    // The task says how the row was committed; only when it had to write the
    // row early (another command of its batch needed it) is it read back.
    // An order of several units reads its leases back from the fills.
    let view = match committed.order.filter(|_| req.units() == 1) {
        Some(row) => OrderView {
            id: order_id,
            client_order_id: req.client_order_id,
            mode: req.mode,
            state: row.state,
            region,
            request,
            tags,
            reject_reason: row.reject_reason,
            reject_message: row.reject_message,
            attempts: row.lease_id.into_iter().collect(),
            lease_ids: row.lease_id.into_iter().collect(),
            lease_id: row.lease_id,
            resumed_from: None,
            created_at: committed.at,
            updated_at: committed.at,
        },
        None => views::order(&state.db, buyer, order_id).await?,
    };
    Ok(view)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OrderQuery {
    /// `open`, `filled`, `cancelled`, `rejected` or `expired`.
    #[param(inline)]
    pub state: Option<OrderState>,
    /// `on_demand`, `reserved`, `spot` or `pooled`.
    #[param(inline)]
    pub mode: Option<Mode>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Limit<500, 50>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<Uuid>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrderPage {
    pub items: Vec<OrderView>,
    pub next_cursor: Option<Uuid>,
}

/// The caller's orders, newest first.
#[utoipa::path(get, path = "/v1/orders", tag = "orders", security(("bearer" = [])),
    params(OrderQuery),
    responses(
        (status = 200, description = "A page of orders", body = OrderPage),
        NotABuyer,
        InvalidQuery,
    ))]
async fn list_orders(
    State(state): State<MarketState>,
    caller: Caller,
    Query(q): Query<OrderQuery>,
) -> Result<Json<OrderPage>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let limit = q.limit.get();
    let filter = views::OrderFilter {
        buyer: caller.id,
        state: q.state,
        mode: q.mode,
        cursor: q.cursor,
        limit,
    };
    let mut items = views::orders(&state.db, &filter).await?;
    let next_cursor = page::next_cursor(&mut items, limit, |o| o.id);
    Ok(Json(OrderPage { items, next_cursor }))
}

/// One of the caller's orders.
#[utoipa::path(get, path = "/v1/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Order id")),
    responses(
        (status = 200, description = "The order", body = OrderView),
        NotABuyer,
        (status = 404, description = "No such order of the caller's", body = Problem, content_type = "application/problem+json"),
    ))]
async fn get_order(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<OrderId>,
) -> Result<Json<OrderView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    Ok(Json(views::order(&state.db, caller.id, id.uuid()).await?))
}

/// Cancel an open order. A filled order is ended by releasing its lease.
#[utoipa::path(delete, path = "/v1/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Order id")),
    responses(
        (status = 200, description = "Cancelled", body = OrderView),
        NotABuyer,
        (status = 404, description = "No such order of the caller's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`not_cancellable`: filled, rejected or already ended", body = Problem, content_type = "application/problem+json"),
    ))]
async fn cancel_order(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<OrderId>,
) -> Result<Json<OrderView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = id.uuid();
    let view = views::order(&state.db, caller.id, id).await?;
    if view.state != OrderState::Open {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "not_cancellable",
            detail: format!("the order is {}; release its lease instead", view.state),
        });
    }
    // An order filled since the view was read is refused as `not_cancellable`.
    state
        .market
        .command(Command::Cancel { order_id: id })
        .await?;
    Ok(Json(views::order(&state.db, caller.id, id).await?))
}

/// One fill of an order: the lease, its price and why.
#[derive(Debug, Serialize, ToSchema)]
pub struct FillView {
    pub lease_id: Uuid,
    /// Sources considered, the price rule, clearing index, units and why this slice.
    #[schema(value_type = Object)]
    pub report: serde_json::Value,
    /// The lease's mode conversions since the fill, oldest first.
    pub conversions: Vec<super::views::ConversionView>,
    /// The order's type: how long it stood and how many units it asked.
    pub order_type: super::order_request::OrderType,
    pub created_at: DateTime<Utc>,
}

/// How each fill of the order was matched (auditable).
#[utoipa::path(get, path = "/v1/orders/{id}/fills", tag = "orders", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Order id")),
    responses(
        (status = 200, description = "Fill reports", body = [FillView]),
        NotABuyer,
        (status = 404, description = "No such order of the caller's", body = Problem, content_type = "application/problem+json"),
    ))]
async fn order_fills(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<OrderId>,
) -> Result<Json<Vec<FillView>>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = id.uuid();
    let order = views::order(&state.db, caller.id, id).await?;
    let order_type = super::order_request::OrderType::of(&order);
    Ok(Json(views::fills(&state.db, id, &order_type).await?))
}
