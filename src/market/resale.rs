//! `/v1/resale-listings` and `/v1/market/resale` (ARCHITECTURE.md §6): a reserved
//! lease's holder lists the tail of its window; every buyer sees the open
//! listings (never who sells them).

use super::MarketState;
use crate::auth::{Caller, Role, RouterState};
use crate::db::{dispatch, Money};
use crate::engine::{Command, Engine, EngineError, ListResale, Listing, ListingRefusal};
use crate::error::responses::{InvalidQuery, NotABuyer};
use crate::error::{ApiError, Json, Problem, Query};
use crate::ids::{ListingId, PathId};
use crate::market::MarketError;
use crate::page::{self, Limit};
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
pub use gpuex_api::market::{ListingView, ResaleOffer};
use rust_decimal::Decimal;
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
        .routes(routes!(create_listing, list_listings))
        .routes(routes!(cancel_listing))
        .routes(routes!(open_listings))
}

/// A listing of the tail of a reserved lease's window.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListingRequest {
    /// The caller's reserved lease.
    pub lease_id: Uuid,
    /// A whole hour inside the lease's window, at least the notice period
    /// (default 120 s) ahead and an hour before the window ends.
    pub from: DateTime<Utc>,
    /// For the whole slice, at most 0.9 × its reserved price per hour.
    #[serde(deserialize_with = "crate::decimal::money")]
    #[schema(value_type = crate::bounds::PricePerHour)]
    pub ask_per_hour: Decimal,
}

fn at(ts: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts, 0).unwrap_or_default()
}

/// A listing as buyers see it on offer.
fn offer(l: &Listing) -> ResaleOffer {
    ResaleOffer {
        id: l.id,
        gpu_model: l.model.clone(),
        region: l.region.clone(),
        slots: l
            .placement
            .gpus
            .iter()
            .map(|g| serde_json::to_value(&g.slot).unwrap_or_default())
            .collect(),
        gpus: u32::try_from(l.placement.gpus.len()).unwrap_or(0),
        tflops_h: l.placement.units.tflops_h,
        vram_h: l.placement.units.vram_h,
        from: at(l.from),
        until: at(l.until),
        ask_per_hour: l.ask_per_hour,
        reserved_price_per_hour: l.reserved_price_per_hour,
    }
}

/// List the tail of a reserved lease's window for resale. The lease then
/// ends at `from`, whether or not the tail sells; its window is still owed.
#[utoipa::path(post, path = "/v1/resale-listings", tag = "resale", security(("bearer" = [])),
    request_body = ListingRequest,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first answer; another body with it is 422 `idempotency_key_reused`; while the first is under way, 409 `idempotency_key_in_use`")),
    responses(
        (status = 201, description = "Listed", body = ListingView),
        NotABuyer,
        (status = 404, description = "No such lease of the caller's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`already_listed` (or bought on resale), `lease_ended`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`not_reserved`, `listing_too_soon`, `listing_outside_window`, `ask_too_high` (naming the cap), or invalid fields", body = Problem, content_type = "application/problem+json"),
    ))]
async fn create_listing(
    State(state): State<MarketState>,
    caller: Caller,
    Json(mut req): Json<ListingRequest>,
) -> Result<(StatusCode, Json<ListingView>), ApiError> {
    caller.require(&[Role::Buyer])?;
    if let Some(error) = crate::bounds::PRICE_PER_HOUR.take("ask_per_hour", &mut req.ask_per_hour) {
        return Err(ApiError::Invalid(vec![error]));
    }
    if req.ask_per_hour <= Decimal::ZERO {
        return Err(ApiError::field("ask_per_hour", "must be above 0"));
    }
    if req.from.timestamp().rem_euclid(3600) != 0 {
        return Err(ApiError::field(
            "from",
            "must be a whole hour (e.g. 14:00:00Z)",
        ));
    }
    let owner: Option<Uuid> = dispatch!(state.db, pool => {
        sqlx::query_scalar("SELECT buyer_id FROM leases WHERE id = $1")
            .bind(req.lease_id)
            .fetch_optional(pool)
            .await
    })?;
    if owner != Some(caller.id) {
        return Err(ApiError::NotFound("no such lease".into()));
    }
    let id = Uuid::now_v7();
    state
        .market
        .command(Command::ListResale(ListResale {
            listing_id: id,
            lease_id: req.lease_id,
            seller: caller.id,
            from: req.from.timestamp(),
            ask_per_hour: req.ask_per_hour,
        }))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(listing(&state, caller.id, id).await?),
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListingQuery {
    /// Page size, 1 to 500 (default 50).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Limit<500, 50>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<Uuid>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ListingPage {
    pub items: Vec<ListingView>,
    pub next_cursor: Option<Uuid>,
}

/// The caller's listings, newest first, in every state.
#[utoipa::path(get, path = "/v1/resale-listings", tag = "resale", security(("bearer" = [])),
    params(ListingQuery),
    responses(
        (status = 200, description = "A page of listings", body = ListingPage),
        NotABuyer,
        InvalidQuery,
    ))]
