//! `/v1/prices`, `/v1/prices/history`, `/v1/quotes`, `/v1/admin/prices`.

use super::quotes::{self, Quote, QuoteRequest};
use super::rules::DerivedPrices;
use super::store::{self, HistoryFilter, ListPrice};
use crate::audit;
use crate::auth::{Caller, Role, RouterState};
use crate::catalog::regions::KnownRegions;
use crate::catalog::{self, regions, Unit};
use crate::config::Settings;
use crate::db::Db;
use crate::error::responses::{InvalidQuery, MalformedJson, NotAnAdmin};
use crate::error::{ApiError, FieldError, Json, Problem, Query};
use crate::market::{MarketFeed, MarketHandle};
use crate::page::Limit;
use axum::extract::{FromRef, State};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What the price routes use: list prices go to the engine, which answers
/// quotes, and to the public market stream.
#[derive(Clone)]
pub struct PricingState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub market: MarketHandle,
    pub market_feed: MarketFeed,
    pub regions: KnownRegions,
}

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    PricingState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_prices))
        .routes(routes!(price_history))
        .routes(routes!(quote))
        .routes(routes!(put_prices))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PriceQuery {
    pub region: Option<String>,
    pub gpu_model: Option<String>,
}

/// Prices of one unit of one model in one region, per unit-hour.
#[derive(Debug, Serialize, ToSchema)]
pub struct PriceView {
    pub region: String,
    pub gpu_model: String,
    pub unit: Unit,
    pub currency: String,
    #[serde(flatten)]
    pub prices: DerivedPrices,
    pub updated_at: DateTime<Utc>,
}

/// List prices and every price derived from them.
#[utoipa::path(get, path = "/v1/prices", tag = "prices", params(PriceQuery),
    responses(
        (status = 200, description = "Prices per unit-hour", body = [PriceView]),
        InvalidQuery,
    ))]
async fn list_prices(
    State(state): State<PricingState>,
    Query(q): Query<PriceQuery>,
) -> Result<Json<Vec<PriceView>>, ApiError> {
    let prices = store::list(&state.db, q.region.as_deref(), q.gpu_model.as_deref()).await?;
    Ok(Json(
        prices
            .into_iter()
            .map(|p| PriceView {
                region: p.region,
                gpu_model: p.gpu_model,
                unit: p.unit,
                currency: p.currency,
                prices: DerivedPrices::from_list(p.list_price),
                updated_at: p.updated_at,
            })
            .collect(),
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    pub region: Option<String>,
    pub gpu_model: Option<String>,
    /// `tflops_h` or `vram_h`.
    #[param(inline)]
    pub unit: Option<Unit>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    /// 1 to 1000 (default 100).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Limit<1000, 100>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PriceChangeView {
    pub id: i64,
    pub region: String,
    pub gpu_model: String,
    #[schema(value_type = Unit)]
    pub unit: String,
    #[schema(value_type = String)]
    pub list_price: Decimal,
    #[schema(value_type = Option<String>)]
    pub previous_price: Option<Decimal>,
    pub currency: String,
    pub changed_at: DateTime<Utc>,
}

/// Every change of a list price, newest first.
#[utoipa::path(get, path = "/v1/prices/history", tag = "prices", params(HistoryQuery),
    responses(
        (status = 200, description = "Price changes", body = [PriceChangeView]),
        InvalidQuery,
    ))]
async fn price_history(
    State(state): State<PricingState>,
    Query(q): Query<HistoryQuery>,
) -> Result<Json<Vec<PriceChangeView>>, ApiError> {
    let limit = q.limit.get();
    let filter = HistoryFilter {
        region: q.region.as_deref(),
        gpu_model: q.gpu_model.as_deref(),
        unit: q.unit.map(Unit::as_str),
        from: q.from,
        to: q.to,
        limit,
    };
    let changes = store::history(&state.db, &filter).await?;
    Ok(Json(
        changes
            .into_iter()
            .map(|c| PriceChangeView {
                id: c.id,
                region: c.region,
                gpu_model: c.gpu_model,
                unit: c.unit,
                list_price: c.list_price,
                previous_price: c.previous_price,
                currency: c.currency,
                changed_at: c.changed_at,
            })
            .collect(),
    ))
}

