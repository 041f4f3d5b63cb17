//! `GET /v1/market/stream` (ARCHITECTURE.md §15): public Server-Sent Events of
//! clearings, list price changes and book depth, from one central feed.

mod feed;
mod routes;

pub use feed::{FeedEvent, FeedKind, MarketFeed};
pub use routes::router;