async fn list_listings(
    State(state): State<MarketState>,
    caller: Caller,
    Query(q): Query<ListingQuery>,
) -> Result<Json<ListingPage>, ApiError> {
    caller.require(&[Role::Buyer])?;
    let limit = q.limit.get();
    let sql = format!(
        "SELECT {COLUMNS} FROM resale_listings WHERE seller_id = $1 AND ($2 IS NULL OR id < $2) \
         ORDER BY id DESC LIMIT $3"
    );
    let rows: Vec<ListingRow> = dispatch!(state.db, pool => {
        sqlx::query_as(&sql)
            .bind(caller.id)
            .bind(q.cursor)
            .bind(i64::from(limit) + 1)
            .fetch_all(pool)
            .await
    })?;
    let mut items: Vec<ListingView> = rows.into_iter().map(view).collect();
    let next_cursor = page::next_cursor(&mut items, limit, |l| l.id);
    Ok(Json(ListingPage { items, next_cursor }))
}

/// Cancel an open listing, until a notice period before its start. The
/// seller's lease then runs on through that time again.
#[utoipa::path(delete, path = "/v1/resale-listings/{id}", tag = "resale", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Listing id")),
    responses(
        (status = 200, description = "Cancelled", body = ListingView),
        NotABuyer,
        (status = 404, description = "No such listing of the caller's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`too_late_to_cancel`, or the listing is no longer open (`listing_closed`), also when a sale closed it while this request was under way", body = Problem, content_type = "application/problem+json"),
    ))]
async fn cancel_listing(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<ListingId>,
) -> Result<Json<ListingView>, ApiError> {
    caller.require(&[Role::Buyer])?;
    let id = id.uuid();
    let current = listing(&state, caller.id, id).await?;
    if current.state != "open" {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "listing_closed",
            detail: format!("the listing is already {}", current.state),
        });
    }
    let cancelled = state
        .market
        .command(Command::CancelListing {
            listing_id: id,
            seller: caller.id,
        })
        .await;
    match cancelled {
        Ok(_) => {}
        // The row above was the caller's and open, so the engine no longer
        // knowing it means a sale (or its end) closed it in between: the
        // cancel lost that race, which is a conflict, not a missing listing.
        Err(MarketError::Engine(EngineError::Listing(ListingRefusal::UnknownListing))) => {
            return Err(ApiError::Refused {
                status: StatusCode::CONFLICT,
                code: "listing_closed",
                detail:
                    "the listing closed (it sold, or its time ran out) before it could be cancelled"
                        .into(),
            });
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Json(listing(&state, caller.id, id).await?))
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OfferQuery {
    /// Only this GPU model.
    #[param(max_length = 64)]
    pub gpu_model: Option<String>,
    /// Only this region.
    #[param(max_length = 64)]
    pub region: Option<String>,
}

/// Every open resale listing, cheapest first.
#[utoipa::path(get, path = "/v1/market/resale", tag = "market", params(OfferQuery),
    responses(
        (status = 200, description = "Open listings", body = [ResaleOffer]),
        InvalidQuery,
    ))]
async fn open_listings(
    State(state): State<MarketState>,
    Query(q): Query<OfferQuery>,
) -> Result<Json<Vec<ResaleOffer>>, ApiError> {
    for (field, value) in [
        ("query.gpu_model", &q.gpu_model),
        ("query.region", &q.region),
    ] {
        if value.as_ref().is_some_and(|v| v.chars().count() > 64) {
            return Err(ApiError::field(field, "at most 64 characters"));
        }
    }
    Ok(Json(
        state.market.read(move |engine| offers(engine, &q)).await?,
    ))
}

/// Open listings, cheapest first, filtered as the query says.
pub fn offers(engine: &Engine, q: &OfferQuery) -> Vec<ResaleOffer> {
    let mut open: Vec<&Listing> = engine
        .listings()
        .filter(|l| q.gpu_model.as_ref().is_none_or(|m| *m == l.model))
        .filter(|l| q.region.as_ref().is_none_or(|r| *r == l.region))
        .collect();
    open.sort_by_key(|l| (l.ask_per_hour, l.from, l.id));
    open.into_iter().map(offer).collect()
}

const COLUMNS: &str = "id, lease_id, parent_id, state, gpu_model, region, from_ts, until_ts, \
                       ask_per_hour, sold_from, sold_until, sold_amount, created_at";

type ListingRow = (
    Uuid,
    Uuid,
    Option<Uuid>,
    String,
    String,
    String,
    i64,
    i64,
    Money,
    Option<i64>,
    Option<i64>,
    Option<Money>,
    DateTime<Utc>,
);

fn view(row: ListingRow) -> ListingView {
    let (
        id,
        lease_id,
        parent_id,
        state,
        gpu_model,
        region,
        from,
        until,
        ask,
        sold_from,
        sold_until,
        sold_amount,
        created_at,
    ) = row;
    ListingView {
        id,
        lease_id,
        parent_id,
        state,
        gpu_model,
        region,
        from: at(from),
        until: at(until),
        ask_per_hour: ask.0,
        sold_from: sold_from.map(at),
        sold_until: sold_until.map(at),
        sold_amount: sold_amount.map(|m| m.0),
        created_at,
    }
}

async fn listing(state: &MarketState, seller: Uuid, id: Uuid) -> Result<ListingView, ApiError> {
    let sql = format!("SELECT {COLUMNS} FROM resale_listings WHERE id = $1 AND seller_id = $2");
    let row: Option<ListingRow> = dispatch!(state.db, pool => {
        sqlx::query_as(&sql).bind(id).bind(seller).fetch_optional(pool).await
    })?;
    row.map(view)
        .ok_or_else(|| ApiError::NotFound("no such listing".into()))
}