/// What an order would cost: per-unit prices, total and breakdown per (model, region).
#[utoipa::path(post, path = "/v1/quotes", tag = "prices", request_body = QuoteRequest,
    responses(
        (status = 200, description = "The quote", body = Quote),
        MalformedJson,
        (status = 422, description = "Invalid fields (`start_at` off the whole hour on a reserved quote); `reserved_too_soon`; `unsatisfiable_resources`; `no_price`; `no_capacity` or `node_cordoned` when no node could serve any priced option (the reason an order would get)", body = Problem, content_type = "application/problem+json"),
    ))]
async fn quote(
    State(state): State<PricingState>,
    Json(mut req): Json<QuoteRequest>,
) -> Result<Json<Quote>, ApiError> {
    let mut errors = req.resources.validate("resources");
    match req.count {
        Some(n) if !(1..=crate::engine::Gang::MAX_COUNT).contains(&n) => {
            errors.push(FieldError::new("count", "must be between 1 and 64"));
        }
        Some(n)
            if n > 1
                && matches!(
                    req.mode,
                    crate::pricing::Mode::Spot | crate::pricing::Mode::Reserved
                ) =>
        {
            errors.push(FieldError::new(
                "count",
                "units are placed together on capacity free now: on_demand or pooled",
            ));
        }
        _ => {}
    }
    if let Some(price) = req.max_price.as_mut() {
        errors.extend(crate::bounds::PRICE_PER_HOUR.take("max_price", price));
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let now = state.settings.clock.now();
    let (start_at, duration_s) = quotes::window(req.mode, req.start_at, req.duration_s, now)?;
    let region = req.region.named();
    if let Some(region) = region {
        if !state.regions.exists(&state.db, region).await? {
            return Err(ApiError::field(
                "region",
                format!("unknown region `{region}`"),
            ));
        }
    }
    if !quotes::any_model_can_hold(&req.resources) {
        return Err(ApiError::refused(
            "unsatisfiable_resources",
            "no GPU model in the catalog can hold these resources at this precision",
        ));
    }
    let prices = store::list(&state.db, region, req.resources.gpu_model.as_deref()).await?;
    let mut options = quotes::price_options(&req.resources, req.mode, duration_s, &prices);
    if options.is_empty() {
        return Err(ApiError::refused(
            "no_price",
            "no GPU model that can hold these resources has a price in the region asked",
        ));
    }
    let spec = order_spec(&req, start_at, duration_s);
    // Only a quote of several units tries them on the engine.
    let (servable, answer, room) = if spec.gang.is_some() {
        state
            .market
            .trial(move |engine| {
                let room = engine.gang_room(&spec);
                (
                    engine.servable(&spec).unwrap_or_default(),
                    engine.quote(&spec),
                    Some(room),
                )
            })
            .await?
    } else {
        state
            .market
            .read(move |engine| {
                let servable = engine.servable(&spec).unwrap_or_default();
                (servable, engine.quote(&spec), None)
            })
            .await?
    };
    let units = match (req.count, room) {
        (Some(count), Some(room)) => Some(gpuex_api::pricing::UnitsQuote {
            count,
            placeable_now: room.as_ref().map_or(0, |r| r.0),
            price_per_hour: room.map_or(Decimal::ZERO, |r| r.1.normalize()),
        }),
        _ => None,
    };
    // Only what a node could serve is offered: the order would be refused
    // anywhere else (issue 34 item 7).
    options.retain(|o| servable.contains(&(o.gpu_model.clone(), o.region.clone())));
    if options.is_empty() {
        // The reason an order would be refused with, as the engine says it.
        return Err(match &answer {
            Err(reason) => ApiError::refused(reason.code(), reason.message()),
            Ok(_) => ApiError::refused(
                "no_capacity",
                "no node in the region asked has GPUs that could hold these resources",
            ),
        });
    }
    let (slice, slice_unavailable) = slice_quote(answer, duration_s)?;
    Ok(Json(Quote {
        mode: req.mode,
        currency: state.settings.currency.clone(),
        start_at,
        duration_s,
        rule: quotes::rule_text(req.mode).to_owned(),
        options,
        slice,
        slice_unavailable,
        units,
    }))
}

/// The order a quote prices, as the engine reads it.
fn order_spec(
    req: &QuoteRequest,
    start_at: DateTime<Utc>,
    duration_s: u64,
) -> crate::engine::OrderSpec {
    let order = crate::market::OrderRequest {
        mode: req.mode,
        resources: req.resources.clone(),
        region: req.region.clone(),
        start_at: Some(start_at),
        duration_s: Some(duration_s),
        max_price: req.max_price,
        max_wait_s: None,
        time_in_force: None,
        expires_at: None,
        count: req.count,
        all_or_none: None,
        min_count: None,
        qos: req.qos,
        tags: None,
        command: None,
        env: None,
        artifacts: None,
        image: None,
        registry_auth: None,
        network: None,
        checkpoint: None,
        on_interrupt: None,
        webhook_url: None,
        client_order_id: None,
    };
    let reserved = req.mode == crate::pricing::Mode::Reserved;
    order.spec(reserved.then_some(start_at), None)
}

/// The slice the engine says the order would get now, with its held units,
/// or why none is free.
fn slice_quote(
    answer: Result<crate::engine::Quote, crate::engine::RejectReason>,
    duration_s: u64,
) -> Result<(Option<quotes::SliceQuote>, Option<String>), ApiError> {
    Ok(match answer {
        Ok(q) => (
            Some(quotes::SliceQuote {
                node_id: q.placement.node,
                region: q.region,
                gpu_model: q.gpu_model,
                placement: serde_json::json!({ "mode": q.placement.mode, "gpus": q.placement.gpus }),
                units: serde_json::json!({ "held": q.placement.units, "asked": q.placement.asked }),
                unit_prices: serde_json::to_value(q.unit_prices).unwrap_or_default(),
                // Exactly the price the lease would carry, as its view shows
                // it: a quote rounded here differed from the fill (issue 34 item 6).
                // (normalized, as the lease's stored price is).
                price_per_hour: q.price_per_hour.normalize(),
                total: window_total(q.price_per_hour, duration_s)?,
                hold: q.hold,
                needs_preemption: q.needs_preemption,
                source: match q.source {
                    crate::engine::events::Source::Primary => "primary",
                    crate::engine::events::Source::Resale => "resale",
                }
                .to_owned(),
                listing_id: q.listing_id,
                primary_price_per_hour: q.primary_price_per_hour.map(crate::pricing::round_money),
                saving_per_hour: q
                    .primary_price_per_hour
                    .map(|p| crate::pricing::round_money(p - q.price_per_hour)),
                max_price_binds: q.max_price_binds,
            }),
            None,
        ),
        Err(reason) => (None, Some(reason.code().to_owned())),
    })
}

/// What `price_per_hour` comes to over a window of `duration_s`, rounded
/// once the ledger's way.
fn window_total(price_per_hour: Decimal, duration_s: u64) -> Result<Decimal, ApiError> {
    price_per_hour
        .checked_mul(Decimal::from(duration_s))
        .and_then(|x| x.checked_div(Decimal::from(3600)))
        .map(crate::pricing::round_money)
        .ok_or_else(|| {
            ApiError::refused(
                "out_of_range",
                "the quoted total is beyond what the market accepts",
            )
        })
}

/// The body of `PUT /v1/admin/prices` for the OpenAPI document: 1 to 1000
/// entries, as `put_prices` checks.
struct PriceList;

impl utoipa::PartialSchema for PriceList {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::ArrayBuilder;
        use utoipa::openapi::Ref;
        ArrayBuilder::new()
            .items(Ref::from_schema_name("PriceUpdate"))
            .min_items(Some(1))
            .max_items(Some(1000))
            .into()
    }
}

