//! `/v1/market/book` and `/v1/market/stats`: spot bids, resale asks, idle capacity,
//! utilization and clearing prices, read from the engine's current state.

use super::MarketState;
use crate::engine::orders::OpenState;
use crate::engine::placement::model_at;
use crate::engine::{Engine, LeaseState};
use crate::error::{ApiError, Json, Problem, Query};
use axum::extract::{FromRef, State};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    MarketState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(book))
        .routes(routes!(stats))
}

/// Capacity of one (GPU model, region).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PoolStats {
    pub gpu_model: String,
    pub region: String,
    pub gpus: u32,
    /// GPUs with nothing on them.
    pub idle_gpus: u32,
    /// Compute, in milli-GPU (1000 per GPU).
    pub total_milli: u64,
    pub allocated_milli: u64,
    /// allocated / total, in percent.
    pub utilization: f64,
    /// The spot auction's last clearing index (× list), if it has cleared.
    #[schema(value_type = Option<String>)]
    pub clearing_index: Option<Decimal>,
}

/// One spot bid in the book.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BidView {
    /// max_price ÷ list value of the bid's resources per hour.
    #[schema(value_type = Option<String>)]
    pub price_index: Option<Decimal>,
    #[schema(value_type = Option<String>)]
    pub max_price: Option<Decimal>,
    #[schema(value_type = String)]
    pub tflops: Decimal,
    pub vram_gb: u32,
    /// Whether the bid holds capacity now.
    pub winning: bool,
}

/// Bids and idle capacity of one (model, region).
#[derive(Debug, Serialize, ToSchema)]
pub struct BookEntry {
    #[serde(flatten)]
    pub pool: PoolStats,
    /// Best bids first.
    pub bids: Vec<BidView>,
    /// Open resale listings of this pool, cheapest ask first.
    pub resale_asks: Vec<super::resale::ResaleOffer>,
}

/// The market's figures.
#[derive(Debug, Serialize, ToSchema)]
pub struct MarketStats {
    pub pools: Vec<PoolStats>,
    /// allocated / total compute over every pool, in percent.
    pub utilization: f64,
    pub open_orders: usize,
    pub leases_by_state: BTreeMap<String, usize>,
    /// FGD's fragmentation: free capacity the demand mix cannot use, 0–1.
    pub frag_ratio: f64,
    /// Compute held beyond what was asked (MIG profiles, whole GPUs), milli-GPU.
    pub internal_waste_milli: u64,
}

/// Pools, one per (model, region), in name order.
pub fn pools(engine: &Engine) -> Vec<PoolStats> {
    let view = engine.view();
    let mut pools: BTreeMap<(String, String), PoolStats> = BTreeMap::new();
    for node in view.nodes() {
        let region = view
            .regions
            .get(usize::from(node.region))
            .map(|r| r.name.clone())
            .unwrap_or_default();
        for gpu in &node.gpus {
            let model = model_at(gpu.model);
            let pool = pools
                .entry((model.name.to_owned(), region.clone()))
                .or_insert_with(|| PoolStats {
                    gpu_model: model.name.to_owned(),
                    region: region.clone(),
                    gpus: 0,
                    idle_gpus: 0,
                    total_milli: 0,
                    allocated_milli: 0,
                    utilization: 0.0,
                    clearing_index: engine.clearing_index(model.name, &region),
                });
            let free = u64::from(gpu.free.free_milli(gpu.mode));
            pool.gpus += 1;
            pool.idle_gpus += u32::from(gpu.free.is_idle(model, gpu.mode));
            pool.total_milli += 1000;
            pool.allocated_milli += 1000u64.saturating_sub(free);
        }
    }
    pools
        .into_values()
        .map(|mut p| {
            p.utilization = percent(p.allocated_milli, p.total_milli);
            p
        })
        .collect()
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10_000.0 / whole as f64).round() / 100.0
    }
}

/// Everything `/v1/market/stats` and `/metrics` show.
pub fn market_stats(engine: &Engine) -> MarketStats {
    let pools = pools(engine);
    let (allocated, total) = pools.iter().fold((0, 0), |(a, t), p| {
        (a + p.allocated_milli, t + p.total_milli)
    });
    let mut leases_by_state = BTreeMap::new();
    for lease in engine.leases() {
        *leases_by_state
            .entry(lease.state.as_str().to_owned())
            .or_insert(0) += 1;
    }
    MarketStats {
        utilization: percent(allocated, total),
        pools,
        // A spot order holding its lease reads `filled`; it is open again
        // only once preempted back into the auction.
        open_orders: engine
            .open_orders()
            .filter(|o| matches!(o.state, OpenState::Waiting | OpenState::SpotQueued))
            .count(),
        leases_by_state,
        frag_ratio: engine.frag_ratio(),
        internal_waste_milli: engine.internal_waste_milli(),
    }
}

