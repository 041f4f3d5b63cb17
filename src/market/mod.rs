//! The market: the task that owns the matching engine, and the order, lease
//! and market-data routes (ARCHITECTURE.md §4, §5, §9).

mod handle;
pub mod journal;
pub mod live_leases;
pub mod restore;
mod task;
mod writer;

pub use handle::{MarketError, MarketHandle, OrderMeta};
pub use task::{start, MarketConfig};

pub mod book;
mod convert;
pub mod history;
mod leases;
mod order_request;
mod order_type;
mod orders;
mod predict;
pub mod pull_secrets;
pub mod resale;
pub mod stream;
mod trials;
mod views;

pub use crate::engine::LeaseState;

use crate::auth::RouterState;
use crate::catalog::regions::KnownRegions;
use crate::config::Settings;
use crate::db::Db;
use crate::metrics::Metrics;
use axum::extract::FromRef;
pub use leases::LeasePage;
pub use orders::{OrderPage, OrderRequest, Qos};
use std::sync::Arc;
pub use stream::MarketFeed;
use utoipa_axum::router::OpenApiRouter;
pub use views::{
    ConversionView, LeaseView, OrderState, OrderView, ResumedFrom, UnitsView, UsageView,
};

/// What the market's routes use.
#[derive(Clone)]
pub struct MarketState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub market: MarketHandle,
    pub metrics: Arc<Metrics>,
    pub regions: KnownRegions,
    /// Seals the registry credentials orders carry (ARCHITECTURE.md §21).
    pub pull_secrets: pull_secrets::PullSecrets,
    pub market_feed: MarketFeed,
}

/// The market's routes: orders, leases and market data.
pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    MarketState: FromRef<S>,
{
    OpenApiRouter::new()
        .merge(orders::router())
        .merge(trials::router())
        .merge(leases::router())
        .merge(convert::router())
        .merge(book::router())
        .merge(resale::router())
        .merge(history::router())
        .merge(stream::router())
}