impl ToSchema for PriceList {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            PriceUpdate::name().into(),
            <PriceUpdate as utoipa::PartialSchema>::schema(),
        ));
        <PriceUpdate as ToSchema>::schemas(schemas);
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceUpdate {
    pub region: String,
    pub gpu_model: String,
    pub unit: Unit,
    /// The monthly-commitment price per unit-hour.
    #[serde(deserialize_with = "crate::decimal::money")]
    #[schema(value_type = crate::bounds::ListPrice)]
    pub list_price: Decimal,
}

/// Set list prices (admin). All or nothing; every change is recorded.
#[utoipa::path(put, path = "/v1/admin/prices", tag = "prices", security(("bearer" = [])),
    request_body = PriceList,
    responses(
        (status = 200, description = "The prices now in force", body = [PriceView]),
        MalformedJson,
        NotAnAdmin,
        (status = 422, description = "Invalid entries, named by index", body = Problem, content_type = "application/problem+json"),
    ))]
async fn put_prices(
    State(state): State<PricingState>,
    caller: Caller,
    Json(mut updates): Json<Vec<PriceUpdate>>,
) -> Result<Json<Vec<PriceView>>, ApiError> {
    caller.require(&[Role::Admin])?;
    if updates.is_empty() || updates.len() > 1000 {
        return Err(ApiError::field("body", "must hold 1 to 1000 price entries"));
    }
    let known_regions: Vec<String> = regions::list(&state.db)
        .await?
        .into_iter()
        .map(|r| r.name)
        .collect();
    let mut errors = Vec::new();
    for (i, u) in updates.iter_mut().enumerate() {
        if !known_regions.contains(&u.region) {
            errors.push(FieldError::new(
                format!("[{i}].region"),
                format!("unknown region `{}`", u.region),
            ));
        }
        if catalog::lookup(&u.gpu_model).is_none() {
            errors.push(FieldError::new(
                format!("[{i}].gpu_model"),
                format!("unknown GPU model `{}`", u.gpu_model),
            ));
        }
        errors
            .extend(crate::bounds::LIST_PRICE.take(format!("[{i}].list_price"), &mut u.list_price));
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    let mut views = Vec::with_capacity(updates.len());
    for u in updates {
        let price = ListPrice {
            region: u.region,
            gpu_model: u.gpu_model,
            unit: u.unit,
            list_price: u.list_price.normalize(),
            currency: state.settings.currency.clone(),
            updated_at: now,
        };
        let previous = store::set(&mut tx, &price, caller.id).await?;
        audit::record(
            &mut tx,
            caller.id,
            audit::Action::SetPrice,
            &format!("price:{}:{}:{}", price.region, price.gpu_model, price.unit),
            serde_json::json!({
                "list_price": price.list_price.to_string(),
                "previous": previous.map(|p| p.to_string()),
            }),
            now,
        )
        .await?;
        views.push(PriceView {
            prices: DerivedPrices::from_list(price.list_price),
            region: price.region,
            gpu_model: price.gpu_model,
            unit: price.unit,
            currency: price.currency,
            updated_at: now,
        });
    }
    tx.commit().await?;
    for v in &views {
        let data = serde_json::to_value(v).unwrap_or_default();
        state.market_feed.price(&v.gpu_model, &v.region, &data);
    }
    let engine_prices = views
        .iter()
        .map(|v| crate::engine::ListPrice {
            region: v.region.clone(),
            gpu_model: v.gpu_model.clone(),
            unit: v.unit,
            list_price: v.prices.list,
        })
        .collect();
    state
        .market
        .command(crate::engine::Command::SetPrices(engine_prices))
        .await?;
    Ok(Json(views))
}
