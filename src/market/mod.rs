//! The market: the task that owns the matching engine, and the order, lease
//! and market-data routes (ARCHITECTURE.md §4, §5, §9).

mod handle;
pub mod journal;
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
mod orders;
mod predict;
pub mod pull_secrets;
pub mod resale;
pub mod stream;
mod views;

pub use crate::engine::LeaseState;
pub use orders::{OrderRequest, Qos};
pub use stream::MarketFeed;
pub use views::OrderState;

/// The market's routes: orders, leases and market data.
pub fn router() -> utoipa_axum::router::OpenApiRouter<crate::app::AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .merge(orders::router())
        .merge(leases::router())
        .merge(convert::router())
        .merge(book::router())
        .merge(resale::router())
        .merge(history::router())
        .merge(stream::router())
}