impl BookEntry {
    /// A market with no GPUs and no bids.
    pub fn empty(gpu_model: String, region: String) -> BookEntry {
        BookEntry {
            pool: PoolStats {
                gpu_model,
                region,
                gpus: 0,
                idle_gpus: 0,
                total_milli: 0,
                allocated_milli: 0,
                utilization: 0.0,
                clearing_index: None,
            },
            bids: Vec::new(),
            resale_asks: Vec::new(),
        }
    }
}

/// The book's entries, `depth` bids each: the pools with GPUs, then bids
/// that name no single pool.
pub fn book_entries(engine: &Engine, depth: usize) -> Vec<BookEntry> {
    let mut bids: BTreeMap<(String, String), Vec<BidView>> = BTreeMap::new();
    for order in engine.open_orders() {
        if !matches!(order.state, OpenState::SpotQueued | OpenState::SpotLive) {
            continue;
        }
        let spec = &order.spec;
        let key = (
            spec.resources
                .gpu_model
                .clone()
                .unwrap_or_else(|| "any".into()),
            spec.region.to_string(),
        );
        let winning = order
            .lease
            .and_then(|id| engine.lease(id))
            .is_some_and(|l| l.state != LeaseState::Ended);
        bids.entry(key).or_default().push(BidView {
            price_index: order.bid_index,
            max_price: spec.max_price,
            tflops: spec.resources.tflops,
            vram_gb: spec.resources.vram_gb,
            winning,
        });
    }
    let mut asks: BTreeMap<(String, String), Vec<super::resale::ResaleOffer>> = BTreeMap::new();
    for offer in super::resale::offers(engine, &super::resale::OfferQuery::default()) {
        let key = (offer.gpu_model.clone(), offer.region.clone());
        asks.entry(key).or_default().push(offer);
    }
    let mut entries: Vec<BookEntry> = pools(engine)
        .into_iter()
        .map(|pool| {
            let mut mine = bids
                .remove(&(pool.gpu_model.clone(), pool.region.clone()))
                .unwrap_or_default();
            mine.sort_by_key(|b| std::cmp::Reverse(b.price_index));
            mine.truncate(depth);
            let mut resale_asks = asks
                .remove(&(pool.gpu_model.clone(), pool.region.clone()))
                .unwrap_or_default();
            resale_asks.truncate(depth);
            BookEntry {
                pool,
                bids: mine,
                resale_asks,
            }
        })
        .collect();
    // Bids that name no single pool ("any" model or region) are listed on their own.
    for ((model, region), mut rest) in bids {
        rest.sort_by_key(|b| std::cmp::Reverse(b.price_index));
        rest.truncate(depth);
        entries.push(BookEntry {
            bids: rest,
            ..BookEntry::empty(model, region)
        });
    }
    entries
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct BookQuery {
    /// Bids shown per pool, 1 to 100 (default 10).
    #[param(minimum = 1, maximum = 100)]
    pub depth: Option<u32>,
}

/// Spot bids and idle capacity per GPU model and region.
#[utoipa::path(get, path = "/v1/market/book", tag = "market", params(BookQuery),
    responses(
        (status = 200, description = "The book", body = [BookEntry]),
        (status = 422, description = "Invalid depth", body = Problem, content_type = "application/problem+json"),
    ))]
async fn book(
    State(state): State<MarketState>,
    Query(q): Query<BookQuery>,
) -> Result<Json<Vec<BookEntry>>, ApiError> {
    let depth = q.depth.unwrap_or(10);
    if !(1..=100).contains(&depth) {
        return Err(ApiError::field("query.depth", "must be between 1 and 100"));
    }
    Ok(Json(
        state
            .market
            .read(move |engine| book_entries(engine, depth as usize))
            .await?,
    ))
}

/// Utilization, clearing prices, open orders and fragmentation.
#[utoipa::path(get, path = "/v1/market/stats", tag = "market",
    responses((status = 200, description = "Market figures", body = MarketStats)))]
async fn stats(State(state): State<MarketState>) -> Result<Json<MarketStats>, ApiError> {
    Ok(Json(state.market.read(market_stats).await?))
}
